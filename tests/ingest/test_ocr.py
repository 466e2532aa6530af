"""OCR for pages without a text layer: Tesseract on PDFium's rendering, in the PDF child process."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.ocr_bench import cer
from docqa.core.errors import ReadError
from docqa.eval.scoring import normalise
from docqa.service import DocQA
from ingest import ocr
from ingest.isolation import read_pdf_isolated
from ingest.ocr import OcrOptions
from ingest.readers import read_pdf
from tests.support.paths import SAMPLE_DOCS, SHARED, make_settings
from tests.support.pdf_factory import scanned_pdf

pytestmark = pytest.mark.skipif(
    "eng" not in ocr.installed_languages(),
    reason="Tesseract with English not installed (apt-get install tesseract-ocr tesseract-ocr-eng; .ci/run does)",
)
CLAUSE = "Either party may terminate this Agreement on sixty days notice."
LINN = SHARED / "data" / "nasty_pdfs" / "scanned_no_text" / "ocrmypdf_linn.pdf"


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scanned_pdf(tmp_path_factory.mktemp("scan") / "scan.pdf", ["Termination for Convenience", CLAUSE])


def test_a_scanned_page_is_read_by_ocr_in_the_child_process(scan: Path) -> None:
    doc = read_pdf_isolated(scan, None, timeout_s=120, memory_mb=2048, ocr=OcrOptions("auto", "eng"))
    assert CLAUSE in doc.pages[0].text
    assert doc.warnings == ["pages 1 read by OCR"]


def test_without_ocr_a_scan_fails_naming_why(scan: Path) -> None:
    with pytest.raises(ReadError, match="no text layer on pages 1; OCR not enabled"):
        read_pdf(scan, ocr=OcrOptions("off"))


def test_auto_leaves_a_text_layer_alone_and_force_reads_it_again() -> None:
    report = SAMPLE_DOCS / "annual_report_2025.pdf"
    assert read_pdf(report, ocr=OcrOptions("auto", "eng")).warnings == []
    forced = read_pdf(report, ocr=OcrOptions("force", "eng"))
    assert forced.warnings == ["pages 1-4 read by OCR"]
    assert "184.6" in forced.pages[1].text


def test_ocr_that_cannot_run_or_runs_out_of_time_says_so(scan: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ReadError, match=r"OCR ran out of time \(DOCQA_INGEST_PDF_TIMEOUT_S\)"):
        read_pdf(scan, ocr=OcrOptions("auto", "eng"), ocr_budget_s=-1.0)
    with pytest.raises(ReadError, match=r"OCR ran out of time"):  # Tesseract itself runs past the time left
        read_pdf(scan, ocr=OcrOptions("auto", "eng+chi_sim"), ocr_budget_s=0.05)
    with pytest.raises(ReadError, match=r"OCR unavailable: no Tesseract data for klingon"):
        read_pdf(scan, ocr=OcrOptions("auto", "klingon"))
    monkeypatch.setattr(ocr, "installed_languages", frozenset)
    with pytest.raises(ReadError, match=r"OCR unavailable: tesseract is not installed \(apt-get install"):
        read_pdf(scan, ocr=OcrOptions("auto", "eng"))


def test_ingest_reads_a_scan_by_default(scan: Path, tmp_path: Path) -> None:
    qa = DocQA(make_settings(tmp_path / "data"), None, None)  # no models: ingest and BM25 only
    try:
        report = qa.ingest([scan])
        assert report.files[0].status == "added" and report.files[0].warnings == ["pages 1 read by OCR"]
        [chunk] = qa.retrieve("sixty days notice terminate", 1)
        assert chunk.document_name == "scan.pdf" and "sixty days" in chunk.text
        assert chunk.ocr_pages == (1,)  # kept with the document: citations of the page say it was OCR's
    finally:
        qa.close()


@pytest.mark.data
@pytest.mark.skipif(not LINN.is_file(), reason=f"{LINN} not present")
def test_the_scanned_linn_page_reads_within_two_percent_of_its_ground_truth() -> None:
    text = read_pdf(LINN, ocr=OcrOptions("auto", "eng+chi_sim")).pages[0].text
    truth = LINN.with_suffix(".txt").read_text(encoding="utf-8")
    assert cer(text, truth) < 0.02  # measured 0.0091 (bench/results/ocr_bench.json)
    assert re.search(r"state.of.the.art composition", normalise(text))
