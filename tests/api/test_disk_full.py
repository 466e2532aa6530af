"""A full disk is a clear error that loses nothing (issue 32, item 4): an upload fails per file with "disk full
at DATA_DIR", an ask still answers when its cache cannot be written, and any other write is a 507. The disk
is filled by making SQLite or the OS say so, through real HTTP, to reach each path; tests/api/test_disk_full_tmpfs.py
fills a real tmpfs."""

from __future__ import annotations

import errno
import sqlite3
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


def test_any_other_write_on_a_full_disk_is_a_507(served: tuple[str, DocQA], monkeypatch: pytest.MonkeyPatch) -> None:
    base, qa = served

    def no_space(*_args: Any, **_kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(SqliteStore, "delete_document", no_space)
    response = httpx.delete(f"{base}/v1/collections/default/documents/1", timeout=30)
    assert response.status_code == 507
    assert response.json()["error"] == {
        "type": "DiskFullError",
        "message": f"disk full at {qa.settings.data_dir}: nothing was written; free space and retry",
    }
