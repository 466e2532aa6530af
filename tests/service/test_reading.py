"""Questions over whole documents and collections, through the service, on a scripted generator (the
plumbing: which prompts are asked, how findings become the answer) with BM25 over the sample documents.
The same paths on the real demo model are in test_reading_model.py."""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from docqa.answering.reading import NOT_STATED
from docqa.core.errors import InvalidRequestError
from docqa.core.events import CitationsEvent, DoneEvent, ErrorEvent, ReadingEvent
from docqa.core.requests import AskRequest
from docqa.core.settings import ChunkingSettings, LLMSettings, ReadingSettings
from docqa.core.types import RetrievedChunk
from docqa.service import DocQA, reading
from tests.support.fake_generator import FakeGenerator
from tests.support.paths import SAMPLE_DOCS, make_settings

FINDING = "It says so in its own words [1]."
COMPOSED = "Both documents say so [1][2]."
DOCUMENTS = ("annual_report_2025.pdf", "operations_handbook.md", "services_agreement_en.txt", "supply_contract_zh.txt")


def _reply(prompt: str) -> str:
    """A finding for each document's prompt, a composed answer for the prompt written from notes."""
    return COMPOSED if "<notes>" in prompt else FINDING


@pytest.fixture
def fake() -> Iterator[FakeGenerator]:
    gen = FakeGenerator(FINDING, reply=_reply, max_queue=16, parallel=2)
    yield gen
    gen.close()


def _qa(data: Path, fake: FakeGenerator, **overrides: object) -> DocQA:
    qa = DocQA(make_settings(data, **overrides), None, fake)
    qa.ingest([SAMPLE_DOCS])
    return qa


@pytest.fixture
def qa(tmp_path: Path, fake: FakeGenerator) -> Iterator[DocQA]:
    qa = _qa(tmp_path / "data", fake)
    yield qa
    qa.close()


def _sources_by_document(prompt: str) -> set[str]:
    return set(re.findall(r'<source id="\d+" document="([^"]+)"', prompt))


def test_a_collection_question_visits_every_document_once(qa: DocQA, fake: FakeGenerator) -> None:
    events = list(qa.stream(AskRequest("Which of these documents mention termination or notice?")))
    assert isinstance(events[0], CitationsEvent) and events[0].scope == "collection"
    reading = [e for e in events if isinstance(e, ReadingEvent)]
    assert sorted(e.document for e in reading) == sorted(DOCUMENTS)  # each read once
    assert [e.read for e in reading] == [1, 2, 3, 4] and {e.total for e in reading} == {4}
    asked = [_sources_by_document(p) for p in fake.prompts]
    assert all(len(documents) == 1 for documents in asked)  # a prompt holds one document's passages
    named = [d for documents in asked for d in documents]
    assert len(named) == len(set(named))  # none asked twice
    answer = qa.ask(AskRequest("Which of these documents mention termination or notice?", use_cache=False))
    assert answer.scope == "collection" and answer.documents_read == 4
    for document in DOCUMENTS:  # a row of the table or a name among those that do not state it
        assert document in answer.answer
    assert answer.answer.startswith(f"Stated in {len(named)} of 4 documents.")


def test_each_rows_citation_points_into_that_rows_document(qa: DocQA) -> None:
    answer = qa.ask(AskRequest("Which documents mention termination or notice?"))
    by_number = {c.number: c for c in answer.citations}
    rows = [line for line in answer.answer.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert rows
    for row in rows:
        document, finding, pages = (cell.strip() for cell in row.strip("|").split(" | "))
        numbers = [int(n) for n in re.findall(r"\[(\d+)\]", finding)]
        assert numbers and all(by_number[n].document == document and by_number[n].cited for n in numbers)
        assert pages == ", ".join(f"p. {by_number[n].page}" for n in numbers)


def test_a_document_without_the_questions_words_is_not_stated_without_asking_the_model(
    qa: DocQA, fake: FakeGenerator
) -> None:
    answer = qa.ask(AskRequest("Which of these contracts name a warranty period for the machines?"))
    asked = {d for p in fake.prompts for d in _sources_by_document(p)}
    assert "annual_report_2025.pdf" not in asked
    assert re.search(r"Not stated in \d+: .*annual_report_2025\.pdf", answer.answer)


def test_the_bound_on_documents_says_why_and_how_to_narrow(tmp_path: Path, fake: FakeGenerator) -> None:
    qa = _qa(tmp_path / "data", fake, reading=ReadingSettings(max_documents=3))
    try:
        with pytest.raises(InvalidRequestError, match=r"4 are selected.*at most 3.*DOCQA_READING_MAX_DOCUMENTS.*where"):
            qa.ask(AskRequest("Which of these documents mention termination?"))
        assert fake.prompts == []  # refused before anything was asked
        narrowed = qa.ask(AskRequest("Which documents mention termination?", where=(("kind", "document"),)))
        assert narrowed.documents_read <= 3
    finally:
        qa.close()


def test_a_comparison_reads_both_named_documents_and_composes_from_their_findings(
    qa: DocQA, fake: FakeGenerator
) -> None:
    answer = qa.ask(AskRequest("Compare the services agreement and the supply contract on payment"))
    assert answer.scope == "compare" and answer.documents_read == 2
    assert "services_agreement_en.txt" in answer.answer and "supply_contract_zh.txt" in answer.answer
    notes = [p for p in fake.prompts if "<notes>" in p]
    assert len(notes) == 1
    assert 'from="services_agreement_en.txt"' in notes[0] and 'from="supply_contract_zh.txt"' in notes[0]
    assert answer.answer.endswith(COMPOSED)


def test_a_comparison_needs_two_documents(qa: DocQA) -> None:
    with pytest.raises(InvalidRequestError, match="two or more documents"):
        qa.ask(AskRequest("Compare the payment terms", scope="compare"))
    pinned = [d.id for d in qa.documents() if d.name in ("services_agreement_en.txt", "supply_contract_zh.txt")]
    answer = qa.ask(AskRequest("Compare the payment terms", scope="compare", document_ids=tuple(pinned)))
    assert answer.documents_read == 2


def test_a_document_that_fits_is_read_whole_in_one_prompt(qa: DocQA, fake: FakeGenerator) -> None:
    answer = qa.ask(AskRequest("Summarize the operations handbook"))
    assert answer.scope == "document" and answer.documents_read == 1
    assert len(fake.prompts) == 1
    handbook = (SAMPLE_DOCS / "operations_handbook.md").read_text()
    last_line = handbook.strip().splitlines()[-1].strip()
    assert last_line[:40] in fake.prompts[0]  # the whole of it, to its last line


def _long_contract(path: Path) -> Path:
    articles = [
        f"ARTICLE {n}\n\n"
        + " ".join(
            f"Clause {n}.{k}: the supplier shall keep record {n}-{k} of the services for audit."
            for k in (1, 2, 3, 4, 5)
        )
        + "\n"
        for n in range(1, 13)
    ]
    path.write_text("LONG SUPPLY AGREEMENT\n\n" + "\n".join(articles))
    return path


def test_a_document_too_long_for_one_prompt_is_read_part_by_part(tmp_path: Path, fake: FakeGenerator) -> None:
    small = {"chunking": ChunkingSettings(max_tokens=96, overlap_tokens=0), "llm": LLMSettings(prompt_budget=512)}
    qa = DocQA(make_settings(tmp_path / "data", **small), None, fake)
    try:
        qa.ingest([_long_contract(tmp_path / "long_supply_agreement.txt")])
        events = list(qa.stream(AskRequest("Summarize the long supply agreement")))
        parts = [p for p in fake.prompts if "<notes>" not in p]
        assert len(parts) >= 2 and len([p for p in fake.prompts if "<notes>" in p]) == 1
        notes = ReadingSettings().part_tokens
        assert [p.max_tokens for p in fake.params[: len(parts)]] == [notes] * len(parts)  # a part's notes' length
        for n in range(1, 13):  # every article reached a part's prompt
            assert any(f"record {n}-3 " in p for p in parts), n
        reading = [e for e in events if isinstance(e, ReadingEvent)]
        assert len(reading) == len(parts) and reading[0].document.startswith("page")
        done = events[-1]
        assert isinstance(done, DoneEvent) and done.finish_reason == "stop"
        assert {c.document for c in done.citations} == {"long_supply_agreement.txt"}
    finally:
        qa.close()


def test_a_repeated_collection_question_is_answered_from_the_cache_as_one(qa: DocQA) -> None:
    first = qa.ask(AskRequest("Which documents mention termination?"))
    again = qa.ask(AskRequest("Which documents mention termination?"))
    assert again.cached and again.scope == "collection" and again.answer == first.answer
    lookup = qa.ask(AskRequest("Which documents mention termination?", scope="lookup"))
    assert not lookup.cached and lookup.scope == "lookup"


def test_stopping_a_collection_question_cancels_every_part(tmp_path: Path, fake: FakeGenerator) -> None:
    """As the API stops one (Stop in the page, a client gone): the task reading its events is cancelled."""
    qa = _qa(tmp_path / "data", fake, reading=ReadingSettings(in_flight=2))
    fake.paused.set()  # nothing is generated: every part submitted waits in the queue

    async def stop_while_reading() -> int:
        async def read() -> None:
            async for _ in qa.astream(AskRequest("Which documents mention 2025?")):  # three of the four
                pass

        task = asyncio.ensure_future(read())
        deadline = time.monotonic() + 10
        while fake.live_waiting() < 2 and time.monotonic() < deadline:  # the window's prompts are queued
            await asyncio.sleep(0.05)
        queued = fake.live_waiting()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return queued

    try:
        assert asyncio.run(stop_while_reading()) == 2  # the window (reading.in_flight) of its three prompts
        assert fake.live_waiting() == 0  # every part cancelled, none left for the engine
        fake.paused.clear()
        time.sleep(0.3)
        assert len(fake.prompts) == 2  # and nothing more was submitted
    finally:
        qa.close()


def test_a_documents_prompt_is_read_while_the_others_are_still_planned(
    qa: DocQA, fake: FakeGenerator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine starts on the first documents' prompts while the last are made (planning a hundred
    contracts' prompts is seconds of tokenizing): one document's prompt, held back, is made only after
    another's has reached the generator."""
    made = reading._finding_prompt
    seen: list[int] = []
    first = threading.Lock()

    def slow_for_one(run: object, chunks: list[RetrievedChunk]) -> object:
        if first.acquire(blocking=False):  # the first prompt made waits (two planning threads)
            deadline = time.monotonic() + 10
            while not fake.prompts and time.monotonic() < deadline:
                time.sleep(0.02)
            seen.append(len(fake.prompts))
        return made(run, chunks)  # type: ignore[arg-type]

    monkeypatch.setattr(reading, "_finding_prompt", slow_for_one)
    monkeypatch.setattr(reading, "PLANNING_THREADS", 2)
    events = list(qa.stream(AskRequest("Which documents mention 2025?")))  # three of the four have prompts
    assert seen and seen[0] >= 1  # another document's prompt was submitted first
    assert isinstance(events[0], CitationsEvent)  # the sources still come first, numbered in order
    numbers = [c.number for c in events[0].citations]
    assert numbers == list(range(1, len(numbers) + 1))
    assert sum(isinstance(e, ReadingEvent) for e in events) == 4


def test_a_part_whose_planning_fails_fails_the_question_with_its_error(
    qa: DocQA, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fails(run: object, chunks: list[RetrievedChunk]) -> object:
        raise InvalidRequestError("max_tokens 9999 leaves no room for the question")

    monkeypatch.setattr(reading, "_finding_prompt", fails)
    events = list(qa.stream(AskRequest("Which of these documents mention termination or notice?")))
    assert isinstance(events[-1], ErrorEvent) and "leaves no room" in events[-1].message


def test_a_finding_that_is_not_stated_is_named_as_such(tmp_path: Path) -> None:
    silent = FakeGenerator(NOT_STATED, max_queue=16)
    qa = _qa(tmp_path / "data", silent)
    try:
        answer = qa.ask(AskRequest("Which documents mention termination?"))
        assert answer.answer.startswith("Stated in 0 of 4 documents.")
        assert "Not stated in 4:" in answer.answer and not any(c.cited for c in answer.citations)
    finally:
        qa.close()
        silent.close()


def test_findings_are_read_without_reasoning_and_the_comparison_in_the_mode_asked(
    qa: DocQA, fake: FakeGenerator
) -> None:
    answer = qa.ask(AskRequest("Compare the services agreement and the supply contract", thinking=True))
    assert answer.mode == "thinking"
    findings = [(p, s) for p, s in zip(fake.prompts, fake.params, strict=True) if "<notes>" not in p]
    composed = [(p, s) for p, s in zip(fake.prompts, fake.params, strict=True) if "<notes>" in p]
    assert len(findings) == 2 and len(composed) == 1
    for prompt, params in findings:  # Qwen3's template with thinking off, and no reasoning budget
        assert prompt.endswith("<think>\n\n</think>\n\n") and params.thinking_budget is None
    assert not composed[0][0].endswith("</think>\n\n")  # the comparison may reason first


def _passage_tokens(prompt: str, fake: FakeGenerator) -> int:
    return fake.count_tokens("".join(re.findall(r"<source [^>]*>(.*?)</source>", prompt, flags=re.S)))


def test_what_short_documents_leave_of_their_share_goes_to_a_long_one(tmp_path: Path, fake: FakeGenerator) -> None:
    """Each document's share of a collection question's prompt tokens (docqa.answering.shares): three short
    notes need little of theirs, so the long report, whose clauses all hold the question's words, is given more
    than its own share; the question spends no more than the shares of all four."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for n in range(3):
        (folder / f"note{n}.txt").write_text(f"Note {n}. The warranty lasts one year.\n")
    clauses = "\n\n".join(f"Clause {n}. The warranty for part {n} lasts {n} years from delivery." for n in range(400))
    (folder / "report.txt").write_text(clauses + "\n")
    settings = make_settings(tmp_path / "data", reading=ReadingSettings(document_tokens=256, few_documents_tokens=256))
    qa = DocQA(settings, None, fake)
    try:
        qa.ingest([folder])
        qa.ask(AskRequest("Which of these documents say how long the warranty lasts?"))
        findings = {m: p for p in fake.prompts if "<notes>" not in p for m in _sources_by_document(p)}
        report = _passage_tokens(findings["report.txt"], fake)
        assert report > 256 + 128  # more than its own share
        assert sum(_passage_tokens(p, fake) for p in findings.values()) <= 4 * 256 + 64
    finally:
        qa.close()


def test_a_comparison_of_two_reads_far_more_of_each_than_a_collection_share(
    tmp_path: Path, fake: FakeGenerator
) -> None:
    settings = make_settings(tmp_path / "data", reading=ReadingSettings(document_tokens=256, few_documents_tokens=4096))
    qa = _qa(tmp_path / "data", fake, reading=settings.reading)
    try:
        qa.ask(AskRequest("Compare the services agreement and the supply contract on payment"))
        findings = [p for p in fake.prompts if "<notes>" not in p]
        assert len(findings) == 2 and max(_passage_tokens(p, fake) for p in findings) > 256 + 128
    finally:
        qa.close()
