"""What a user waits for on a CPU: `docqa ask`'s prompt tokens, time to the first token and total time
with the CPU defaults (a 4,096-token prompt budget, sources cut around their best passage; 512 answer
tokens) against the earlier defaults (whole 4k-token windows, whatever n_ctx leaves; 1,024 tokens).

Asks long-filing questions of a store `docqa eval` built, with the configured model (the demo model when
none is), one question at a time as `docqa ask` does, the answer cache off, the same seed.

    docqa eval ../shared/data/financebench_dev/qa.jsonl --doc-field doc_pdf --no-embeddings --data-dir /tmp/fb
    python -m bench.cpu_ask_defaults --qa ../shared/data/financebench_dev/qa.jsonl --data-dir /tmp/fb \\
        --collection eval-financebench_dev-doc_pdf-bm25 --every 17 --count 4 --out bench/results/cpu_ask_defaults.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from docqa.core.requests import AskRequest
from docqa.core.settings import Settings
from docqa.eval.evaluation import load_rows
from docqa.service import DocQA

# The earlier defaults: a budget no prompt reaches (whole windows), and the old answer cap.
BEFORE = {"prompt_budget": 1_000_000, "max_tokens": 1024}


def run(settings: Settings, questions: list[str], collection: str) -> list[dict[str, object]]:
    one = settings.llm.model_copy(update={"n_parallel": 1, "prefix_cache_slots": 0})  # as `docqa ask` runs
    qa = DocQA.open(settings.model_copy(update={"llm": one}), embedder=False, generator=True)
    try:
        rows = []
        for question in questions:
            answer = qa.ask(AskRequest(question, collection, seed=7, use_cache=False))
            t = answer.timings
            rows.append({
                "prompt_tokens": t.prompt_tokens,
                "ttft_s": round((t.ttft_ms or t.total_ms) / 1000, 1),
                "total_s": round(t.total_ms / 1000, 1),
                "completion_tokens": t.completion_tokens,
                "finish_reason": answer.finish_reason,
                "pages": [list(c.pages) for c in answer.citations],
            })  # fmt: skip
        return rows
    finally:
        qa.close()


def _medians(rows: list[dict[str, object]]) -> dict[str, float]:
    keys = ("prompt_tokens", "ttft_s", "total_s")
    return {key: round(statistics.median(float(str(r[key])) for r in rows), 2) for key in keys}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--collection", required=True)
    parser.add_argument("--every", type=int, default=17, help="take every n-th question")
    parser.add_argument("--count", type=int, default=4)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    questions = [row.question for row in load_rows(args.qa, "doc_pdf")[:: args.every][: args.count]]
    base = Settings(data_dir=args.data_dir)
    before = run(base.model_copy(update={"llm": base.llm.model_copy(update=BEFORE)}), questions, args.collection)
    after = run(base, questions, args.collection)
    report = {
        "questions": questions,
        "before": before,
        "after": after,
        "median": {name: _medians(rows) for name, rows in (("before", before), ("after", after))},
    }
    text = json.dumps(report, indent=1, ensure_ascii=False)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
