"""Questions in an analyst's other words: a QA set's questions rewritten to name the company by its trading
symbol and the period in another spelling, to measure whether retrieval still picks the right filing.

FinanceBench's dev questions name a company as its cover does ("Best Buy", "3M") and a year as "FY2019".
Questions on other companies' filings name them by symbol ("BBY", "MMM"), and periods as "FY19", "fiscal
2019" or "2019 Q1". This writes a variant of the set (outside the project: the data stays in ../shared),
of the rows whose company lists a symbol on one of its covers in the set names it by that symbol, and
"FY2019" becomes "FY19" (the other rows are left out); `docqa eval` then scores it as it scores the set.

    python -m bench.question_variants --qa ../shared/data/financebench_dev/qa.jsonl --out /tmp/fb_symbols.jsonl
    python -m bench.question_variants --qa ../shared/data/financebench_dev/qa.jsonl --out /tmp/fb_low.jsonl --lowercase
    python -m bench.question_variants --qa ../shared/data/financebench_dev/qa.jsonl --out /tmp/fb_anon.jsonl \
        --renamed-docs /tmp/fb_anon      # then: docqa eval /tmp/fb_anon.jsonl --docs /tmp/fb_anon ...
    docqa eval /tmp/fb_symbols.jsonl --docs ../shared/data/financebench_dev --doc-field doc_pdf \\
        --no-embeddings --json --data-dir /tmp/fb_variants [--scope document]

The symbols are read from the covers by docqa's own reader (docqa.profiles.sec.covers), with the text
docqa extracts, so a company whose symbol the reader misses has its rows left out (counted in the output).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path

from docqa.profiles.sec import covers as filings
from ingest.readers import read_document


def symbols_by_company(docs: Path, paths: set[str]) -> dict[str, tuple[set[tuple[str, ...]], set[str]]]:
    """File-name company -> (its names as the covers give them, the symbols its covers list)."""
    found: dict[str, tuple[set[tuple[str, ...]], set[str]]] = defaultdict(lambda: (set(), set()))
    for rel in sorted(paths):
        parsed = read_document(docs / rel)
        head = "\n".join(page.text for page in parsed.pages[:2])
        identity = filings.read_identity(Path(rel).name, head)
        if identity is None:
            continue
        names, symbols = found[Path(rel).name.split("_")[0]]
        names.update(identity.names)
        symbols.update(identity.tickers)
    return found


def rewrite(question: str, names: set[tuple[str, ...]], symbol: str) -> str | None:
    """The question with its company's name (as written, possessive kept) replaced by the symbol, and
    "FY2019" as "FY19"; None when no name of the company is found in it."""
    for name in sorted(names, key=len, reverse=True):
        pattern = r"\b" + r"[\s.,&-]*".join(re.escape(word) for word in name) + r"\b"
        if re.search(pattern, question, re.IGNORECASE):
            renamed = re.sub(pattern, symbol, question, count=0, flags=re.IGNORECASE)
            return re.sub(r"\bFY\s*20(\d\d)\b", r"FY\1", renamed)
    return None


def write_renamed(rows: list[dict], root: Path, field: str, folder: Path, out: Path) -> None:
    """The set with its documents linked under `folder` by names that say nothing about them."""
    originals = sorted({row[field] for row in rows if row.get(field)})
    renamed = {}
    for n, original in enumerate(originals, 1):
        relative = str(Path(original).parent / f"filing{n:02d}{Path(original).suffix}")
        link = folder / relative
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to((root / original).resolve())
        renamed[original] = relative
    with out.open("w", encoding="utf-8") as handle:
        for row in rows:
            name = renamed.get(row.get(field) or "")
            handle.write(json.dumps({**row, field: name, "doc": name or row["doc"]}, ensure_ascii=False) + "\n")
    print(json.dumps({"rows": len(rows), "documents": len(renamed), "folder": str(folder), "out": str(out)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--doc-field", default="doc_pdf")
    parser.add_argument("--out", type=Path, required=True, help="Where the variant set goes (outside the project).")
    parser.add_argument(
        "--lowercase",
        action="store_true",
        help="Instead: every question as typed without capitals, nothing else changed.",
    )
    parser.add_argument(
        "--renamed-docs",
        type=Path,
        help="Instead: link every document under this folder as filing01.pdf, ... (a file name that says nothing, as "
        "EDGAR's or a user's may), and write the set naming them; then `docqa eval OUT --docs THIS_FOLDER ...`.",
    )
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.qa.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.renamed_docs:
        write_renamed(rows, args.qa.parent, args.doc_field, args.renamed_docs, args.out)
        return
    if args.lowercase:
        with args.out.open("w", encoding="utf-8") as out:
            out.writelines(
                json.dumps({**row, "question": row["question"].lower()}, ensure_ascii=False) + "\n" for row in rows
            )
        print(json.dumps({"rows": len(rows), "lowercased": len(rows), "out": str(args.out)}))
        return
    companies = symbols_by_company(args.qa.parent, {r[args.doc_field] for r in rows if r.get(args.doc_field)})
    rewritten = kept = 0
    with args.out.open("w", encoding="utf-8") as out:
        for row in rows:
            names, symbols = companies.get(Path(row.get(args.doc_field) or "").name.split("_")[0], (set(), set()))
            plain = sorted(s for s in symbols if s.isalpha())
            question = rewrite(row["question"], names, plain[0]) if plain else None
            if question is None:  # no symbol to name it by: says nothing about symbols, so left out
                kept += 1
                continue
            rewritten += 1
            out.write(json.dumps({**row, "question": question}, ensure_ascii=False) + "\n")
    summary = {"rows": len(rows), "rewritten": rewritten, "left_out": kept, "out": str(args.out)}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
