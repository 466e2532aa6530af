"""Sampler chains for the batching engine, and where each step's tokens are drawn.

On the host, sampling one token means copying the whole vocabulary's logits out of the GPU (151,936
floats for Qwen) and sorting them for top-k; with llama.cpp's backend sampling the chain (top-k,
top-p, min-p, temperature, the draw) runs inside the decode graph and only the chosen token comes
back. But llama.cpp builds every attached chain into every step's graph, whether its sequence has
an output or not, so a chain is attached only while a request holds its slot; and with many
sequences generating, the graph keeps only each row's top-k and the host draws all rows at once
(see SlotSamplers).
On the host a slot keeps its chain across requests with the same parameters and only resets it
(a fresh random seed, or the request's own seed again); llama.cpp takes a chain into its graph
once, so in the graph each request gets a new chain.
"""

from __future__ import annotations

import ctypes
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from docqa.core.sampling_params import SamplingParams
from docqa.engine.batched_sampling import BatchedSampler, RowSampler, draw, padded
from docqa.engine.block_top_k import BlockTopK, block_size
from docqa.engine.chain_key import RANDOM_SEED, ChainKey
from docqa.llama.context import LlamaContext

__all__ = ["RANDOM_SEED", "ChainKey", "Sampler", "SlotSamplers"]

logger = logging.getLogger(__name__)


class Sampler:
    """One llama.cpp sampler chain."""

    def __init__(
        self,
        lib: Any,
        key: ChainKey,
        top_k_only: bool = False,
        with_draw: bool = True,
        block_top_k: BlockTopK | None = None,
    ) -> None:
        self._lib = lib
        self.key = key
        self.top_k_only = top_k_only  # the graph keeps the top-k; the host draws from them
        # the top-k comes from one computation for all rows in the graph, else llama.cpp's per row
        self.block_top_k = self.takes_block_top_k(key, top_k_only, block_top_k)
        if self.block_top_k and block_top_k is not None and top_k_only:
            self.chain = block_top_k.chain(key.top_k)
            return
        chain = lib.llama_sampler_chain_init(lib.llama_sampler_chain_default_params())
        if top_k_only:
            lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_top_k(key.top_k))
        elif key.temperature <= 0:
            lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_greedy())
        else:
            if self.block_top_k and block_top_k is not None:
                lib.llama_sampler_chain_add(chain, block_top_k.sampler(key.top_k))
            elif key.top_k > 0:
                lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_top_k(key.top_k))
            if key.top_p < 1.0:
                lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_top_p(key.top_p, 1))
            if key.min_p > 0.0:
                lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_min_p(key.min_p, 1))
            lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_temp(key.temperature))
            if with_draw:  # without it the chain only filters and scales (tests compare its probabilities)
                lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_dist(ctypes.c_uint32(key.seed).value))
        self.chain = chain

    @staticmethod
    def takes_block_top_k(key: ChainKey, top_k_only: bool, block_top_k: BlockTopK | None) -> bool:
        """Whether a chain for the graph takes its top-k from the block top-k: it has a top-k, and a
        block size tiles the vocabulary for it. Such a chain cannot be sampled on the host."""
        if block_top_k is None or key.top_k <= 0 or (key.temperature <= 0 and not top_k_only):
            return False
        return block_size(block_top_k.n_vocab, key.top_k) is not None

    def sample(self, ctx: LlamaContext, batch_index: int) -> int:
        """The token for this output: the one the GPU drew, or drawn here from the logits."""
        return int(self._lib.llama_sampler_sample(self.chain, ctx.ctx.ctx, batch_index))

    def reset(self) -> None:
        self._lib.llama_sampler_reset(self.chain)

    def free(self) -> None:
        if self.chain is not None:
            self._lib.llama_sampler_free(self.chain)
            self.chain = None


class SlotSamplers:
    """The chain of each engine slot (sequence ID), and where this step's tokens are drawn.

    On a GPU with few sequences generating, each chain runs inside llama.cpp's decode graph, attached
    to its slot while a request holds the slot: llama.cpp builds every attached chain into every
    step's graph, busy or not (64 chains added 8 ms to a 24 ms step on an H200); a chain's top-k comes
    from the block top-k all rows share (one stream on an H200: 95.3-95.8% of llama-bench tg128 against
    92.4-95.0% with llama.cpp's top-k per chain, measured side by side). From `batched_from`
    sequences on (below half of it, back), the graph keeps only each row's top-k, and the host runs
    the rest of the chains for all rows at once over a [rows x k] matrix (docqa.engine.batched_sampling).
    Without a GPU, each chain runs on the host, in parallel threads, or from `batched_from` on, all
    rows at once over the full logits."""

    def __init__(
        self,
        llama: LlamaContext,
        on_backend: bool,
        threads: int = 1,
        batched_from: int = 0,
        block_top_k: bool = True,
        short_sorts: bool = True,
    ) -> None:
        self._llama = llama
        self.block_top_k: BlockTopK | None = None
        if on_backend and block_top_k:
            try:
                self.block_top_k = BlockTopK(llama.lib, llama.n_vocab, short_sorts)
            except OSError as exc:  # no ggml library to build with: llama.cpp's own top-k, one per row
                logger.warning("one top-k for all rows is not available (%s); llama.cpp's per row instead", exc)
        self.on_backend = on_backend
        self.batched_from = batched_from
        self.batched = False  # drawing every row on the host at once this step
        self._chains: dict[int, Sampler] = {}
        self._rows: dict[int, RowSampler] = {}
        self._busy: set[int] = set()
        self._attached: set[int] = set()
        self._spent: set[int] = set()  # chains that have been in the graph (llama.cpp cannot take them again)
        self.chains_built = 0
        self.mode_switches = 0
        self.rows_from_graph_top_k = 0  # rows drawn here from the top-k the graph kept
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="docqa-sample") if threads > 1 else None
        self._batch_sampler = BatchedSampler(self._pool, threads)  # one pool for both ways of sampling

    @property
    def attached_slots(self) -> frozenset[int]:
        return frozenset(self._attached)

    def pick_slot(self, free_slots: list[int], params: SamplingParams) -> int:
        """A free slot whose chain this request can reuse, else one with no chain yet, else the first."""
        key = ChainKey.of(params)
        for slot in free_slots:
            if (chain := self._chains.get(slot)) is not None and chain.key == key:
                return slot
        return next((slot for slot in free_slots if slot not in self._chains), free_slots[0])

    def for_request(self, slot: int, params: SamplingParams) -> None:
        """Give the slot a chain for this request's parameters (its own again when they match)."""
        key = ChainKey.of(params)
        current = self._chains.get(slot)
        if current is not None and current.key == key:
            current.reset()
            self._rows[slot].reset()
        else:
            self._drop(slot)
            block = self.block_top_k if self.on_backend else None
            self._chains[slot] = Sampler(self._llama.lib, key, block_top_k=block)
            self._rows[slot] = RowSampler(key)
            self.chains_built += 1
        self._busy.add(slot)
        if self.on_backend:
            self._attach(slot)

    def release(self, slot: int) -> None:
        """The slot's request ended: its chain leaves the graph (it stays built for the next request)."""
        self._busy.discard(slot)
        self._detach(slot)

    def adapt(self, generating: int) -> None:
        """Choose where this step draws, from how many sequences are running."""
        if not self.batched_from:
            return
        if not self.batched and generating >= self.batched_from:
            self.batched = True
        elif self.batched and generating < max(self.batched_from // 2, min(self.batched_from, 2)):
            # back below half of it; from 2, back when one is left alone (not only at none)
            self.batched = False
        else:
            return
        self.mode_switches += 1
        for slot in list(self._attached):
            self._detach(slot)
        if self.on_backend:
            for slot in self._busy:
                self._attach(slot)

    def sample(self, ready: list[tuple[int, int]]) -> list[int]:
        """The next token of each (slot, batch index), given in batch order: one per output row."""
        if self.batched and self.on_backend:
            return self._finish_top_k(ready)
        if self.batched:
            logits = self._llama.all_logits(len(ready))
            return self._batch_sampler.sample(logits, [self._rows[slot] for slot, _ in ready])
        if len(ready) < 2 or self._pool is None or self.on_backend:
            return [self._chains[slot].sample(self._llama, index) for slot, index in ready]
        # The first read of the outputs synchronises and reorders them: once, before the threads.
        self._llama.logits_ready(ready[0][1])
        return list(self._pool.map(lambda item: self._chains[item[0]].sample(self._llama, item[1]), ready))

    def release_all(self) -> None:
        """Detach and free every chain (teacher forcing needs raw logits; closing frees them)."""
        for slot in list(self._chains):
            self._drop(slot)

    def close(self) -> None:
        self.release_all()
        if self._pool is not None:
            self._pool.shutdown()

    def _finish_top_k(self, ready: list[tuple[int, int]]) -> list[int]:
        """The graph kept each row's top-k (or drew the token, for a chain it runs whole): draw the rest."""
        tokens = [0] * len(ready)
        partial: list[tuple[int, int]] = []
        rows: list[int] = []
        for n, (slot, index) in enumerate(ready):
            chain = self._chains[slot]
            if chain.top_k_only:
                partial.append((slot, index))
                rows.append(n)
            else:
                tokens[n] = chain.sample(self._llama, index)
        if partial:
            together = None
            if all(self._chains[slot].block_top_k for slot, _ in partial):
                together = self._llama.sampled_block_top_k([index for _, index in partial])
            ids, values = together or padded(
                [self._llama.sampled_top_k(index, self._chains[slot].block_top_k) for slot, index in partial]
            )
            drawn = draw(ids, values, [self._rows[slot] for slot, _ in partial])
            self.rows_from_graph_top_k += len(partial)
            for n, token in zip(rows, drawn, strict=True):
                tokens[n] = token
        return tokens

    def _attach(self, slot: int) -> None:
        if slot in self._attached:
            return
        current = self._chains[slot]
        key = current.key
        top_k_only = self.batched and key.temperature > 0 and key.top_k > 0
        block = Sampler.takes_block_top_k(key, top_k_only, self.block_top_k)
        if slot in self._spent or current.top_k_only != top_k_only or current.block_top_k != block:
            # llama.cpp initialises a chain for its graph once: a new one, same key
            self._chains[slot] = Sampler(self._llama.lib, key, top_k_only, block_top_k=self.block_top_k)
            current.free()
            self._spent.discard(slot)
            self.chains_built += 1
        if self._llama.attach_sampler(slot, self._chains[slot].chain):
            self._attached.add(slot)
        else:  # llama.cpp cannot run this chain on its backend: every chain is sampled on the host
            logger.warning("llama.cpp cannot run sampler chain %s in its graph; sampling on the host", key)
            self.on_backend = False
            if top_k_only or block:  # neither a top-k-only chain nor a block top-k runs on the host
                self._chains[slot].free()
                self._chains[slot] = Sampler(self._llama.lib, key)

    def _detach(self, slot: int) -> None:
        if slot in self._attached:
            self._llama.attach_sampler(slot, None)  # before freeing: the context holds the pointer
            self._attached.discard(slot)
            self._spent.add(slot)

    def _drop(self, slot: int) -> None:
        self._detach(slot)
        self._spent.discard(slot)
        self._rows.pop(slot, None)
        sampler = self._chains.pop(slot, None)
        if sampler is not None:
            sampler.free()
