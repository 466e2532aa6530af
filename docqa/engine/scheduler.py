"""The batching engine's decisions, from plain numbers: whether the request at the head of the queue is
admitted, waits or is refused, which cached prefixes make room for it, and what one step's batch holds.

Nothing here touches a model or llama.cpp: `BatchingGenerator` carries out what these functions return
(copies KV cells, evicts cache entries, fills the batch), so the policy is tested without loading a model
(`tests/engine/test_scheduler.py`), as vLLM keeps its scheduler apart from the model runner. The order a
step serves sequences in is `step_order`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from docqa.llama.token_batch import common_prefix

# A request waits for a running twin's prefill when they share this many more prompt tokens than the
# cache offers (the system prompt is cached already; retrieved chunks are hundreds of tokens).
MIN_TWIN_TOKENS = 32


@dataclass(frozen=True)
class KVBudget:
    """The KV cache as admission sees it.

    cells: all the cells the context has. unified: one pool that every sequence and cached prefix draws
    from (else each sequence owns its share, checked by the context bound alone, and nothing is reserved).
    reserved: cells the running sequences hold back (prompt left to read plus answer). cached: the prefix
    cache's entries as (cache sequence ID, tokens held), least recently used first. running: sequences
    that will free cells when they end (with none, a request that does not fit never will).
    """

    cells: int
    unified: bool
    reserved: int
    cached: Sequence[tuple[int, int]] = ()
    running: int = 0

    def held(self, evicted: int = 0) -> int:
        """Cells held by running sequences and the cached prefixes still kept (the first `evicted` gone)."""
        if not self.unified:
            return 0
        return self.reserved + sum(tokens for _, tokens in self.cached[evicted:])


@dataclass(frozen=True)
class Admission:
    """What to do with the request at the head of the queue.

    verdict: admit it, leave it waiting (running sequences will free cells, or a twin's prompt will enter
    the cache), or refuse it (it can never run; `reason` says why). evict: cache sequence IDs to drop first
    (also before waiting: they made room the next check counts). reuse: prompt tokens copied from the
    cached prefix `reuse_from` instead of read. need: cells held back for it. max_tokens: its answer bound.
    """

    verdict: Literal["admit", "wait", "refuse"]
    reason: str = ""
    evict: tuple[int, ...] = ()
    reuse_from: int | None = None
    reuse: int = 0
    need: int = 0
    max_tokens: int = 0


def admission(
    *,
    prompt_tokens: int,
    max_tokens: int,
    context_tokens: int,
    cached_prefix: tuple[int | None, int],
    twin_in_prefill: bool,
    kv: KVBudget,
) -> Admission:
    """Admit, wait or refuse a request of `prompt_tokens` asking for up to `max_tokens`.

    context_tokens: what one sequence may hold (prompt and answer). cached_prefix: (the cache sequence
    with the longest common prefix, its length), (None, 0) for none. twin_in_prefill: a running sequence
    still reading its prompt shares clearly more of it than the cache does; waiting for it to finish
    reads that prefix once instead of twice at half speed each."""
    room = context_tokens - prompt_tokens
    if room <= 0:
        reason = f"prompt of {prompt_tokens} tokens does not fit the {context_tokens}-token context"
        return Admission("refuse", reason)
    answer = min(max_tokens, room)
    if twin_in_prefill:
        return Admission("wait", max_tokens=answer)
    entry, shared = cached_prefix
    reuse = min(shared, prompt_tokens - 1) if entry is not None else 0  # the last token is read for its logits
    need = prompt_tokens - reuse + answer
    evicted = 0
    while kv.held(evicted) + need > kv.cells and evicted < len(kv.cached):
        if kv.cached[evicted][0] == entry:  # the prefix it would start from goes: it reads the whole prompt
            entry, reuse, need = None, 0, prompt_tokens + answer
        evicted += 1
    evict = tuple(seq_id for seq_id, _ in kv.cached[:evicted])
    if kv.held(evicted) + need > kv.cells:
        if not kv.running:
            return Admission("refuse", f"request needs {need} KV cells; the engine has {kv.cells}", evict)
        return Admission("wait", evict=evict, max_tokens=answer)
    return Admission("admit", evict=evict, reuse_from=entry, reuse=reuse, need=need, max_tokens=answer)


def twin_in_prefill(prompts_in_prefill: Iterable[np.ndarray], prompt: np.ndarray, cached: int) -> bool:
    """Whether a running sequence still reading its prompt shares clearly more of this prompt than the
    cache does (asks over the same chunks, arriving together): evaluating the same prefix twice in
    parallel would only halve the speed of both."""
    return any(common_prefix(other, prompt) >= cached + MIN_TWIN_TOKENS for other in prompts_in_prefill)


@dataclass(frozen=True)
class StepPlan:
    """One step's batch, in the positions of the step order it was planned from: the first `rows`
    sequences put in their one pending token each (generating rows), and `slices` (position, tokens)
    of the prompts being read."""

    rows: int
    slices: tuple[tuple[int, int], ...] = ()

    @property
    def reads_prompt(self) -> bool:
        return bool(self.slices)


@dataclass
class StepPlanner:
    """Fills a step's batch within `n_batch` tokens: every generating row, then prompt slices in order.

    While a prompt is being read, the generating rows go in only one such step in
    `prompt_steps_per_decode`: llama.cpp evaluates them in a pass of their own, so a step that carries
    them costs about a decode step more (docs/benchmarks.md, issue 43).

    With `end_at_prompt_end`, a step that reads the rest of a prompt starts no prompt it cannot finish:
    a finished prompt's first token is drawn when its step returns, and the slice of a longer prompt that
    would have filled the step's room only delays it (that prompt's own first token comes no sooner).
    The GPU does the same work either way, in one step more per prompt."""

    n_batch: int
    prompt_steps_per_decode: int = 1
    end_at_prompt_end: bool = True
    prompt_steps: int = field(default=0)  # steps so far that read a prompt

    def plan(self, pending: Sequence[int]) -> StepPlan:
        """pending: each sequence's tokens still to evaluate, in step order (generating ones, with one
        token each, lead)."""
        leading = next((i for i, n in enumerate(pending) if n != 1), len(pending))
        rows = min(leading, self.n_batch)
        if leading < len(pending):  # a prompt is being read: its steps carry the generating rows one in N
            self.prompt_steps += 1
            if self.prompt_steps % self.prompt_steps_per_decode:
                rows = 0
        budget = self.n_batch - rows
        slices: list[tuple[int, int]] = []
        finishes = False  # some prompt is read to its end this step
        for position in range(leading, len(pending)):
            take = min(pending[position], budget)
            if not take or (finishes and self.end_at_prompt_end and take < pending[position]):
                break
            slices.append((position, take))
            budget -= take
            finishes = finishes or take == pending[position]
        return StepPlan(rows, tuple(slices))
