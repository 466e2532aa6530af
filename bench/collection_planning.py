"""How long docqa takes to plan a question over a whole collection on this machine's CPU (no model).

Planning is what a collection question costs before the engine reads anything: each document searched for the
question, its paragraphs scored and fitted to its share, its prompt built and counted. On the GPU it is host time
inside "ask to answer" (docs/benchmarks/reading.md). Here: 100 CUAD contracts ingested (BM25), the bench's
questions planned with Qwen's tokenizer (a vocabulary-only GGUF) at a context of `--n-ctx` tokens a sequence (the
GPU bench's 2,560 by default), each planned once to warm, then timed `--repeat` times.

    python -m bench.collection_planning --data ../shared/data/cuad_dev [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import time
from pathlib import Path

from bench.collection_evidence import QWEN_VOCAB, CountingOnly, _load
from bench.result_files import commit, new_result_path
from docqa.core.requests import AskRequest
from docqa.core.settings import RetrievalSettings, Settings
from docqa.service import DocQA

QUESTIONS = ("Which of these contracts have a non-compete clause?", "Which law governs each of these contracts?")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/cuad_dev"))
    parser.add_argument("--contracts", type=int, default=100)
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/docqa-collection-planning"))
    parser.add_argument("--vocab", type=Path, default=QWEN_VOCAB)
    parser.add_argument("--n-ctx", type=int, default=2560)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    chosen, _ = _load(args.data, args.contracts)
    settings = Settings(data_dir=args.data_dir, retrieval=RetrievalSettings(retriever="bm25"))
    qa = DocQA(settings, None, CountingOnly(args.vocab, n_ctx=args.n_ctx))
    qa.ingest([args.data / "txt" / name for name in chosen], collection="cuad")
    runs = {}
    for question in QUESTIONS:
        request = AskRequest(question, collection="cuad", scope="collection")
        qa.prompts(request)  # warm: the store's pages, the tokenizer
        seconds = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            qa.prompts(request)
            seconds.append(round(time.perf_counter() - started, 2))
        runs[question] = {"seconds": seconds, "median_s": statistics.median(seconds)}
    qa.close()
    result = {"bench": "collection_planning", "commit": commit(), "contracts": len(chosen), "n_ctx": args.n_ctx,
              "reading": settings.reading.model_dump(), "questions": runs}  # fmt: skip
    path = new_result_path("cpu_collection_planning")
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2), f"written to {path}", sep="\n")


if __name__ == "__main__":
    main()
