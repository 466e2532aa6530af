"""The unified-KV check of 2026-12-05 (docs/benchmarks/gpu-engine.md, "tried, taken back", and what it was): with
one KV pool for all sequences and the prefix cache on, four prompts run alone, then counted and submitted a few
milliseconds apart; per round, the worst greedy shortfall of the four texts (how far below its step's best logit
the likeliest token spelling the text falls, as a share of the logit range; the batching tests allow 5%). It
read 24.7% in every round while the shortfall scored the text tokenized again; scored over the tokens a stream
can have written, 0.2-0.3%.

    python -m bench.unified_kv_mixing --model DEMO.gguf [--pause 0.003] [--no-unified] [--cache-slots 0]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from docqa.core.settings import LLMSettings
from docqa.engine.batching import BatchingGenerator
from tests.engine.test_engine import GREEDY, greedy_shortfall, wait_idle
from tests.support.engines import PROMPTS

SETTINGS: dict[str, Any] = dict(n_ctx=2048, n_parallel=6, n_batch=256, max_queue=3)


def one_round(engine: BatchingGenerator, pause: float) -> dict[str, str]:
    """The four prompts run alone (their prefixes cached), then counted and submitted `pause` seconds apart,
    as asks reach `docqa serve`: each prompt's text from the second time."""
    for prompt in PROMPTS[:4]:
        list(engine.submit(prompt, GREEDY))
    streams = {}
    for prompt in PROMPTS[:4]:
        engine.count_tokens(prompt)
        streams[prompt] = engine.submit(prompt, GREEDY)
        time.sleep(pause)
    texts = {p: "".join(e.text for e in s if e.kind == "text") for p, s in streams.items()}
    wait_idle(engine)
    return texts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--pause", type=float, default=0.003, help="seconds between the four submits")
    ap.add_argument("--no-unified", action="store_true", help="a KV stream per sequence (the default engine)")
    ap.add_argument("--cache-slots", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument(
        "--flash-attn", action="store_true", help="flash attention on (off by default for one pool on a CPU)"
    )
    args = ap.parse_args()
    settings = LLMSettings(
        **SETTINGS,
        prefix_cache_slots=args.cache_slots,
        kv_unified=not args.no_unified,
        flash_attn=True if args.flash_attn else None,
    )
    engine = BatchingGenerator(args.model, settings)
    worst = []
    for _ in range(args.rounds):
        texts = one_round(engine, args.pause)
        worst.append(round(max(greedy_shortfall(engine, p, t) for p, t in texts.items()), 3))
    engine.close()
    print(json.dumps({"worst_shortfall_per_round": worst, "rounds_over_5%": sum(w > 0.05 for w in worst)}))


if __name__ == "__main__":
    main()
