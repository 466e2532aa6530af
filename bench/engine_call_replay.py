"""Did the engine draw each token from its own row? Records the engine's llama.cpp calls over the unified-KV
check's rounds (bench/unified_kv_mixing.py: four prompts alone, then submitted a few milliseconds apart, prefix
cache on), then replays the same calls on fresh contexts of four kinds (one KV pool or a stream per sequence,
flash attention on or off) and reports, per kind, the worst draw: how far below its row's best logit the token
the engine drew lies, as a share of the logit range. Near 0 in all four: the engine read its own rows; the kinds
differ only in rounding (what a near-tie follows). The control scores each step's tokens against the rows
rotated by one: it must read far above 5%.

    python -m bench.engine_call_replay --model DEMO.gguf [--rounds 2] [--pause 0.003]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench.unified_kv_mixing import SETTINGS as CHECK_SETTINGS
from bench.unified_kv_mixing import one_round
from docqa.core.settings import LLMSettings
from docqa.engine.batching import BatchingGenerator
from docqa.llama.context import LlamaContext

SETTINGS: dict[str, Any] = {**CHECK_SETTINGS, "prefix_cache_slots": 4}
KINDS: dict[str, dict[str, Any]] = {
    "one_pool": dict(kv_unified=True, flash_attn=False),
    "one_pool_flash_attn": dict(kv_unified=True, flash_attn=True),
    "per_sequence": dict(kv_unified=False, flash_attn=False),
    "per_sequence_flash_attn": dict(kv_unified=False, flash_attn=True),
}


def record(model: Path, rounds: int, pause: float) -> list[tuple[Any, ...]]:
    """The engine's calls, in order: ("decode", tokens, positions, sequences, outputs), ("copy", src, dst,
    end), ("remove", seq, start, end), ("draw", [(slot, batch index)], tokens)."""
    engine = BatchingGenerator(model, LLMSettings(**SETTINGS, **KINDS["one_pool"]))
    llama = engine.llama
    calls: list[tuple[Any, ...]] = []
    decode, copy, remove, draw = llama.decode, llama.seq_copy, llama.seq_remove, engine.samplers.sample

    def recorded_decode() -> int:
        n = llama.batch.n_tokens
        b = llama.batch
        calls.append(("decode", b.token[:n].copy(), b.pos[:n].copy(), b.seq[:n].copy(), b.logits[:n].copy()))
        return decode()

    def recorded_copy(src: int, dst: int, end: int) -> None:
        calls.append(("copy", src, dst, end))
        copy(src, dst, end)

    def recorded_remove(seq: int, start: int = 0, end: int = -1) -> bool:
        calls.append(("remove", seq, start, end))
        return remove(seq, start, end)

    def recorded_draw(ready: list[tuple[int, int]]) -> list[int]:
        tokens = draw(ready)
        calls.append(("draw", list(ready), list(tokens)))
        return tokens

    llama.decode = recorded_decode  # type: ignore[method-assign]
    llama.seq_copy = recorded_copy  # type: ignore[method-assign]
    llama.seq_remove = recorded_remove  # type: ignore[method-assign,assignment]
    engine.samplers.sample = recorded_draw  # type: ignore[method-assign]
    for _ in range(rounds):
        one_round(engine, pause)
    engine.close()
    return calls


def worst_draw(model: Path, calls: list[tuple[Any, ...]], kind: dict[str, Any], rotate: bool = False) -> float:
    """Replay the calls on a fresh context of this kind: the worst drawn token's shortfall. rotate: score
    each token of a step with several draws against the next one's row (the control: can it tell?)."""
    llama = LlamaContext.for_engine(model, LLMSettings(**SETTINGS, **kind))
    worst = 0.0
    for call in calls:
        if call[0] == "decode":
            llama.batch._append(*call[1:])
            if llama.decode() != 0:
                raise RuntimeError("a replayed decode failed")
        elif call[0] == "copy":
            llama.seq_copy(*call[1:])
        elif call[0] == "remove":
            llama.seq_remove(*call[1:])
        else:
            indices = [index for _, index in call[1]]
            if rotate:
                indices = indices[1:] + indices[:1]
            for index, token in zip(indices, call[2], strict=True):
                row = llama.logits(index)
                worst = max(worst, float((row.max() - row[token]) / (row.max() - row.min())))
    llama.close()
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--pause", type=float, default=0.003, help="seconds between the four submits")
    args = ap.parse_args()
    calls = record(args.model, args.rounds, args.pause)
    draws = sum(len(c[1]) for c in calls if c[0] == "draw")
    worst = {name: round(worst_draw(args.model, calls, kind), 4) for name, kind in KINDS.items()}
    control = round(worst_draw(args.model, calls, KINDS["one_pool"], rotate=True), 4)
    print(json.dumps({"draws": draws, "worst_draw_shortfall": worst, "control_rows_rotated": control}))


if __name__ == "__main__":
    main()
