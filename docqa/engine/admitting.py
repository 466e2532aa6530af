"""Admission: requests from the head of the queue into free slots, as `scheduler.admission` decides.

The batching engine's half that touches the queue, the slots, the prefix cache and the sampler chains when a
request starts (BatchingGenerator takes it as a base class); the decisions themselves are pure functions of
plain numbers in docqa.engine.scheduler, unit-tested without a model. A fault while one request is admitted
fails that request alone.
"""

from __future__ import annotations

import logging
import threading

import numpy as np

from docqa.core.errors import InvalidRequestError
from docqa.core.streams import GenEvent, WaitQueue
from docqa.core.types import GeneratorInfo
from docqa.engine.prefix_cache import PrefixCache
from docqa.engine.sampling import SlotSamplers
from docqa.engine.scheduler import Admission, KVBudget, admission, twin_in_prefill
from docqa.engine.sequences import Request, RunningSequence
from docqa.engine.step_outputs import StepOutputs
from docqa.llama.context import LlamaContext
from docqa.llama.output_text import OutputText

logger = logging.getLogger(__name__)

INTERNAL_ERROR = "generation failed (an internal error; see the server log)"


class Admitting:
    """What admission reads and changes of the engine (set by BatchingGenerator.__init__), and how."""

    llama: LlamaContext
    samplers: SlotSamplers
    cache: PrefixCache
    outputs: StepOutputs
    info: GeneratorInfo
    kv_cells: int
    prompt_tokens_reused: int
    _waiting: WaitQueue[Request]
    _active: list[RunningSequence]
    _free_slots: list[int]
    _lock: threading.Condition

    def _evict(self, seq_id: int) -> None:
        raise NotImplementedError

    def _fail(self, sequences: list[RunningSequence], text: str) -> None:
        raise NotImplementedError

    def _kv_budget(self) -> KVBudget:
        cached = [(seq_id, len(self.cache.entries[seq_id].tokens)) for seq_id in self.cache.evictable()]
        reserved = sum(s.reserved for s in self._active)
        return KVBudget(self.kv_cells, self.llama.kv_unified, reserved, cached, len(self._active))

    def _admit(self) -> None:
        """Admit requests from the head of the queue while slots are free, as `scheduler.admission` decides.
        A fault while one is admitted (tokenising, its sampler chain, the prefix copy) fails that request
        alone and gives its slot back; the loop serves on."""
        while self._free_slots:
            with self._lock:
                request = self._waiting.peek()
            if request is None:
                return
            try:
                if not self._admit_head(request):
                    return
            except Exception:
                logger.exception("admitting a request failed: it ends with an error")
                self._drop_admission(request)

    def _admit_head(self, request: Request) -> bool:
        """Start, refuse or keep waiting the request at the head of the queue; False when it waits."""
        if request.tokens is None:  # once: a request can wait at the head of the queue many steps
            request.tokens = np.asarray(self.llama.tokenize(request.prompt), dtype=np.int32)
        prompt = request.tokens
        entry, shared = self.cache.lookup(prompt)
        decision = admission(
            prompt_tokens=len(prompt),
            max_tokens=request.params.max_tokens,
            context_tokens=self.info.n_ctx,
            cached_prefix=(None if entry is None else entry.seq_id, shared),
            twin_in_prefill=self.cache.can_keep(len(prompt))
            and twin_in_prefill([s.prompt for s in self._active if not s.prefilled], prompt, shared),
            kv=self._kv_budget(),
        )
        for victim in decision.evict:
            self._evict(victim)
        if decision.verdict == "refuse":
            self._reject(request, decision.reason)
        elif decision.verdict == "wait":
            return False
        else:
            self._start(request, prompt, decision)
        return True

    def _start(self, request: Request, prompt: np.ndarray, decision: Admission) -> None:
        """Give an admitted request a slot, its sampler chain and the cached prefix it starts from. The
        sequence is running from the moment it holds the slot, so a fault after that releases the slot."""
        self._pop_waiting()
        slot = self.samplers.pick_slot(self._free_slots, request.params)
        reuse = decision.reuse if decision.reuse_from is not None else 0  # 0 without a prefix to start from
        seq = RunningSequence(
            request=request,
            slot=slot,
            prompt=prompt,
            pending=prompt[reuse:].tolist(),
            n_past=reuse,
            reserved=decision.need,
            max_tokens=decision.max_tokens,
            output=OutputText(request.params.stop),
        )
        self._free_slots.remove(slot)
        self._active.append(seq)
        self.samplers.for_request(slot, request.params)
        if decision.reuse_from is not None and reuse > 0:
            self.llama.seq_copy(decision.reuse_from, slot, reuse)
            self.prompt_tokens_reused += reuse

    def _drop_admission(self, request: Request) -> None:
        """Fail a request whose admission raised: release its slot if it took one, else take it off the queue."""
        seq = next((s for s in self._active if s.request is request), None)
        if seq is not None:
            self._fail([seq], INTERNAL_ERROR)
            return
        with self._lock:
            if self._waiting.peek() is request:
                self._waiting.pop()
        self.outputs.emit(request.stream, GenEvent("failed", text=INTERNAL_ERROR))

    def _pop_waiting(self) -> None:
        with self._lock:
            self._waiting.pop()

    def _reject(self, request: Request, reason: str) -> None:
        """Take the request at the head of the queue and fail it: it can never run."""
        self._pop_waiting()
        error = InvalidRequestError(reason)
        self.outputs.emit(request.stream, GenEvent("failed", text=str(error), error=error))
