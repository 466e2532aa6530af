"""The step layout: batch order by slot, fillers between generating rows, and llama.cpp's pass count."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from docqa.engine.scheduler import StepPlan
from docqa.engine.step_layout import Entry, fill_batch, lay_out, passes
from docqa.llama.token_batch import TokenBatch


def rows(*slots: int) -> list[Entry]:
    return [Entry(slot, 1, "row", at) for at, slot in enumerate(slots)]


@pytest.mark.parametrize(
    ("slots", "expected"),
    [((0, 1, 2, 3), 1), ((2, 5, 9), 3), ((7, 8, 0, 1), 2), ((0, 1, 7, 8), 2), ((3, 2, 1), 3)],
)
def test_generating_rows_take_one_pass_per_run_of_consecutive_slots_in_batch_order(
    slots: tuple[int, ...], expected: int
) -> None:
    assert passes(rows(*slots), n_ubatch=512) == expected
    assert passes(rows(*slots), n_ubatch=512, per_sequence_kv=False) == 1  # one KV pool: split by tokens only


def test_a_prompt_slice_gives_its_first_token_to_the_rows_pass_and_the_rest_in_passes_of_n_ubatch() -> None:
    in_slot_order = [Entry(0, 1, "row"), Entry(1, 2000, "slice"), Entry(2, 1, "row")]
    assert passes(in_slot_order, n_ubatch=1024) == 3  # {0, 1, 2} x 1, then 1,024 and 975 of slot 1
    rows_first = [Entry(0, 1, "row"), Entry(2, 1, "row"), Entry(1, 2000, "slice")]
    assert passes(rows_first, n_ubatch=1024) == 4  # {0, 1}, {2}, then slot 1's rest
    assert passes([Entry(4, 600, "slice"), Entry(5, 600, "slice")], n_ubatch=1024) == 2  # 512 each, then 88 each


def order(*slots: int) -> list[SimpleNamespace]:
    return [SimpleNamespace(slot=slot) for slot in slots]


def test_a_step_goes_in_slot_order_with_fillers_only_between_generating_rows() -> None:
    kv_end = {4: 300}.get  # slot 4 holds a prompt read up to 300; the others are free

    def filler_at(slot: int) -> int | None:
        return None if slot == 6 else kv_end(slot, 0)  # slot 6: its stream is full

    entries = lay_out(order(8, 2, 5, 3), StepPlan(rows=3, slices=((3, 40),)), filler_at, n_batch=512)
    assert [(e.slot, e.kind) for e in entries] == [
        (2, "row"),
        (3, "slice"),
        (4, "filler"),
        (5, "row"),
        (7, "filler"),
        (8, "row"),
    ]
    assert [e.kv_position for e in entries if e.kind == "filler"] == [300, 0]
    assert passes(entries, 512) == 3  # {2, 3, 4, 5} x 1, {7, 8} x 1 (6 is full), slot 3's other 39
    assert [e.kind for e in lay_out(order(2, 5), StepPlan(rows=2), None, 512)] == ["row", "row"]  # one pool


def test_fillers_take_their_tokens_from_the_last_prompt_slice_within_n_batch() -> None:
    plan = StepPlan(rows=2, slices=((2, 6), (3, 2)))  # 2 rows + 8 prompt tokens = n_batch
    entries = lay_out(order(0, 4, 7, 8), plan, lambda slot: 0, n_batch=10)
    assert sum(e.tokens for e in entries) == 10
    assert {e.slot: e.tokens for e in entries if e.kind == "slice"} == {7: 6 - 1}  # slot 8's 2 and 1 of 7's
    assert [e.slot for e in entries if e.kind == "filler"] == [1, 2, 3]
    crowded = lay_out(order(0, 5), StepPlan(rows=2), lambda slot: 0, n_batch=4)
    assert [e.slot for e in crowded if e.kind == "filler"] == [1, 2]  # no prompt tokens to give: two fit


def test_the_batch_holds_each_entry_at_its_position_and_only_rows_and_finished_prompts_have_outputs() -> None:
    seqs = [
        SimpleNamespace(slot=3, pending=[11], n_past=40),
        SimpleNamespace(slot=0, pending=[12], n_past=50),
        SimpleNamespace(slot=1, pending=[21, 22, 23], n_past=0),
        SimpleNamespace(slot=5, pending=[31, 32, 33, 34], n_past=7),
    ]
    entries = lay_out(seqs, StepPlan(rows=2, slices=((2, 3), (3, 2))), lambda slot: 9, n_batch=64)
    batch = TokenBatch(64)
    plan = fill_batch(batch, seqs, entries)  # type: ignore[arg-type]
    n = batch.n_tokens
    assert batch.seq[:n].tolist() == [0, 1, 1, 1, 2, 3, 5, 5]
    assert batch.token[:n].tolist() == [12, 21, 22, 23, 0, 11, 31, 32]
    assert batch.pos[:n].tolist() == [50, 0, 1, 2, 9, 40, 7, 8]
    assert batch.logits[:n].tolist() == [1, 0, 0, 1, 0, 1, 0, 0]
    assert [(s.slot, take, index) for s, take, index in plan] == [(0, 1, 0), (1, 3, 3), (3, 1, 5), (5, 2, None)]
