"""What a `document` question ("Summarize this 10-K") reads of a long filing: every page in some part's prompt,
and every Item of the filing (Form 10-K's Items 1-16, as the filing's own headings write them) among them.

Builds the prompts only (`DocQA.prompts`, no model), with Qwen's tokenizer and a GPU's context (16,384 tokens,
the default answer length), on each 10-K of a folder (FinanceBench's, by default).

    python -m bench.document_coverage --folder ../shared/data/financebench_dev/pdf [--limit 5]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path
from typing import Any

from bench.collection_evidence import QWEN_VOCAB, CountingOnly
from bench.result_files import commit, new_result_path
from docqa.core.requests import AskRequest
from docqa.core.settings import RetrievalSettings, Settings
from docqa.service import DocQA

# A Form 10-K Item heading as filings write it at the start of a line: "Item 1A. Risk Factors", "ITEM 7."
_ITEM = re.compile(r"^\s*item\s+(1[0-6]|[1-9])([a-c])?\b[.:\s]", re.IGNORECASE | re.MULTILINE)
_PAGE = re.compile(r"\[page (\d+)\]")


def _items(text: str) -> set[str]:
    return {f"{n}{(letter or '').upper()}" for n, letter in _ITEM.findall(text)}


def cover(qa: DocQA, path: Path) -> dict[str, Any]:
    report = qa.ingest([path], collection="filings")
    document_id = report.files[0].document_id
    assert document_id is not None
    chunks = qa.store.fetch_chunks(qa.store.chunk_ids_of_document(document_id).tolist())
    in_document = set().union(*(_items(c.text) for c in chunks.values()))
    pages = {p for c in chunks.values() for p in range(c.first_page, c.last_page + 1)}
    request = AskRequest("Summarize this 10-K", collection="filings", scope="document", document_ids=(document_id,))
    prompts = [prompt for _, prompt in qa.prompts(request)]
    read_items = set().union(*(_items(p) for p in prompts))
    read_pages = {int(p) for prompt in prompts for p in _PAGE.findall(prompt)}  # pages that start in a source
    for prompt in prompts:  # and every page of each source's range
        for first, last in re.findall(r'pages="(\d+)(?:-(\d+))?"', prompt):
            read_pages |= set(range(int(first), int(last or first) + 1))
    return {
        "filing": path.name,
        "pages": len(pages),
        "parts": len(prompts),
        "items_in_filing": len(in_document),
        "items_read": len(in_document & read_items),
        "items_missed": sorted(in_document - read_items),
        "pages_read": len(pages & read_pages),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", type=Path, default=Path("../shared/data/financebench_dev/pdf"))
    parser.add_argument("--limit", type=int, default=5)
    args = parser.parse_args()
    filings = sorted(args.folder.glob("*10K*.pdf"))[: args.limit]
    settings = Settings(data_dir=Path(tempfile.mkdtemp()), retrieval=RetrievalSettings(retriever="bm25"))
    qa = DocQA(settings, None, CountingOnly(QWEN_VOCAB))
    rows = [cover(qa, path) for path in filings]
    qa.close()
    for row in rows:
        print(json.dumps(row), flush=True)
    result = {"bench": "document_coverage", "commit": commit(), "n_ctx": 16384, "filings": rows}
    path = new_result_path("cpu_document_coverage")
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {path}")


if __name__ == "__main__":
    main()
