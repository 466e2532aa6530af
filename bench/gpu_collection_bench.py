"""Questions over whole documents and collections on the GPU, against llama.cpp's own tools in the same run.

Three parts, each in its own process (`--part`), on the Qwen3-14B-shaped Q4_K_M model (random weights: the
speed of a transformer does not depend on its weight values; findings run to their token limit, EOS
ignored, so that llama-batched-bench's fixed answer length is the same work):

- `collection`: a collection question over the 100 CUAD contracts carried in .cuad/ (every contract's
  finding prompt submitted together, the engine running them all at once), timed from the ask to the
  answer, against llama-batched-bench with as many sequences, the prompts' mean length and the findings'
  160 tokens.
- `parts`: one ~100-page document (the contracts' text in pages of ~3,600 characters) summarised part by
  part: its parts read at once, then the answer written from their notes.
- `long`: the same document as one ~100k-token prompt (a whole document read in one prompt: YaRN rope
  scaling and a q8_0 KV cache), its time to first token against llama-bench's prompt time at that length
  with the same cache type, and the GPU memory the process holds (what a 24 GB card must have); with
  `--card-gib 23.5` a ballast first takes all but what an RTX 4090 leaves free, so the run shows it fits.

    bash bench/gpu_run.sh collection     # on the device, after `bash bench/gpu_run.sh build`
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.gpu_engine_bench import llama_tool
from docqa.core.llm_settings import LLMSettings
from docqa.core.requests import AskRequest
from docqa.core.settings import ReadingSettings, RetrievalSettings, Settings
from docqa.engine.step_timing import StepTiming, trace_summary
from docqa.service import DocQA

QUESTIONS = ("Which of these contracts have a non-compete clause?", "Which law governs each of these contracts?")
PAGE_CHARS = 3600
LONG_PAGES = 110


def _open(data: Path, model: Path, llm: dict[str, Any], reading: ReadingSettings | None = None) -> DocQA:
    settings = Settings(
        data_dir=data,
        retrieval=RetrievalSettings(retriever="bm25"),
        llm=LLMSettings(model=model, prefix_cache_slots=0, max_queue=512, **llm),
        reading=reading or ReadingSettings(),
    )
    return DocQA.open(settings, embedder=False)


def _gpu_memory_mib() -> float:
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"], capture_output=True, text=True
    ).stdout
    return float(out.split()[0]) if out.strip() else 0.0


def collection(args: argparse.Namespace) -> dict[str, Any]:
    files = sorted((args.cuad / "txt").glob("*.txt"))
    reading = ReadingSettings(in_flight=args.parallel)
    llm: dict[str, Any] = {"n_ctx": 2560, "n_parallel": args.parallel, **dict(args.llm)}
    qa = _open(Path(tempfile.mkdtemp()), args.model, llm, reading)
    try:
        qa.ingest(files, collection="cuad")
        qa.ask(AskRequest("What is the governing law?", collection="cuad", max_tokens=8, use_cache=False))  # warm
        runs: list[dict[str, Any]] = []
        for question in QUESTIONS:
            request = AskRequest(question, collection="cuad", scope="collection", ignore_eos=True, use_cache=False)
            lengths = [qa.count_tokens(prompt) for _, prompt in qa.prompts(request)]
            traced = hasattr(qa.generator, "timing")
            if traced:  # the batching engine: where its steps' time went
                qa.generator.timing = StepTiming(trace=[])  # type: ignore[union-attr]
            started = time.perf_counter()
            answer = qa.ask(request)
            wall = time.perf_counter() - started
            runs.append(
                {
                    "question": question,
                    "documents": answer.documents_read,
                    "prompts": len(lengths),
                    "prompt_tokens_mean": round(sum(lengths) / len(lengths)),
                    "prompt_tokens_total": sum(lengths),
                    "completion_tokens": answer.timings.completion_tokens,
                    "planning_s": round(answer.timings.retrieval_ms / 1000, 2),
                    "wall_s": round(wall, 2),
                    "engine": qa.generator.stats().as_dict() if qa.generator else {},
                    "llm": {k: v for k, v in llm.items() if k not in ("n_ctx", "n_parallel")},
                }
            )
            if traced:
                steps: StepTiming = qa.generator.timing  # type: ignore[union-attr]
                runs[-1]["steps"] = steps.report() | trace_summary(steps.trace or [], started)
            print(json.dumps(runs[-1]), flush=True)
    finally:
        qa.close()
    for run in [] if args.skip_batched_bench else runs:
        # the findings' mean length as generated (one stopped at a repetition ends early): the same work
        npl, npp = run["prompts"], run["prompt_tokens_mean"]
        ntg = run["completion_tokens_mean"] = max(1, round(run["completion_tokens"] / max(npl, 1)))
        text = llama_tool(
            args.bin, "llama-batched-bench", "-m", str(args.model), "-c", str(npl * (npp + ntg) + 1024), "-b", "2048",
            "-ub", "512", "-npp", str(npp), "-ntg", str(ntg), "-npl", str(npl), "-ngl", "99", "-fa", "on",
        )  # fmt: skip
        for line in text.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 10 and cells[0].isdigit():
                run["batched_bench_total_s"] = float(cells[8])
                run["batched_bench_prompt_s"], run["batched_bench_generation_s"] = float(cells[4]), float(cells[6])
        if "batched_bench_total_s" in run:
            run["wall_over_batched_bench"] = round(run["wall_s"] / run["batched_bench_total_s"], 3)
            run["generation_over_batched_bench"] = round(
                (run["wall_s"] - run["planning_s"]) / run["batched_bench_total_s"], 3
            )
        print(json.dumps(run), flush=True)
    return {"collection": runs}


def _long_document(cuad: Path, out: Path, pages: int) -> Path:
    text = "\n\n".join(p.read_text(encoding="utf-8", errors="replace") for p in sorted((cuad / "txt").glob("*.txt")))
    text = text[: pages * PAGE_CHARS]
    out.write_text("\f".join(text[i : i + PAGE_CHARS] for i in range(0, len(text), PAGE_CHARS)), encoding="utf-8")
    return out


def parts(args: argparse.Namespace) -> dict[str, Any]:
    data = Path(tempfile.mkdtemp())
    document = _long_document(args.cuad, data / "hundred_pages.txt", 100)
    qa = _open(data, args.model, {"n_ctx": 16384, "n_parallel": 16})
    try:
        report = qa.ingest([document], collection="filing")
        doc_id = report.files[0].document_id
        assert doc_id is not None
        request = AskRequest(
            "Summarize this document", collection="filing", scope="document", document_ids=(doc_id,),
            ignore_eos=True, use_cache=False, max_tokens=512,
        )  # fmt: skip
        plans = qa.prompts(request)
        started = time.perf_counter()
        answer = qa.ask(request)
        wall = time.perf_counter() - started
    finally:
        qa.close()
    result = {
        "pages": 100,
        "parts": len(plans),
        "prompt_tokens": answer.timings.prompt_tokens,
        "completion_tokens": answer.timings.completion_tokens,
        "planning_s": round(answer.timings.retrieval_ms / 1000, 2),
        "wall_s": round(wall, 2),
        "scope": answer.scope,
    }
    print(json.dumps(result), flush=True)
    return {"parts": result}


def long(args: argparse.Namespace) -> dict[str, Any]:
    ballast: dict[str, float] = {}
    if args.card_gib:  # all but this much of the GPU's free memory taken first: the card a user has
        from bench.gpu_memory_fit_check import GIB, CudaDriver

        cuda = CudaDriver()
        cuda.allocate(cuda.free_bytes() - int(args.card_gib * GIB))
        ballast = {"card_gib": args.card_gib, "free_gib_after_ballast": round(cuda.free_bytes() / GIB, 2)}
    data = Path(tempfile.mkdtemp())
    document = _long_document(args.cuad, data / "whole.txt", LONG_PAGES)
    llm = {"n_ctx": 112_000, "n_parallel": 1, "kv_cache_type": "q8_0", "rope_scaling": "yarn", "flash_attn": True}
    qa = _open(data, args.model, llm)
    try:
        report = qa.ingest([document], collection="long")
        doc_id = report.files[0].document_id
        assert doc_id is not None
        request = AskRequest(
            "Summarize this document", collection="long", scope="document", document_ids=(doc_id,),
            ignore_eos=True, use_cache=False, max_tokens=8,
        )  # fmt: skip
        (_, prompt), *rest = qa.prompts(request)
        tokens = qa.count_tokens(prompt)
        started = time.perf_counter()
        answer = qa.ask(request)
        wall = time.perf_counter() - started
        memory = _gpu_memory_mib()
        stats = qa.generator.stats().as_dict() if qa.generator else {}
    finally:
        qa.close()
    pp = ("-p", str(tokens), "-n", "0", "-fa", "1", "-ctk", "q8_0", "-ctv", "q8_0", "-ngl", "99", "-r", "1")
    bench = json.loads(llama_tool(args.bin, "llama-bench", "-m", str(args.model), *pp, "-o", "json"))
    pp_s = tokens / float(bench[0]["avg_ts"])
    ttft_s = (answer.timings.ttft_ms or 0) / 1000
    planning_s = answer.timings.retrieval_ms / 1000
    result = {
        "prompts": 1 + len(rest),
        "prompt_tokens": tokens,
        "scope": answer.scope,
        "ttft_s": round(ttft_s, 2),
        "planning_s": round(planning_s, 2),
        "wall_s": round(wall, 2),
        "llama_bench_pp_s": round(pp_s, 2),
        "ttft_over_llama_bench": round(ttft_s / pp_s, 3),
        "ttft_less_planning_over_llama_bench": round((ttft_s - planning_s) / pp_s, 3),
        "gpu_memory_used_mib": memory,
        "engine": stats,
        **ballast,
    }
    print(json.dumps(result), flush=True)
    return {"long": result}


def _setting(text: str) -> tuple[str, Any]:
    """NAME=VALUE: the value as JSON (64, false, null), else as the string it is (q8_0, none, yarn)."""
    name, _, value = text.partition("=")
    try:
        return name, json.loads(value)
    except ValueError:
        return name, value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--bin", type=Path, required=True, help="llama.cpp build/bin")
    ap.add_argument("--cuad", type=Path, default=Path(".cuad"))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--part", choices=("collection", "parts", "long"), required=True)
    ap.add_argument("--parallel", type=int, default=100)
    ap.add_argument(
        "--llm",
        type=_setting,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="collection: an engine setting (LLMSettings) other than its default, e.g. prompt_steps_per_decode=64",
    )
    ap.add_argument("--skip-batched-bench", action="store_true", help="collection: the engine only")
    ap.add_argument(
        "--card-gib", type=float, default=0.0, help="long: leave only this much GPU memory free (23.5: a 24 GB card)"
    )
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    result = {"collection": collection, "parts": parts, "long": long}[args.part](args)
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
