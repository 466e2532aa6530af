"""The step-plan cost model (bench/step_plan_model.py): pure arithmetic over the engine's own planner."""

from __future__ import annotations

import argparse

from bench.step_plan_model import modelled
from docqa.engine.scheduler import StepPlanner

COSTS = argparse.Namespace(step_ms=4.0, pass_ms=6.0, rows_ms=12.0, pp=5591.0, answer_tokens=16)
LENGTHS = [3000, 1000, 2000, 4000]


def run(arrivals: list[float] | None = None) -> dict[str, float]:
    return modelled(LENGTHS, StepPlanner(2048, 4), 1024, COSTS, arrivals)


def test_prompts_arriving_at_once_are_the_burst_without_arrivals() -> None:
    assert run([0.0] * 4) == run()


def test_prompts_arriving_later_come_out_later_and_an_idle_engine_waits_for_them() -> None:
    at_once, spread, late = run(), run([0.0, 0.2, 0.4, 0.6]), run([5.0] * 4)
    assert spread["ttft_p50_s"] > at_once["ttft_p50_s"]
    assert late["wall_s"] == round(at_once["wall_s"] + 5.0, 2)  # nothing to do until 5 s, then the same burst
