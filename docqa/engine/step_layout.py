"""A step's batch laid out so that llama.cpp reads it in as few passes as it can.

With a KV stream per sequence (docqa's default), llama.cpp cuts a batch into passes (ubatches) in which
every sequence takes the same number of tokens and the sequences' IDs follow each other (+1) in batch
order (`llama_batch_allocr::split_equal` with `sequential`, chosen by `llama_kv_cache::init_batch` when
there is more than one stream). Each pass reads all of the model's weights, which is what a decode step
costs on a GPU. So generating rows of slots 2, 5 and 9 took three passes where slots 2, 3 and 4 take one,
and rows in admission order (7, 8, 0, 1) took two.

Hence: the batch goes in slot order, and a slot that sits between two generating rows and has nothing in
the step gets a filler, one token with no output at the end of that slot's KV, whose cell is freed once
the step is launched. A filler's cost is one token's compute and its attention over its own stream (none
for an empty slot), where the pass it saves rereads every weight (docs/benchmarks/gpu-engine.md, issue 43).
With one KV pool for all sequences (kv_unified) llama.cpp splits by token count only: nothing to fill.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from docqa.engine.scheduler import StepPlan

if TYPE_CHECKING:
    from docqa.engine.sequences import RunningSequence
    from docqa.llama.context import LlamaContext
    from docqa.llama.token_batch import TokenBatch


class HasSlot(Protocol):
    @property
    def slot(self) -> int: ...


@dataclass(frozen=True)
class Entry:
    """A slot's tokens in the batch: a generating row (one token, its output), a prompt slice, or a
    filler (one token at KV position `kv_position`, no output, removed after launch)."""

    slot: int
    tokens: int
    kind: Literal["row", "slice", "filler"]
    order: int = -1  # a row or slice: its position in the step order
    kv_position: int = -1  # a filler: where it goes in its slot's KV


def lay_out(
    order: Sequence[HasSlot],
    step: StepPlan,
    filler_position: Callable[[int], int | None] | None,
    n_batch: int,
) -> list[Entry]:
    """The step's entries in batch order. order: the sequences in the step order the plan was made in
    (StepPlan: its first `rows` generate, `slices` read their prompts, within n_batch); filler_position:
    for a slot with nothing in the step, the KV position a filler would take there (None: it cannot take
    one, e.g. its stream is full); None: no fillers (one KV pool). Fillers take their tokens from the
    last slices, so the batch stays within n_batch."""
    rows = [(order[at].slot, at) for at in range(step.rows)]
    slices = [(order[at].slot, take, at) for at, take in step.slices]
    entries = [Entry(slot, 1, "row", at) for slot, at in rows]
    fillers: list[Entry] = []
    if filler_position is not None and len(rows) > 1:
        present = {slot for slot, _ in rows} | {slot for slot, _, _ in slices}
        low, high = min(s for s, _ in rows), max(s for s, _ in rows)
        for slot in range(low + 1, high):
            if slot not in present and (position := filler_position(slot)) is not None:
                fillers.append(Entry(slot, 1, "filler", kv_position=position))
    over = len(rows) + sum(take for _, take, _ in slices) + len(fillers) - n_batch
    for slot, take, at in reversed(slices):
        cut = min(max(over, 0), take)
        over -= cut
        if take > cut:
            entries.append(Entry(slot, take - cut, "slice", at))
    if over > 0:  # no prompt tokens left to give: the fillers that do not fit stay out
        fillers = fillers[: len(fillers) - over]
    return sorted(entries + fillers, key=lambda e: e.slot)


def filler_positions(active: Sequence[RunningSequence], room: int) -> Callable[[int], int | None]:
    """Where a filler goes in a slot a step leaves out: after its sequence's KV, or at 0 in a free
    slot; None where the slot's stream (`room` cells) is full."""
    ends = {s.slot: s.n_past for s in active}

    def position(slot: int) -> int | None:
        end = ends.get(slot, 0)
        return end if end < room else None

    return position


def passes(entries: Sequence[Entry], n_ubatch: int, per_sequence_kv: bool = True) -> int:
    """How many passes llama.cpp makes over a batch of these entries (each a sequence's tokens in one run,
    in batch order): `llama_batch_allocr::split_equal(n_ubatch, sequential=true)` with a KV stream per
    sequence, `split_simple(n_ubatch)` with one pool. Reported by the step timing."""
    total = sum(e.tokens for e in entries)
    if not per_sequence_kv:
        return -(-total // n_ubatch)
    left = [e.tokens for e in entries]
    count = 0
    while any(left):
        taken: list[int] = []  # entries in this pass: consecutive IDs, in batch order
        for i, entry in enumerate(entries):
            if left[i] and (not taken or entry.slot == entries[taken[-1]].slot + 1):
                taken.append(i)
                if len(taken) > n_ubatch:
                    break
        each = min(min(left[i] for i in taken), max(n_ubatch // len(taken), 1))
        for i in taken:
            left[i] -= each
        count += 1
    return count


def fill_batch(
    batch: TokenBatch, order: Sequence[RunningSequence], entries: Sequence[Entry]
) -> list[tuple[RunningSequence, int, int | None]]:
    """Put the entries' tokens in the batch; for each row and slice, in batch order: (sequence, tokens
    taken, its output's batch index or None: a prompt not finished this step). Runs of generating rows
    go in with one vectorised call each (TokenBatch.add_singles)."""
    plan: list[tuple[RunningSequence, int, int | None]] = []
    run: list[RunningSequence] = []

    def flush_rows() -> None:
        if run:
            first = batch.n_tokens
            batch.add_singles([s.pending[0] for s in run], [s.n_past for s in run], [s.slot for s in run])
            plan.extend((s, 1, first + n) for n, s in enumerate(run))
            run.clear()

    for entry in entries:
        if entry.kind == "row":
            run.append(order[entry.order])
            continue
        flush_rows()
        if entry.kind == "filler":
            batch.add([0], entry.kv_position, entry.slot, False)
            continue
        seq = order[entry.order]
        done = entry.tokens == len(seq.pending)
        batch.add(seq.pending[: entry.tokens], seq.n_past, seq.slot, "last" if done else False)
        plan.append((seq, entry.tokens, batch.n_tokens - 1 if done else None))
    flush_rows()
    return plan


def remove_fillers(llama: LlamaContext, entries: Sequence[Entry]) -> int:
    """Free the fillers' KV cells once llama.cpp has taken the step's inputs (llama_decode has returned:
    a launched step no longer reads the cells' bookkeeping); how many there were."""
    fillers = [e for e in entries if e.kind == "filler"]
    for filler in fillers:
        llama.seq_remove(filler.slot, filler.kv_position, -1)
    return len(fillers)
