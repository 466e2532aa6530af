"""docqa's batching engine on a GPU, on RAG-shaped requests, measured next to llama.cpp's own tools.

Run on the device after llama.cpp and llama-cpp-python are built there (bench/gpu_run.sh does it all).
Prints one Markdown table last and writes the figures as JSON. Every way of running the engine, and
llama-cpp-python's sequential baseline, runs in a process of its own, as `docqa serve` does: an engine
built after others in the same process decoded one stream 1-2% slower than the first one
(bench/gpu_instance_spread.py), which put whichever variant ran second at a disadvantage.

usage: python -m bench.gpu_engine_bench --model q14.gguf --bin /path/to/llama.cpp/build/bin [--out results.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import llama_cpp  # noqa: F401  (before numpy: the reverse order crashed model loading on the H200 device)

from bench.baselines import llama_server_run, sequential_baseline
from bench.machine_state import HostLoad, gpu_state
from bench.targets import target_table
from bench.traces import Trace, stream_figures
from docqa.core.sampling_params import NON_THINKING_SAMPLING, SamplingParams
from docqa.core.settings import LLMSettings
from docqa.engine.batching import BatchingGenerator
from docqa.engine.step_timing import StepTiming, trace_summary

ROOT = Path(__file__).resolve().parents[1]


def make_prompt(engine: BatchingGenerator, n_tokens: int, salt: int) -> str:
    """A distinct prompt of about n_tokens tokens (random words, so no two share a prefix)."""
    import random

    rng = random.Random(salt)
    words = [f"{rng.choice('bcdfghjklmnpqrstvwz')}{rng.randrange(10**6)}" for _ in range(n_tokens)]
    text = f"Request {salt}: " + " ".join(words)
    while engine.count_tokens(text) > n_tokens:
        text = text[: int(len(text) * 0.98)]
    return text


def run_requests(engine: BatchingGenerator, prompts: list[str], params: SamplingParams) -> tuple[list[Trace], float]:
    """Submit every prompt at once and read the streams on one event loop, as `docqa serve` does."""

    async def consume(prompt: str, trace: Trace) -> None:
        trace.submitted = time.perf_counter()
        async for event in engine.submit(prompt, params, asyncio.get_running_loop()):
            if event.kind == "text":
                trace.stamps.append(time.perf_counter())
            elif event.kind == "finished":
                trace.tokens = event.completion_tokens
                trace.stamps.append(time.perf_counter())
            elif event.kind == "failed":
                raise RuntimeError(event.text)

    async def run_all() -> tuple[list[Trace], float]:
        traces = [Trace(0.0) for _ in prompts]
        start = time.perf_counter()
        await asyncio.gather(*(consume(p, t) for p, t in zip(prompts, traces, strict=True)))
        return traces, time.perf_counter() - start

    return asyncio.run(run_all())


def single_stream_rates(engine: BatchingGenerator, params: SamplingParams, requests: int) -> list[float]:
    """The decode rate of each of `requests` short requests run one at a time: decode from an almost
    empty context, as llama-bench tg measures it."""
    rates = []
    for _ in range(requests):
        (trace,), _ = run_requests(engine, ["Summarise the agreement."], params)
        rates.append(trace.decode_rate)
    return rates


def llama_tool(bin_dir: Path, tool: str, *args: str) -> str:
    """The standard output of one of llama.cpp's tools."""
    return subprocess.run([str(bin_dir / tool), *args], capture_output=True, text=True, timeout=600).stdout


def device_arguments(default_out: str) -> argparse.ArgumentParser:
    """The arguments every single-stream script on the device takes: the model, llama.cpp's tools, the output."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--bin", type=Path, required=True, help="llama.cpp build/bin, for llama-bench")
    ap.add_argument("--out", type=Path, default=Path(default_out))
    return ap


def llama_bench_tg(bin_dir: Path, model: Path, n_tokens: int = 128) -> list[float]:
    """llama-bench's decode rate from an empty context (tg<n_tokens>), tokens/s: one figure per row it
    reports (the average of its 5 repetitions)."""
    text = llama_tool(
        bin_dir, "llama-bench", "-m", str(model), "-p", "0", "-n", str(n_tokens), "-fa", "1", "-ngl", "99", "-o", "json"
    )
    return [float(row["avg_ts"]) for row in json.loads(text)]


T = TypeVar("T")


def tg_around(bin_dir: Path | None, model: Path, work: Callable[[], T]) -> tuple[T, list[float]]:
    """work(), with llama-bench tg128 run just before and just after it: the ceiling taken in the state
    the GPU is in for the work (none without bin_dir)."""
    before = llama_bench_tg(bin_dir, model) if bin_dir else []
    result = work()
    after = llama_bench_tg(bin_dir, model) if bin_dir else []
    return result, before + after


def rag_settings(**overrides: object) -> LLMSettings:
    """The engine for the RAG-shaped loads: 16 sequences with room for 6,144 prompt + 256 answer tokens."""
    fields: dict[str, Any] = {
        "n_ctx": 6144 + 256 + 64,
        "n_parallel": 16,
        "prefix_cache_slots": 2,
        "max_queue": 64,
    }
    return LLMSettings(**(fields | overrides))


# Qwen3-14B's arithmetic per prompt token, for prompt reading as a share of the GPU's peak: two FLOPs per
# weight of the 40 layers (13.2 B of its 14.8 B parameters; the output layer runs for the last token only)
# and causal attention over half the prompt on average (QK and PV: 2 x 2 x L/2 x 5,120 per layer).
# The H200's dense BF16 peak is NVIDIA's datasheet figure (989 TFLOPS without sparsity).
Q14_LAYER_PARAMS = 13.2e9
Q14_ATTN_WIDTH, Q14_LAYERS = 5120, 40
H200_BF16_PEAK_FLOPS = 989e12


def prompt_flops_per_token(prompt_tokens: int) -> float:
    """FLOPs per prompt token of a Qwen3-14B prompt of this length."""
    return 2 * Q14_LAYER_PARAMS + 2 * 2 * (prompt_tokens / 2) * Q14_ATTN_WIDTH * Q14_LAYERS


def prompt_sweep(bin_dir: Path, model: Path) -> dict[str, float]:
    """llama-bench pp6144 over its prompt-reading settings (flash attention, n_batch, n_ubatch), each
    with its share of the GPU's dense BF16 peak."""
    text = llama_tool(
        bin_dir, "llama-bench", "-m", str(model), "-p", "6144", "-n", "0", "-ngl", "99", "-o", "json",
        "-fa", "0,1", "-b", "2048,4096", "-ub", "512,1024,2048,4096",
    )  # fmt: skip
    out: dict[str, float] = {}
    for row in json.loads(text):
        if row["n_ubatch"] > row["n_batch"]:
            continue  # llama.cpp caps the pass at the batch: the same as ub == b
        key = f"sweep_pp6144_fa{int(bool(row['flash_attn']))}_b{row['n_batch']}_ub{row['n_ubatch']}"
        out[f"{key}_tps"] = float(row["avg_ts"])
        out[f"{key}_peak_share"] = float(row["avg_ts"]) * prompt_flops_per_token(6144) / H200_BF16_PEAK_FLOPS
    return out


def ceilings(bin_dir: Path, model: Path, only_64: bool = False) -> dict[str, float]:
    """llama-bench and llama-batched-bench on the same model, in the same run (only_64: npl 64 only)."""
    out: dict[str, float] = gpu_state("ceilings_start")

    if not only_64:
        bench = llama_tool(
            bin_dir, "llama-bench", "-m", str(model), "-p", "6144", "-n", "128", "-fa", "1", "-ngl", "99", "-o", "json"
        )
        for row in json.loads(bench):
            key = "pp6144" if row["n_prompt"] else "tg128"
            out[f"llama_bench_{key}_tps"] = float(row["avg_ts"])
    for npp, ntg, npl in ((6144, 256, "1,16"), (512, 256, "64"))[1 if only_64 else 0 :]:
        text = llama_tool(
            bin_dir,
            "llama-batched-bench",
            "-m",
            str(model),
            "-c",
            str((npp + ntg) * 64 if npl == "64" else (npp + ntg) * 16),
            "-b",
            "2048",
            "-ub",
            "512",
            "-npp",
            str(npp),
            "-ntg",
            str(ntg),
            "-npl",
            npl,
            "-ngl",
            "99",
            "-fa",
            "on",
        )
        for line in text.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 10 and cells[0].isdigit():
                pl, total_s, s_tg = int(cells[2]), float(cells[8]), float(cells[7])
                out[f"batched_npp{npp}_npl{pl}_total_s"] = total_s
                out[f"batched_npp{npp}_npl{pl}_tg_tps"] = s_tg
    return out


def engine_phases(
    model: Path, tag: str, only_64: bool = False, bin_dir: Path | None = None, **overrides: Any
) -> dict[str, float]:
    """docqa's engine on every RAG-shaped load (only_64: 64 x 512 only); keys start with `tag`;
    overrides: LLMSettings fields (the way of sampling). Step timings say where each phase's time
    went (batch building, llama_decode, waiting for the sampled tokens, streaming). bin_dir:
    llama-bench tg128 runs just before and just after the single-stream requests."""
    out: dict[str, float] = {}
    rag = replace(NON_THINKING_SAMPLING, max_tokens=256, ignore_eos=True, seed=1)
    if not only_64:
        out.update(_rag_phases(model, tag, rag, overrides, bin_dir))
    out.update(_short_phase(model, tag, rag, overrides))
    return out


def _rag_phases(
    model: Path, tag: str, rag: SamplingParams, overrides: dict[str, Any], bin_dir: Path | None
) -> dict[str, float]:
    """Single streams, prefix reuse and 16 x 6,144 (traced step by step: where its time went)."""
    out: dict[str, float] = {}
    engine = BatchingGenerator(model, rag_settings(**overrides))
    out[f"{tag}_sampling_on_backend"] = engine.memory_report()["sampling_on_backend"]
    prompts = [make_prompt(engine, 6144, i) for i in range(17)]
    run_requests(engine, [prompts[16][:2000]], replace(rag, max_tokens=8))  # warm-up

    def timing(phase: str) -> None:
        for key, value in engine.timing.report().items():
            out[f"{tag}_{phase}_step_{key}"] = value
        engine.timing = StepTiming()

    # Decode from an empty context, as llama-bench tg128 measures it: the mean of 5 requests, as
    # llama-bench averages 5 repetitions (one request's rate moved by 2-4% from run to run). The
    # engine part run first after the ceilings decoded 1-3% slower than those after it, against a
    # tg128 measured minutes before, before llama-batched-bench's load: tg128 is measured again around
    # the requests, and the GPU's clock and temperature are recorded as they start.
    out.update(gpu_state(f"{tag}_single_start"))
    engine.timing = StepTiming()

    def singles() -> list[float]:
        load = HostLoad()
        rates = single_stream_rates(engine, rag, 5)
        out.update(load.report(f"{tag}_single_depth0"))
        return rates

    rates, around = tg_around(bin_dir, model, singles)
    if around:
        out[f"{tag}_tg128_around_tps"] = statistics.mean(around)
        out[f"{tag}_tg128_around_tps_min"] = min(around)
        out[f"{tag}_tg128_around_tps_max"] = max(around)
    out[f"{tag}_single_decode_depth0_tps"] = statistics.mean(rates)
    out[f"{tag}_single_decode_depth0_tps_min"] = min(rates)
    out[f"{tag}_single_decode_depth0_tps_max"] = max(rates)
    timing("single_depth0")
    (single,), _ = run_requests(engine, [prompts[0]], rag)
    out[f"{tag}_single_ttft_s"] = single.ttft
    out[f"{tag}_single_decode_depth6144_tps"] = single.decode_rate
    timing("single_depth6144")

    # A new question over the same chunks: same long prefix, a different tail.
    (again,), _ = run_requests(
        engine, [prompts[0] + " Which clause sets the notice period?"], replace(rag, max_tokens=8)
    )
    out[f"{tag}_prefix_reuse_ttft_s"] = again.ttft

    engine.timing = StepTiming(trace=[])
    load = HostLoad()
    started = time.perf_counter()
    traces, wall = run_requests(engine, prompts[1:17], rag)
    out.update(load.report(f"{tag}_16x6144"))
    out.update(stream_figures(f"{tag}_16x6144", traces, wall))
    out.update({f"{tag}_16x6144_trace_{k}": v for k, v in trace_summary(engine.timing.trace or [], started).items()})
    out[f"{tag}_16x6144_sampling_mode_switches"] = engine.samplers.mode_switches
    timing("16x6144")
    engine.close()
    return out


def _short_phase(model: Path, tag: str, rag: SamplingParams, overrides: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    fields: dict[str, Any] = {"n_ctx": 800, "n_parallel": 64, "prefix_cache_slots": 0, "max_queue": 64}
    short_settings = LLMSettings(**(fields | overrides))
    engine = BatchingGenerator(model, short_settings)
    prompts = [make_prompt(engine, 512, 100 + i) for i in range(64)]
    run_requests(engine, prompts[:2], replace(rag, max_tokens=8))  # warm-up: chains and graphs for this context
    engine.timing = StepTiming()
    load = HostLoad()
    traces, wall = run_requests(engine, prompts, rag)
    out.update(load.report(f"{tag}_64x512"))
    all_decoding = max(t.stamps[0] for t in traces)
    first_done = min(t.finished for t in traces)
    in_window = sum(1 for t in traces for s in t.stamps[:-1] if all_decoding <= s <= first_done)
    out[f"{tag}_64x512_aggregate_decode_tps"] = in_window / max(first_done - all_decoding, 1e-9)
    out[f"{tag}_64x512_wall_s"] = wall
    out[f"{tag}_64x512_sampling_mode_switches"] = engine.samplers.mode_switches
    if (group := engine.samplers.block_top_k) is not None:
        out[f"{tag}_64x512_block_top_k_graphs_built"] = group.graphs_built
        out[f"{tag}_64x512_block_top_k_errors"] = group.errors
    for key, value in engine.timing.report().items():
        out[f"{tag}_64x512_step_{key}"] = value
    engine.close()
    return out


def serving_phase(model: Path, tag: str, overrides: dict[str, Any]) -> dict[str, float]:
    """A server's day rather than a burst: 192 asks of 512 prompt tokens queued at once over 64 slots,
    answers of 32 to 480 tokens (a fixed spread), so slots free up at different steps and new asks take
    them while the others generate. Tokens generated per second over the whole load, and llama.cpp's
    passes per step (step_layout)."""
    rag = replace(NON_THINKING_SAMPLING, ignore_eos=True, seed=1)
    fields: dict[str, Any] = {"n_ctx": 1024, "n_parallel": 64, "prefix_cache_slots": 0, "max_queue": 256}
    engine = BatchingGenerator(model, LLMSettings(**(fields | overrides)))
    prompts = [make_prompt(engine, 512, 300 + i) for i in range(192)]
    run_requests(engine, prompts[:2], replace(rag, max_tokens=8))  # warm-up
    engine.timing = StepTiming()
    lengths = [32 + (97 * i) % 449 for i in range(len(prompts))]

    async def all_asks() -> float:
        started = time.perf_counter()
        loop = asyncio.get_running_loop()
        asks = [engine.submit(p, replace(rag, max_tokens=n), loop) for p, n in zip(prompts, lengths, strict=True)]
        for stream in asks:
            async for event in stream:
                if event.kind == "failed":
                    raise RuntimeError(event.text)
        return time.perf_counter() - started

    wall = asyncio.run(all_asks())
    out = {f"{tag}_serving_wall_s": wall, f"{tag}_serving_generated_tps": sum(lengths) / wall}
    for key, value in engine.timing.report().items():
        out[f"{tag}_serving_step_{key}"] = value
    engine.close()
    return out


def single_stream_variants(bin_dir: Path | None, model: Path, repeats: int = 5) -> dict[str, float]:
    """Single-stream decode from an empty context under each way of sampling, in turns, with llama-bench
    tg128 before and after them: the top-k of a whole chain in the graph from two levels of block
    maxima (the default), from one, or llama.cpp's top-k; greedy (no top-k at all); the graph keeping
    the top-k and the host drawing."""
    out: dict[str, float] = {}
    rag = replace(NON_THINKING_SAMPLING, max_tokens=256, ignore_eos=True, seed=1)
    variants: dict[str, tuple[dict[str, object], SamplingParams]] = {
        "block_chain": ({"block_top_k": True}, rag),
        "one_level_block_chain": ({"block_top_k_short_sorts": False}, rag),
        "llama_top_k_chain": ({"block_top_k": False}, rag),
        "greedy": ({}, replace(rag, temperature=0.0)),
        "host_draw_block": ({"batched_sampling_from": 1}, rag),
    }

    def every_variant() -> None:
        for name, (overrides, params) in variants.items():
            engine = BatchingGenerator(model, rag_settings(**overrides))
            run_requests(engine, ["Warm up the graphs."], replace(params, max_tokens=8))
            rates = single_stream_rates(engine, params, repeats)
            out[f"single_{name}_tps_median"] = statistics.median(rates)
            out[f"single_{name}_tps_max"] = max(rates)
            engine.close()

    _, tg = tg_around(bin_dir, model, every_variant)
    if tg:
        out["llama_bench_tg128_tps_runs"] = len(tg)
        out["llama_bench_tg128_tps_min"] = min(tg)
        out["llama_bench_tg128_tps_max"] = max(tg)
        for name in variants:
            out[f"single_{name}_share_of_tg128"] = out[f"single_{name}_tps_median"] / statistics.mean(tg)
    return out


def in_own_process(args: argparse.Namespace, part: dict[str, Any]) -> dict[str, float]:
    """Run one part of the benchmark (see run_part) in a fresh Python process and return its figures;
    none when it failed (the table then says "not run" for it, and the other parts still run)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "part.json"
        command = [sys.executable, "-m", "bench.gpu_engine_bench", "--model", str(args.model), "--out", str(out)]
        if args.bin:
            command += ["--bin", str(args.bin)]
        done = subprocess.run([*command, "--part", json.dumps(part)], cwd=ROOT)
        if done.returncode != 0 or not out.exists():
            print(f"part {part} failed (exit status {done.returncode})", file=sys.stderr, flush=True)
            return {}
        figures: dict[str, float] = json.loads(out.read_text())
        return figures


def run_part(model: Path, part: dict[str, Any], bin_dir: Path | None = None) -> dict[str, float]:
    """{"engine": tag, "overrides": LLMSettings fields, "only_64": bool} or {"sequential": true}."""
    if part.get("sequential"):
        return {"llama_cpp_python_sequential_16_s": sequential_baseline(model)}
    if part.get("serving"):
        return serving_phase(model, part["engine"], part.get("overrides", {}))
    only_64 = part.get("only_64", False)
    return engine_phases(model, part["engine"], only_64=only_64, bin_dir=bin_dir, **part.get("overrides", {}))


def _numbered_repeats(variants: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """A variant asked for again (to alternate settings in one run) keeps its own results: its tag gets
    "_run2", "_run3", ... rather than writing over the first run's keys."""
    seen: dict[str, int] = {}
    numbered = []
    for tag, overrides in variants:
        seen[tag] = seen.get(tag, 0) + 1
        numbered.append((tag if seen[tag] == 1 else f"{tag}_run{seen[tag]}", overrides))
    return numbered


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--bin", type=Path, default=None, help="llama.cpp build/bin, for the ceilings")
    ap.add_argument("--out", type=Path, default=Path("gpu_bench.json"))
    ap.add_argument("--skip-sequential", action="store_true")
    ap.add_argument("--skip-server", action="store_true", help="do not run llama-server -np 16")
    ap.add_argument("--host-sampling-too", action="store_true", help="also run the engine sampling on the host")
    ap.add_argument(
        "--graph-sampling-too", action="store_true", help="also run the engine with every chain in the graph"
    )
    ap.add_argument("--only-64", action="store_true", help="only the 64 x 512 load (and its batched-bench ceiling)")
    ap.add_argument(
        "--per-row-top-k-too", action="store_true", help="also run the engine with llama.cpp's top-k, one per row"
    )
    ap.add_argument("--one-level-too", action="store_true", help="also run the engine with the one-level block top-k")
    ap.add_argument(
        "--ubatch-too",
        type=int,
        nargs="*",
        default=[],
        help="also run the engine with llama.cpp passes of this many tokens (n_ubatch; default 512)",
    )
    ap.add_argument(
        "--pass-shapes-too",
        nargs="*",
        default=[],
        help="also run the engine with these n_batch:n_ubatch pairs (e.g. 4096:2048)",
    )
    ap.add_argument(
        "--prompt-sweep", action="store_true", help="llama-bench pp6144 over flash attention, n_batch and n_ubatch"
    )
    ap.add_argument(
        "--prompt-steps-per-decode-too",
        type=int,
        nargs="*",
        default=[],
        help="also run the engine with generating rows in one prompt-reading step of this many",
    )
    ap.add_argument(
        "--fill-prompt-steps-too",
        action="store_true",
        help="also run the engine with every prompt step filled to n_batch (a finished prompt's step not ended)",
    )
    ap.add_argument(
        "--serving",
        nargs="*",
        default=None,
        help="only the serving load (serving_phase), once per variant named (fillers, no_fillers; default: fillers)",
    )
    ap.add_argument("--reverse-variants", action="store_true", help="run the engine's ways of sampling last first")
    ap.add_argument(
        "--single-variants", action="store_true", help="only single-stream decode, under each way of sampling"
    )
    ap.add_argument("--part", help=argparse.SUPPRESS)  # JSON: one part, in this process (see in_own_process)
    args = ap.parse_args()
    if args.part:
        args.out.write_text(json.dumps(run_part(args.model, json.loads(args.part), args.bin)))
        return
    results: dict[str, float] = {}

    def note(part: dict[str, float]) -> None:
        results.update(part)
        print(json.dumps(part), file=sys.stderr, flush=True)
        args.out.write_text(json.dumps(results, indent=2))  # what is done survives a later failure

    if args.serving is not None:
        names = [(f"docqa_{name}", {"pass_fillers": name == "fillers"}) for name in args.serving or ["fillers"]]
        for tag, overrides in _numbered_repeats(names):
            note(in_own_process(args, {"engine": tag, "overrides": overrides, "serving": True}))
        return
    if args.single_variants:
        note(single_stream_variants(args.bin, args.model))
        return
    if args.bin:
        note(ceilings(args.bin, args.model, args.only_64))
        if args.prompt_sweep:
            note(prompt_sweep(args.bin, args.model))
    variants: list[tuple[str, dict[str, Any]]] = [("docqa", {})]
    if args.one_level_too:
        variants.append(("docqa_one_level", {"block_top_k_short_sorts": False}))
    variants += [(f"docqa_ubatch{n}", {"n_ubatch": n}) for n in args.ubatch_too]
    for shape in args.pass_shapes_too:
        n_batch, n_ubatch = (int(x) for x in shape.split(":"))
        variants.append((f"docqa_b{n_batch}_ub{n_ubatch}", {"n_batch": n_batch, "n_ubatch": n_ubatch}))
    variants += [(f"docqa_psd{n}", {"prompt_steps_per_decode": n}) for n in args.prompt_steps_per_decode_too]
    if args.fill_prompt_steps_too:
        variants.append(("docqa_filled_prompt_steps", {"prompt_step_ends_with_prompt": False}))
    if args.reverse_variants:  # the same variants, last first: no way of sampling always runs first
        variants.reverse()
    variants = _numbered_repeats(variants)
    if args.per_row_top_k_too:
        variants.append(("docqa_per_row_top_k", {"block_top_k": False}))
    for tag, overrides in variants:
        note(in_own_process(args, {"engine": tag, "overrides": overrides, "only_64": args.only_64}))
    every_load: list[tuple[str, dict[str, Any]]] = []  # these run every load, --only-64 or not
    if args.graph_sampling_too:
        every_load.append(("docqa_graph_only", {"batched_sampling_from": 0}))
    if args.host_sampling_too:
        every_load.append(("docqa_host_sampling", {"backend_sampling": False}))
    for tag, overrides in every_load:
        note(in_own_process(args, {"engine": tag, "overrides": overrides}))
    if args.bin and not args.skip_server:
        note(llama_server_run(args.bin, args.model))
    if not args.skip_sequential:
        note(in_own_process(args, {"sequential": True}))

    print("| figure | value |\n|---|---|")
    for k, v in results.items():
        print(f"| {k} | {v:.3f} |")
    print()
    print(target_table(results, [tag for tag, _ in variants + every_load]))


if __name__ == "__main__":
    main()
