"""The REST API over real HTTP (uvicorn on loopback), real models and real index files."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from docqa.api.main import create_app
from docqa.api.state import AppState
from docqa.service import DocQA
from tests.support.live_server import sse_events
from tests.support.paths import SAMPLE_DOCS

pytestmark = pytest.mark.slow


def test_health_and_document_listing(live_server: str) -> None:
    health = httpx.get(f"{live_server}/health").json()
    assert health["status"] == "ok" and health["reranker"] is None
    assert health["engine"]["kv_cells"] > 0 and health["engine"]["kv_cache_bytes"] > 0
    # on the CPU nothing is cut to fit a GPU: the cells asked are the cells held
    assert health["engine"]["kv_cells_asked"] == health["engine"]["kv_cells"]
    assert 0 < health["engine"]["context_tokens"] <= health["engine"]["kv_cells"]
    docs = httpx.get(f"{live_server}/v1/collections/default/documents").json()["documents"]
    assert len(docs) == 4 and all("source" not in d for d in docs)
    # where each came from, without the server's directories: the folder it was in and its name
    assert {d["origin"] for d in docs} >= {"sample_docs/annual_report_2025.pdf", "sample_docs/supply_contract_zh.txt"}


def test_ask_json(live_server: str) -> None:
    r = httpx.post(
        f"{live_server}/v1/ask",
        json={"question": "What was Northwind's revenue in 2025?", "max_tokens": 16, "seed": 1},
        timeout=120,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) >= {"answer", "reasoning", "mode", "citations", "timings"}
    top = max(body["citations"], key=lambda c: c["score"])
    assert top["document"] == "annual_report_2025.pdf" and top["page"] == 2


def test_ignore_eos_generates_max_tokens_and_skips_the_answer_cache(live_server: str, sample_qa: DocQA) -> None:
    """For benchmarks (as llama-server's ignore_eos): every answer exactly max_tokens long, where the server
    accepts benchmark requests; elsewhere refused, naming the setting, and absent from the API's schema."""
    body = {"question": "Who is the chief executive of Northwind Robotics?", "max_tokens": 40, "seed": 2}
    refused = httpx.post(f"{live_server}/v1/ask", json={**body, "ignore_eos": True}, timeout=120)
    assert refused.status_code == 400 and "DOCQA_API_BENCHMARK_REQUESTS" in refused.json()["error"]["message"]
    schema = httpx.get(f"{live_server}/openapi.json").json()["components"]["schemas"]["AskBody"]["properties"]
    assert "ignore_eos" not in schema and "max_tokens" in schema
    normal = httpx.post(f"{live_server}/v1/ask", json=body, timeout=120).json()
    assert normal["timings"]["completion_tokens"] < 40  # the demo model ends this answer early
    sample_qa.settings.api.benchmark_requests = True  # as a benchmark's server is started
    forced = httpx.post(f"{live_server}/v1/ask", json={**body, "ignore_eos": True}, timeout=120).json()
    assert forced["timings"]["completion_tokens"] == 40 and not forced.get("cached")


def test_ask_streams_server_sent_events_token_by_token(live_server: str) -> None:
    body = {"question": "Who is the CEO of Northwind Robotics?", "max_tokens": 24, "seed": 3, "stream": True}
    arrivals: list[float] = []
    with httpx.stream("POST", f"{live_server}/v1/ask", json=body, timeout=120) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = []
        for event in sse_events(r):
            events.append(event)
            arrivals.append(time.monotonic())
    kinds = [k for k, _ in events]
    assert kinds[0] == "citations" and kinds[-1] == "done"
    answer_events = [d for k, d in events if k == "answer"]
    assert len(answer_events) >= 2, "the answer arrives in several pieces, not one buffered blob"
    assert arrivals[-1] > arrivals[1], "events are spread over time"
    assert events[-1][1]["timings"]["completion_tokens"] <= 24


def test_upload_list_ask_delete(live_server: str) -> None:
    files = [
        ("files", ("contract.txt", (SAMPLE_DOCS / "services_agreement_en.txt").read_bytes(), "text/plain")),
        ("files", ("report.pdf", (SAMPLE_DOCS / "annual_report_2025.pdf").read_bytes(), "application/pdf")),
        ("files", ("broken.pdf", b"%PDF-1.4\nnot really", "application/pdf")),
    ]
    r = httpx.post(f"{live_server}/v1/collections/uploads/documents", files=files, timeout=300)
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["added"] == 2 and [f["path"] for f in report["failed"]] == ["broken.pdf"]
    again = httpx.post(f"{live_server}/v1/collections/uploads/documents", files=files[:1], timeout=300).json()
    assert again["unchanged"] == 1

    docs = httpx.get(f"{live_server}/v1/collections/uploads/documents").json()["documents"]
    contract = next(d for d in docs if d["name"] == "contract.txt")
    answer = httpx.post(
        f"{live_server}/v1/ask",
        json={"question": "Which law governs the agreement?", "collection": "uploads", "max_tokens": 8},
        timeout=120,
    ).json()
    assert answer["citations"][0]["document"] in {"contract.txt", "report.pdf"}

    assert httpx.delete(f"{live_server}/v1/collections/uploads/documents/{contract['id']}").status_code == 204
    assert httpx.delete(f"{live_server}/v1/collections/uploads/documents/{contract['id']}").status_code == 404
    # a document of one collection is not reachable through another
    assert httpx.delete(f"{live_server}/v1/collections/default/documents/{docs[0]['id']}").status_code == 404


def test_errors_are_clear_and_carry_no_traceback(live_server: str) -> None:
    r = httpx.post(f"{live_server}/v1/ask", json={"question": "q", "collection": "nope"})
    assert r.status_code == 404 and "'nope' does not exist" in r.json()["error"]["message"]
    r = httpx.post(f"{live_server}/v1/ask", json={"question": "q", "collection": "nope", "stream": True})
    assert r.status_code == 404
    assert httpx.post(f"{live_server}/v1/ask", json={"question": ""}).status_code == 422
    r = httpx.post(
        f"{live_server}/v1/collections/default/documents",
        files=[("files", ("evil.pdf", b"PK\x03\x04zip", "application/pdf"))],
    )
    assert r.status_code == 415 and "not a PDF" in r.json()["error"]["message"]
    r = httpx.post(
        f"{live_server}/v1/collections/default/documents",
        files=[("files", ("../../etc/passwd.txt", b"hello", "text/plain"))],
        timeout=60,
    )
    assert r.status_code == 200 and r.json()["files"][0]["path"] == "passwd.txt"
    for resp in (r,):
        assert "Traceback" not in resp.text and "/tmp" not in resp.text


def test_oversized_upload_gets_413(sample_qa, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from fastapi.testclient import TestClient

    settings = sample_qa.settings.model_copy(update={"max_upload_mb": 1})
    state = AppState(settings, qa=sample_qa)
    state.loaded.set()
    with TestClient(create_app(state=state), base_url="http://localhost") as client:
        big = b"a" * (2 * 2**20)
        r = client.post("/v1/collections/default/documents", files=[("files", ("big.txt", big, "text/plain"))])
        assert r.status_code == 413 and "1 MiB limit" in r.json()["error"]["message"]

        def chunked() -> Iterator[bytes]:  # no Content-Length: the limit is enforced while the body streams
            for _ in range(4):
                yield b"x" * 2**19

        r = client.post(
            "/v1/collections/default/documents",
            content=chunked(),
            headers={"content-type": "multipart/form-data; boundary=zzz"},
        )
        assert r.status_code == 413


def test_health_is_503_until_the_models_are_loaded(settings) -> None:  # type: ignore[no-untyped-def]
    from fastapi.testclient import TestClient

    state = AppState(settings)
    state.loaded.set()  # as if loading were still going on: no models yet
    with TestClient(create_app(state=state), base_url="http://localhost") as client:
        assert client.get("/health").status_code == 503
        r = client.post("/v1/ask", json={"question": "q"})
        assert r.status_code == 503 and "loading" in r.json()["error"]["message"]


def test_concurrent_asks_are_queued_safely(live_server: str) -> None:
    results: list[int] = []

    def one(i: int) -> None:
        r = httpx.post(
            f"{live_server}/v1/ask",
            json={"question": f"What does section {i} say?", "max_tokens": 6, "seed": i},
            timeout=300,
        )
        results.append(r.status_code)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [200] * 4


def test_api_keys_guard_every_route_but_health(sample_qa) -> None:  # type: ignore[no-untyped-def]
    from fastapi.testclient import TestClient

    settings = sample_qa.settings.model_copy(
        update={"api": sample_qa.settings.api.model_copy(update={"keys": "first-key, second-key"})}
    )
    state = AppState(settings, qa=sample_qa)
    state.loaded.set()
    with TestClient(create_app(state=state), base_url="http://localhost") as client:
        assert client.get("/health").status_code == 200
        url = "/v1/collections/default/documents"
        assert client.get(url).status_code == 401
        r = client.get(url, headers={"Authorization": "Bearer wrong-key"})
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert "wrong-key" not in r.text
        assert client.get(url, headers={"Authorization": "Basic second-key"}).status_code == 401
        assert client.get(url, headers={"Authorization": "Bearer second-key"}).status_code == 200
        assert client.post("/v1/ask", json={"question": "q"}).status_code == 401


def test_ask_takes_the_question_before_a_follow_up(live_server: str) -> None:
    """The earlier question is searched with the follow-up (here it moves the one chunk asked for from
    the services agreement to the handbook); a blank one changes nothing."""
    body = {"question": "What is the notice period?", "max_tokens": 4, "seed": 1, "top_k": 1, "cache": False}
    alone = httpx.post(f"{live_server}/v1/ask", json=body, timeout=120).json()
    assert alone["citations"][0]["document"] == "services_agreement_en.txt"
    earlier = "What response time does a severity 1 incident get under the support operations handbook?"
    follow_up = httpx.post(f"{live_server}/v1/ask", json={**body, "earlier_question": earlier}, timeout=120).json()
    assert follow_up["citations"][0]["document"] == "operations_handbook.md"
    blank = httpx.post(f"{live_server}/v1/ask", json={**body, "earlier_question": "  "}, timeout=120).json()
    assert blank["citations"] == alone["citations"]
    assert blank["timings"]["prompt_tokens"] == alone["timings"]["prompt_tokens"]
