"""Sampler chains for the batching engine: one per slot, kept across requests, run on the GPU when possible.

On the host, sampling one token means copying the whole vocabulary's logits out of the GPU (151,936
floats for Qwen) and sorting them for top-k; with llama.cpp's backend sampling the chain (top-k,
top-p, min-p, temperature, the draw) runs inside the decode graph and only the chosen token comes
back. Attaching a chain to a sequence makes llama.cpp re-plan its graph once, so a slot keeps its
chain across requests with the same sampling parameters and only resets it (a fresh random seed,
or the request's own seed again).
"""

from __future__ import annotations

import ctypes
import logging
from dataclasses import dataclass
from typing import Any

from docqa.engine.llama_context import LlamaContext
from docqa.generation import SamplingParams

logger = logging.getLogger(__name__)

# llama.cpp's "draw a seed from the system's entropy" value; every reset then draws a new one.
RANDOM_SEED = 0xFFFFFFFF


@dataclass(frozen=True)
class ChainKey:
    """What a chain computes; two requests with equal keys can share a slot's chain."""

    temperature: float
    top_k: int
    top_p: float
    min_p: float
    seed: int  # RANDOM_SEED unless the request fixed one

    @classmethod
    def of(cls, params: SamplingParams) -> ChainKey:
        seed = params.seed if params.seed >= 0 else RANDOM_SEED
        if params.temperature <= 0:
            return cls(0.0, 0, 1.0, 0.0, 0)  # greedy: the other parameters change nothing
        return cls(params.temperature, params.top_k, params.top_p, params.min_p, seed)


class Sampler:
    """One llama.cpp sampler chain."""

    def __init__(self, lib: Any, key: ChainKey) -> None:
        self._lib = lib
        self.key = key
        chain = lib.llama_sampler_chain_init(lib.llama_sampler_chain_default_params())
        if key.temperature <= 0:
            lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_greedy())
        else:
            if key.top_k > 0:
                lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_top_k(key.top_k))
            if key.top_p < 1.0:
                lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_top_p(key.top_p, 1))
            if key.min_p > 0.0:
                lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_min_p(key.min_p, 1))
            lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_temp(key.temperature))
            lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_dist(ctypes.c_uint32(key.seed).value))
        self.chain = chain

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
    """The chain of each engine slot (sequence ID), attached to the context when sampling on the GPU."""

    def __init__(self, llama: LlamaContext, on_backend: bool) -> None:
        self._llama = llama
        self.on_backend = on_backend
        self._chains: dict[int, Sampler] = {}
        self._attached: set[int] = set()
        self.chains_built = 0  # each one built while on the backend costs llama.cpp a graph re-plan

    def pick_slot(self, free_slots: list[int], params: SamplingParams) -> int:
        """A free slot whose chain this request can reuse, else one with no chain yet, else the first."""
        key = ChainKey.of(params)
        for slot in free_slots:
            if (chain := self._chains.get(slot)) is not None and chain.key == key:
                return slot
        return next((slot for slot in free_slots if slot not in self._chains), free_slots[0])

    def for_request(self, slot: int, params: SamplingParams) -> Sampler:
        key = ChainKey.of(params)
        current = self._chains.get(slot)
        if current is not None and current.key == key:
            current.reset()
            return current
        self._drop(slot)
        sampler = Sampler(self._llama.lib, key)
        self.chains_built += 1
        if self.on_backend:
            if self._llama.attach_sampler(slot, sampler.chain):
                self._attached.add(slot)
            else:  # llama.cpp cannot run this chain on its backend: it is sampled on the host
                logger.warning("llama.cpp cannot run sampler chain %s in its graph; sampling on the host", key)
                self.on_backend = False
        self._chains[slot] = sampler
        return sampler

    def release_all(self) -> None:
        """Detach and free every chain (teacher forcing needs raw logits; closing frees them)."""
        for slot in list(self._chains):
            self._drop(slot)

    def _drop(self, slot: int) -> None:
        sampler = self._chains.pop(slot, None)
        if sampler is None:
            return
        if slot in self._attached:
            self._llama.attach_sampler(slot, None)  # before freeing: the context holds the pointer
            self._attached.discard(slot)
        sampler.free()
