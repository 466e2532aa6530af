"""GET .../documents/{id}/file (issue 44 item 2): the file a document was read from, for the page's PDF viewer.
Uploads are kept under the data home (one copy per content) and go with the last document holding them; a file
ingested from a path is served while its bytes are the ones ingested; otherwise a 404 that says why."""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from bench.local_server import wait_healthy
from docqa.service import DocQA
from docqa.service.originals import ORIGINAL_GRACE_S
from tests.support.live_server import free_port, serve_app
from tests.support.paths import ROOT, SAMPLE_DOCS, make_settings
from tests.support.pdf_factory import slow_pdf


def test_an_uploaded_pdf_is_kept_served_and_removed_with_its_last_document(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data")
    pdf = (SAMPLE_DOCS / "annual_report_2025.pdf").read_bytes()
    with DocQA(settings, None, None) as qa, serve_app(settings, qa, free_port()) as base:
        docs = f"{base}/v1/collections/default/documents"
        for name in ("report.pdf", "copy of report.pdf"):  # the second is the same content: one document
            assert httpx.post(docs, files={"files": (name, pdf)}, timeout=60).status_code == 200
        (document,) = httpx.get(docs).json()["documents"]
        served = httpx.get(f"{docs}/{document['id']}/file")
        assert served.status_code == 200 and served.content == pdf
        assert served.headers["content-type"] == "application/pdf"
        assert served.headers["content-disposition"].startswith("inline")
        kept = list((settings.data_dir / "originals").rglob("*"))
        assert len([p for p in kept if p.is_file()]) == 1
        assert httpx.delete(f"{docs}/{document['id']}").status_code == 204
        assert not [p for p in (settings.data_dir / "originals").rglob("*") if p.is_file()]
        gone = httpx.get(f"{docs}/{document['id']}/file")
        assert gone.status_code == 404


def test_a_file_ingested_from_a_path_is_served_until_it_changes(tmp_path: Path) -> None:
    folder = tmp_path / "contracts"
    folder.mkdir()
    contract = folder / "services.txt"
    shutil.copy(SAMPLE_DOCS / "services_agreement_en.txt", contract)
    settings = make_settings(tmp_path / "data")
    with DocQA(settings, None, None) as qa, serve_app(settings, qa, free_port()) as base:
        qa.ingest([folder])
        (document,) = qa.documents()
        url = f"{base}/v1/collections/default/documents/{document.id}/file"
        served = httpx.get(url)
        assert served.status_code == 200 and served.content == contract.read_bytes()
        assert not (settings.data_dir / "originals").exists()  # a path's file is not copied
        contract.write_text("Another text altogether.")
        changed = httpx.get(url)
        assert changed.status_code == 404
        message = changed.json()["error"]["message"]
        assert "services.txt" in message and "gone or changed since it was ingested" in message


def test_an_upload_replaced_under_its_name_leaves_no_original_behind(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data")
    with DocQA(settings, None, None) as qa, serve_app(settings, qa, free_port()) as base:
        docs = f"{base}/v1/collections/default/documents"
        for text in (b"The first version of the notice.", b"The second version, which replaces it."):
            assert httpx.post(docs, files={"files": ("notice.txt", text)}, timeout=60).status_code == 200
        (document,) = httpx.get(docs).json()["documents"]
        assert httpx.get(f"{docs}/{document['id']}/file").content == b"The second version, which replaces it."
        kept = [p for p in (settings.data_dir / "originals").rglob("*") if p.is_file()]
        assert len(kept) == 1  # the first version's bytes went with it


def test_check_finds_and_removes_originals_no_document_holds(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data")
    with DocQA(settings, None, None) as qa, serve_app(settings, qa, free_port()) as base:
        docs = f"{base}/v1/collections/default/documents"
        assert httpx.post(docs, files={"files": ("kept.txt", b"A notice that stays.")}, timeout=60).status_code == 200
        stray = settings.data_dir / "originals" / "ab" / ("ab" + "0" * 62)  # a crash left it behind
        stray.parent.mkdir(parents=True, exist_ok=True)
        stray.write_bytes(b"bytes of a document that was never written")
        old = time.time() - 2 * ORIGINAL_GRACE_S  # an original this recent may be an upload being ingested
        os.utime(stray, (old, old))
        (report,) = [r for r in qa.check() if r.collection == "(all collections)"]
        assert report.problems == ["1 kept original file(s) that no document holds"]
        qa.check(repair=True)
        assert not stray.exists() and not [r for r in qa.check() if r.collection == "(all collections)"]
        (document,) = httpx.get(docs).json()["documents"]
        assert httpx.get(f"{docs}/{document['id']}/file").content == b"A notice that stays."
        for kept in (settings.data_dir / "originals").rglob("*"):  # lost by hand, or a disk restored without it
            if kept.is_file():
                kept.unlink()
        (report,) = [r for r in qa.check() if r.collection == "(all collections)"]
        assert report.problems == ["1 uploaded document(s) whose file was not kept (kept.txt): upload them again"]


def test_an_original_never_runs_as_active_content_on_docqas_origin(tmp_path: Path) -> None:
    """Issue 60: an uploaded HTML file with script was served back as text/html, inline, and its script read
    the page's API key. Now only PDFs and pictures are shown inline, text as plain text, the rest downloaded,
    all but PDFs under a CSP sandbox that allows nothing."""
    settings = make_settings(tmp_path / "data")
    page = b"<html><head><title>Lease</title></head><body><p>Rent is due monthly.</p><script>alert(1)</script>"
    with DocQA(settings, None, None) as qa, serve_app(settings, qa, free_port()) as base:
        docs = f"{base}/v1/collections/default/documents"
        files = [("files", ("lease.html", page)), ("files", ("notes.md", b"# Notes\n\nRent is due monthly.\n"))]
        assert httpx.post(docs, files=files, timeout=60).status_code == 200
        by_name = {d["name"]: d["id"] for d in httpx.get(docs).json()["documents"]}
        html = httpx.get(f"{docs}/{by_name['lease.html']}/file")
        assert html.status_code == 200 and html.content == page
        assert html.headers["content-type"] == "application/octet-stream"
        assert html.headers["content-disposition"].startswith("attachment")
        assert html.headers["content-security-policy"].startswith("sandbox;")
        assert html.headers["x-content-type-options"] == "nosniff"
        text = httpx.get(f"{docs}/{by_name['notes.md']}/file")
        assert text.headers["content-type"] == "text/plain; charset=utf-8"
        assert text.headers["content-disposition"].startswith("inline")
        assert "sandbox" in text.headers["content-security-policy"]


@pytest.mark.slow  # `docqa serve` loads the demo model
def test_a_server_killed_mid_upload_leaves_no_document_without_its_file(tmp_path: Path) -> None:
    """Issue 60, item 9: kill -9 during a multi-file upload left the files ingested so far ready without their
    originals (kept only after the last file), "ingested before docqa kept them", and `docqa check` saw nothing
    wrong. Uploads are now kept before they are ingested, and check names a document whose file is missing."""
    data, port = tmp_path / "data", free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "docqa", "serve", "--port", str(port), "--data-dir", str(data)],
        cwd=ROOT,
        env={**os.environ, "DOCQA_RETRIEVAL_RETRIEVER": "bm25"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_healthy(base, proc, timeout_s=300)
        notice = b"The notice period is ninety days."
        files = [
            ("files", ("notice.txt", notice, "text/plain")),
            ("files", ("scan.pdf", slow_pdf(tmp_path / "scan.pdf").read_bytes(), "application/pdf")),
        ]
        upload = subprocess.Popen(  # the upload's client, killed with the server
            [sys.executable, "-c", "import httpx, pickle, sys; httpx.post(sys.argv[1], files=pickle.loads("
             "sys.stdin.buffer.read()), timeout=600)", f"{base}/v1/collections/default/documents"],
            stdin=subprocess.PIPE,
        )  # fmt: skip
        assert upload.stdin is not None
        upload.stdin.write(pickle.dumps(files))
        upload.stdin.close()
        deadline = time.monotonic() + 120
        while not _ready(data / "docqa.sqlite3", "notice.txt"):  # the first file is a document; the PDF still read
            assert time.monotonic() < deadline, "notice.txt never became a document"
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        upload.kill()
    finally:
        if proc.poll() is None:
            proc.kill()
    with DocQA(make_settings(data), None, None) as qa:
        (document,) = [d for d in qa.documents() if d.name == "notice.txt"]
        assert qa.original(document.id)[1].read_bytes() == notice
        problems = [p for report in qa.check() for p in report.problems]
        assert not [p for p in problems if "was not kept" in p], problems


def _ready(database: Path, name: str) -> bool:
    if not database.is_file():
        return False
    with sqlite3.connect(database) as db:
        try:
            found = db.execute("SELECT status FROM documents WHERE name = ?", (name,)).fetchone()
        except sqlite3.OperationalError:  # its tables not made yet
            return False
    return found is not None and found[0] == "ready"


def test_deleting_a_document_while_an_upload_of_its_bytes_is_ingested_keeps_the_upload_s_file(
    tmp_path: Path,
) -> None:
    """Issue 60 (a review): an upload's original is kept before it becomes a document; deleting another
    document with the same bytes meanwhile found no document holding them and removed the file the upload
    was about to need."""
    from docqa.core.documents import Source

    notice = b"The notice period is ninety days."
    with DocQA(make_settings(tmp_path / "data"), None, None) as qa:
        first = tmp_path / "first" / "notice.txt"
        first.parent.mkdir()
        first.write_bytes(notice)
        qa.ingest_sources([Source(first, "upload:notice.txt", "notice.txt")], "one")
        (older,) = qa.documents("one")
        ingest = qa.ingestor.ingest

        def ingest_while_deleting(*args: object, **kwargs: object) -> object:
            qa.delete_document(older.id, "one")  # another request, at the worst moment
            return ingest(*args, **kwargs)  # type: ignore[arg-type]

        qa.ingestor.ingest = ingest_while_deleting  # type: ignore[method-assign,assignment]
        second = tmp_path / "second" / "notice copy.txt"
        second.parent.mkdir()
        second.write_bytes(notice)
        qa.ingest_sources([Source(second, "upload:notice copy.txt", "notice copy.txt")], "two")
        (newer,) = qa.documents("two")
        assert qa.original(newer.id, "two")[1].read_bytes() == notice
        assert qa.documents("one") == []
