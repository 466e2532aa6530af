"""Where single-stream decode loses against llama-bench tg: the context's shape, or the engine's step.

On the device, after bench/gpu_run.sh build. In one process, in turns (3 rounds):
- llama-bench tg128 and tg256 (the ceiling; the RAG request generates 256 tokens);
- a raw decode loop on the engine's own context: one token a step, llama_decode + llama_synchronize,
  no sampling, no stream, on a sequence with no sampler attached (what llama-bench's tg does, through
  ctypes): with the RAG engine's shape (16 sequences + 2 cache slots of 6,464 cells) and with two;
- the same loop with a request's sampler chain in the graph, its token read back and fed in (the engine's
  GPU work, without the rest of its step); also with a greedy chain (argmax alone);
- the engine itself, one request of 256 tokens (Qwen's non-thinking sampling, the whole chain in the graph),
  with both shapes, and where its step's time goes (docqa.engine.step_timing); on the 18-sequence shape
  also with the one-level block top-k (loop and engine, in turns with the default two levels),
  without launching the next step ahead, with a greedy request, and with the graph keeping only the
  top-k for the host to draw from.

usage: python -m bench.gpu_single_stream_probe --model q14.gguf --bin build/bin [--out probe.json]
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from dataclasses import replace

import llama_cpp  # noqa: F401  (before numpy: the reverse order crashed model loading on the device)

from bench.gpu_engine_bench import device_arguments, llama_bench_tg, rag_settings, run_requests
from docqa.core.sampling_params import NON_THINKING_SAMPLING, SamplingParams
from docqa.engine.batching import BatchingGenerator
from docqa.engine.step_timing import StepTiming

TOKENS = 256


def raw_decode_rate(engine: BatchingGenerator, n: int = TOKENS) -> float:
    """Tokens/s of bare one-token decodes on the engine's context, its scheduler held off meanwhile."""
    llama = engine.llama
    seq = max(set(range(engine._settings.n_parallel)) - engine.samplers.attached_slots)
    token = llama.tokenize("Hello")[-1]
    with engine._step_lock:
        start = 0.0
        for pos in range(n + 1):
            llama.batch.add([token], pos, seq, "last")
            if llama.decode() != 0:
                raise RuntimeError("decode failed")
            llama.lib.llama_synchronize(llama.ctx.ctx)
            if pos == 0:
                start = time.perf_counter()
        rate = n / (time.perf_counter() - start)
        llama.seq_remove(seq)
    return rate


def raw_sampled_rate(engine: BatchingGenerator, params: SamplingParams, n: int = TOKENS) -> float:
    """Tokens/s of the same bare loop, but each step drawn by the request's chain in the graph and its
    token fed back (no stream, no text): the engine's GPU work without the rest of its step."""
    llama = engine.llama
    with engine._step_lock:
        seq = max(set(range(engine._settings.n_parallel)) - engine.samplers.attached_slots)
        engine.samplers.for_request(seq, params)
        token = llama.tokenize("Hello")[-1]
        start = 0.0
        for pos in range(n + 1):
            llama.batch.add([token], pos, seq, "last")
            if llama.decode() != 0:
                raise RuntimeError("decode failed")
            (token,) = engine.samplers.sample([(seq, 0)])
            if pos == 0:
                start = time.perf_counter()
        rate = n / (time.perf_counter() - start)
        engine.samplers.release(seq)
        llama.seq_remove(seq)
    return rate


def main() -> None:
    ap = device_arguments("single_stream_probe.json")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    params = replace(NON_THINKING_SAMPLING, max_tokens=TOKENS, ignore_eos=True, seed=1)
    # two sequences, not one: the raw loop needs a sequence with no sampler attached
    shapes = {
        "np16": rag_settings(),
        "np2": rag_settings().model_copy(update={"n_parallel": 2, "prefix_cache_slots": 0}),
    }
    rates: dict[str, list[float]] = {}
    steps: dict[str, list[float]] = {}  # the engine's step parts (docqa.engine.step_timing), ms a step

    def llama_bench(n: int) -> None:
        rates.setdefault(f"llama_bench_tg{n}", []).extend(llama_bench_tg(args.bin, args.model, n))

    def engine_rate(engine: BatchingGenerator, name: str, request: SamplingParams) -> None:
        engine.timing = StepTiming()
        (trace,), _ = run_requests(engine, ["Summarise the agreement."], request)
        rates.setdefault(name, []).append(trace.decode_rate)
        for part, ms in engine.timing.report().items():
            steps.setdefault(f"{name}_{part}", []).append(ms)

    for round_ in range(args.rounds):
        llama_bench(128)
        llama_bench(256)
        for shape, settings in shapes.items():
            engine = BatchingGenerator(args.model, settings)
            run_requests(engine, ["Warm up the graphs."], replace(params, max_tokens=8))
            raw_decode_rate(engine, 16)  # its graph too
            rates.setdefault(f"raw_decode_{shape}", []).append(raw_decode_rate(engine))
            if shape == "np16":  # argmax alone in the graph: what reading a drawn token back costs
                greedy = replace(params, temperature=0.0)
                raw_sampled_rate(engine, greedy, 16)
                rates.setdefault(f"raw_sampled_greedy_{shape}", []).append(raw_sampled_rate(engine, greedy))
            group = engine.samplers.block_top_k
            # the block top-k through two levels of blocks (the default) and through one, on the
            # 16-sequence shape, in turns, the first of them alternating from round to round
            levels = [True, False][:: -1 if round_ % 2 else 1] if shape == "np16" and group else [True]
            for short_sorts in levels:
                if group is not None:
                    group.short_sorts = short_sorts
                name = shape if short_sorts else f"one_level_{shape}"
                raw_sampled_rate(engine, params, 16)
                rates.setdefault(f"raw_sampled_{name}", []).append(raw_sampled_rate(engine, params))
                engine_rate(engine, f"engine_{name}", params)
            if group is not None:
                group.short_sorts = True
            if shape == "np16":
                # the next step started before the text is made (the default), or after it
                engine.launch_ahead = False
                engine_rate(engine, f"engine_not_ahead_{shape}", params)
                engine.launch_ahead = True
                engine_rate(engine, f"engine_greedy_{shape}", replace(params, temperature=0.0))
                # the graph keeps the top-k only and the host draws, as with many sequences
                engine.samplers.batched_from = 1
                engine_rate(engine, f"engine_topk_host_draw_{shape}", params)
            engine.close()
        print(json.dumps({k: v[-1] for k, v in rates.items()}), file=sys.stderr, flush=True)
    tg = statistics.mean(rates["llama_bench_tg128"])
    out: dict[str, float] = {}
    for name, values in rates.items():
        out[f"{name}_tps_median"] = statistics.median(values)
        out[f"{name}_share_of_tg128"] = statistics.median(values) / tg
    out["rounds"] = args.rounds
    args.out.write_text(json.dumps({"figures": out, "runs": rates, "engine_steps": steps}, indent=2))
    print("| figure | tok/s (median) | share of tg128 |\n|---|---|---|")
    for name, values in rates.items():
        print(f"| {name} | {statistics.median(values):.1f} | {statistics.median(values) / tg:.3f} |")


if __name__ == "__main__":
    main()
