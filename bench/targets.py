"""The engine benchmark's targets (issue: concurrent asks share the GPU), read off one run's results.

`bench/gpu_engine_bench.py` measures llama.cpp's ceilings, docqa's engine (one or more ways of
sampling, each under its own key prefix) and the baselines in one run; this turns those raw figures
into the table the targets are judged by, each figure against the ceiling measured in the same run.
"""

from __future__ import annotations

from collections.abc import Callable

PROMPT_TOKENS = 6144
Figure = Callable[[dict[str, float], str], tuple[str, bool] | str | None]


def _ratio(r: dict[str, float], numerator: str, denominator: str) -> float | None:
    if numerator not in r or denominator not in r or not r[denominator]:
        return None
    return r[numerator] / r[denominator]


def _share(share: float, floor: float) -> tuple[str, bool]:
    """A share against its floor, with a second decimal where one would show the wrong side of it
    (94.96% is no 95.0%)."""
    met = share >= floor
    text = f"{share:.1%}"
    return (f"{share:.2%}" if (round(share, 3) >= floor) != met else text), met


def _single(r: dict[str, float], tag: str) -> tuple[str, bool] | None:
    """Against tg128 measured just before and after the requests, where the run did (the GPU in the
    same state as for the requests); else against the run's first tg128."""
    share = _ratio(r, f"{tag}_single_decode_depth0_tps", f"{tag}_tg128_around_tps")
    if share is None:
        share = _ratio(r, f"{tag}_single_decode_depth0_tps", "llama_bench_tg128_tps")
    return None if share is None else _share(share, 0.95)


def _single_first(r: dict[str, float], tag: str) -> str | None:
    """The same requests against the run's first tg128, where tg128 also ran around them."""
    if f"{tag}_tg128_around_tps" not in r:
        return None
    share = _ratio(r, f"{tag}_single_decode_depth0_tps", "llama_bench_tg128_tps")
    return None if share is None else f"{share:.1%}"


def _ttft(r: dict[str, float], tag: str) -> tuple[str, bool] | None:
    if f"{tag}_single_ttft_s" not in r or "llama_bench_pp6144_tps" not in r:
        return None
    times = r[f"{tag}_single_ttft_s"] / (PROMPT_TOKENS / r["llama_bench_pp6144_tps"])
    return f"{times:.3f}x", times <= 1.10


def _sixteen(r: dict[str, float], tag: str) -> tuple[str, bool] | None:
    times = _ratio(r, f"{tag}_16x6144_wall_s", "batched_npp6144_npl16_total_s")
    return None if times is None else (f"{times:.3f}x", times <= 1.10)


def _sequential(r: dict[str, float], tag: str) -> tuple[str, bool] | None:
    faster = _ratio(r, "llama_cpp_python_sequential_16_s", f"{tag}_16x6144_wall_s")
    return None if faster is None else (f"{faster:.2f}x faster", faster >= 2.0)


def _server_wall(r: dict[str, float], tag: str) -> tuple[str, bool] | None:
    ours, theirs = r.get(f"{tag}_16x6144_wall_s"), r.get("llama_server_16x6144_wall_s")
    if ours is None or theirs is None:
        return None
    return f"{ours:.2f} against {theirs:.2f} s", ours < theirs


def _server_ttft(r: dict[str, float], tag: str) -> tuple[str, bool] | None:
    keys = [f"{tag}_16x6144_ttft_p50_s", f"{tag}_16x6144_ttft_max_s"]
    theirs = ["llama_server_16x6144_ttft_p50_s", "llama_server_16x6144_ttft_max_s"]
    if any(k not in r for k in keys + theirs):
        return None
    text = f"{r[keys[0]]:.2f} / {r[keys[1]]:.2f} against {r[theirs[0]]:.2f} / {r[theirs[1]]:.2f} s"
    return text, r[keys[0]] < r[theirs[0]] and r[keys[1]] < r[theirs[1]]


def _latencies(r: dict[str, float], tag: str) -> str | None:
    """TTFT and inter-token latency under 16 streams, p50 / p95, with llama-server's beside them."""
    names = ["ttft_p50_s", "ttft_p95_s", "itl_p50_ms", "itl_p95_ms"]
    ours = [r.get(f"{tag}_16x6144_{name}") for name in names]
    theirs = [r.get(f"llama_server_16x6144_{name}") for name in names]
    if any(value is None for value in ours):
        return None

    def text(values: list[float | None]) -> str:
        ttft50, ttft95, itl50, itl95 = values
        return f"TTFT {ttft50:.2f} / {ttft95:.2f} s, ITL {itl50:.1f} / {itl95:.0f} ms"

    return text(ours) + ("" if any(value is None for value in theirs) else f" (llama-server {text(theirs)})")


def _reuse(r: dict[str, float], tag: str) -> tuple[str, bool] | None:
    seconds = r.get(f"{tag}_prefix_reuse_ttft_s")
    return None if seconds is None else (f"{seconds * 1000:.0f} ms", seconds <= 0.150)


def _sixty_four(r: dict[str, float], tag: str) -> tuple[str, bool] | None:
    share = _ratio(r, f"{tag}_64x512_aggregate_decode_tps", "batched_npp512_npl64_tg_tps")
    return None if share is None else _share(share, 0.90)


FIGURES: list[tuple[str, str, Figure]] = [
    ("single-stream decode / llama-bench tg128 (run around it where measured)", ">= 95%", _single),
    ("same, against the run's first tg128 (before the other loads)", "report", _single_first),
    ("TTFT, 6,144-token prompt / llama-bench pp6144 time", "<= 1.10x", _ttft),
    ("16 x 6,144 wall / llama-batched-bench npl 16", "<= 1.10x", _sixteen),
    ("against llama-cpp-python one after another", ">= 2x faster", _sequential),
    ("16 x 6,144 wall against llama-server -np 16", "faster", _server_wall),
    ("TTFT 16 at once, p50 / max, against llama-server", "better", _server_ttft),
    ("TTFT and ITL under 16 streams, p50 / p95", "report", _latencies),
    ("new question over the same chunks, TTFT", "<= 150 ms", _reuse),
    ("64 x 512 aggregate decode / llama-batched-bench npl 64", ">= 90%", _sixty_four),
]


def target_table(results: dict[str, float], tags: list[str]) -> str:
    """A markdown table: each target, and each engine variant's figure, marked met or MISSED
    (`not run` where the run lacks a figure or its ceiling)."""
    lines = ["| figure | target | " + " | ".join(tags) + " |", "|---|---|" + "---|" * len(tags)]
    for name, target, figure in FIGURES:
        cells = []
        for tag in tags:
            value = figure(results, tag)
            if value is None:
                cells.append("not run")
            elif isinstance(value, str):
                cells.append(value)
            else:
                cells.append(f"{value[0]} ({'met' if value[1] else 'MISSED'})")
        lines.append(f"| {name} | {target} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
