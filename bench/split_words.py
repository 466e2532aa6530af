"""Split words in PDF text (ingest.split_words): how many a word list finds before and after, per 1,000
words, and what the join costs in extraction speed, over every readable PDF of a folder tree.

A split is a fragment of three letters or more that is no word, a space, and one or two letters, that
joined make a word of the list (Debian's `wamerican`: /usr/share/dict/words; measurement only, docqa needs
no word list). Reading is PDFium's text as ingest gets it (ingest.pdf_text.page_texts, cleaned), timed with
and without the join.

    python -m bench.split_words ../shared/data [--words /usr/share/dict/words]

Writes bench/results/split_words_<date>_<commit>.json.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from bench.result_files import new_result_path
from docqa.core.errors import ReadError
from ingest.pdf_text import page_texts
from ingest.readers import clean_pdf_text
from ingest.split_words import join_split_words

_CANDIDATE = re.compile(r"\b([A-Za-z]{3,}) ([A-Za-z]{1,2})\b(?![’'-])")
_WORD = re.compile(r"[A-Za-z]+")


def split_spans(texts: list[str], words: set[str]) -> list[tuple[int, str]]:
    """Each candidate split: its page (1-based) and the text around it. The word list also takes things
    that are no split ("alle y" in German, "cos t" in a formula, a name such as "Marv in"): the report
    lists what is left after the join so that a reader can tell them apart."""
    found = []
    for page, text in enumerate(texts, 1):
        for m in _CANDIDATE.finditer(text):
            left, tail = m.group(1).lower(), m.group(2).lower()
            if left not in words and (left + tail) in words and m.group(1)[-1].isupper() == m.group(2)[0].isupper():
                found.append((page, " ".join(text[max(0, m.start() - 30) : m.end() + 30].split())))
    return found


def splits(texts: list[str], words: set[str]) -> int:
    return len(split_spans(texts, words))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--words", type=Path, default=Path("/usr/share/dict/words"))
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    words = {w.strip().lower() for w in args.words.read_text(errors="ignore").split() if w.strip().isalpha()}
    totals = {"files": 0, "pages": 0, "words": 0, "splits_before": 0, "splits_after": 0, "joined": 0}
    seconds = {"read": 0.0, "join": 0.0}
    by_set: dict[str, dict[str, int]] = {}
    still: list[dict[str, object]] = []
    for path in sorted(args.root.rglob("*.pdf")):
        started = time.perf_counter()
        try:
            texts = [clean_pdf_text(t) for t in page_texts(path).texts]
        except ReadError:
            continue  # an encrypted or malformed file of the hostile set
        read = time.perf_counter() - started
        joined_texts, joined = join_split_words(texts)
        seconds["read"] += read
        seconds["join"] += time.perf_counter() - started - read
        left = split_spans(joined_texts, words)
        before, after = splits(texts, words), len(left)
        still.extend({"file": str(path.relative_to(args.root)), "page": page, "text": text} for page, text in left)
        n_words = sum(len(_WORD.findall(t)) for t in texts)
        kind = path.relative_to(args.root).parts[0]
        row = by_set.setdefault(kind, {"files": 0, "words": 0, "splits_before": 0, "splits_after": 0, "joined": 0})
        for target in (totals, row):
            target["files"] += 1
            target["words"] += n_words
            target["splits_before"] += before
            target["splits_after"] += after
            target["joined"] += joined
        totals["pages"] += len(texts)
    report = {
        **totals,
        "per_1000_words_before": round(1000 * totals["splits_before"] / max(totals["words"], 1), 4),
        "per_1000_words_after": round(1000 * totals["splits_after"] / max(totals["words"], 1), 4),
        "pages_per_s_without_join": round(totals["pages"] / max(seconds["read"], 1e-9), 1),
        "pages_per_s_with_join": round(totals["pages"] / max(seconds["read"] + seconds["join"], 1e-9), 1),
        "by_set": by_set,
        "left_after_join": still,
    }
    out = args.out or new_result_path("split_words")
    out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
