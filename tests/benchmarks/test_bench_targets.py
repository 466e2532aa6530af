"""The engine benchmark's target table (bench/targets.py), from a run's raw figures, and the GPU state
it records: pure logic."""

from __future__ import annotations

from bench.gpu_engine_bench import _numbered_repeats
from bench.machine_state import HostLoad, gpu_state
from bench.targets import target_table

SINGLE = "single-stream decode / llama-bench tg128 (run around it where measured)"
SINGLE_FIRST = "same, against the run's first tg128 (before the other loads)"

CEILINGS = {
    "llama_bench_tg128_tps": 160.0,
    "llama_bench_pp6144_tps": 5120.0,  # 6,144 tokens in 1.2 s
    "batched_npp6144_npl16_total_s": 23.5,
    "batched_npp512_npl64_tg_tps": 2600.0,
    "llama_server_16x6144_wall_s": 27.5,
    "llama_server_16x6144_ttft_p50_s": 11.5,
    "llama_server_16x6144_ttft_max_s": 21.0,
    "llama_cpp_python_sequential_16_s": 51.0,
}


def engine(tag: str, scale: float) -> dict[str, float]:
    """An engine's figures, all at their targets' edge times `scale` (above 1: worse)."""
    return {
        f"{tag}_single_decode_depth0_tps": 160.0 * 0.95 / scale,
        f"{tag}_single_ttft_s": 1.2 * 1.10 * scale,
        f"{tag}_16x6144_wall_s": 23.5 * 1.08 * scale,
        f"{tag}_16x6144_ttft_p50_s": 11.0 * scale,
        f"{tag}_16x6144_ttft_max_s": 20.0 * scale,
        f"{tag}_16x6144_ttft_p95_s": 19.0,
        f"{tag}_16x6144_itl_p50_ms": 17.5,
        f"{tag}_16x6144_itl_p95_ms": 428.0,
        f"{tag}_prefix_reuse_ttft_s": 0.150 * scale,
        f"{tag}_64x512_aggregate_decode_tps": 2600.0 * 0.90 / scale,
    }


def rows(table: str) -> dict[str, list[str]]:
    lines = table.splitlines()[2:]
    return {cells[0]: cells[2:] for cells in ([c.strip() for c in line.strip("|").split("|")] for line in lines)}


def test_each_figure_is_judged_against_the_ceiling_of_the_same_run() -> None:
    results = {**CEILINGS, **engine("good", 0.999), **engine("bad", 1.06)}
    table = rows(target_table(results, ["good", "bad", "absent"]))
    assert len(table) == 10
    for figure, (good, bad, absent) in table.items():
        assert absent == "not run"
        if figure == SINGLE_FIRST:  # tg128 did not run around the requests: nothing to set beside
            assert (good, bad) == ("not run", "not run")
            continue
        if figure.startswith("TTFT and ITL"):
            # reported, not judged (no llama-server p95 in CEILINGS: nothing beside them)
            assert (good, bad) == ("TTFT 10.99 / 19.00 s, ITL 17.5 / 428 ms", "TTFT 11.66 / 19.00 s, ITL 17.5 / 428 ms")
            continue
        assert good.endswith("(met)"), figure
        if figure != "16 x 6,144 wall against llama-server -np 16":  # 25.5 s still beats its 27.5 s
            assert bad.endswith("(MISSED)"), figure  # 6% past the edge of its target
    assert table[SINGLE][0] == "95.1% (met)"
    assert table["against llama-cpp-python one after another"][0] == "2.01x faster (met)"


def test_a_figure_whose_ceiling_was_not_measured_is_not_judged() -> None:
    results = engine("docqa", 1.0)  # --bin not given: no llama.cpp tools, no baselines
    table = rows(target_table(results, ["docqa"]))
    assert table[SINGLE] == ["not run"]
    assert table["16 x 6,144 wall against llama-server -np 16"] == ["not run"]
    assert table["new question over the same chunks, TTFT"] == ["150 ms (met)"]


def test_a_share_just_under_its_floor_does_not_read_as_on_it() -> None:
    results = {
        **CEILINGS,
        "docqa_single_decode_depth0_tps": 160.0 * 0.9496,
        "docqa_64x512_aggregate_decode_tps": 2600.0 * 0.9051,
    }
    table = rows(target_table(results, ["docqa"]))
    assert table[SINGLE] == ["94.96% (MISSED)"]  # not "95.0% (MISSED)"
    assert table["64 x 512 aggregate decode / llama-batched-bench npl 64"] == ["90.5% (met)"]


def test_latencies_are_reported_beside_llama_servers_when_it_ran() -> None:
    server = {
        "llama_server_16x6144_ttft_p50_s": 11.5,
        "llama_server_16x6144_ttft_p95_s": 20.0,
        "llama_server_16x6144_itl_p50_ms": 25.0,
        "llama_server_16x6144_itl_p95_ms": 431.0,
    }
    row = "TTFT and ITL under 16 streams, p50 / p95"
    assert rows(target_table({**engine("docqa", 1.0), **server}, ["docqa"]))[row] == [
        "TTFT 11.00 / 19.00 s, ITL 17.5 / 428 ms (llama-server TTFT 11.50 / 20.00 s, ITL 25.0 / 431 ms)"
    ]


def test_single_stream_is_judged_against_tg128_run_around_it() -> None:
    """Where tg128 ran just before and after the requests, that is the ceiling; the run's first
    tg128 (measured on a cooler GPU, before the other loads) is reported beside it."""
    results = {
        **CEILINGS,  # tg128 160.0 at the start of the run
        "docqa_single_decode_depth0_tps": 152.0,
        "docqa_tg128_around_tps": 157.0,
        "early_single_decode_depth0_tps": 152.0,
    }
    table = rows(target_table(results, ["docqa", "early"]))
    assert table[SINGLE] == ["96.8% (met)", "95.0% (met)"]
    assert table[SINGLE_FIRST] == ["95.0%", "not run"]
    results["docqa_tg128_around_tps"] = 161.0
    assert rows(target_table(results, ["docqa"]))[SINGLE] == ["94.4% (MISSED)"]


def test_the_gpu_state_is_read_from_nvidia_smi_and_absent_without_it(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]

    monkeypatch.setenv("PATH", str(tmp_path))
    assert gpu_state("docqa_single_start") == {}  # no nvidia-smi: nothing recorded, nothing fails
    smi = tmp_path / "nvidia-smi"
    smi.write_text('#!/bin/sh\necho "1980, 41, 120.35"\n')
    smi.chmod(0o755)
    assert gpu_state("docqa_single_start") == {
        "docqa_single_start_sm_clock_mhz": 1980.0,
        "docqa_single_start_temperature_c": 41.0,
        "docqa_single_start_power_w": 120.35,
    }
    smi.write_text('#!/bin/sh\necho "[N/A], 41, 120.35"\n')
    assert gpu_state("x") == {}  # a field the GPU does not report: nothing, rather than a wrong figure


def test_the_host_load_over_a_phase_sees_this_process_busy() -> None:
    import os
    import time

    load = HostLoad()
    cpu, wall = time.process_time(), time.perf_counter()
    deadline = wall + 0.5
    while time.perf_counter() < deadline:  # one thread busy for the whole phase
        pass
    used = (time.process_time() - cpu) / (time.perf_counter() - wall)  # the cores it got (less on a busy machine)
    figures = load.report("phase")
    # what the phase's figure says is what the process got, within /proc's 10 ms ticks; not a fixed floor,
    # which a busy machine fell under (0.466 cores against 0.5: issue 40, 9)
    assert abs(figures["phase_host_process_cores"] - used) <= 0.1, (figures, used)
    assert 0.05 < figures["phase_host_process_cores"] <= (os.cpu_count() or 1) + 0.5
    assert figures["phase_host_involuntary_switches_per_s"] >= 0
    assert 0 < figures["phase_host_busy_share"] <= 1  # this machine's /proc/stat: the busy thread counts
    assert 0 <= figures["phase_host_steal_share"] < 1


def test_a_variant_asked_for_twice_keeps_both_runs() -> None:
    asked = [("docqa", {}), ("docqa_b2048_ub1024", {"n_batch": 2048}), ("docqa_b2048_ub1024", {"n_batch": 2048})]
    assert [tag for tag, _ in _numbered_repeats(asked)] == ["docqa", "docqa_b2048_ub1024", "docqa_b2048_ub1024_run2"]
