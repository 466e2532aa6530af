"""The batching scheduler's decisions from plain numbers (docqa/engine/scheduler.py): admission, the KV
budget, eviction of cached prefixes and what a step's batch holds. No model is loaded."""

from __future__ import annotations

import numpy as np

from docqa.engine.scheduler import MIN_TWIN_TOKENS, Admission, KVBudget, StepPlanner, admission, twin_in_prefill
from docqa.engine.step_layout import Entry, passes


def _admit(
    prompt: int, max_tokens: int, kv: KVBudget, cached: tuple[int | None, int] = (None, 0), twin: bool = False
) -> Admission:
    return admission(
        prompt_tokens=prompt,
        max_tokens=max_tokens,
        context_tokens=1000,
        cached_prefix=cached,
        twin_in_prefill=twin,
        kv=kv,
    )


def test_a_prompt_that_fills_the_context_is_refused_with_its_sizes() -> None:
    decision = _admit(1000, 10, KVBudget(cells=10_000, unified=True, reserved=0))
    assert decision.verdict == "refuse"
    assert "1000 tokens" in decision.reason and "1000-token context" in decision.reason


def test_the_answer_is_bounded_by_the_room_the_context_leaves() -> None:
    decision = _admit(900, 500, KVBudget(cells=10_000, unified=True, reserved=0))
    assert (decision.verdict, decision.max_tokens, decision.need) == ("admit", 100, 1000)


def test_a_cached_prefix_is_reused_but_the_last_prompt_token_is_read_again() -> None:
    kv = KVBudget(cells=10_000, unified=True, reserved=0, cached=[(20, 400)])
    decision = _admit(400, 50, kv, cached=(20, 400))
    assert (decision.reuse_from, decision.reuse, decision.need) == (20, 399, 1 + 50)
    assert decision.evict == ()


def test_cached_prefixes_are_evicted_least_recently_used_first_until_the_request_fits() -> None:
    kv = KVBudget(cells=900, unified=True, reserved=300, cached=[(20, 300), (21, 300), (22, 100)], running=1)
    decision = _admit(200, 100, kv)  # needs 300; held 1000 of 900 cells: two entries must go
    assert (decision.verdict, decision.evict) == ("admit", (20, 21))


def test_evicting_the_prefix_a_request_would_start_from_makes_it_read_the_whole_prompt() -> None:
    kv = KVBudget(cells=1000, unified=True, reserved=400, cached=[(20, 500)], running=1)
    decision = _admit(500, 100, kv, cached=(20, 500))  # reuse 499 needs 101, but held 900 + 101 > 1000
    assert decision.verdict == "admit" and decision.evict == (20,)
    assert (decision.reuse_from, decision.reuse, decision.need) == (None, 0, 600)


def test_a_request_that_does_not_fit_waits_while_others_run_and_is_refused_when_nothing_runs() -> None:
    busy = KVBudget(cells=1000, unified=True, reserved=800, cached=[(20, 100)], running=2)
    decision = _admit(200, 100, busy)
    assert (decision.verdict, decision.evict) == ("wait", (20,))  # the room it made counts next time
    idle = KVBudget(cells=250, unified=True, reserved=0)
    refused = _admit(200, 100, idle)
    assert refused.verdict == "refuse" and "needs 300 KV cells; the engine has 250" in refused.reason


def test_without_a_unified_cache_nothing_is_reserved_or_evicted() -> None:
    kv = KVBudget(cells=1000, unified=False, reserved=5000, cached=[(20, 900)], running=3)
    decision = _admit(500, 200, kv)
    assert (decision.verdict, decision.evict, decision.need) == ("admit", (), 700)


def test_a_twin_still_reading_the_same_prompt_makes_the_request_wait() -> None:
    decision = _admit(500, 100, KVBudget(cells=10_000, unified=True, reserved=0), twin=True)
    assert decision.verdict == "wait" and decision.evict == ()


def test_a_step_puts_every_generating_row_first_then_prompt_slices_within_n_batch() -> None:
    planner = StepPlanner(n_batch=100, end_at_prompt_end=False)
    step = planner.plan([1, 1, 1, 60, 80])
    assert step.rows == 3 and step.slices == ((3, 60), (4, 37))
    assert step.reads_prompt


def test_a_step_that_finishes_a_prompt_starts_none_it_cannot_finish() -> None:
    planner = StepPlanner(n_batch=100)
    # the 60-token prompt ends here: the 80-token one waits for the next step, not 37 of its tokens
    assert planner.plan([1, 1, 1, 60, 80]).slices == ((3, 60),)
    # prompts that end within the step all go in; the first that would not end stays out, and so do the rest
    assert planner.plan([20, 30, 80, 10]).slices == ((0, 20), (1, 30))
    # a prompt longer than the step still fills it (nothing ends there), generating rows or not
    assert planner.plan([1, 250, 300]).slices == ((1, 99),)
    assert planner.plan([250]).slices == ((0, 100),)
    # its last part then goes alone, and its first token is drawn at the end of that step
    assert planner.plan([50, 300]).slices == ((0, 50),)


def test_more_generating_rows_than_the_batch_holds_are_cut_to_it() -> None:
    step = StepPlanner(n_batch=4).plan([1] * 6)
    assert (step.rows, step.slices) == (4, ())


def test_while_prompts_are_read_generating_rows_ride_one_prompt_step_in_n() -> None:
    planner = StepPlanner(n_batch=100, prompt_steps_per_decode=4)
    rows = [planner.plan([1, 1, 500]).rows for _ in range(8)]
    assert rows == [0, 0, 0, 2, 0, 0, 0, 2]
    # a prompt-less step always carries them, and does not count as a prompt step
    assert planner.plan([1, 1]).rows == 2
    assert planner.prompt_steps == 8
    # with the rows left out, the prompt gets the whole batch
    assert planner.plan([1, 1, 500]).slices == ((2, 100),)


def test_a_request_waits_for_a_twin_only_when_it_shares_clearly_more_than_the_cache_offers() -> None:
    prompt = np.arange(200, dtype=np.int32)
    twin = np.concatenate([prompt[:150], np.full(20, 7, dtype=np.int32)])  # shares 150 tokens
    assert twin_in_prefill([twin], prompt, cached=100)  # 50 more than the cache: wait for it
    assert not twin_in_prefill([twin], prompt, cached=150 - MIN_TWIN_TOKENS + 1)  # too little more
    assert not twin_in_prefill([], prompt, cached=0)


def _burst(lengths: list[int], planner: StepPlanner, n_ubatch: int = 2048) -> tuple[int, list[int]]:
    """Passes llama.cpp makes reading a burst of prompts (slots in order, shortest first, no generating
    rows), and the prompt tokens read by the end of the step that finishes each one."""
    left = dict(enumerate(lengths))
    count, read, done = 0, 0, []
    while left:
        order = sorted(left, key=lambda slot: (left[slot], slot))
        step = planner.plan([left[slot] for slot in order])
        entries = sorted((Entry(order[at], take, "slice", at) for at, take in step.slices), key=lambda e: e.slot)
        count += passes(entries, n_ubatch)
        read += sum(take for _, take in step.slices)
        for at, take in step.slices:
            left[order[at]] -= take
            if not left[order[at]]:
                del left[order[at]]
                done.append(read)
    return count, done


def test_ending_steps_at_a_prompt_end_costs_no_pass_and_brings_every_first_token_as_soon_or_sooner() -> None:
    for lengths in ([6144] * 16, [512] * 64, [7208, 7569, 8676, 9375, 9470, 9712, 11099, 12163, 12543]):
        filled, filled_done = _burst(lengths, StepPlanner(4096, end_at_prompt_end=False))
        ended, ended_done = _burst(lengths, StepPlanner(4096))
        assert ended <= filled, lengths
        assert all(e <= f for e, f in zip(ended_done, filled_done, strict=True)), lengths
    assert sum(_burst([6144] * 16, StepPlanner(4096))[1]) < sum(_burst([6144] * 16, StepPlanner(4096, 1, False))[1])
