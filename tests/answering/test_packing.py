"""A document's paragraphs scored for one question of a collection: section headings and the words the
collection's other documents draft the clause in (pure logic: no model, no store)."""

from __future__ import annotations

from docqa.answering import feedback, packing, paragraphs
from docqa.answering.feedback import FeedbackSettings
from docqa.core.types import RetrievedChunk


def _chunk(text: str, document_id: int = 1) -> RetrievedChunk:
    return RetrievedChunk(1, document_id, f"doc{document_id}.txt", 0, text, 1, 1, 1.0)


def _count(text: str) -> int:
    return max(1, len(text) // 4)


def _texts(found: packing.Packable, first: int) -> list[str]:
    return [found.chunks[r].text[slice(*found.spans[r][n])] for r, n in found.units[:first]]


NON_COMPETE = """41.0    REPUTATION

41.1    Neither Party shall bring the other into public disrepute.

42.0    NON-COMPETITION

42.1    In the event this Agreement is terminated, the Party in default shall not enter into an agreement
with any other party to provide services similar to those provided herein for two years.

43.0    NOTICES

43.1    Notices shall be in writing and delivered by hand."""


def test_a_clause_under_a_heading_of_the_questions_words_is_found_though_its_body_has_none() -> None:
    found = packing.packable([_chunk(NON_COMPETE)], {"compete": 3.0, "competition": 3.0}, _count)
    assert any("shall not enter into an agreement" in t for t in _texts(found, 2))


def test_without_section_titles_that_body_is_not_found(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(paragraphs, "SECTION_TITLES", False)
    found = packing.packable([_chunk(NON_COMPETE)], {"compete": 3.0, "competition": 3.0}, _count)
    assert not any("shall not enter into an agreement" in t for t in _texts(found, len(found.units)))


def test_heading_lines_are_short_titles_not_sentences() -> None:
    headings = (
        "42.0    NON-COMPETITION",
        "9.  NON-COMPETITION.",
        "NOTICES",
        "Article 7 Term",
        "(b) Termination for Cause",
    )
    for heading in headings:
        assert paragraphs.is_heading_line(heading), heading
    for line in ("39.5  The cost of the arbitration shall be borne by the Parties", "equally.", "the parties agree"):
        assert not paragraphs.is_heading_line(line), line


TERM = (
    "{n}.1 Term. The term of this Agreement shall commence on the Effective Date and continue for a period of "
    "{years} years, unless terminated earlier."
)
FILLER = "{n}.2 Payment. The Buyer shall pay each invoice within thirty days of receipt at the agreed prices."
# how one contract writes its term without the question's words ("term", "expire")
QUIET = (
    "7.1 Duration. This Agreement shall commence on the Effective Date and continue for a period of five years "
    "unless terminated earlier by either party."
)
LOUD = "7.3 Definitions. Term means the words defined in this section; the terms of each order apply to it."


def _collection() -> list[packing.Packable]:
    weights = {"term": 1.0, "expire": 2.0}
    found = [
        packing.packable([_chunk(f"{TERM.format(n=n, years=n + 1)}\n\n{FILLER.format(n=n)}", n)], weights, _count)
        for n in range(1, 11)
    ]
    quiet = packing.packable([_chunk(f"{LOUD}\n\n{QUIET}\n\n{FILLER.format(n=7)}", 11)], weights, _count)
    return [*found, quiet]


def test_the_words_a_collection_drafts_a_clause_in_are_learnt_from_each_documents_best_paragraph() -> None:
    extra = feedback.expansion(_collection(), {"term": 1.0, "expire": 2.0}, FeedbackSettings())
    assert {"commence", "period", "continue"} <= set(extra)
    assert "term" not in extra and all(w > 0 for w in extra.values())
    assert "invoice" not in extra  # in the documents' other paragraphs as often: not the clause's


def test_with_them_a_clause_written_without_the_questions_words_comes_first() -> None:
    weights = {"term": 1.0, "expire": 2.0}
    collection = _collection()
    quiet = collection[-1]
    assert "Duration" not in _texts(quiet, 1)[0]  # the question's words alone pick the definition
    extra = feedback.expansion(collection, weights, FeedbackSettings())
    again = packing.packable(quiet.chunks, feedback.widened(weights, extra), _count, again=quiet)
    assert "Duration" in _texts(again, 1)[0]


def test_too_few_documents_teach_nothing() -> None:
    few = _collection()[: feedback.MIN_DOCUMENTS - 1]
    assert feedback.expansion(few, {"term": 1.0}, FeedbackSettings()) == {}


def test_sources_tags_count_against_the_prompts_room_not_the_documents_share() -> None:
    # ten clauses apart from each other (a filler paragraph between): each taken one is a source of its own
    filler = "Payment is due on receipt of each invoice at the prices agreed in the schedule. " * 4  # no heading
    text = "\n\n".join(f"{n}.1 Term. The term is {n} years.\n\n{n}.2 {filler}" for n in range(1, 11))
    found = packing.packable([_chunk(text)], {"term": 1.0}, _count)
    share = sum(found.size(u, _count) for u in found.units[:10])
    assert len(packing.take(found, share, _count)) == 10  # the share is of text alone
    within_room = packing.take(found, share, _count, per_source=20, room=share)
    kept = sum(_count(s.text) for s in within_room)
    assert kept + 20 * len(within_room) <= share and 0 < len(within_room) < 10


def test_a_lookups_cut_keeps_few_runs_and_fills_the_budget_with_their_neighbours() -> None:
    # ten matching clauses apart from each other: six runs at most, then the filler beside them fills the room
    filler = "Payment is due on receipt of each invoice at the prices agreed in the schedule. " * 4  # no heading
    text = "\n\n".join(f"{n}.1 Term. The term is {n} years.\n\n{n}.2 {filler}" for n in range(1, 11))
    found = packing.packable([_chunk(text)], {"term": 1.0}, _count)
    budget = 600
    plain = packing.take(found, budget, _count, per_source=10, room=budget)
    few = packing.take(found, budget, _count, per_source=10, room=budget, widen=True, most_sources=6)
    assert len(plain) > 6 and len(few) <= 6
    kept = sum(_count(s.text) for s in few)
    assert kept > sum(_count(s.text) for s in plain) - 10 * (len(plain) - len(few))  # the tags saved show text
    assert kept + 10 * len(few) <= budget and sum("Payment is due" in s.text for s in few) >= len(few)
