"""Where 64 x 512 loses against llama-batched-bench npl 64: the decode itself, the top-k kept in the
graph and the host's draw, or the engine's step around them.

On the device, after bench/gpu_run.sh build. In one process, in turns (3 rounds), on the engine's own
context (the 64 x 512 shape of bench.gpu_engine_bench: 64 sequences of up to 800 tokens):
- llama-batched-bench npl 64 (pp 512, tg 256), the ceiling;
- `raw`: 64 sequences hold a 512-token prompt each; one token of each a step, llama_decode +
  llama_synchronize, every row's logits out, no sampler attached (what batched-bench's tg does);
- `raw_top_k`: the same loop with the engine's samplers as under load (each row's top-k kept in the
  graph by the block top-k, the host drawing all rows at once), the drawn tokens fed back;
- `engine`: the engine itself, 64 requests of 512 prompt tokens and 256 answer tokens (Qwen's
  non-thinking sampling), tokens/s over the window in which all 64 generate, and its step parts.
Each loop reports tokens/s and, a step, the llama_decode call and the wait after it. With --switch-interval-too
S, the engine again with Python's thread switch interval at S seconds (5 ms by default): a call that returns
while the event loop's thread holds the GIL waits up to that long for it, one suspect for the engine's call
taking ~0.7 ms longer than the bare loop's (docs/benchmarks/gpu-engine.md, "the 64 x 512 step taken apart").

usage: python -m bench.gpu_batch_step_probe --model q14.gguf --bin build/bin [--out probe.json]
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from dataclasses import replace

import llama_cpp  # noqa: F401  (before numpy: the reverse order crashed model loading on the device)

from bench.gpu_engine_bench import ceilings, device_arguments, make_prompt, run_requests
from docqa.core.sampling_params import NON_THINKING_SAMPLING, SamplingParams
from docqa.core.settings import LLMSettings
from docqa.engine.batching import BatchingGenerator
from docqa.engine.step_timing import StepTiming

ROWS, PROMPT, STEPS = 64, 512, 256


def _prefill(engine: BatchingGenerator, rows: int, prompt: int) -> None:
    """Fill sequences 0..rows-1 with `prompt` tokens each, no output, n_batch tokens a decode."""
    llama = engine.llama
    token = llama.tokenize("Hello")[-1]
    per_batch = max(1, llama.n_batch // prompt)
    for first in range(0, rows, per_batch):
        for seq in range(first, min(rows, first + per_batch)):
            llama.batch.add([token] * prompt, 0, seq, False)
        if llama.decode() != 0:
            raise RuntimeError("prefill failed")
    llama.lib.llama_synchronize(llama.ctx.ctx)


def decode_loop(
    engine: BatchingGenerator, params: SamplingParams | None, rows: int, prompt: int, steps: int
) -> dict[str, float]:
    """One token of each of `rows` sequences a step, `steps` steps after one warm-up step. params None:
    no sampler, logits out (batched-bench's tg); else the engine's samplers as under load draw each
    row's next token, which the next step feeds in."""
    llama = engine.llama
    out: dict[str, float] = {}
    with engine._step_lock:
        _prefill(engine, rows, prompt)
        if params is not None:
            engine.samplers.adapt(rows)
            for seq in range(rows):
                engine.samplers.for_request(seq, params)
        tokens = [llama.tokenize("Hello")[-1]] * rows
        call_s = wait_s = 0.0
        start = 0.0
        reused = 0
        for step in range(steps + 1):
            llama.batch.add_singles(tokens, [prompt + step] * rows, list(range(rows)))
            t0 = time.perf_counter()
            if llama.decode() != 0:
                raise RuntimeError("decode failed")
            t1 = time.perf_counter()
            if params is None:
                llama.lib.llama_synchronize(llama.ctx.ctx)
            else:
                tokens = engine.samplers.sample([(seq, seq) for seq in range(rows)])
            t2 = time.perf_counter()
            if step == 0:
                start, reused = t2, graphs_reused(engine)
                continue
            call_s += t1 - t0
            wait_s += t2 - t1
        elapsed = time.perf_counter() - start
        out["graphs_reused_share"] = (graphs_reused(engine) - reused) / steps
        out["tps"] = rows * steps / elapsed
        out["step_ms"] = 1000 * elapsed / steps
        out["call_ms"] = 1000 * call_s / steps
        out["wait_ms"] = 1000 * wait_s / steps
        if params is not None:
            for seq in range(rows):
                engine.samplers.release(seq)
            engine.samplers.adapt(0)
        for seq in range(rows):
            llama.seq_remove(seq)
    return out


def graphs_reused(engine: BatchingGenerator) -> int:
    """How many decodes so far reused llama.cpp's previous graph rather than building one."""
    return int(engine.llama.lib.llama_perf_context(engine.llama.ctx.ctx).n_reused)


def engine_window(engine: BatchingGenerator, prompts: list[str], params: SamplingParams) -> dict[str, float]:
    """The engine on 64 x 512: tokens/s while all 64 generate (as bench.gpu_engine_bench), its step
    parts, and how many of its decodes reused the previous graph."""
    engine.timing = StepTiming()
    reused = graphs_reused(engine)
    traces, _ = run_requests(engine, prompts, params)
    reused = graphs_reused(engine) - reused
    all_decoding = max(t.stamps[0] for t in traces)
    first_done = min(t.finished for t in traces)
    in_window = sum(1 for t in traces for s in t.stamps[:-1] if all_decoding <= s <= first_done)
    out = {"tps": in_window / max(first_done - all_decoding, 1e-9)}
    out.update({k: v for k, v in engine.timing.report().items() if k.endswith("_ms")})
    out["launches"] = engine.timing.launches
    out["graphs_reused"] = reused
    return out


def main() -> None:
    ap = device_arguments("batch_step_probe.json")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rows", type=int, default=ROWS)
    ap.add_argument("--prompt", type=int, default=PROMPT)
    ap.add_argument("--steps", type=int, default=STEPS)
    ap.add_argument("--n-gpu-layers", type=int, default=None, help="LLMSettings.n_gpu_layers (0: a CPU smoke run)")
    ap.add_argument(
        "--switch-interval-too", type=float, default=None, help="also the engine with sys.setswitchinterval(S)"
    )
    args = ap.parse_args()
    params = replace(NON_THINKING_SAMPLING, max_tokens=args.steps, ignore_eos=True, seed=1)
    fields: dict[str, object] = {
        "n_ctx": max(800, args.prompt + args.steps + 32),  # 800: the 64 x 512 shape of gpu_engine_bench
        "n_parallel": args.rows,
        "prefix_cache_slots": 0,
        "max_queue": args.rows,
    }
    if args.n_gpu_layers is not None:  # a CPU smoke run: the GPU's sampling set-up, on the host's backend
        fields |= {"n_gpu_layers": args.n_gpu_layers, "backend_sampling": True, "batched_sampling_from": 16}
    engine = BatchingGenerator(args.model, LLMSettings(**fields))  # type: ignore[arg-type]
    prompts = [make_prompt(engine, args.prompt, 100 + i) for i in range(args.rows)]
    run_requests(engine, prompts[:2], replace(params, max_tokens=8))  # warm-up
    decode_loop(engine, None, args.rows, args.prompt, 4)
    decode_loop(engine, params, args.rows, args.prompt, 4)
    runs: dict[str, list[float]] = {}
    for round_ in range(args.rounds):
        figures: dict[str, float] = {}
        if args.bin and args.n_gpu_layers is None:
            figures.update({k: v for k, v in ceilings(args.bin, args.model, only_64=True).items() if "npl64" in k})
        for name, sampled in (("raw", None), ("raw_top_k", params))[:: -1 if round_ % 2 else 1]:
            figures.update(
                {f"{name}_{k}": v for k, v in decode_loop(engine, sampled, args.rows, args.prompt, args.steps).items()}
            )
        figures.update({f"engine_{k}": v for k, v in engine_window(engine, prompts, params).items()})
        engine.launch_ahead = False  # each step launched after the last step's text, not before
        figures.update({f"engine_not_ahead_{k}": v for k, v in engine_window(engine, prompts, params).items()})
        engine.launch_ahead = True
        if args.switch_interval_too is not None:
            default_interval = sys.getswitchinterval()
            sys.setswitchinterval(args.switch_interval_too)
            figures.update({f"engine_switch_{k}": v for k, v in engine_window(engine, prompts, params).items()})
            sys.setswitchinterval(default_interval)
        for key, value in figures.items():
            runs.setdefault(key, []).append(value)
        print(json.dumps(figures), file=sys.stderr, flush=True)
    engine.close()
    out = {f"{k}_median": statistics.median(v) for k, v in runs.items()}
    out |= {f"{k}_runs": v for k, v in runs.items()}  # type: ignore[misc]
    args.out.write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
