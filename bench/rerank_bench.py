"""What the optional reranker costs a question, next to llama-batched-bench's prompt rate in the same run.

A question reranks `candidates` chunks of ~4,000 tokens by their `windows` best windows of `window_tokens`:
candidates x windows (question, window) pairs, each its own sequence. Figures:
  score         wall time of LlamaReranker.score for one question's pairs (tokenising, decoding), p50 / p95 /
                max, on windows as long as best_windows() cuts from contract text
  choose        best_windows() over the candidates (CPU, before scoring)
  rate          the pairs' tokens per second of that wall time
  ceiling       llama-batched-bench -npp <mean pair tokens> -ntg 1 -npl <n_parallel>: llama.cpp's own prompt
                rate for as many sequences of that length in one batch (its S_PP), on the same model
The texts are synthetic (bench/gpu_embed_bench.py's vocabulary): the cost depends on token counts, not on
what the words say, so a random-weight model of the reranker's shape (make_qwen3_gguf.py --preset 0.6b)
measures it.

usage: python -m bench.rerank_bench --model rr.gguf [--bin llama.cpp/build/bin] [--questions 20] [--out r.json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import llama_cpp  # noqa: F401  (before numpy: the reverse order crashed model loading on the device)

from bench.gpu_embed_bench import synthetic_text
from docqa.core.settings import RerankSettings
from docqa.core.types import RetrievedChunk
from docqa.llama.reranker import LlamaReranker
from docqa.retrieval.rerank import best_windows

QUESTIONS = [
    "Which law governs the agreement?",
    "How many days of written notice does termination need?",
    "Is there a cap on the liability of either party?",
    "Can the distributor assign the agreement to an affiliate?",
    "When are the royalty reports and payments due each quarter?",
]


def batched_bench(bin_dir: Path, model: Path, prompt_tokens: int, parallel: int, gpu: bool) -> float | None:
    """llama-batched-bench's S_PP (prompt tokens/s) for `parallel` sequences of prompt_tokens each."""
    tool = bin_dir / "llama-batched-bench"
    if not tool.exists():
        return None
    ctx = prompt_tokens * parallel + 256
    cmd = [str(tool), "-m", str(model), "-c", str(ctx), "-b", str(ctx), "-ub", str(ctx)]
    cmd += ["-npp", str(prompt_tokens), "-ntg", "1", "-npl", str(parallel), "-ngl", "99" if gpu else "0"]
    cmd += ["-fa", "on" if gpu else "off", "--output-format", "jsonl"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            return float(json.loads(line)["speed_pp"])
    print(proc.stdout[-2000:], proc.stderr[-2000:], file=sys.stderr)
    return None


def _ms(seconds: list[float], percentile: int) -> float:
    ordered = sorted(seconds)
    return round(ordered[max(0, round(percentile / 100 * len(ordered)) - 1)] * 1000, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--bin", type=Path, default=None, help="llama.cpp's build/bin, for the ceiling")
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--windows", type=int, default=2)
    parser.add_argument("--window-tokens", type=int, default=512)
    parser.add_argument("--parallel", type=int, default=8)
    parser.add_argument("--cpu", action="store_true", help="no layers on a GPU")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    settings = RerankSettings(
        model=args.model,
        candidates=args.candidates,
        windows_per_chunk=args.windows,
        window_tokens=args.window_tokens,
        n_parallel=args.parallel,
        n_gpu_layers=0 if args.cpu else -1,
    )
    reranker = LlamaReranker(args.model, settings)
    rng = random.Random(0)
    chunks = [
        RetrievedChunk(i, 1, "synthetic.txt", i, synthetic_text(rng, 3000), 1, 1, 0.0) for i in range(args.candidates)
    ]
    questions = [QUESTIONS[i % len(QUESTIONS)] for i in range(args.questions)]
    # The windows scored: as many as rerank() reads, each as long as best_windows() aims for on real text
    # (90% of window_tokens; the synthetic words are longer than contract text's, ~4.2 characters a token
    # in CUAD, so windows cut by characters from them would be shorter than real ones).
    width = int(0.9 * args.window_tokens)
    tokens = reranker.pairs("", [chunks[0].text])[0][60:-20]  # the text, not the prompt around it
    windows = [
        reranker.detokenize(tokens[(i * width) % (len(tokens) - width) :][:width])
        for i in range(args.candidates * args.windows)
    ]
    reranker.score(questions[0], windows)  # warm-up: allocations, CUDA graphs
    score_s, choose_s = [], []
    for question in questions:
        started = time.perf_counter()
        for chunk in chunks:
            best_windows(question, chunk.text, args.windows, args.window_tokens)
        choose_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        reranker.score(question, windows)
        score_s.append(time.perf_counter() - started)
    pair_tokens = [len(pair) for pair in reranker.pairs(questions[0], windows)]
    total = sum(pair_tokens)
    mean_pair = round(total / len(pair_tokens))
    result = {
        "model": args.model.name,
        "rank_pooled": reranker.rank_pooled,
        "pairs_per_question": len(pair_tokens),
        "tokens_per_question": total,
        "mean_pair_tokens": mean_pair,
        "n_parallel": args.parallel,
        "score_ms_p50": _ms(score_s, 50),
        "score_ms_p95": _ms(score_s, 95),
        "score_ms_max": _ms(score_s, 100),
        "choose_windows_ms_p50": _ms(choose_s, 50),
        "tokens_per_s": round(total / statistics.median(score_s)),
    }
    if args.bin is not None:
        ceiling = batched_bench(args.bin, args.model, mean_pair, args.parallel, not args.cpu)
        result["batched_bench_pp_tps"] = ceiling
        if ceiling:
            result["share_of_ceiling"] = round(result["tokens_per_s"] / ceiling, 3)
    text = json.dumps(result, indent=2)
    if args.out is not None:
        args.out.write_text(text + "\n")
    sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()
