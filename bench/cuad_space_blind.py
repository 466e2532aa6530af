"""CUAD from PDF against TXT under the scoring rule and under the same rule blind to white space: where
the PDF-only misses come from.

CUAD's answer spans were cut from CUAD's own text extraction, which splits and glues words ("18t h day of
August 2014", "without thewritten consent"). docqa's PDF reader joins glyphs by their boxes and writes "18th"
and "the written", so the rule's substring test misses a chunk that holds the answer. This bench re-scores
two `docqa eval --details` runs (the PDFs and the TXTs of cuad_dev) from their stores: recall@k by the rule
(which must equal what `docqa eval` reported) and with all white space removed from answer and chunk, and
sorts the questions the PDF run misses and the TXT run finds into: the answer is in a top-k chunk but for
white space; it is in another chunk of the right document (ranking); the top k hold no chunk of that
document; the document's text does not hold it at all.

    docqa eval ../shared/data/cuad_dev/qa.jsonl --doc-field doc_pdf --no-embeddings --json \\
        --data-dir /tmp/cuadpdf --details /tmp/cuad_pdf_details.jsonl
    docqa eval ../shared/data/cuad_dev/qa.jsonl --no-embeddings --json \\
        --data-dir /tmp/cuadtxt --details /tmp/cuad_txt_details.jsonl
    python -m bench.cuad_space_blind --qa ../shared/data/cuad_dev/qa.jsonl \\
        --pdf /tmp/cuad_pdf_details.jsonl /tmp/cuadpdf/docqa.sqlite3 \\
        --txt /tmp/cuad_txt_details.jsonl /tmp/cuadtxt/docqa.sqlite3

Writes bench/results/cuad_space_blind_<date>_<commit>.json.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench.result_files import new_result_path
from docqa.eval.scoring import is_hit, normalise

_SPACE = re.compile(r"[\s\u200b\u200c\u200d\u2060\ufeff]")


def blind_hit(chunk_text: str, answer_text: str) -> bool:
    """The rule's test (first or last 20 words of a long answer) with every space taken out of both."""
    answer = normalise(answer_text)
    words = answer.split(" ")
    parts = [" ".join(words[:20]), " ".join(words[-20:])] if len(words) > 40 else [answer]
    chunk = _SPACE.sub("", normalise(chunk_text))
    return any(p and _SPACE.sub("", p) in chunk for p in parts)


class Run:
    """One eval run: its per-question details and the store its chunks are read from."""

    def __init__(self, details: Path, store: Path) -> None:
        self.rows = {d["id"]: d for d in map(json.loads, details.read_text().splitlines())}
        self._db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)

    def text(self, chunk_id: int) -> str:
        return str(self._db.execute("SELECT text FROM chunks WHERE id = ?", (chunk_id,)).fetchone()[0])

    def document_texts(self, document_id: int) -> Iterator[str]:
        for (text,) in self._db.execute("SELECT text FROM chunks WHERE document_id = ?", (document_id,)):
            yield str(text)

    def top(self, qid: str, k: int) -> list[str]:
        """Texts of the top-k chunks that come from the question's document."""
        row = self.rows[qid]
        return [self.text(c["chunk_id"]) for c in row["retrieved"][:k] if c["document_id"] == row["document_id"]]


def found(run: Run, qid: str, answers: list[str], k: int, test: Callable[[str, str], bool]) -> bool:
    return any(test(text, a) for text in run.top(qid, k) for a in answers)


def why_missed(run: Run, qid: str, answers: list[str], k: int) -> str:
    if not run.top(qid, k):
        return "document_not_in_top"
    if found(run, qid, answers, k, blind_hit):
        return "white_space_only"
    texts = run.document_texts(run.rows[qid]["document_id"])
    if any(blind_hit(t, a) for t in texts for a in answers):
        return "ranking"
    return "not_in_document_text"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--qa", type=Path, required=True)
    ap.add_argument("--pdf", nargs=2, type=Path, required=True, metavar=("DETAILS", "STORE"))
    ap.add_argument("--txt", nargs=2, type=Path, required=True, metavar=("DETAILS", "STORE"))
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    answers = {}
    for line in args.qa.read_text().splitlines():
        row = json.loads(line)
        answers[row["id"]] = [a["text"] for a in row.get("answers", [])]
    runs = {"pdf": Run(*args.pdf), "txt": Run(*args.txt)}
    qids = sorted(set(runs["pdf"].rows) & set(runs["txt"].rows))
    result: dict[str, Any] = {"questions": len(qids)}
    for name, run in runs.items():
        for k in (1, 3):
            for suffix, test in (("", is_hit), ("_space_blind", blind_hit)):
                hits = sum(found(run, q, answers[q], k, test) for q in qids)
                result[f"{name}_recall@{k}{suffix}"] = round(hits / len(qids), 4)
    pdf_only = [
        q
        for q in qids
        if not found(runs["pdf"], q, answers[q], 3, is_hit) and found(runs["txt"], q, answers[q], 3, is_hit)
    ]
    reasons = {q: why_missed(runs["pdf"], q, answers[q], 3) for q in pdf_only}
    result["pdf_only_misses@3"] = len(pdf_only)
    result["pdf_only_misses@3_by_reason"] = dict(Counter(reasons.values()).most_common())
    result["white_space_only_examples"] = [
        {"id": q, "answer": answers[q][0][:120]} for q in pdf_only if reasons[q] == "white_space_only"
    ][:20]
    out = args.out or new_result_path("cuad_space_blind")
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps({k: v for k, v in result.items() if not k.endswith("examples")}, indent=2))


if __name__ == "__main__":
    main()
