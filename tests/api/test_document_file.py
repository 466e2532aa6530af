"""GET .../documents/{id}/file (issue 44 item 2): the file a document was read from, for the page's PDF viewer.
Uploads are kept under the data home (one copy per content) and go with the last document holding them; a file
ingested from a path is served while its bytes are the ones ingested; otherwise a 404 that says why."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx

from docqa.service import DocQA
from tests.support.live_server import free_port, serve_app
from tests.support.paths import SAMPLE_DOCS, make_settings


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
        (report,) = [r for r in qa.check() if r.collection == "(all collections)"]
        assert report.problems == ["1 kept original file(s) that no document holds"]
        qa.check(repair=True)
        assert not stray.exists() and not [r for r in qa.check() if r.collection == "(all collections)"]
        (document,) = httpx.get(docs).json()["documents"]
        assert httpx.get(f"{docs}/{document['id']}/file").content == b"A notice that stays."


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
