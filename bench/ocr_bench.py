"""OCR engines compared by character error rate (CER) and seconds a page, to choose docqa's.

English: nasty_pdfs/scanned_no_text/ocrmypdf_linn.pdf against its ground truth ocrmypdf_linn.txt. Chinese:
pages of the prospectus_zh 爱康 prospectus rendered to images (300 dpi) and read back, against their own
text layer. CER = edit distance / truth length, on the scoring rule's normalised text (docqa.eval.scoring)
with whitespace removed (line breaks and spacing are not what OCR is judged on).

usage: python -m bench.ocr_bench [--data ../shared/data] [--out bench/results/ocr_bench.json]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pypdfium2

from docqa.eval.scoring import normalise
from ingest.ocr import OcrOptions, read_pages
from ingest.pdf_text import page_texts

ROOT = Path(__file__).resolve().parents[1]
PROSPECTUS = "prospectus_zh/pdf/江苏爱康太阳能科技股份有限公司.PDF"
CHINESE_PAGES = (10, 60, 120)  # prose pages of the prospectus, one from each part


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, a row at a time in numpy (insertions by a running minimum)."""
    if not a or not b:
        return max(len(a), len(b))
    codes_a = np.frombuffer(a.encode("utf-32-le"), dtype=np.uint32)
    bs = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    idx = np.arange(len(b) + 1)
    prev = idx.copy()
    for i, code in enumerate(codes_a, 1):
        cur = np.empty_like(prev)
        cur[0] = i
        cur[1:] = np.minimum(prev[1:] + 1, prev[:-1] + (bs != code))
        cur = np.minimum.accumulate(cur - idx) + idx
        prev = cur
    return int(prev[-1])


def cer(read: str, truth: str) -> float:
    squeeze = lambda s: re.sub(r"\s+", "", normalise(s))  # noqa: E731
    r, t = squeeze(read), squeeze(truth)
    return edit_distance(r, t) / max(len(t), 1)


def tesseract(languages: str) -> Callable[[pypdfium2.PdfDocument, int], str]:
    def read(pdf: pypdfium2.PdfDocument, number: int) -> str:
        result = read_pages(pdf, [number], OcrOptions("force", languages), 600)
        assert result.unavailable is None, result.unavailable
        return result.texts[number]

    return read


def rapidocr() -> Callable[[pypdfium2.PdfDocument, int], str]:
    from rapidocr import RapidOCR  # installed for this comparison only (pip install rapidocr onnxruntime)

    engine = RapidOCR()

    def read(pdf: pypdfium2.PdfDocument, number: int) -> str:
        page = pdf[number - 1]
        pixels = page.render(scale=300 / 72).to_numpy()
        page.close()
        result = engine(pixels[:, :, :3])
        return "\n".join(getattr(result, "txts", None) or ())  # a full run's output has the texts

    return read


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "ocr_bench.json")
    ap.add_argument("--engines", nargs="*", default=["tesseract eng", "tesseract eng+chi_sim", "rapidocr"])
    args = ap.parse_args()
    linn = args.data / "nasty_pdfs" / "scanned_no_text" / "ocrmypdf_linn.pdf"
    linn_truth = (args.data / "nasty_pdfs" / "scanned_no_text" / "ocrmypdf_linn.txt").read_text(encoding="utf-8")
    prospectus = args.data / PROSPECTUS
    layer = page_texts(prospectus).texts
    engines = {
        "tesseract eng": lambda: tesseract("eng"),
        "tesseract eng+chi_sim": lambda: tesseract("eng+chi_sim"),
        "tesseract chi_sim": lambda: tesseract("chi_sim"),
        "rapidocr": rapidocr,
    }
    results: dict[str, dict[str, float]] = {}
    for name in args.engines:
        read = engines[name]()
        figures: dict[str, float] = {}
        pdf = pypdfium2.PdfDocument(str(linn))
        started = time.perf_counter()
        figures["english_cer"] = round(cer(read(pdf, 1), linn_truth), 4)
        figures["english_s_per_page"] = round(time.perf_counter() - started, 1)
        pdf.close()
        pdf = pypdfium2.PdfDocument(str(prospectus))
        started = time.perf_counter()
        errors = [cer(read(pdf, n), layer[n - 1]) for n in CHINESE_PAGES]
        figures["chinese_cer"] = round(sum(errors) / len(errors), 4)
        figures["chinese_s_per_page"] = round((time.perf_counter() - started) / len(CHINESE_PAGES), 1)
        pdf.close()
        results[name] = figures
        print(name, figures, flush=True)
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
