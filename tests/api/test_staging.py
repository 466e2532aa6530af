"""Uploads wait inside the data home, and what a killed server left there is cleared by the next one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from docqa.api import staging
from docqa.service import DocQA
from tests.support.fake_generator import FakeGenerator
from tests.support.live_server import free_port, serve_app
from tests.support.paths import make_settings


def test_folders_of_dead_processes_go_and_live_ones_stay(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    uploads = tmp_path / "uploads"
    left = uploads / f"{staging.PREFIX}{int(dead.stdout)}-abc"
    (left / "sub").mkdir(parents=True)
    (left / "0.pdf").write_bytes(b"%PDF-1.4 half an upload")
    mine = staging.staging_folder(staging.staging_root(tmp_path, None))
    assert mine.parent == uploads and mine.name.startswith(f"{staging.PREFIX}")
    assert staging.clear_stale(uploads) == 1
    assert not left.exists() and mine.exists()


def test_with_a_database_uploads_wait_outside_the_working_folder(tmp_path: Path) -> None:
    """Issue 40, item 6: with DOCQA_DATABASE_URL set, serving made ./indexes/uploads wherever it started."""
    root = staging.staging_root(Path("indexes"), "postgresql+psycopg://u@localhost/db")
    assert root.is_absolute() and root.name == "docqa-uploads" and Path("indexes") not in root.parents


def test_an_upload_is_staged_in_the_data_home_and_cleared(fake_generator: FakeGenerator, tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data")
    qa = DocQA(settings, None, fake_generator)
    stale = settings.data_dir / "uploads" / f"{staging.PREFIX}999999999-x"  # no such process
    stale.mkdir(parents=True)
    try:
        with serve_app(settings, qa, free_port()) as base:
            assert not stale.exists()  # cleared at start
            files = {"files": ("notes.txt", b"The notice period is sixty days.", "text/plain")}
            report = httpx.post(f"{base}/v1/collections/default/documents", files=files, timeout=30).json()
            assert report["files"][0]["status"] == "added"
            assert list((settings.data_dir / "uploads").iterdir()) == []  # its folder went with it
    finally:
        qa.close()
