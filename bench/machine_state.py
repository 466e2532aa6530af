"""The state of the machine around a measured phase: the GPU's clock, heat and power at its start, and
the host's CPU time over it. The engine's share of llama.cpp's ceilings moved from run to run with its
host-side step costs (the same code's batch building took 0.19 ms a step in one run, 0.39 ms in the next):
these figures say whether the host was busy with other work (steal, other processes) when it did.
"""

from __future__ import annotations

import resource
import subprocess
import time
from pathlib import Path

PROC_STAT = Path("/proc/stat")


def gpu_state(prefix: str) -> dict[str, float]:
    """The GPU's SM clock (MHz), temperature (C) and power draw (W) now, under `prefix`; none without
    nvidia-smi. Recorded where the single-stream figure is taken: a GPU still hot from a heavy load is
    the suspected cause of the first engine part's slower decode."""
    query = "clocks.sm,temperature.gpu,power.draw"
    try:
        line = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.splitlines()[0]
        clock, temperature, power = (float(cell) for cell in line.split(","))
    except (OSError, IndexError, ValueError, subprocess.TimeoutExpired):
        return {}
    return {f"{prefix}_sm_clock_mhz": clock, f"{prefix}_temperature_c": temperature, f"{prefix}_power_w": power}


def _cpu_times() -> list[int]:
    """The machine's CPU time counters (all cores): user nice system idle iowait irq softirq steal ...;
    none where /proc/stat cannot be read."""
    try:
        return [int(x) for x in PROC_STAT.read_text().splitlines()[0].split()[1:9]]
    except (OSError, IndexError, ValueError):
        return []


class HostLoad:
    """Started at a phase's start; report() at its end gives, over the phase: the share of the machine's
    CPU time that was busy and that the hypervisor stole, the cores this process kept busy, and its
    involuntary context switches (its threads preempted by others)."""

    def __init__(self) -> None:
        self._cpu = _cpu_times()
        self._usage = resource.getrusage(resource.RUSAGE_SELF)
        self._wall = time.perf_counter()

    def report(self, prefix: str) -> dict[str, float]:
        wall = max(time.perf_counter() - self._wall, 1e-9)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        out = {
            f"{prefix}_host_process_cores": (
                usage.ru_utime + usage.ru_stime - self._usage.ru_utime - self._usage.ru_stime
            )
            / wall,
            f"{prefix}_host_involuntary_switches_per_s": (usage.ru_nivcsw - self._usage.ru_nivcsw) / wall,
        }
        now = _cpu_times()
        if self._cpu and now:
            delta = [b - a for a, b in zip(self._cpu, now, strict=True)]
            total = max(sum(delta), 1)
            out[f"{prefix}_host_busy_share"] = (total - delta[3] - delta[4]) / total
            out[f"{prefix}_host_steal_share"] = delta[7] / total
        return out
