"""Which PDF text extractor gives docqa the right text on the right page? Measured, not assumed.

For every scored row of financebench_dev and prospectus_zh, each extractor reads the row's evidence page(s)
(`pages_found`); a row counts when the scoring rule (docqa.eval.scoring.is_hit) finds an answer's text on
one of its evidence pages, after docqa's own cleaning (ingest.readers.clean_pdf_text). Speed: pages/s over
the whole of a few filings, one process, one core.

usage: python -m bench.pdf_extractors [--data ../shared/data] [--out bench/results/pdf_extractors.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from docqa.eval.evaluation import load_rows
from docqa.eval.scoring import is_hit
from ingest.readers import clean_pdf_text

ROOT = Path(__file__).resolve().parents[1]
SETS = ("financebench_dev", "prospectus_zh")
SPEED_FILES = ("financebench_dev/pdf/3M_2018_10K.pdf", "financebench_dev/pdf/AMCOR_2023Q2_10Q.pdf")

Extractor = Callable[[Path, list[int]], dict[int, str]]  # (pdf, 1-based pages; [] = all) -> page: text


def pypdf_plain(path: Path, pages: list[int]) -> dict[int, str]:
    from pypdf import PdfReader

    reader = PdfReader(path)
    wanted = pages or range(1, len(reader.pages) + 1)
    return {p: reader.pages[p - 1].extract_text() or "" for p in wanted}


def pypdf_layout(path: Path, pages: list[int]) -> dict[int, str]:
    from pypdf import PdfReader

    reader = PdfReader(path)
    wanted = pages or range(1, len(reader.pages) + 1)
    return {p: reader.pages[p - 1].extract_text(extraction_mode="layout") or "" for p in wanted}


def pdfium(path: Path, pages: list[int]) -> dict[int, str]:
    import pypdfium2

    pdf = pypdfium2.PdfDocument(path)
    try:
        wanted = pages or range(1, len(pdf) + 1)
        out = {}
        for p in wanted:
            page = pdf[p - 1]
            textpage = page.get_textpage()
            out[p] = textpage.get_text_range()
            textpage.close()
            page.close()
        return out
    finally:
        pdf.close()


def plumber(path: Path, pages: list[int]) -> dict[int, str]:
    import pdfplumber

    with pdfplumber.open(path) as pdf:
        wanted = pages or range(1, len(pdf.pages) + 1)
        return {p: pdf.pages[p - 1].extract_text() or "" for p in wanted}


def _pdftotext(path: Path, pages: list[int], layout: bool) -> dict[int, str]:
    out = {}
    if not pages:
        done = subprocess.run(
            ["pdftotext", *(["-layout"] if layout else []), str(path), "-"], capture_output=True, check=True
        )
        texts = done.stdout.decode("utf-8", errors="replace").split("\f")
        return {i + 1: t for i, t in enumerate(texts) if i + 1 <= len(texts)}
    for p in pages:
        args = ["pdftotext", "-f", str(p), "-l", str(p), *(["-layout"] if layout else []), str(path), "-"]
        out[p] = subprocess.run(args, capture_output=True, check=True).stdout.decode("utf-8", errors="replace")
    return out


EXTRACTORS: dict[str, Extractor] = {
    "pypdf": pypdf_plain,
    "pypdf layout": pypdf_layout,
    "pypdfium2": pdfium,
    "pdfplumber": plumber,
}
if shutil.which("pdftotext"):
    EXTRACTORS["pdftotext"] = lambda path, pages: _pdftotext(path, pages, layout=False)
    EXTRACTORS["pdftotext -layout"] = lambda path, pages: _pdftotext(path, pages, layout=True)


def evidence_share(data: Path, set_name: str, extract: Extractor) -> tuple[int, int]:
    rows = [r for r in load_rows(data / set_name / "qa.jsonl", "doc_pdf") if r.answerable and r.pages and r.doc]
    found = 0
    for row in rows:
        texts = extract(data / set_name / (row.doc or ""), sorted(set(row.pages)))
        cleaned = [clean_pdf_text(t) for t in texts.values()]
        found += any(is_hit(t, a) for t in cleaned for a in row.answers)
    return found, len(rows)


def pages_per_second(data: Path, extract: Extractor) -> float:
    pages, started = 0, time.perf_counter()
    for rel in SPEED_FILES:
        pages += len(extract(data / rel, []))
    return pages / (time.perf_counter() - started)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "pdf_extractors.json")
    ap.add_argument("--only", nargs="*", default=None, help="extractor names to run")
    args = ap.parse_args()
    results = {}
    for name, extract in EXTRACTORS.items():
        if args.only and name not in args.only:
            continue
        figures: dict[str, object] = {}
        for set_name in SETS:
            found, total = evidence_share(args.data, set_name, extract)
            figures[set_name] = f"{found}/{total}"
        figures["pages_per_s"] = round(pages_per_second(args.data, extract), 1)
        results[name] = figures
        print(name, figures, flush=True)
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
