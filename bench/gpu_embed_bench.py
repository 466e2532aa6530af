"""Ingest throughput with a GPU embedder, measured next to `llama-bench -embd 1` in the same run.

Run on the device after llama.cpp and llama-cpp-python are built there (bench/gpu_run.sh embed does it).
Three figures, all in the embedding model's own tokens per second:
  ceiling   llama-bench -embd 1 -p 4096 (default micro-batch, and -ub 4096 like docqa), best of the two
  embedder  docqa's LlamaEmbedder.embed_documents on ~4,000-token texts (the ingest pipeline's call)
  ingest    `docqa ingest` of a folder of text files end to end (read, chunk, embed, SQLite, FAISS)
The documents are synthetic English text (no data leaves or enters the device); throughput depends on
token counts, not on what the words say.

usage: python -m bench.gpu_embed_bench --model emb.gguf --bin /path/to/llama.cpp/build/bin [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import llama_cpp  # before numpy: the reverse order crashed model loading on the device)

from docqa.core.settings import EmbedSettings
from docqa.llama.embedder import LlamaEmbedder

_VOCABULARY = (
    "agreement party shall term notice licence payment product services confidential information termination "
    "law state court warranty liability damages period written consent assign affiliate territory royalty fee "
    "quarter report audit record insurance indemnify obligation breach cure days effective date renewal "
    "exclusive distributor customer supply order price invoice delivery quality inspection intellectual property"
)
WORDS = _VOCABULARY.split()


def synthetic_text(rng: random.Random, words: int) -> str:
    sentences = []
    for _ in range(words // 12):
        sentence = " ".join(rng.choice(WORDS) for _ in range(12))
        sentences.append(sentence.capitalize() + ".")
    paragraphs = [" ".join(sentences[i : i + 6]) for i in range(0, len(sentences), 6)]
    return "\n\n".join(paragraphs)


def llama_bench(bin_dir: Path, model: Path) -> dict[str, float]:
    out: dict[str, float] = {}
    for label, extra in (("default_ub", []), ("ub4096", ["-ub", "4096", "-b", "4096"])):
        cmd = [str(bin_dir / "llama-bench"), "-m", str(model), "-embd", "1", "-p", "4096", "-n", "0"]
        cmd += ["-ngl", "99", "-fa", "1", "-o", "json", *extra]
        if not (bin_dir / "llama-bench").exists():
            print(f"no llama-bench in {bin_dir}", file=sys.stderr)
            return out
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        try:
            out[f"llama_bench_pp4096_{label}_tps"] = float(json.loads(proc.stdout)[0]["avg_ts"])
        except (ValueError, IndexError, KeyError):
            print(proc.stdout[-2000:], proc.stderr[-2000:], file=sys.stderr)
    return out


def embedder_throughput(
    model: Path, texts: list[str], tag: str, micro_batch: int | None, all_outputs: bool = False
) -> dict[str, float]:
    """Qwen3-Embedding pools its last token (its GGUF says so; this synthetic one does not, hence
    pooling="last"), which lets llama.cpp run a text in micro-batches. all_outputs: every token an
    output, as llama.cpp's embedding mode (and llama-bench -embd 1) does, not just each text's last."""
    settings = EmbedSettings(
        model=model, n_ctx=8192, pooling="last", micro_batch=micro_batch, last_token_only=not all_outputs
    )
    embedder = LlamaEmbedder(model, settings)
    tokens = sum(min(embedder.count_tokens(t), 8192) for t in texts)
    embedder.embed_documents(texts[:2])  # warm-up: CUDA graphs, allocations
    started = time.perf_counter()
    embedder.embed_documents(texts)
    seconds = time.perf_counter() - started
    return {
        f"{tag}_micro_batch": embedder.micro_batch,
        f"{tag}_tokens": tokens,
        f"{tag}_s": round(seconds, 3),
        f"{tag}_tps": round(tokens / seconds, 1),
    }


def ingest_throughput(
    model: Path, rng: random.Random, n_docs: int, words: int, tag: str = "ingest", micro_batch: int | None = None
) -> dict[str, float]:
    """`docqa ingest` in a subprocess, like a user runs it; tokens counted with the embedder's tokenizer."""
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        docs.mkdir()
        for i in range(n_docs):
            (docs / f"report-{i:03d}.txt").write_text(synthetic_text(rng, words), encoding="utf-8")
        env = {
            **os.environ,
            "DOCQA_EMBED_MODEL": str(model),
            "DOCQA_EMBED_POOLING": "last",  # as Qwen3-Embedding's own GGUF declares
            # this synthetic GGUF declares no pooling, so `auto` would take it for a generative model
            # and ingest without embedding
            "DOCQA_RETRIEVAL_RETRIEVER": "hybrid",
            "DOCQA_DATA_DIR": str(Path(tmp) / "data"),
        }
        if micro_batch is not None:
            env["DOCQA_EMBED_MICRO_BATCH"] = str(micro_batch)
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "docqa", "ingest", str(docs), "--json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=900,
        )
        seconds = time.perf_counter() - started
        if proc.returncode != 0:
            print(proc.stdout[-3000:], proc.stderr[-3000:], file=sys.stderr)
            return {f"{tag}_error_rc": proc.returncode}
        report = json.loads(proc.stdout)
        if not report.get("tokens_embedded"):  # a figure without embedding would measure nothing here
            print(proc.stdout[-3000:], proc.stderr[-3000:], file=sys.stderr)
            return {f"{tag}_error_nothing_embedded": 1}
        embedded = float(report.get("tokens_embedded") or 0)
        vocab = llama_cpp.Llama(str(model), vocab_only=True, verbose=False)
        tokens = sum(len(vocab.tokenize(p.read_text(encoding="utf-8").encode(), add_bos=True)) for p in docs.iterdir())
        return {
            f"{tag}_files": len(report.get("files", [])),
            f"{tag}_chunks": report.get("chunks"),
            f"{tag}_model_tokens": tokens,
            f"{tag}_s_with_model_load": round(seconds, 2),
            f"{tag}_reported_s": report.get("seconds"),
            f"{tag}_embedding_s": report.get("seconds_embedding"),
            f"{tag}_waiting_for_reads_s": report.get("seconds_waiting_for_reads"),
            f"{tag}_waiting_for_writes_s": report.get("seconds_waiting_for_writes"),
            f"{tag}_tps": round(tokens / float(report.get("seconds") or seconds), 1),
            # what the embedder ran: the documents' tokens plus each chunk's overlap with the one before
            f"{tag}_embedded_tokens": report.get("tokens_embedded"),
            f"{tag}_embedded_tps": round(embedded / float(report.get("seconds") or seconds), 1),
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--bin", type=Path, required=True)
    parser.add_argument("--texts", type=int, default=48, help="~4,000-token texts for the embedder figure")
    parser.add_argument("--docs", type=int, default=40, help="documents for the end-to-end ingest figure")
    parser.add_argument("--words", type=int, default=20_000, help="words per document")
    parser.add_argument("--out", type=Path, default=Path("gpu_embed_bench.json"))
    parser.add_argument("--whole-text-too", action="store_true", help="also ingest with one micro-batch per text")
    args = parser.parse_args()
    rng = random.Random(0)
    result: dict[str, float] = {}
    result.update(llama_bench(args.bin, args.model))
    print(json.dumps(result), flush=True)
    texts = [synthetic_text(rng, 3_000) for _ in range(args.texts)]
    result.update(embedder_throughput(args.model, texts, "embedder", None))
    print(json.dumps(result), flush=True)
    result.update(embedder_throughput(args.model, texts, "embedder_all_outputs", None, all_outputs=True))
    print(json.dumps(result), flush=True)
    state = rng.getstate()
    result.update(ingest_throughput(args.model, rng, args.docs, args.words))
    if args.whole_text_too:
        print(json.dumps(result), flush=True)
        rng.setstate(state)  # the same documents
        result.update(ingest_throughput(args.model, rng, args.docs, args.words, "ingest_whole_text", 8192))
    ceiling = max((v for k, v in result.items() if k.startswith("llama_bench")), default=float("nan"))
    result["ceiling_tps"] = ceiling
    args.out.write_text(json.dumps(result, indent=2))
    print("| figure | tokens/s | of ceiling |\n|---|---|---|")
    figures = ["llama_bench_pp4096_default_ub_tps", "llama_bench_pp4096_ub4096_tps", "embedder_tps"]
    figures += ["embedder_all_outputs_tps", "ingest_tps", "ingest_embedded_tps", "ingest_whole_text_tps"]
    for key in figures:
        if key in result:
            print(f"| {key} | {result[key]:,.0f} | {result[key] / ceiling:.0%} |")


if __name__ == "__main__":
    main()
