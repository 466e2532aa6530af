"""Hostile PDFs from ../shared/data/nasty_pdfs: every file ends ingested or failed with a reason,
the process never dies, and the rest of the folder goes on (BM25-only, to keep it fast on a CPU)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.paths import SHARED

NASTY = SHARED / "data" / "nasty_pdfs"
pytestmark = [
    pytest.mark.data,
    pytest.mark.skipif(not NASTY.is_dir(), reason=f"{NASTY} not present"),
]
# neither PDFium nor pypdf decrypts this one with any password (see the folder's PASSWORDS.md)
PYPDF_CANNOT_DECRYPT = {"qpdf_bad-encryption-length.pdf"}


def test_every_hostile_pdf_is_ingested_or_failed_with_a_reason(qa_factory) -> None:  # type: ignore[no-untyped-def]
    qa = qa_factory(with_embedder=False)
    report = qa.ingest([NASTY])
    results = {Path(f.path).name: f for f in report.files}
    pdfs = {p.name for p in NASTY.rglob("*.pdf")}
    assert {name for name in results if name.endswith(".pdf")} == pdfs  # the folder's notes are ingested too
    assert all(f.status in ("added", "failed") for f in results.values())
    assert all(f.error for f in results.values() if f.status == "failed")
    assert report.count("added") >= 40

    passwords = json.loads((NASTY / "passwords.json").read_text())
    for rel, facts in passwords.items():
        name = Path(rel).name
        result = results[name]
        if facts["requires_password"] or name in PYPDF_CANNOT_DECRYPT:
            assert result.status == "failed" and result.error == "encrypted: password required", name
        else:
            assert not (result.error or "").startswith("encrypted"), (name, result.error)

    for pdf in (NASTY / "scanned_no_text").glob("*.pdf"):
        result = results[pdf.name]
        if result.status == "failed":
            assert "no text layer" in (result.error or "") or "malformed" in (result.error or ""), result.error
        else:
            assert any("no text layer" in w for w in result.warnings) or result.chunks > 0
