"""The service's one ask path, held to its contract over a scripted generator (no model): ask, stream
and astream give the same answer; the cache replays it; a question with no sources never reaches the
generator."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from docqa.answering.builder import NO_SOURCES_ANSWER
from docqa.core.events import AnswerDelta, AskEvent, CitationsEvent, DoneEvent, ReasoningDelta
from docqa.core.requests import AskRequest
from docqa.service import DocQA
from tests.support.fake_generator import SCRIPT, FakeGenerator
from tests.support.paths import SAMPLE_DOCS, make_settings

QUESTION = "Which law governs the services agreement?"


@pytest.fixture
def fake_qa(fake_generator: FakeGenerator, tmp_path: Path) -> Iterator[DocQA]:
    qa = DocQA(make_settings(tmp_path / "data"), None, fake_generator)
    qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt", SAMPLE_DOCS / "operations_handbook.md"])
    yield qa
    qa.close()


def _text(events: list[AskEvent], kind: type[AnswerDelta] | type[ReasoningDelta]) -> str:
    return "".join(e.text for e in events if isinstance(e, kind)).strip()


def test_ask_stream_and_astream_give_the_same_answer(fake_qa: DocQA) -> None:
    request = AskRequest(QUESTION, thinking=True, use_cache=False)
    answer = fake_qa.ask(request)
    streamed = list(fake_qa.stream(request))

    async def collect() -> list[AskEvent]:
        return [e async for e in fake_qa.astream(request)]

    for events in (streamed, asyncio.run(collect())):
        assert isinstance(events[0], CitationsEvent) and isinstance(events[-1], DoneEvent)
        assert _text(events, AnswerDelta) == answer.answer
        assert _text(events, ReasoningDelta) == answer.reasoning == "The agreement names its law."
        assert [c.document for c in events[-1].citations] == [c.document for c in answer.citations]
    assert answer.answer == "The agreement is governed by the laws of England [1]."
    assert answer.citations[0].document == "services_agreement_en.txt" and answer.citations[0].cited
    assert answer.timings.completion_tokens == len(SCRIPT.split())  # a word a token
    assert len(fake_qa.generator.prompts) == 3  # type: ignore[union-attr]


def test_a_repeated_question_is_replayed_from_the_cache_without_generating(fake_qa: DocQA) -> None:
    first = fake_qa.ask(AskRequest(QUESTION))
    events = list(fake_qa.stream(AskRequest(QUESTION.lower())))
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.cached and done.as_dict()["cached"] is True
    assert _text(events, AnswerDelta) == first.answer
    assert len(fake_qa.generator.prompts) == 1  # type: ignore[union-attr]
    assert fake_qa.cache_stats().hits == 1
    assert first.cached is False and first.as_dict()["cached"] is False
    again = fake_qa.ask(AskRequest(QUESTION))
    assert again.cached is True and again.as_dict()["cached"] is True
    # the replay keeps the counts it was generated with (usage reports do not drop to 0/0)
    assert (again.timings.prompt_tokens, again.timings.completion_tokens) == (
        first.timings.prompt_tokens,
        first.timings.completion_tokens,
    )
    assert done.timings.completion_tokens == first.timings.completion_tokens > 0


def test_a_prompt_budget_is_part_of_the_cache_key(fake_qa: DocQA) -> None:
    first = fake_qa.ask(AskRequest(QUESTION))
    fake_qa.settings.llm.prompt_budget = 1024  # sources cut to a budget: another prompt, another answer
    cut = fake_qa.ask(AskRequest(QUESTION))
    assert first.cached is False and cut.cached is False
    assert fake_qa.ask(AskRequest(QUESTION)).cached is True  # the same budget: the cut answer again


def test_a_blank_answer_is_never_cached(fake_qa: DocQA) -> None:
    generator = fake_qa.generator
    assert isinstance(generator, FakeGenerator)
    generator.script = "\n\n   \n"  # a small model's blank lines
    first = fake_qa.ask(AskRequest(QUESTION))
    assert first.answer == "" and first.finish_reason == "stop"
    generator.script = "The laws of England [1]."
    second = fake_qa.ask(AskRequest(QUESTION))
    assert second.cached is False and second.answer == "The laws of England [1]."
    assert len(generator.prompts) == 2 and fake_qa.cache_stats().hits == 0


def test_an_answer_that_repeats_itself_is_stopped_and_not_cached(fake_qa: DocQA) -> None:
    generator = fake_qa.generator
    assert isinstance(generator, FakeGenerator)
    generator.script = "The laws of England [1]." + " and again" * 400
    answer = fake_qa.ask(AskRequest(QUESTION))
    assert answer.finish_reason == "repetition" and answer.answer.startswith("The laws of England [1].")
    assert answer.timings.completion_tokens < 200  # stopped, not run to its 800 words
    assert answer.answer.count("and again") == 1  # the repeats let through are cut (issue 40, 5)
    assert fake_qa.ask(AskRequest(QUESTION)).cached is False


def test_thinking_asked_of_a_model_without_it_is_said_and_not_pretended(tmp_path: Path) -> None:
    generator = FakeGenerator("The laws of England [1].", prompt_format="gemma")
    qa = DocQA(make_settings(tmp_path / "data"), None, generator)
    try:
        qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt"])
        events = list(qa.stream(AskRequest(QUESTION, thinking=True)))
        opening = events[0]
        assert isinstance(opening, CitationsEvent) and opening.mode == "non-thinking"
        assert opening.warnings == (
            "fake-generator has no thinking mode (only Qwen3 models do): answered without thinking",
        )
        assert opening.as_dict()["warnings"] == list(opening.warnings)
        answer = qa.ask(AskRequest(QUESTION, thinking=True))  # the same question: the cache, warning kept
        assert answer.cached and answer.mode == "non-thinking" and answer.warnings == list(opening.warnings)
        assert generator.params[0].thinking_budget is None and "<think>" not in generator.prompts[0]
        plain = qa.ask(AskRequest(QUESTION))
        assert plain.warnings == [] and not plain.cached  # an entry of its own, without the warning
    finally:
        qa.close()
        generator.close()


def test_a_question_nothing_matches_is_declined_without_the_generator(fake_qa: DocQA) -> None:
    answer = fake_qa.ask(AskRequest("zzqxv wqpfk"))
    assert answer.answer == NO_SOURCES_ANSWER and answer.finish_reason == "no_sources"
    assert fake_qa.generator.prompts == []  # type: ignore[union-attr]


def test_status_and_collections_describe_the_service(fake_qa: DocQA) -> None:
    status = fake_qa.status()
    assert (status.generator, status.embedder, status.reranker) == ("fake-generator", None, None)
    assert status.engine is not None and status.engine.kind == "fake"
    [summary] = fake_qa.collections()
    assert (summary.name, summary.ready, summary.documents) == ("default", 2, {"ready": 2})
    assert summary.chunks == fake_qa.count_chunks() > 0


def test_an_asks_thinking_budget_reaches_the_generator_and_files_another_answer(tmp_path: Path) -> None:
    """Issue 44 item 3: the thinking budget is the ask's to set (the page's settings panel), over the server's."""
    generator = FakeGenerator("The laws of England [1].", prompt_format="qwen3")
    settings = make_settings(tmp_path / "data", llm={"thinking_budget": 512})
    qa = DocQA(settings, None, generator)
    try:
        qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt"])
        assert not qa.ask(AskRequest(QUESTION, thinking=True)).cached
        assert generator.params[-1].thinking_budget == 512  # the server's
        assert not qa.ask(AskRequest(QUESTION, thinking=True, thinking_budget=64)).cached  # another entry
        assert generator.params[-1].thinking_budget == 64
        assert qa.ask(AskRequest(QUESTION, thinking=True, thinking_budget=64)).cached
        qa.ask(AskRequest("Which law governs the agreement, in short?", thinking_budget=64))
        assert generator.params[-1].thinking_budget is None  # no thinking: no budget
    finally:
        qa.close()
        generator.close()


@pytest.mark.parametrize("workers", [1, 3])
def test_asks_are_prepared_by_at_most_the_workers_setting_at_once(
    fake_generator: FakeGenerator, tmp_path: Path, workers: int
) -> None:
    """Retrieval and the prompt run in `retrieval.workers` threads: a burst of asks beyond them waits its
    turn, so the first asks reach the generator while the rest are still being retrieved."""
    qa = DocQA(make_settings(tmp_path / "data", retrieval={"workers": workers}), None, fake_generator)
    qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt"])
    start = qa._asker.start
    busy, most = [0], [0]
    lock = threading.Lock()

    def counted_start(request: AskRequest):  # type: ignore[no-untyped-def]
        with lock:
            busy[0] += 1
            most[0] = max(most[0], busy[0])
        try:
            time.sleep(0.05)
            return start(request)
        finally:
            with lock:
                busy[0] -= 1

    qa._asker.start = counted_start  # type: ignore[method-assign]

    async def burst() -> None:
        async def one(i: int) -> None:
            [e async for e in qa.astream(AskRequest(f"{QUESTION} ({i})", use_cache=False))]

        await asyncio.gather(*(one(i) for i in range(6)))

    try:
        asyncio.run(burst())
    finally:
        qa.close()
    assert most[0] == workers
