"""Asking with the real demo model: retrieval, citations with pages, streaming, modes."""

from __future__ import annotations

import pytest

from docqa.core.errors import BusyError, CollectionNotFoundError, DocumentNotFoundError, InvalidRequestError
from docqa.core.events import DoneEvent
from docqa.core.requests import AskRequest
from docqa.core.sampling_params import NON_THINKING_SAMPLING

pytestmark = pytest.mark.slow


def test_answer_cites_the_document_and_page_that_hold_it(sample_qa) -> None:  # type: ignore[no-untyped-def]
    answer = sample_qa.ask(AskRequest("What was Northwind's revenue in 2025?", max_tokens=32, seed=1))
    top = max(answer.citations, key=lambda c: c.score)
    assert top.document == "annual_report_2025.pdf"
    assert top.page == 2  # "Revenue for 2025 was EUR 184.6 million" is on page 2 of 4
    assert answer.mode == "non-thinking" and answer.reasoning == ""
    assert answer.answer
    t = answer.timings
    assert t.prompt_tokens > 100 and 1 <= t.completion_tokens <= 32
    assert 0 < t.ttft_ms <= t.total_ms


@pytest.mark.parametrize(
    ("question", "document"),
    [
        (
            "How many days of written notice are needed to terminate the agreement for convenience?",
            "services_agreement_en.txt",
        ),
        ("设备的质保期是多久？", "supply_contract_zh.txt"),
        ("What is the recovery time objective for customer databases?", "operations_handbook.md"),
    ],
)
def test_retrieval_ranks_the_right_document_first(sample_qa, question: str, document: str) -> None:  # type: ignore[no-untyped-def]
    hits = sample_qa.retriever.retrieve(sample_qa.collection(), question, 3)
    assert hits[0].document_name == document


def test_stream_events_arrive_in_order(sample_qa) -> None:  # type: ignore[no-untyped-def]
    events = list(sample_qa.stream(AskRequest("Who is the chief executive of Northwind?", max_tokens=16, seed=2)))
    kinds = [e.kind for e in events]
    assert kinds[0] == "citations" and kinds[-1] == "done"
    assert set(kinds[1:-1]) <= {"answer", "reasoning"} and "answer" in kinds
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.timings.completion_tokens <= 16


def test_document_scope_limits_retrieval(sample_qa) -> None:  # type: ignore[no-untyped-def]
    handbook = next(d for d in sample_qa.documents() if d.name == "operations_handbook.md")
    answer = sample_qa.ask(AskRequest("What was Northwind's revenue in 2025?", document_id=handbook.id, max_tokens=8))
    assert {c.document for c in answer.citations} == {"operations_handbook.md"}


def test_bad_requests_name_the_problem(sample_qa) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CollectionNotFoundError, match="'missing'"):
        sample_qa.ask(AskRequest("q", collection="missing"))
    with pytest.raises(InvalidRequestError, match="empty"):
        sample_qa.ask(AskRequest("   "))
    with pytest.raises(InvalidRequestError, match="invalid collection name"):
        sample_qa.ask(AskRequest("q", collection="../etc"))
    with pytest.raises(DocumentNotFoundError):
        sample_qa.ask(AskRequest("q", document_id=99_999))


def test_empty_collection_answers_without_the_model(qa_factory) -> None:  # type: ignore[no-untyped-def]
    qa = qa_factory()
    qa.collection("empty", create=True)
    answer = qa.ask(AskRequest("anything?", collection="empty"))
    assert answer.citations == [] and "do not answer" in answer.answer
    assert answer.timings.completion_tokens == 0


def test_serial_fallback_queue_is_bounded_and_frees_cancelled_places(serial_generator) -> None:  # type: ignore[no-untyped-def]
    generator = serial_generator
    from dataclasses import replace

    params = replace(NON_THINKING_SAMPLING, max_tokens=200, seed=1)
    streams = []
    with pytest.raises(BusyError):
        for _ in range(20):  # the worker takes one, the queue holds max_queue (4) more
            streams.append(generator.submit("Once upon a time", params))
    assert 1 <= len(streams) <= 6
    for s in streams:
        s.cancel()
    # cancelled work is dropped within a token, so a new request is served promptly
    events = list(generator.submit("The capital of France is", replace(params, max_tokens=4)))
    assert events[-1].kind == "finished" and events[-1].completion_tokens <= 4


def test_a_follow_up_is_searched_and_asked_with_the_question_before_it(qa_factory, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """'Which governing law applies?' alone finds the contract that talks most of governing law; after a
    question about the lease, it finds the lease's clause. The answer cache keeps the two apart."""
    docs = tmp_path / "contracts"
    docs.mkdir()
    (docs / "acme_supply.txt").write_text(
        "Acme supply agreement. Governing law: this supply agreement is governed by the laws of Texas, and the "
        "governing law clause applies to every purchase order. Deliveries arrive within thirty days."
    )
    (docs / "zenith_lease.txt").write_text(
        "Zenith office lease. The tenant pays a monthly rent of USD 12,000 for the third floor. "
        "Governing law: the laws of Ohio."
    )
    qa = qa_factory(with_embedder=False, retrieval={"retriever": "bm25"})
    assert qa.ingest([docs]).count("added") == 2

    def cited(earlier: tuple[str, ...] = ()) -> str:
        request = AskRequest("Which governing law applies?", top_k=1, max_tokens=4, seed=1, earlier=earlier)
        (citation,) = qa.ask(request).citations
        return citation.document

    served_from_cache: list[bool] = []
    qa.on_answer.append(lambda outcome: served_from_cache.append(outcome.cached))
    assert cited() == "acme_supply.txt"
    assert cited(("What monthly rent does the Zenith office lease charge?",)) == "zenith_lease.txt"
    assert cited() == "acme_supply.txt"  # not the follow-up's cached answer
    # a blank earlier question is no follow-up, and spacing around one changes nothing: the same entries
    assert cited(("   ",)) == "acme_supply.txt"
    assert cited((" What monthly rent does the Zenith office lease charge?\n",)) == "zenith_lease.txt"
    assert served_from_cache == [False, False, True, True, True]
