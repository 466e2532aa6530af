"""The whole path's median first token against prompt reading at llama.cpp's own speed: for each run of a
`bench/gpu_serve_bench.py` result file, the median first token measured and the median of a reference, the
time llama-bench's prompt speed (pp tokens/s, same pass shape, same host) takes to read the k shortest
prompts whole, one after another, from the first ask's sources onwards. The reference is not a strict
bound (the engine reads a shared instruction prefix once and several prompts in one step), but a median
well under it needs prompts read faster than llama.cpp reads one.

    python -m bench.ttft_bound bench/results/h200_serve_whole_path_b4096_ub2048_2026-12-04_5e6ee6d+.json \\
        --pp 5591      # llama-bench pp6144 tokens/s at the same pass shape, same host

Prints, per run and path, the measured median and the reference's; writes nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def reference(prompt_tokens: list[int], first_sources_s: float, pp_tps: float) -> list[float]:
    """The k-th first token (k = 1..n) if the k shortest prompts were read back to back at pp_tps."""
    done, out = 0, []
    for tokens in sorted(prompt_tokens):
        done += tokens
        out.append(first_sources_s + done / pp_tps)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result", type=Path, nargs="+")
    ap.add_argument("--pp", type=float, required=True, help="llama-bench prompt tokens/s at the same settings")
    args = ap.parse_args()
    for path in args.result:
        data = json.loads(path.read_text())
        for key in sorted(k for k in data if k.endswith("_prompt_tokens_and_ttft")):
            tag = key.removesuffix("_prompt_tokens_and_ttft")
            pairs = data[key]
            first = min(s for s, _ in data[f"{tag}_sources_s_and_prompt_tokens"])
            limit = reference([p for p, _ in pairs], first, args.pp)
            measured = statistics.median(t for _, t in pairs)
            line = f"{path.name} {tag}: TTFT p50 {measured:.2f} s, reference {statistics.median(limit):.2f} s"
            print(f"{line} ({measured / statistics.median(limit):.3f}x)")


if __name__ == "__main__":
    main()
