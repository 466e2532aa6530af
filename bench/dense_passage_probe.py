"""Does a dense model, fed ~500-token passages instead of whole 4k-token chunks, re-order BM25's choice
inside the document it found? A probe, not a docqa feature: docqa embeds whole chunks (a long one as the
mean of its windows), which blurs a clause into its chunk.

Reads what `docqa eval --details FILE --k 1,3,5,10,20` wrote (BM25's top 20 per question) and the eval's
SQLite store; embeds every passage of every chunk (docqa.store.keyword.index.split_passages, the BM25 passages)
and every question with an embedding GGUF through docqa's embedder; then, inside BM25's top document, fuses
BM25's rank with the rank of each chunk's best passage (reciprocal rank fusion, weight w, constant k), the
other documents' places unchanged, and scores by the data README's rule.

    docqa eval ../shared/data/cuad_dev/qa.jsonl --no-embeddings --data-dir /tmp/evalv3 \\
        --k 1,3,5,10,20 --details /tmp/d.jsonl
    python -m bench.dense_passage_probe --store /tmp/evalv3/docqa.sqlite3 --details /tmp/d.jsonl \\
        --qa ../shared/data/cuad_dev/qa.jsonl --model minilm.gguf --vectors /tmp/vectors.npz
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from collections import defaultdict
from pathlib import Path

import numpy as np

from docqa.core.settings import EmbedSettings
from docqa.eval.evaluation import is_hit
from docqa.llama.embedder import LlamaEmbedder
from docqa.store.keyword.passages import PASSAGES_PER_CHUNK, split_passages

Ranking = list[tuple[int, int]]  # (chunk ID, document ID), best first


def embed(
    store: sqlite3.Connection, questions: dict[str, str], model: Path, cache: Path, threads: int | None = None
) -> dict[str, np.ndarray]:
    """Every BM25 passage's vector and every question's, computed once and kept in `cache` (.npz)."""
    if cache.exists():
        return dict(np.load(cache))
    ids, texts = [], []
    for chunk_id, text in store.execute("SELECT id, text FROM chunks ORDER BY id"):
        for k, passage in enumerate(split_passages(text)):
            ids.append(chunk_id * PASSAGES_PER_CHUNK + k)
            texts.append(passage)
    embedder = LlamaEmbedder(model, EmbedSettings(model=model, n_threads=threads))
    vectors = {
        "ids": np.array(ids),
        "P": embedder.embed_documents(texts).astype(np.float32),
        "Q": np.vstack([embedder.embed_query(q) for q in questions.values()]).astype(np.float32),
        "qids": np.array(list(questions)),
    }
    np.savez(cache, **vectors)  # type: ignore[arg-type]
    return vectors


def fuse(
    ranking: Ranking, chunks: list[int], dense: dict[int, float], weight: float, k: int, keep_first: bool
) -> Ranking:
    top_document = ranking[0][1]
    fixed = ranking[0][0] if keep_first else None
    dense_rank = {c: r for r, c in enumerate(sorted(chunks, key=lambda c: -dense[c]), 1)}
    bm25_rank: dict[int, int] = {}
    for r, (c, d) in enumerate(ranking, 1):
        if d == top_document:
            bm25_rank.setdefault(c, r)
    score = {c: 1 / (k + bm25_rank.get(c, 30)) + weight / (k + dense_rank[c]) for c in chunks if c != fixed}
    order = iter(sorted(score, key=lambda c: -score[c]))
    fused = [(next(order), top_document) if d == top_document and c != fixed else (c, d) for c, d in ranking]
    return fused + [(c, top_document) for c in order]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--details", type=Path, required=True)
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--vectors", type=Path, required=True, help="cache of the vectors (written once)")
    args = parser.parse_args()
    store = sqlite3.connect(f"file:{args.store}?mode=ro", uri=True)
    rows = [json.loads(line) for line in args.details.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["retrieved"]]
    vectors = embed(store, {r["id"]: r["question"] for r in rows}, args.model, args.vectors)
    question_vector = dict(zip(vectors["qids"], vectors["Q"], strict=True))
    passages_of: dict[int, list[int]] = defaultdict(list)
    for n, passage_id in enumerate(vectors["ids"]):
        passages_of[int(passage_id) // PASSAGES_PER_CHUNK].append(n)
    chunks_of: dict[int, list[int]] = defaultdict(list)
    text_of = {}
    for chunk_id, document_id, text in store.execute("SELECT id, document_id, text FROM chunks ORDER BY id"):
        chunks_of[document_id].append(chunk_id)
        text_of[chunk_id] = text
    answers = {}
    for line in args.qa.read_text().splitlines():
        raw = json.loads(line)
        answers[raw["id"]] = [a["text"] for a in raw.get("answers", []) if a.get("text")]
    variants: dict[str, list[int | None]] = defaultdict(list)
    for row in rows:
        hits = {c for c in chunks_of[row["document_id"]] if any(is_hit(text_of[c], a) for a in answers[row["id"]])}
        ranking = [(c["chunk_id"], c["document_id"]) for c in row["retrieved"]]
        mine = chunks_of[ranking[0][1]]
        q = question_vector[row["id"]]
        dense = {c: float((vectors["P"][passages_of[c]] @ q).max()) for c in mine}
        candidates = {"bm25": ranking}
        for keep_first in (False, True):
            for weight, k in ((0.25, 10), (0.5, 10), (1.0, 10), (1.0, 60), (2.0, 60)):
                name = f"{'keep_first_' if keep_first else ''}w{weight}_k{k}"
                candidates[name] = fuse(ranking, mine, dense, weight, k, keep_first)
        for name, ranked in candidates.items():
            variants[name].append(next((r for r, (c, _) in enumerate(ranked, 1) if c in hits), None))
    report = {
        name: {
            **{f"recall@{k}": round(sum(1 for r in ranks if r and r <= k) / len(ranks), 4) for k in (1, 3, 5)},
            "mrr_top20": round(sum(1 / r for r in ranks if r) / len(ranks), 4),
        }
        for name, ranks in variants.items()
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
