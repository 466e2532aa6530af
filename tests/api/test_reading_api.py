"""Questions over whole documents and collections through real HTTP, on SQLite and Postgres, over the
scripted generator: the scope in the answer, the reading events of a stream, the OpenAI route's choice and
its override, and the CLI's table."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from docqa.core.settings import IngestSettings
from docqa.service import DocQA
from tests.support.fake_generator import FakeGenerator
from tests.support.live_server import free_port, serve_app, sse_events
from tests.support.paths import SAMPLE_DOCS, make_settings

FINDING = "It says so [1]."
QUESTION = "Which of these documents mention 2025?"


@pytest.fixture
def fake() -> Iterator[FakeGenerator]:
    gen = FakeGenerator(FINDING, max_queue=16, parallel=2)
    yield gen
    gen.close()


@pytest.fixture(params=["sqlite", "postgres"])
def server(fake: FakeGenerator, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    database = request.getfixturevalue("postgres_url") if request.param == "postgres" else None
    inline = IngestSettings(uploads="inline")
    qa = DocQA(make_settings(tmp_path / "data", database_url=database, ingest=inline), None, fake)
    qa.ingest([SAMPLE_DOCS])
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            yield base
    finally:
        qa.close()


def test_a_collection_question_streams_reading_events_then_its_table(server: str) -> None:
    with httpx.stream("POST", f"{server}/v1/ask", json={"question": QUESTION, "stream": True}, timeout=30) as r:
        events = list(sse_events(r))
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "citations" and events[0][1]["scope"] == "collection" and kinds[-1] == "done"
    reading = [data for kind, data in events if kind == "reading"]
    assert [d["read"] for d in reading] == [1, 2, 3, 4] and {d["total"] for d in reading} == {4}
    text = "".join(data["text"] for kind, data in events if kind == "answer")
    assert text.startswith("Stated in ") and "| Document | Finding | Pages |" in text
    cited = [c for c in events[-1][1]["citations"] if c["cited"]]
    assert cited and all(f"[{c['number']}]" in text for c in cited)


def test_the_scope_is_said_and_can_be_set(server: str) -> None:
    chosen = httpx.post(f"{server}/v1/ask", json={"question": QUESTION}, timeout=30).json()
    assert (chosen["scope"], chosen["documents_read"]) == ("collection", 4)
    forced = httpx.post(f"{server}/v1/ask", json={"question": QUESTION, "scope": "lookup"}, timeout=30).json()
    assert (forced["scope"], forced["documents_read"]) == ("lookup", 0)
    wrong = httpx.post(f"{server}/v1/ask", json={"question": QUESTION, "scope": "everything"}, timeout=30)
    assert wrong.status_code == 422
    lonely = httpx.post(f"{server}/v1/ask", json={"question": "Compare them", "scope": "compare"}, timeout=30)
    assert lonely.status_code == 400 and "two or more documents" in lonely.json()["error"]["message"]


def test_the_openai_route_chooses_the_scope_from_the_question_or_takes_it(server: str) -> None:
    def chat(**extra: object) -> dict[str, object]:
        body = {"model": "docqa/default", "messages": [{"role": "user", "content": QUESTION}], **extra}
        reply = httpx.post(f"{server}/v1/chat/completions", json=body, timeout=30)
        assert reply.status_code == 200, reply.text
        return reply.json()

    chosen = chat()
    content = chosen["choices"][0]["message"]["content"]  # type: ignore[index]
    assert content.startswith("Stated in ") and "Sources:" in content
    forced = chat(scope="lookup")
    assert not forced["choices"][0]["message"]["content"].startswith("Stated in ")  # type: ignore[index]


def test_a_streamed_openai_collection_answer_holds_the_table(server: str) -> None:
    body = {"model": "docqa/default", "messages": [{"role": "user", "content": QUESTION}], "stream": True}
    with httpx.stream("POST", f"{server}/v1/chat/completions", json=body, timeout=30) as r:
        lines = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
    chunks = [json.loads(line) for line in lines[:-1]]
    content = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert "| Document | Finding | Pages |" in content and lines[-1] == "[DONE]"
