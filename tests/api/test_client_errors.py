"""What an attacker found in client input (issue: hardening, round two): each answer is a 4xx in docqa's error
shape, never a 500, never an echo of the input. Real HTTP over the scripted generator: no model."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from docqa.core.events import CitationsEvent
from docqa.core.requests import AskRequest
from docqa.core.sampling_params import NON_THINKING_SAMPLING
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


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ({"n": 2}, "n"),
        ({"tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": "required"}, "tool_choice"),
        ({"tool_choice": {"type": "function", "function": {"name": "f"}}}, "tool_choice"),
        ({"response_format": {"type": "json_object"}}, "response_format"),
        ({"logprobs": True}, "logprobs"),
    ],
)
def test_openai_options_docqa_cannot_honour_are_refused(
    served: tuple[str, DocQA], extra: dict[str, object], named: str
) -> None:
    base, _ = served
    body = {"model": "docqa/default", "messages": [{"role": "user", "content": "Which law governs?"}], **extra}
    message = _error(httpx.post(f"{base}/v1/chat/completions", json=body, timeout=30), 400, "InvalidRequestError")
    assert message == f"not supported by docqa: {named} (docqa writes one text answer)"


def test_offered_tools_are_answered_in_text(served: tuple[str, DocQA]) -> None:
    """Open WebUI offers its tools with every message (tool_choice unset: 'auto'); docqa was refusing them all."""
    base, _ = served
    tools = [{"type": "function", "function": {"name": "search_web", "parameters": {"type": "object"}}}]
    for choice in ({}, {"tool_choice": "auto"}, {"tool_choice": "none"}):
        body = {
            "model": "docqa/default",
            "messages": [{"role": "user", "content": "Which law governs?"}],
            "tools": tools,
        }
        r = httpx.post(f"{base}/v1/chat/completions", json={**body, **choice}, timeout=30)
        assert r.status_code == 200, r.text
        message = r.json()["choices"][0]["message"]
        assert message["content"] and not message.get("tool_calls")


def test_openai_stop_strings_reach_the_generator(served: tuple[str, DocQA], fake_generator: FakeGenerator) -> None:
    base, _ = served
    body = {"model": "docqa/default", "messages": [{"role": "user", "content": "Which law governs?"}], "stop": "##"}
    assert httpx.post(f"{base}/v1/chat/completions", json=body, timeout=30).status_code == 200
    assert "##" in fake_generator.params[-1].stop
    five = {**body, "stop": ["a", "b", "c", "d", "e"]}
    message = _error(httpx.post(f"{base}/v1/chat/completions", json=five, timeout=30), 400, "InvalidRequestError")
    assert message == "stop: at most 4 non-empty strings"


def test_the_api_page_works_offline_from_docqa_s_own_files(served: tuple[str, DocQA]) -> None:
    base, _ = served
    page = httpx.get(f"{base}/docs")
    assert page.status_code == 200 and "/docs-assets/swagger-ui-bundle.js" in page.text
    assert "cdn" not in page.text.lower() and "/openapi.json" in page.text
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        served_asset = httpx.get(f"{base}/docs-assets/{asset}")
        assert served_asset.status_code == 200 and len(served_asset.content) > 100_000
    assert httpx.get(f"{base}/openapi.json").json()["info"]["title"] == "docqa"


def test_with_api_keys_the_schema_and_the_health_details_need_one(
    fake_generator: FakeGenerator, tmp_path: Path
) -> None:
    settings = make_settings(tmp_path / "data", api={"keys": "k-one,k-two"})
    qa = DocQA(settings, None, fake_generator)
    key = {"Authorization": "Bearer k-two"}
    try:
        with serve_app(settings, qa, free_port()) as base:
            assert httpx.get(f"{base}/docs").status_code == 404 and httpx.get(f"{base}/redoc").status_code == 404
            assert httpx.get(f"{base}/openapi.json").status_code == 401
            schema = httpx.get(f"{base}/openapi.json", headers=key).json()
            assert "HTTPBearer" in schema["components"]["securitySchemes"]
            assert httpx.get(f"{base}/health").json() == {"status": "ok"}  # no model file names without a key
            assert httpx.get(f"{base}/health", headers=key).json()["generator"] == "fake-generator"
    finally:
        qa.close()


def test_a_non_streamed_ask_whose_client_hangs_up_is_cancelled(
    served: tuple[str, DocQA], fake_generator: FakeGenerator
) -> None:
    """Its place in the generator's queue is freed when the client goes, not when the answer would be done."""
    base, _ = served
    fake_generator.paused.set()  # the ask waits in the queue
    try:
        for path, body in (
            ("/v1/ask", {"question": "Which law governs?", "cache": False}),
            ("/v1/chat/completions", {"model": "docqa/default", "messages": [{"role": "user", "content": "Law?"}]}),
        ):
            with pytest.raises(httpx.ReadTimeout):
                httpx.post(f"{base}{path}", json=body, timeout=httpx.Timeout(30, read=1.0))
            deadline = time.monotonic() + 5
            while fake_generator.live_waiting() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert fake_generator.live_waiting() == 0, path
    finally:
        fake_generator.paused.clear()


def test_non_streamed_asks_get_429_from_the_queue_bound(
    served: tuple[str, DocQA], fake_generator: FakeGenerator
) -> None:
    base, _ = served
    fake_generator.paused.set()
    held = [fake_generator.submit("filler", NON_THINKING_SAMPLING) for _ in range(4)]  # the queue's bound
    try:
        response = httpx.post(f"{base}/v1/ask", json={"question": "Which law governs?", "cache": False}, timeout=30)
        assert int(response.headers["retry-after"]) > 0
        _error(response, 429, "BusyError")
    finally:
        for stream in held:
            stream.cancel()
        fake_generator.paused.clear()


def test_a_huge_chat_history_is_refused_before_it_holds_the_server(served: tuple[str, DocQA]) -> None:
    """Issue 60, item 7: 2.3 million tiny messages in a 94 MB body held the event loop (/health 11.5 s). A body
    that is no upload is bounded (16 MiB: 413 as it arrives), and a history is counted before any message of it
    is validated."""
    base, _ = served
    tiny = {"role": "user", "content": "x"}
    huge = b'{"model": "docqa", "messages": [' + b",".join([b'{"role":"user","content":"x"}'] * 700_000) + b"]}"
    assert len(huge) > 16 * 2**20
    refused = httpx.post(f"{base}/v1/chat/completions", content=huge, headers={"content-type": "application/json"})
    assert "DOCQA_API_MAX_JSON_MB" in _error(refused, 413, "PayloadTooLarge")
    many = httpx.post(f"{base}/v1/chat/completions", json={"model": "docqa", "messages": [tiny] * 5_000}, timeout=30)
    assert "at most 4,096 messages, not 5,000" in _error(many, 422, "ValidationError")
    fine = httpx.post(f"{base}/v1/chat/completions", json={"model": "docqa", "messages": [tiny] * 3}, timeout=60)
    assert fine.status_code == 200
    upload = httpx.post(  # an upload keeps its own, larger bound: 17 MiB arrive, and the file fails alone
        f"{base}/v1/collections/default/documents",
        files={"files": ("scan.pdf", b"not a pdf " * 1_800_000, "application/pdf")},
        timeout=120,
    )
    assert upload.status_code != 413 and "scan.pdf" in upload.text, upload.text


def test_true_is_no_rating_and_no_is_no_switch(served: tuple[str, DocQA]) -> None:
    """Issue 60 (weak): a rating of true was kept as 1, and enable_thinking "no" turned thinking on."""
    base, _ = served
    url = f"{base}/v1/collections/default/conversations"
    cid = httpx.post(url, json={}).json()["id"]
    message = httpx.post(f"{url}/{cid}/messages", json={"question": "Which law governs?"}, timeout=60).json()
    rated = httpx.post(f"{url}/{cid}/messages/{message['message_id']}/feedback", json={"rating": True})
    assert "1 or -1, not true or false" in _error(rated, 422, "ValidationError")
    assert httpx.get(f"{url}/{cid}").json()["messages"][0]["feedback"] is None
    body = {
        "model": "docqa",
        "messages": [{"role": "user", "content": "Which law governs?"}],
        "chat_template_kwargs": {"enable_thinking": "no"},
    }
    asked = httpx.post(f"{base}/v1/chat/completions", json=body, timeout=60)
    assert "enable_thinking: true or false" in _error(asked, 400, "InvalidRequestError")


def test_a_malformed_database_url_is_one_line_naming_it_without_its_password(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from docqa.cli.main import main

    env = {"DOCQA_DATABASE_URL": "postgresql+psycopg://user:s3cret@host:notaport/db", "DOCQA_DATA_DIR": str(tmp_path)}
    result = CliRunner().invoke(main, ["docs", "list"], env=env)
    assert result.exit_code != 0 and "Traceback" not in result.output and "s3cret" not in result.output
    assert "DOCQA_DATABASE_URL: a malformed URL" in result.output


def test_an_uploaded_table_names_its_pages_as_it_was_uploaded(served: tuple[str, DocQA]) -> None:
    base, qa = served
    table = {"files": ("../renewals 2024.csv", b"Customer,Fee\nAcme,100\n", "text/csv")}
    assert httpx.post(f"{base}/v1/collections/tables/documents", files=table, timeout=60).status_code == 200
    (hit,) = qa.retrieve("Acme fee", 1, collection="tables")
    assert hit.document_name == "renewals 2024.csv" and "Table: renewals 2024.csv (rows 2-2 of 2)" in hit.text
