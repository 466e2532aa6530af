"""How much single-stream decode moves from one engine instance to the next, in one process.

Within one engine the 5 requests of the engine benchmark's single-stream figure agree within ~1%,
while the same code measured 92.0-96.4% of llama-bench tg128 from run to run, and the engine built
second in a run was the slower one every time. This builds the RAG-shaped engine `--instances` times
in turns, 5 requests of 256 tokens each (Qwen's non-thinking sampling), with llama-bench tg128
before and after, and records on which CPU the engine's scheduler thread and the stream's reader
ran last (a thread far from the GPU waits longer for each step's token). Run it once as is and once
under `taskset -c <the GPU's local CPUs>` to see whether placement explains the spread.

usage: python -m bench.gpu_instance_spread --model q14.gguf --bin build/bin --out spread.json [--label pinned]
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import threading
from dataclasses import replace
from pathlib import Path

import llama_cpp  # noqa: F401  (before numpy: the reverse order crashed model loading on the device)

from bench.gpu_engine_bench import (
    device_arguments,
    rag_settings,
    run_requests,
    single_stream_rates,
    tg_around,
)
from docqa.core.sampling_params import NON_THINKING_SAMPLING
from docqa.engine.batching import BatchingGenerator


def last_cpu(native_id: int | None) -> int:
    """The CPU a thread of this process ran on last (field 39 of /proc/<pid>/task/<tid>/stat)."""
    if native_id is None:
        return -1
    stat = Path(f"/proc/self/task/{native_id}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[36])


def main() -> None:
    ap = device_arguments("instance_spread.json")
    ap.add_argument("--instances", type=int, default=4)
    ap.add_argument("--requests", type=int, default=5)
    ap.add_argument("--label", default="as_is")
    args = ap.parse_args()
    params = replace(NON_THINKING_SAMPLING, max_tokens=256, ignore_eos=True, seed=1)
    out: dict[str, object] = {"label": args.label, "allowed_cpus": sorted(os.sched_getaffinity(0))}
    instances: list[dict[str, float]] = []

    def every_instance() -> None:
        for n in range(args.instances):
            engine = BatchingGenerator(args.model, rag_settings())
            run_requests(engine, ["Warm up the graphs."], replace(params, max_tokens=8))
            rates = single_stream_rates(engine, params, args.requests)
            instances.append(
                {
                    "instance": n,
                    "mean_tps": statistics.mean(rates),
                    "min_tps": min(rates),
                    "max_tps": max(rates),
                    "scheduler_cpu": last_cpu(engine._thread.native_id),
                    "reader_cpu": last_cpu(threading.main_thread().native_id),
                }
            )
            engine.close()
            print(json.dumps(instances[-1]), file=sys.stderr, flush=True)

    _, tg = tg_around(args.bin, args.model, every_instance)
    ceiling = statistics.mean(tg)
    for row in instances:
        row["share_of_tg128"] = row["mean_tps"] / ceiling
    out.update({"llama_bench_tg128": tg, "instances": instances})
    shares = [row["share_of_tg128"] for row in instances]
    out["share_min"], out["share_max"], out["share_mean"] = min(shares), max(shares), statistics.mean(shares)
    args.out.write_text(json.dumps(out, indent=2))
    print(json.dumps({k: v for k, v in out.items() if k != "instances"}, indent=1))


if __name__ == "__main__":
    main()
