"""The REST API on a Postgres store (DOCQA_DATABASE_URL) over real HTTP, with the scripted generator:
collections stay isolated, uploads get 413 and 415 as on SQLite, a delete drops cached answers, and
`docqa check` finds the database consistent."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from docqa.core.settings import IngestSettings
from docqa.service import DocQA
from tests.support.fake_generator import FakeGenerator
from tests.support.live_server import free_port, serve_app
from tests.support.paths import SAMPLE_DOCS, make_settings
from tests.support.pdf_factory import encrypted_copy
from tests.support.postgres import TestPostgres


@pytest.fixture
def pg_server(fake_generator: FakeGenerator, tmp_path: Path, postgres_url: str) -> Iterator[tuple[str, DocQA]]:
    settings = make_settings(
        tmp_path / "data", database_url=postgres_url, max_upload_mb=1, ingest=IngestSettings(uploads="inline")
    )
    qa = DocQA(settings, None, fake_generator)
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            yield base, qa
    finally:
        qa.close()


def _upload(base: str, collection: str, files: list[tuple[str, bytes]]) -> httpx.Response:
    parts = [("files", (name, data, "text/plain")) for name, data in files]
    return httpx.post(f"{base}/v1/collections/{collection}/documents", files=parts, timeout=60)


def test_collections_are_isolated_on_postgres(pg_server: tuple[str, DocQA]) -> None:
    base, _ = pg_server
    r = _upload(base, "alpha", [("vault.txt", b"The vault code of Project Heliotrope is 4471-ZETA.")])
    assert r.status_code == 200, r.text
    doc_id = r.json()["files"][0]["document_id"]
    assert _upload(base, "beta", [("menu.txt", b"The canteen serves soup on Mondays.")]).status_code == 200
    answer = httpx.post(
        f"{base}/v1/ask",
        json={"question": "What is the vault code of Project Heliotrope, and what is served on Mondays?",
              "collection": "beta"},
        timeout=60,
    ).json()  # fmt: skip
    assert [c["document"] for c in answer["citations"]] == ["menu.txt"]
    assert httpx.delete(f"{base}/v1/collections/beta/documents/{doc_id}").status_code == 404
    r = httpx.post(f"{base}/v1/ask", json={"question": "vault?", "collection": "beta", "document_id": doc_id})
    assert r.status_code == 404
    assert [d["id"] for d in httpx.get(f"{base}/v1/collections/alpha/documents").json()["documents"]] == [doc_id]


def test_uploads_get_413_and_415_on_postgres(pg_server: tuple[str, DocQA]) -> None:
    base, qa = pg_server
    r = _upload(base, "default", [("big.txt", b"a" * (2 * 2**20))])
    assert r.status_code == 413 and "1 MiB limit" in r.json()["error"]["message"]
    r = httpx.post(
        f"{base}/v1/collections/default/documents",
        files=[("files", ("notes.pages", b"PK\x03\x04", "application/octet-stream"))],
    )
    assert r.status_code == 415
    assert [c.name for c in qa.store.collections()] == []  # nothing recorded for either


def test_a_delete_drops_the_cached_answer_and_check_is_clean(pg_server: tuple[str, DocQA]) -> None:
    base, qa = pg_server
    r = _upload(base, "default", [("law.txt", b"This agreement is governed by the laws of England.")])
    doc_id = r.json()["files"][0]["document_id"]
    _upload(base, "default", [("other.txt", b"Invoices are paid within thirty days of receipt.")])
    body = {"question": "Which law governs the agreement?"}
    assert not httpx.post(f"{base}/v1/ask", json=body, timeout=60).json().get("cached")
    assert httpx.post(f"{base}/v1/ask", json=body, timeout=60).json()["cached"]
    assert httpx.delete(f"{base}/v1/collections/default/documents/{doc_id}").status_code == 204
    again = httpx.post(f"{base}/v1/ask", json=body, timeout=60).json()
    assert not again.get("cached") and all(c["document"] != "law.txt" for c in again["citations"])
    assert all(report.ok for report in qa.check())


def test_a_database_gone_mid_run_is_a_503_and_health_says_so(
    pg_server: tuple[str, DocQA], postgres_server: TestPostgres, postgres_url: str
) -> None:
    base, _ = pg_server
    assert _upload(base, "default", [("a.txt", b"Some text to keep.")]).status_code == 200
    name = postgres_url.split("?")[0].rsplit("/", 1)[-1]
    with psycopg.connect(postgres_server.uri, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')  # every connection of the pool cut off
    for request in (
        lambda: httpx.get(f"{base}/v1/collections/default/documents"),
        lambda: httpx.post(f"{base}/v1/ask", json={"question": "What is kept?"}),
    ):
        r = request()
        assert r.status_code == 503, r.text
        error = r.json()["error"]
        assert error["type"] == "DatabaseUnavailableError" and "database is unavailable" in error["message"]
        assert name not in error["message"] and "/" not in error["message"]  # no server paths (issue 41, 14)
    deadline = time.monotonic() + 15  # /health looks again every few seconds; it said "ok" while asks failed
    while (health := httpx.get(f"{base}/health")).status_code == 200 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert health.status_code == 503 and health.json()["status"] == "degraded"
    assert health.json()["down"] == ["database"]
    assert "/" not in health.json()["detail"]["database"]  # open details (no keys here), still no server paths


def test_a_queued_upload_with_a_pdf_password_is_ingested_in_the_request(
    fake_generator: FakeGenerator, tmp_path: Path, postgres_url: str
) -> None:
    """Issue 41, item 4: the password of a queued upload was dropped and its job failed 'password required'.
    A password is never stored with a job: such an upload is ingested in the request."""
    locked = encrypted_copy(SAMPLE_DOCS / "annual_report_2025.pdf", tmp_path / "locked.pdf", "s3cret")
    settings = make_settings(tmp_path / "data", database_url=postgres_url, ingest=IngestSettings(uploads="queue"))
    qa = DocQA(settings, None, fake_generator)
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            url = f"{base}/v1/collections/vault/documents"
            parts = [("files", ("locked.pdf", locked.read_bytes(), "application/pdf"))]
            r = httpx.post(url, files=parts, data={"password": "s3cret"}, timeout=60)
            assert r.status_code == 200 and r.json()["added"] == 1, r.text
            queued = httpx.post(url, files=[("files", ("notes.txt", b"Rent is due monthly.", "text/plain"))])
            assert queued.status_code == 202  # without a password uploads still queue
    finally:
        qa.close()
