"""A full disk is a clear error that loses nothing (issue 32, item 4): an upload fails per file with "disk full
at DATA_DIR", an ask still answers when its cache cannot be written, and any other write is a 507. The disk
is filled by making SQLite or the OS say so, through real HTTP, to reach each path; tests/api/test_disk_full_tmpfs.py
fills a real tmpfs. Both, and an upload its client cuts off, are counted and logged as what they are (507, 499),
never as a 500 with a traceback."""

from __future__ import annotations

import errno
import logging
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.exc import OperationalError

from docqa.answering.cache import AnswerCache
from docqa.service import DocQA
from docqa.store.db import SqliteStore
from tests.support.fake_generator import FakeGenerator
from tests.support.live_server import free_port, serve_app
from tests.support.paths import SAMPLE_DOCS, make_settings


def _access_lines(caplog: pytest.LogCaptureFixture, holding: str) -> list[str]:
    """The access log's lines once one holds `holding`: the line is written as the response ends, which can be
    a moment after the client has read it (waiting up to 10 s; the lines so far if none comes)."""
    deadline = time.monotonic() + 10
    while True:
        access = [r.getMessage() for r in caplog.records if r.name == "docqa.access"]
        if any(holding in m for m in access) or time.monotonic() > deadline:
            return access
        time.sleep(0.05)


def _full(*_args: Any, **_kwargs: Any) -> Any:
    raise OperationalError("INSERT ...", {}, sqlite3.OperationalError("database or disk is full"))


@pytest.fixture
def served(fake_generator: FakeGenerator, tmp_path: Path) -> Iterator[tuple[str, DocQA]]:
    qa = DocQA(make_settings(tmp_path / "data"), None, fake_generator)
    qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt"])
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            yield base, qa
    finally:
        qa.close()


def test_an_upload_on_a_full_disk_fails_per_file(served: tuple[str, DocQA], monkeypatch: pytest.MonkeyPatch) -> None:
    base, qa = served
    monkeypatch.setattr(SqliteStore, "save_document", _full)
    files = {"files": ("notes.txt", b"The notice period is sixty days.", "text/plain")}
    report = httpx.post(f"{base}/v1/collections/default/documents", files=files, timeout=30).json()
    assert report["files"][0]["status"] == "failed"
    assert report["files"][0]["error"] == f"disk full at {qa.settings.data_dir}: nothing written"


def test_an_ask_whose_cache_cannot_be_written_still_answers(
    served: tuple[str, DocQA], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, qa = served
    monkeypatch.setattr(AnswerCache, "_insert", _full)
    response = httpx.post(f"{base}/v1/ask", json={"question": "Which law governs?"}, timeout=30)
    assert response.status_code == 200 and response.json()["answer"]
    assert qa.cache_stats().entries == 0


def test_any_other_write_on_a_full_disk_is_a_507(
    served: tuple[str, DocQA], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    base, qa = served
    caplog.set_level(logging.INFO)

    def no_space(*_args: Any, **_kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(SqliteStore, "delete_document", no_space)
    response = httpx.delete(f"{base}/v1/collections/default/documents/1", timeout=30)
    assert response.status_code == 507
    assert response.json()["error"] == {
        "type": "DiskFullError",
        "message": f"disk full at {qa.settings.data_dir}: nothing was written; free space and retry",
    }
    # counted and logged as the 507 it is, with no traceback (issue 41, 10: it was logged as a 500)
    access = _access_lines(caplog, "DELETE /v1/collections/{name}/documents/{document_id} ")
    assert any(m.startswith("DELETE /v1/collections/{name}/documents/{document_id} 507") for m in access), access
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records if r.exc_info]


def test_an_upload_cut_off_by_its_client_is_a_499_not_a_500(
    served: tuple[str, DocQA], caplog: pytest.LogCaptureFixture
) -> None:
    """The client sends half of its multipart body and leaves (issue 41, 10: counted and logged as a 500
    with a traceback)."""
    import socket
    from urllib.parse import urlsplit

    base, _ = served
    caplog.set_level(logging.INFO)
    host, port = urlsplit(base).hostname, urlsplit(base).port
    body = b'--b\r\nContent-Disposition: form-data; name="files"; filename="a.txt"\r\n\r\n' + b"x" * 10_000
    head = (
        "POST /v1/collections/default/documents HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: {len(body) + 500_000}\r\n\r\n"
    )
    with socket.create_connection((host, port), timeout=10) as conn:
        conn.sendall(head.encode() + body)
        time.sleep(0.3)
    access = _access_lines(caplog, " /v1/collections/{name}/documents ")
    assert any(m.startswith("POST /v1/collections/{name}/documents 499") for m in access), access
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records if r.exc_info]
