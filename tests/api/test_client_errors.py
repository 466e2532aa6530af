"""What an attacker found in client input (issue: hardening, round two): each answer is a 4xx in docqa's error
shape, never a 500, never an echo of the input. Real HTTP over the scripted generator: no model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from docqa.core.events import CitationsEvent
from docqa.core.requests import AskRequest
from docqa.service import DocQA
from tests.support.fake_generator import FakeGenerator
from tests.support.live_server import free_port, serve_app
from tests.support.paths import SAMPLE_DOCS, make_settings

TOO_BIG = 2**63  # one past SQLite's largest INTEGER


@pytest.fixture
def served(fake_generator: FakeGenerator, tmp_path: Path) -> Iterator[tuple[str, DocQA]]:
    qa = DocQA(make_settings(tmp_path / "data"), None, fake_generator)
    qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt", SAMPLE_DOCS / "operations_handbook.md"])
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            yield base, qa
    finally:
        qa.close()


def _error(response: httpx.Response, status: int, kind: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and body["error"]["type"] == kind, body
    return str(body["error"]["message"])


def test_ids_past_sqlite_s_integers_are_not_found(served: tuple[str, DocQA]) -> None:
    base, _ = served
    _error(httpx.delete(f"{base}/v1/collections/default/documents/{TOO_BIG}"), 404, "DocumentNotFoundError")
    _error(httpx.get(f"{base}/v1/collections/default/chunks/{TOO_BIG}"), 404, "ChunkNotFoundError")
    asked = httpx.post(f"{base}/v1/ask", json={"question": "Which law?", "document_id": TOO_BIG * 4}, timeout=30)
    _error(asked, 404, "DocumentNotFoundError")


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_numbers_json_cannot_carry_back_are_refused_in_docqa_s_shape(served: tuple[str, DocQA], number: str) -> None:
    base, _ = served
    body = '{"question": "Which law governs?", "temperature": ' + number + "}"
    headers = {"Content-Type": "application/json"}
    message = _error(httpx.post(f"{base}/v1/ask", content=body, headers=headers, timeout=30), 422, "ValidationError")
    assert message.startswith("temperature: ")


def test_a_validation_error_never_echoes_the_input(served: tuple[str, DocQA]) -> None:
    base, _ = served
    response = httpx.post(f"{base}/v1/ask", json={"question": "x" * 200_000, "top_k": "many"}, timeout=30)
    message = _error(response, 422, "ValidationError")
    assert "top_k: Input should be a valid integer" in message and len(response.content) < 2_000


def test_a_lone_surrogate_is_a_400_not_a_tokenizer_crash(served: tuple[str, DocQA]) -> None:
    base, _ = served
    body = '{"question": "Which law \\ud800 governs?"}'
    response = httpx.post(f"{base}/v1/ask", content=body, headers={"Content-Type": "application/json"}, timeout=30)
    assert "question: " in _error(response, 422, "ValidationError")  # a str field: the schema refuses it
    chat = '{"model": "docqa/default", "messages": [{"role": "user", "content": "law? \\udfff"}]}'
    response = httpx.post(f"{base}/v1/chat/completions", content=chat, headers={"Content-Type": "application/json"})
    assert "lone surrogate" in _error(response, 400, "InvalidRequestError")


def test_a_collection_name_with_a_final_newline_is_refused(served: tuple[str, DocQA]) -> None:
    base, _ = served
    files = {"files": ("a.txt", b"Some text about the law of England.", "text/plain")}
    response = httpx.post(f"{base}/v1/collections/A%0A/documents", files=files, timeout=30)
    assert "invalid collection name" in _error(response, 400, "InvalidRequestError")


def test_an_answer_that_raced_a_delete_is_not_cached(served: tuple[str, DocQA]) -> None:
    """The stream's first event comes, its document is deleted, the answer finishes: it must not be
    served from the cache afterwards (it cites a document that is gone)."""
    _, qa = served
    question = AskRequest("Which law governs the services agreement?")
    events = qa.stream(question)
    first = next(events)
    assert isinstance(first, CitationsEvent)
    cited = first.citations[0].document_id
    qa.delete_document(cited)
    list(events)  # the answer finishes after the delete emptied the cache
    assert qa.cache_stats().entries == 0
    again = qa.ask(question)  # not replayed: asked of the collection as it is
    assert all(c.document_id != cited for c in again.citations)
