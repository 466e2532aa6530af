"""Step plans compared on paper: how the engine's planner (docqa.engine.scheduler.StepPlanner) would lay out
a burst of prompts, and what that costs under a simple model of a GPU step. A model, not a measurement: it
ranks policies before device time is spent on them, and its figures are never reported as the GPU's.

Every prompt arrives at once and is read shortest first (docqa.engine.step_order); each then generates
`--answer-tokens`. A step costs `--step-ms`, plus `--pass-ms` per llama.cpp pass (docqa.engine.step_layout
.passes: a KV stream per sequence, slots in arrival order), plus its tokens at `--pp` tokens/s, plus
`--rows-ms` when it carries generating rows. Defaults: llama-bench pp6144 at passes of 2,048 on the H200
(5,591 tokens/s) and round figures for the rest.

    python -m bench.step_plan_model                          # 16 x 6,144 and 64 x 512
    python -m bench.step_plan_model --lengths 7208 7569 9375 12543 ...
    python -m bench.step_plan_model --lengths ... --arrive 0.45 0.83   # prompts reaching the engine over a span

With --arrive FROM TO, the prompts reach the engine over that span (seconds from the burst's start), in a
random order of lengths, and the figures are medians over --orders such orders.
"""

from __future__ import annotations

import argparse
import random
import statistics

from docqa.engine.scheduler import StepPlanner
from docqa.engine.step_layout import Entry, passes


def modelled(
    lengths: list[int],
    planner: StepPlanner,
    n_ubatch: int,
    args: argparse.Namespace,
    arrivals: list[float] | None = None,
) -> dict[str, float]:
    """Wall, median and mean first token (s, from the burst's start), steps and passes of one burst under the
    cost model. arrivals: when each prompt reaches the engine (s); None: all at once, at 0."""
    waiting = sorted(zip(arrivals or [0.0] * len(lengths), range(len(lengths)), strict=True))
    reading: dict[int, int] = {}  # slot -> prompt tokens left
    answering: dict[int, int] = {}  # slot -> answer tokens left
    clock, first_tokens, steps, count = 0.0, [], 0, 0
    while waiting or reading or answering:
        while waiting and waiting[0][0] <= clock:
            slot = waiting.pop(0)[1]
            reading[slot] = lengths[slot]
        if not reading and not answering:  # idle until the next prompt arrives
            clock = waiting[0][0]
            continue
        order = sorted(answering) + sorted(reading, key=lambda slot: (reading[slot], slot))
        plan = planner.plan([1] * len(answering) + [reading[slot] for slot in order[len(answering) :]])
        entries = [Entry(order[at], 1, "row", at) for at in range(plan.rows)]
        entries += [Entry(order[at], take, "slice", at) for at, take in plan.slices]
        n_passes = passes(sorted(entries, key=lambda e: e.slot), n_ubatch)
        tokens = sum(e.tokens for e in entries)
        clock += (args.step_ms + n_passes * args.pass_ms + (args.rows_ms if plan.rows else 0)) / 1000
        clock += tokens / args.pp
        steps, count = steps + 1, count + n_passes
        for slot in order[: plan.rows]:
            answering[slot] -= 1
            if not answering[slot]:
                del answering[slot]
        for at, take in plan.slices:
            slot = order[at]
            reading[slot] -= take
            if not reading[slot]:
                del reading[slot]
                first_tokens.append(clock)
                answering[slot] = args.answer_tokens - 1
    return {
        "wall_s": round(clock, 2),
        "ttft_p50_s": round(statistics.median(first_tokens), 2),
        "ttft_mean_s": round(statistics.mean(first_tokens), 2),
        "steps": steps,
        "passes": count,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lengths", type=int, nargs="*", help="one burst's prompt tokens (default: two loads)")
    ap.add_argument("--n-batch", type=int, default=4096)
    ap.add_argument("--n-ubatch", type=int, default=2048)
    ap.add_argument("--prompt-steps-per-decode", type=int, default=4)
    ap.add_argument("--answer-tokens", type=int, default=256)
    ap.add_argument("--pp", type=float, default=5591.0, help="prompt tokens/s")
    ap.add_argument("--step-ms", type=float, default=4.0)
    ap.add_argument("--pass-ms", type=float, default=6.0)
    ap.add_argument("--rows-ms", type=float, default=12.0)
    ap.add_argument("--arrive", type=float, nargs=2, metavar=("FROM", "TO"), help="arrivals spread over a span (s)")
    ap.add_argument("--orders", type=int, default=200, help="random orders of arrival (with --arrive)")
    args = ap.parse_args()
    if args.arrive:
        arrivals_compared(args)
        return
    loads = {"given": args.lengths} if args.lengths else {"16 x 6144": [6144] * 16, "64 x 512": [512] * 64}
    print("| load | prompt steps | wall | TTFT p50 | TTFT mean | steps | passes |\n|---|---|---|---|---|---|---|")
    for name, lengths in loads.items():
        for ends in (False, True):
            planner = StepPlanner(args.n_batch, args.prompt_steps_per_decode, end_at_prompt_end=ends)
            m = modelled(lengths, planner, args.n_ubatch, args)
            policy = "end at a prompt's end" if ends else "filled to n_batch"
            print(
                f"| {name} | {policy} | {m['wall_s']} s | {m['ttft_p50_s']} s | {m['ttft_mean_s']} s "
                f"| {m['steps']} | {m['passes']} |"
            )


def arrivals_compared(args: argparse.Namespace) -> None:
    """The burst's prompts arriving evenly over --arrive, in --orders random orders (seeded): median figures."""
    lengths = args.lengths or [6144] * 16
    start, end = args.arrive
    step = (end - start) / max(1, len(lengths) - 1)
    arrivals = [start + i * step for i in range(len(lengths))]
    rng = random.Random(1)
    runs = []
    for _ in range(args.orders):
        shuffled = rng.sample(lengths, len(lengths))
        planner = StepPlanner(args.n_batch, args.prompt_steps_per_decode)
        runs.append(modelled(shuffled, planner, args.n_ubatch, args, arrivals))
    wall = statistics.median(r["wall_s"] for r in runs)
    ttft = statistics.median(r["ttft_p50_s"] for r in runs)
    print(f"arriving over {start}-{end} s: wall {wall:.2f} s, TTFT p50 {ttft:.2f} s (medians of {len(runs)} orders)")


if __name__ == "__main__":
    main()
