"""Do prompt windows (docqa.answering.windows) land on the evidence page? Page recall@3 of the retrieved
chunks against the windows the prompt gets from them, and how often a window's centre (the page its
citation names before the answer refines it) is an evidence page.

Reads a store that `docqa eval` built (its collection and documents), retrieves as the eval does, and cuts
the windows with Qwen's real tokenizer (a vocabulary-only GGUF) at the chunk cap, 4,096 tokens. With
--budget N (the CPU's prompt budget), the windows are then cut to fit N tokens, and the report says how often
an evidence page is still in the prompt, in part or whole. --cut says how: to their best paragraphs within the
budget, as docqa does (Asker.fit_to_budget), or each to its share of it around its best passage, as docqa did
before (docqa.answering.focus). Where the rows give answer spans (CUAD), it also says how often a span is in
the retrieved chunks and in the cut sources (the scoring rule of ../shared/data/README.md).

    docqa eval ../shared/data/financebench_dev/qa.jsonl --doc-field doc_pdf --no-embeddings --data-dir /tmp/fb
    python -m bench.prompt_windows --qa ../shared/data/financebench_dev/qa.jsonl --data-dir /tmp/fb \\
        --collection eval-financebench_dev-doc_pdf-bm25 [--scope document] [--budget 3072] [--cut window]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.collection_evidence import CountingOnly
from docqa.answering.citing import page_segments
from docqa.answering.focus import focus, per_source
from docqa.answering.windows import centre_page, centred
from docqa.core.settings import Settings
from docqa.core.types import RetrievedChunk
from docqa.eval.evaluation import load_rows
from docqa.eval.scoring import is_hit
from docqa.service import DocQA

QWEN_VOCAB = Path(__file__).resolve().parents[2] / "shared" / "tools" / "ggml-vocab-qwen2.gguf"


def _hit(chunks: list[RetrievedChunk], document_id: int, pages: tuple[int, ...]) -> bool:
    return any(c.document_id == document_id and any(c.first_page <= p <= c.last_page for p in pages) for c in chunks)


def _span(chunks: list[RetrievedChunk], document_id: int, answers: list[str]) -> bool:
    return any(c.document_id == document_id and any(is_hit(c.text, a) for a in answers) for c in chunks)


def _whole(chunks: list[RetrievedChunk], source: dict[int, str], document_id: int, pages: tuple[int, ...]) -> bool:
    """An evidence page's whole text (as its window had it) is in one of the sources."""
    return any(
        c.document_id == document_id and page in pages and text.strip() and source.get(page, "").strip() in c.text
        for c in chunks
        for page, text in page_segments(c)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--collection", required=True)
    parser.add_argument("--doc-field", default="doc_pdf")
    parser.add_argument("--scope", choices=["corpus", "document"], default="corpus")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--cap", type=int, default=4096)
    parser.add_argument("--vocab", type=Path, default=QWEN_VOCAB)
    parser.add_argument("--budget", type=int, default=None, help="prompt budget: sources cut around their passage")
    parser.add_argument("--cut", choices=["pack", "window"], default="pack", help="how sources are cut")
    args = parser.parse_args()
    generator = CountingOnly(args.vocab)
    count = generator.count_tokens
    qa = DocQA(Settings(data_dir=args.data_dir), None, generator)
    store = qa.store  # its document profiles read each document, as a search reads it
    tally = {
        "questions": 0,
        "chunks_hit": 0,
        "windows_hit": 0,
        "centre_on_evidence": 0,
        "chunk_first_page": 0,
        "focused_hit": 0,
        "focused_whole": 0,
        "with_spans": 0,
        "chunks_span": 0,
        "focused_span": 0,
    }
    focused_tokens: list[int] = []
    tokens: list[int] = []
    chunk_tokens: list[int] = []
    for row in load_rows(args.qa, args.doc_field):
        if not (row.answerable and (row.pages or row.answers) and row.doc):
            continue
        document = qa.find_document(str((args.qa.parent / row.doc).resolve()), args.collection)
        if document is None:
            continue
        question = row.request(args.collection, None).search_text()
        scope = document.id if args.scope == "document" else None
        chunks = qa.retrieve(question, args.k, args.collection, scope)
        query = qa.retriever.understand(qa.collection(args.collection), question)
        windows = centred(query, chunks, store.adjacent_chunks, store.best_passage, count, args.cap)
        tally["questions"] += 1
        tally["chunks_hit"] += _hit(chunks, document.id, row.pages)
        tally["windows_hit"] += _hit(windows, document.id, row.pages)
        tally["centre_on_evidence"] += any(
            c.document_id == document.id and centre_page(query, c, store.best_passage) in row.pages for c in chunks
        )
        tally["chunk_first_page"] += any(c.document_id == document.id and c.first_page in row.pages for c in chunks)
        tokens += [count(w.text) for w in windows]
        spans = [a for a in row.answers if a.strip()] if not row.pages else []
        tally["with_spans"] += bool(spans)
        tally["chunks_span"] += _span(chunks, document.id, spans)
        if args.budget:
            share = per_source(args.budget, len(windows))
            if args.cut == "pack":
                cut = qa._asker.fit_to_budget(query, windows, args.budget)
            else:
                cut = [focus(query, w, store.best_passage, count, share) for w in windows]
            tally["focused_span"] += _span(cut, document.id, spans)
            texts = {page: text for w in windows if w.document_id == document.id for page, text in page_segments(w)}
            tally["focused_hit"] += _hit(cut, document.id, row.pages)
            tally["focused_whole"] += _whole(cut, texts, document.id, row.pages)
            focused_tokens.append(sum(count(c.text) for c in cut))
        chunk_tokens += [count(c.text) for c in chunks]
    n = max(tally["questions"], 1)
    report = {
        "scope": args.scope,
        "questions": tally["questions"],
        f"chunks page recall@{args.k}": round(tally["chunks_hit"] / n, 4),
        f"windows page recall@{args.k}": round(tally["windows_hit"] / n, 4),
        "a window's centre is an evidence page": round(tally["centre_on_evidence"] / n, 4),
        "a chunk's first page is an evidence page": round(tally["chunk_first_page"] / n, 4),
        "chunk tokens max": max(chunk_tokens, default=0),
        "chunk tokens mean": round(sum(chunk_tokens) / max(len(chunk_tokens), 1)),
        "window tokens max": max(tokens, default=0),
        "window tokens mean": round(sum(tokens) / max(len(tokens), 1)),
    }
    if args.budget:
        report |= {
            "budget": args.budget,
            f"focused page recall@{args.k} (part of an evidence page)": round(tally["focused_hit"] / n, 4),
            f"focused whole evidence page @{args.k}": round(tally["focused_whole"] / n, 4),
            "focused prompt tokens max": max(focused_tokens, default=0),
            "focused prompt tokens mean": round(sum(focused_tokens) / max(len(focused_tokens), 1)),
            "cut": args.cut,
        }
    if tally["with_spans"]:
        with_spans = tally["with_spans"]
        report["questions with answer spans"] = with_spans
        report[f"chunks span recall@{args.k}"] = round(tally["chunks_span"] / with_spans, 4)
        if args.budget:
            report[f"focused span recall@{args.k}"] = round(tally["focused_span"] / with_spans, 4)
    print(json.dumps(report, indent=1))
    store.close()
    qa.close()


if __name__ == "__main__":
    main()
