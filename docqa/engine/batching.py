"""Continuous batching: many concurrent requests share one llama.cpp context and one decode per step.

Each step builds ONE batch: the next token of every sequence that is generating, and slices of the
prompts of newly admitted ones (chunked prefill; the shortest remaining prompt first, `step_order`),
within `n_batch` tokens, so a long prompt never stalls the other streams; laid out by slot so that
llama.cpp reads it in as few passes as it can (`step_layout`). One `llama_decode`, then
each sequence is sampled with its own sampler chain. On a GPU, when the next step holds only the next
token of every sequence, it is started as soon as the tokens are drawn, and their text is made and
pushed to the streams while the GPU decodes it. Finished or cancelled sequences free their KV cells
immediately. Admission waits until the KV cells a request may need are free.

Prompt prefixes are reused: a finished prompt's cells stay under a cache sequence ID, and a new
prompt starts from the cached one with the longest common prefix (`llama_memory_seq_cp`).
"""

from __future__ import annotations

import asyncio
import bisect
import logging
import os
import threading
import time
from pathlib import Path

import numpy as np

from docqa.core.sampling_params import SamplingParams
from docqa.core.settings import LLMSettings
from docqa.core.streams import GenerationStream, GenEvent, WaitQueue
from docqa.core.types import GeneratorInfo, GeneratorStats
from docqa.engine.admitting import INTERNAL_ERROR, Admitting
from docqa.engine.prefix_cache import PrefixCache
from docqa.engine.prompt_tokens import TokenizedPrompts
from docqa.engine.sampling import SlotSamplers
from docqa.engine.scheduler import StepPlanner
from docqa.engine.sequences import Request, RunningSequence
from docqa.engine.step_layout import fill_batch, filler_positions, lay_out, passes, remove_fillers
from docqa.engine.step_order import step_order
from docqa.engine.step_outputs import StepOutputs
from docqa.engine.step_timing import StepTiming
from docqa.engine.teacher_forcing import teacher_forced_logits
from docqa.llama.context import LlamaContext
from docqa.llama.model_files import batched_sampling_from, detect_prompt_format, model_label, offloaded

logger = logging.getLogger(__name__)


class BatchingGenerator(Admitting):
    """The `Generator` protocol, served by continuous batching over `n_parallel` sequences."""

    close_wait_s = 30.0  # how long close() waits for the engine thread before it frees nothing

    def __init__(self, model_path: Path, settings: LLMSettings) -> None:
        self._settings = settings
        self.llama = LlamaContext.for_engine(model_path, settings)
        # fewer than the settings ask where the GPU has too little memory for them (LlamaContext._plan_kv)
        n_parallel, n_cache = self.llama.n_parallel, self.llama.n_cache
        on_backend = self.llama.backend_sampling
        workers = min(n_parallel, os.cpu_count() or 1)
        batched_from = batched_sampling_from(settings.batched_sampling_from, settings.n_gpu_layers)
        self.samplers = SlotSamplers(
            self.llama, on_backend, workers, batched_from, settings.block_top_k, settings.block_top_k_short_sorts
        )
        self.timing = StepTiming()
        self.kv_cells = self.llama.n_ctx
        self.info = GeneratorInfo(
            model_id=model_label(model_path),
            n_ctx=min(settings.n_ctx, self.llama.n_ctx_seq),
            prompt_format=detect_prompt_format(self.llama.metadata, settings.prompt_format),
            parallel=n_parallel,
            on_cpu=not offloaded(settings.n_gpu_layers),
        )
        self._free_slots = list(range(n_parallel))
        self.cache = PrefixCache(
            seq_ids=list(range(n_parallel, n_parallel + n_cache)),
            budget_tokens=(
                settings.prefix_cache_tokens
                if settings.prefix_cache_tokens is not None
                else (self.kv_cells // 4 if settings.kv_unified else self.llama.n_ctx_seq * n_cache)
            ),
        )
        self._waiting: WaitQueue[Request] = WaitQueue(settings.max_queue)
        self._active: list[RunningSequence] = []
        self.outputs = StepOutputs(self.llama)
        self._launched: list[tuple[RunningSequence, int]] | None = None  # a step started ahead: its outputs
        # On a GPU llama_decode returns before the GPU is done, so a step launched ahead runs while the
        # host makes the last tokens' text; on the CPU it computes in the call, so making the text after
        # it would only hold each token back a step: there each token's text is made when it is drawn.
        self.launch_ahead = offloaded(settings.n_gpu_layers)
        self._fill_passes = settings.pass_fillers and not self.llama.kv_unified
        self.planner = StepPlanner(
            self.llama.n_batch,
            settings.prompt_steps_per_decode or (4 if self.launch_ahead else 1),
            settings.prompt_step_ends_with_prompt,
        )
        self.prompt_tokens_reused = 0  # prompt tokens taken from cached KV instead of evaluated
        # counted or made in the submitting thread, used at admission (through self.llama, which tests replace)
        self.tokenized = TokenizedPrompts(lambda text: self.llama.tokenize(text))
        self._lock = self._waiting.cond
        self._step_lock = threading.Lock()
        self._closing = False
        self._thread = threading.Thread(target=self._loop, name="docqa-batching", daemon=True)
        self._thread.start()
        report = self.memory_report()
        logger.info(
            "batching engine: %d parallel sequences of up to %d tokens, %d KV cells (%.2f GiB), prefix cache %d "
            "tokens, sampling on %s",
            n_parallel,
            self.info.n_ctx,
            self.kv_cells,
            report["kv_cache_bytes"] / 2**30,
            self.cache.budget_tokens,
            "the backend" if on_backend else "the host",
        )

    # --- the Generator protocol ----------------------------------------------------------------

    def count_tokens(self, prompt: str) -> int:
        return self.tokenized.count(prompt)

    def submit(
        self,
        prompt: str,
        params: SamplingParams,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> GenerationStream:
        stream = GenerationStream(loop)
        # Requests that a free slot will take at the next step are not waiting in the queue.
        request = Request(prompt, params, stream, tokens=self.tokenized.take_or_make(prompt))
        self._waiting.put(request, spare=len(self._free_slots))
        return stream

    def close(self) -> None:
        with self._lock:
            self._closing = True
        self._waiting.cancel_all()
        self._thread.join(timeout=self.close_wait_s)
        if self._thread.is_alive():  # a decode still running in llama.cpp: freeing its context would crash it
            logger.error(
                "the engine thread is still at work after %g s: its llama.cpp context is left to the process's end",
                self.close_wait_s,
            )
            return
        self.samplers.close()
        self.llama.close()

    def stats(self) -> GeneratorStats:
        return GeneratorStats(kind="batching", **self.memory_report())

    def memory_report(self) -> dict[str, int]:
        with self._lock:
            used = sum(s.n_past for s in self._active)
            running = len(self._active)
            waiting = len(self._waiting)
        return {
            "kv_cells": self.kv_cells,
            "kv_cells_asked": self.llama.kv_cells_asked,  # more than kv_cells: cut to fit the GPU
            "context_tokens": self.info.n_ctx,  # what one request's prompt and answer may use
            "parallel_sequences": self.llama.n_parallel,  # fewer than DOCQA_LLM_N_PARALLEL: cut to fit the GPU
            "cached_prompt_slots": self.llama.n_cache,
            "kv_cache_bytes": self.kv_cells * self.llama.kv_bytes_per_token(),
            "kv_cells_in_sequences": used,
            "prefix_cache_tokens": self.cache.tokens_held(),
            "running": running,
            "waiting": waiting,
            "prompt_tokens_reused": self.prompt_tokens_reused,
            "sampling_on_backend": int(self.samplers.on_backend),
        }

    # --- the scheduler loop --------------------------------------------------------------------

    def _loop(self) -> None:
        while True:
            with self._lock:
                while not self._closing and not self._waiting and not self._active:
                    self._lock.wait()
                if self._closing:
                    for seq in self._active:
                        seq.request.stream.cancel()
            with self._step_lock:
                if self._launched is None:  # admitting touches the KV cache, which a running step uses
                    self._admit()
                if self._active:
                    try:
                        self._step()
                    except Exception:  # a fault in one step fails the requests it held, not the engine
                        logger.exception("a decode step failed: its %d requests end with an error", len(self._active))
                        self.llama.batch.clear()
                        self._launched = None
                        self._fail(list(self._active), INTERNAL_ERROR)
                self.outputs.flush()
                if self._closing and not self._active:
                    return

    def _step(self) -> None:
        """One decode step: launch it (unless the last step launched it ahead), make the text of the
        tokens drawn last step while the GPU works, wait for this step's tokens and accept them."""
        ready = self._launched
        self._launched = None
        if ready is None:
            for seq in [s for s in self._active if s.request.stream.cancelled]:
                self._finish(seq, "cancelled")
            if not self._active:
                return
            self.samplers.adapt(len(self._active))
            ready = self._launch(step_order(self._active))
            if ready is None:
                return
        t_window = time.perf_counter()
        self.outputs.make_due_text()
        self.outputs.flush()
        t_waiting = time.perf_counter()
        tokens = self.samplers.sample([(seq.slot, index) for seq, index in ready])
        t_sampled = time.perf_counter()
        for (seq, _), token in zip(ready, tokens, strict=True):
            self._accept(seq, token)
        self.timing.record_wait(t_window, t_waiting, t_sampled, len(tokens))
        self._launch_ahead()

    def _launch(self, order: list[RunningSequence]) -> list[tuple[RunningSequence, int]] | None:
        """Fill the batch from the sequences' pending tokens, in this order, within n_batch, and start
        llama_decode (on a GPU it returns before the GPU is done). The sequences with an output this
        step and their batch index; None when the decode failed."""
        t_start = time.perf_counter()
        step = self.planner.plan([len(s.pending) for s in order])
        fill = filler_positions(self._active, self.llama.n_ctx_seq) if self._fill_passes else None
        entries = lay_out(order, step, fill, self.llama.n_batch)
        plan = fill_batch(self.llama.batch, order, entries)
        t_built = time.perf_counter()
        rows, n_tokens = step.rows, self.llama.batch.n_tokens
        rc = self.llama.decode()
        fillers = remove_fillers(self.llama, entries)
        self.timing.record_launch(t_start, t_built, time.perf_counter(), rows == len(plan), rows, n_tokens - rows)
        self.timing.record_layout(passes(entries, self.llama.n_ubatch, not self.llama.kv_unified), fillers)
        if rc != 0:
            self._on_decode_failure(rc, plan)
            return None
        ready: list[tuple[RunningSequence, int]] = []
        for seq, take, logits_index in plan:
            del seq.pending[:take]
            seq.n_past += take
            if logits_index is None:  # a long prompt, read a slice a step: say how far (on a CPU, minutes)
                progress = GenEvent("progress", prompt_tokens=len(seq.prompt), prompt_done=seq.n_past)
                self.outputs.emit(seq.request.stream, progress)
                continue
            if not seq.prefilled:
                seq.prefilled = True
                self._remember_prompt(seq)
            ready.append((seq, logits_index))
        return ready

    def _launch_ahead(self) -> None:
        """Start the next step before this step's text is made when it holds just the next token of
        every running sequence, so that the GPU decodes while the host makes text and wakes streams.
        Not when a request waits to be admitted, or a prompt to be evaluated: those touch the KV cache
        and the sampler chains, which a running step uses. (A sequence that stops or is cancelled
        meanwhile ends when its token comes back.)"""
        if not self.launch_ahead or self._closing or not self._active or (self._free_slots and len(self._waiting)):
            return
        if any(len(seq.pending) != 1 for seq in self._active):
            return
        self.samplers.adapt(len(self._active))
        self._launched = self._launch(list(self._active))
        if self._launched is not None:
            self.timing.launched_ahead += 1

    def _accept(self, seq: RunningSequence, token: int) -> None:
        """Take a drawn token: finish the sequence, or make it the next input. With steps launched
        ahead its text is made while the next step decodes (StepOutputs.defer), unless the sequence ends
        here or its text decides the next input (a thinking budget still open)."""
        if seq.stop_due:  # its text stopped last step: this token lies past the stop
            self._finish(seq, "stop")
            return
        if seq.request.stream.cancelled:
            self._finish(seq, "cancelled")
            return
        if self.llama.is_end_of_generation(token) and not seq.request.params.ignore_eos:
            self._finish(seq, "stop")
            return
        seq.produced += 1
        if self.launch_ahead and seq.produced < seq.max_tokens and not seq.budget_open:
            seq.pending = [token]
            self.outputs.defer(seq, token)
            return
        next_input, stopped = self.outputs.text_now(seq, token)
        if stopped:
            self._finish(seq, "stop")
        elif seq.produced >= seq.max_tokens:
            self._finish(seq, "length")
        else:
            seq.pending = next_input

    def _remember_prompt(self, seq: RunningSequence) -> None:
        """Keep this prompt's KV cells under a cache sequence so a later prompt can start from them."""
        if self.cache.covers(seq.prompt):
            return
        seq_id, evict = self.cache.plan_insert(seq.prompt)
        if seq_id is None:
            return
        for victim in evict:
            self._evict(victim)
        self.llama.seq_copy(seq.slot, seq_id, len(seq.prompt))
        self.cache.insert(seq_id, seq.prompt)

    def _evict(self, seq_id: int) -> None:
        self.llama.seq_remove(seq_id)
        self.cache.remove(seq_id)

    def _finish(self, seq: RunningSequence, reason: str) -> None:
        self.outputs.finished(seq, reason)
        self._release(seq)

    def _release(self, seq: RunningSequence) -> None:
        """Free a sequence's KV cells and slot; its sampler chain leaves llama.cpp's graph."""
        self.llama.seq_remove(seq.slot)
        self.samplers.release(seq.slot)
        seq.finished = True
        self._active.remove(seq)
        bisect.insort(self._free_slots, seq.slot)  # lowest first: running slots stay close (step_layout)

    def _on_decode_failure(self, rc: int, plan: list[tuple[RunningSequence, int, int | None]]) -> None:
        self.outputs.make_due_text()  # what was accepted before comes first
        if rc == 1 and self.cache.evictable():  # no room in the KV cache: drop cached prefixes, retry
            for seq_id in self.cache.evictable():
                self._evict(seq_id)
            return
        logger.error("llama_decode failed (%d) for a batch of %d sequences", rc, len(plan))
        self._fail([seq for seq, _, _ in plan], f"generation failed (llama_decode returned {rc})")

    def _fail(self, sequences: list[RunningSequence], text: str) -> None:
        failed = GenEvent("failed", text=text)
        for seq in sequences:
            self.outputs.emit(seq.request.stream, failed)
            self._release(seq)

    # --- for tests: logits of whole sequences, evaluated together or alone --------------------

    def teacher_forced_logits(self, sequences: list[list[int]]) -> list[np.ndarray]:
        """Feed each token list as one sequence, all in one batch, and return every position's logits."""
        with self._step_lock:
            if self._active:
                raise RuntimeError("teacher forcing needs an idle engine")
            return teacher_forced_logits(self.llama, self.samplers, sequences, len(self._free_slots))
