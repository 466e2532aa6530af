"""A lookup's sources cut to a prompt budget (a CPU's) keep the clause that answers, wherever it sits in its
chunk (docqa.service.asking.Asker.fit_to_budget), over a scripted generator (no model)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from docqa.core.requests import AskRequest
from docqa.service import DocQA
from tests.support.fake_generator import FakeGenerator
from tests.support.paths import make_settings

FILLER = (
    "{n}.1    The Carrier shall deliver each shipment to the consignee named on the waybill within the time "
    "agreed in the schedule, and shall keep a record of each delivery for the Customer's inspection."
)
# A contract whose governing-law clause sits early, and whose representations and arbitration article, far
# from it, use the question's words more often (as the Dynamex agreement of CUAD does).
CONTRACT = "\n\n".join(
    [
        "MARKETING AND TRANSPORTATION SERVICES AGREEMENT",
        *(FILLER.format(n=n) for n in range(1, 6)),
        "6.0    LAW OF THE AGREEMENT",
        "6.1    This Agreement shall be governed and construed in accordance with the laws of the Province of Ontario.",
        *(FILLER.format(n=n) for n in range(7, 40)),
        "40.0    REPRESENTATIONS",
        "40.1    The terms of this Agreement are not in breach of any law, regulation or by-law by which the "
        "Carrier is governed or bound, and no law governs its licences otherwise.",
        "40.2    The terms of this Agreement are not in breach of any law, regulation or by-law by which the "
        "Customer is governed or bound, and no law governs its permits otherwise.",
        "41.0    ARBITRATION",
        "41.1    The arbitration shall take place in Toronto and shall be governed by the Arbitration Act; the "
        "arbitrator shall apply the law that governs the dispute.",
        *(FILLER.format(n=n) for n in range(42, 48)),
    ]
)
QUESTION = "Which law governs the agreement?"


@pytest.fixture
def qa(fake_generator: FakeGenerator, tmp_path: Path) -> Iterator[DocQA]:
    (tmp_path / "transport.txt").write_text(CONTRACT, encoding="utf-8")
    qa = DocQA(make_settings(tmp_path / "data"), None, fake_generator)
    qa.ingest([tmp_path / "transport.txt"])
    yield qa
    qa.close()


def test_the_clause_that_answers_stays_in_a_prompt_cut_to_its_budget(qa: DocQA) -> None:
    qa.settings.llm.prompt_budget = 400  # the whole contract is ~2,000 tokens: most of it must go
    [(_, prompt)] = qa.prompts(AskRequest(QUESTION))
    assert "Province of Ontario" in prompt
    assert qa.generator is not None and qa.generator.count_tokens(prompt) < 1000


def test_sources_within_the_budget_are_kept_whole(qa: DocQA) -> None:
    qa.settings.llm.prompt_budget = 100_000
    [(_, prompt)] = qa.prompts(AskRequest(QUESTION))
    assert "47.1" in prompt and "MARKETING AND TRANSPORTATION" in prompt
