"""Text for pages that have none: the page rendered by PDFium and read by Tesseract (Debian's
`tesseract-ocr`, with `tesseract-ocr-eng` and `tesseract-ocr-chi-sim`).

Chosen by measurement against RapidOCR (`python -m bench.ocr_bench`, docs/benchmarks/documents.md). It runs in
the PDF child process (ingest.pdf_worker), under its time and memory limits: it stops before the
time limit and says which pages it did not reach, so a long scan still yields what was read.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pypdfium2

OcrMode = Literal["off", "auto", "force"]
# 300 dpi is what Tesseract is trained for; a page larger than a poster is rendered smaller, so that no
# page costs more than about 40 MB of pixels (a 35,000 x 35,000 scan would be 1.2 GB at full size).
DPI = 300
MAX_PIXELS = 40_000_000
# OCR stops once this share of the child's time limit has passed, leaving the rest for writing back.
TIME_SHARE = 0.8
# Tesseract's OpenMP threads spin against each other on a small machine: one letter page took 16.4 s with
# its default threads on the 2-core VM and 2.1 s with one (pages are read one after another anyway).
_ONE_THREAD = {"OMP_THREAD_LIMIT": "1"}


@dataclass(frozen=True)
class OcrOptions:
    """What the PDF child is told: when to read pages by OCR, and in which languages."""

    mode: OcrMode = "auto"
    languages: str = "eng+chi_sim"


@dataclass
class OcrResult:
    texts: dict[int, str]  # 1-based page -> text read
    not_reached: list[int]  # pages OCR had no time left for
    unavailable: str | None = None  # why OCR could not run at all


@functools.cache
def installed_languages() -> frozenset[str]:
    """The languages the installed Tesseract reads; empty when it is not installed."""
    if shutil.which("tesseract") is None:
        return frozenset()
    done = subprocess.run(["tesseract", "--list-langs"], capture_output=True, text=True, timeout=30)
    return frozenset(line.strip() for line in done.stdout.splitlines()[1:] if line.strip())


def usable_languages(wanted: str) -> str:
    """The wanted languages ("eng+chi_sim") that are installed, in their order; "" for none."""
    have = installed_languages()
    return "+".join(lang for lang in wanted.split("+") if lang in have)


def read_pages(pdf: pypdfium2.PdfDocument, pages: list[int], options: OcrOptions, budget_s: float) -> OcrResult:
    """OCR the given 1-based pages in order, within budget_s seconds."""
    languages = usable_languages(options.languages)
    if not languages:
        why = (
            "tesseract is not installed" if not installed_languages() else f"no Tesseract data for {options.languages}"
        )
        return OcrResult({}, [], f"OCR unavailable: {why} (apt-get install tesseract-ocr tesseract-ocr-eng)")
    deadline = time.monotonic() + budget_s
    texts: dict[int, str] = {}
    for i, number in enumerate(pages):
        if time.monotonic() > deadline:
            return OcrResult(texts, pages[i:])
        try:
            texts[number] = _ocr_page(pdf[number - 1], languages, deadline - time.monotonic())
        except subprocess.TimeoutExpired:  # this page took the time that was left: it and the rest wait
            return OcrResult(texts, pages[i:])
    return OcrResult(texts, [])


def _ocr_page(page: pypdfium2.PdfPage, languages: str, time_left_s: float) -> str:
    # numpy only once a page is read: the PDF worker that forks every parsing child stays small, and a
    # child's address-space limit is left to the parse
    import numpy as np

    try:
        width, height = page.get_size()  # points, 1/72 inch
        scale = min(DPI / 72, (MAX_PIXELS / max(width * height, 1.0)) ** 0.5)
        pixels = page.render(scale=scale, grayscale=True).to_numpy()
        pixels = np.ascontiguousarray(pixels[:, :, 0] if pixels.ndim == 3 else pixels)
    finally:
        page.close()
    with tempfile.TemporaryDirectory(prefix="docqa-ocr-") as tmp:
        image = Path(tmp) / "page.pgm"
        _write_pgm(image, pixels)
        done = subprocess.run(
            ["tesseract", str(image), "stdout", "-l", languages, "--dpi", str(round(72 * scale))],
            capture_output=True,
            timeout=max(time_left_s, 0.1),
            env={**os.environ, **_ONE_THREAD},
        )
    return done.stdout.decode("utf-8", errors="replace")


def _write_pgm(path: Path, pixels: Any) -> None:
    """An 8-bit greyscale image as binary PGM, which Tesseract reads (no imaging library needed)."""
    height, width = pixels.shape
    with path.open("wb") as out:
        out.write(f"P5 {width} {height} 255\n".encode())
        out.write(pixels.astype("uint8").tobytes())
