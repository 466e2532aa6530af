"""CPU benchmark with the offline demo model: ingest throughput and ask latency on real contracts.

Ingests N CUAD contracts (TXT, then the same contracts as PDF into a second collection), then asks
questions from cuad_dev/qa.jsonl about them, and prints one Markdown table (also written as JSON).

usage: python -m bench.cpu_bench [--contracts 5] [--questions 10] [--data ../shared/data/cuad_dev]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path

from docqa.core.requests import AskRequest
from docqa.core.settings import Settings
from docqa.eval.scoring import is_hit
from docqa.service import DocQA

ROOT = Path(__file__).resolve().parents[1]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "cuad_dev")
    ap.add_argument("--contracts", type=int, default=5)
    ap.add_argument("--questions", type=int, default=10)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "cpu_bench.json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)

    rows = [json.loads(line) for line in (args.data / "qa.jsonl").open()]
    docs = sorted({r["doc"] for r in rows})[: args.contracts]
    with tempfile.TemporaryDirectory() as tmp:
        qa = DocQA.open(Settings(data_dir=Path(tmp)))
        results: dict[str, object] = {
            "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
        }
        for kind, field in (("txt", "doc"), ("pdf", "doc_pdf")):
            paths = [args.data / r[field] for r in rows if r["doc"] in docs and r[field]]
            paths = sorted(set(paths))
            report = qa.ingest(paths, collection=f"bench-{kind}")
            pages = sum(f.pages for f in report.files)
            tokens = sum(f.tokens for f in report.files)
            chunks = sum(f.chunks for f in report.files)
            results[f"ingest_{kind}"] = {
                "files": len(paths),
                "failed": len(report.as_dict()["failed"]),  # type: ignore[arg-type]
                "pages": pages,
                "chunks": chunks,
                "tokens": tokens,
                "seconds": round(report.seconds, 1),
                "pages_per_s": round(pages / report.seconds, 2),
                "tokens_per_s": round(tokens / report.seconds, 1),
            }
            print(f"ingested {kind}: {results[f'ingest_{kind}']}", file=sys.stderr)

        questions = [
            r for r in rows if r["doc"] in docs and not r["is_impossible"] and r["answer_type"] in ("span", "evidence")
        ][: args.questions]
        names = {Path(r["doc"]).name for r in questions}
        timings, hits = [], 0
        for i, row in enumerate(questions):
            answer = qa.ask(AskRequest(row["question"], collection="bench-txt", max_tokens=args.max_tokens, seed=i))
            timings.append(answer.timings)
            cited = qa.store.fetch_chunks([c.chunk_id for c in answer.citations])
            hit = any(
                cited[c.chunk_id].document_name == Path(row["doc"]).name
                and any(is_hit(cited[c.chunk_id].text, a["text"]) for a in row["answers"])
                for c in answer.citations
            )
            hits += hit
        qa.close()

    results["ask"] = {
        "questions": len(questions),
        "contracts": len(names),
        "top3_hit_rate": round(hits / max(len(questions), 1), 3),
        "retrieval_ms_p50": round(statistics.median(t.retrieval_ms for t in timings), 1),
        "ttft_ms_p50": round(statistics.median(t.ttft_ms or 0 for t in timings), 1),
        "ttft_ms_p95": round(pct([t.ttft_ms or 0 for t in timings], 0.95), 1),
        "total_ms_p50": round(statistics.median(t.total_ms for t in timings), 1),
        "prompt_tokens_p50": statistics.median(t.prompt_tokens for t in timings),
        "decode_tokens_per_s": round(
            sum(t.completion_tokens for t in timings)
            / max(sum((t.total_ms - (t.ttft_ms or 0)) / 1000 for t in timings), 1e-9),
            1,
        ),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    ing_t, ing_p, ask = results["ingest_txt"], results["ingest_pdf"], results["ask"]
    print(f"| figure | value |\n|---|---|\n| machine | {results['machine']} |")
    for label, r in (("TXT", ing_t), ("PDF", ing_p)):
        assert isinstance(r, dict)
        print(
            f"| ingest {label}: {r['files']} contracts, {r['pages']} pages, {r['tokens']:,} tokens, "
            f"{r['chunks']} chunks | "
            f"{r['seconds']} s = {r['pages_per_s']} pages/s, {r['tokens_per_s']} tokens/s |"
        )
    assert isinstance(ask, dict)
    for key, value in ask.items():
        print(f"| ask {key} | {value} |")


if __name__ == "__main__":
    main()
