"""A scripted stand-in for the generator, for API and service contract tests that must not pay for a
model: it implements docqa.core.protocols.Generator in pure Python, streams its script a word at a
time from a worker thread (as the real generators stream from theirs), and keeps the same bounded
queue, so 429s, cancellation and streaming behave as they do over llama.cpp."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass

from docqa.core.sampling_params import SamplingParams
from docqa.core.streams import GenerationStream, GenEvent, WaitQueue
from docqa.core.types import GeneratorInfo, GeneratorStats

_PIECES = re.compile(r"\s*\S+")
# What the fake_generator fixture says to every prompt: a think block, then an answer citing [1].
SCRIPT = "<think>\nThe agreement names its law.\n</think>\n\nThe agreement is governed by the laws of England [1]."


@dataclass
class _Job:
    prompt: str
    params: SamplingParams
    stream: GenerationStream


class FakeGenerator:
    def __init__(
        self,
        script: str,
        *,
        n_ctx: int = 8192,
        max_queue: int = 4,
        prompt_format: str = "qwen3",
        reply: Callable[[str], str] | None = None,
        parallel: int = 1,
    ) -> None:
        self.info = GeneratorInfo(
            model_id="fake-generator", n_ctx=n_ctx, prompt_format=prompt_format, parallel=parallel
        )
        self.script = script
        self.reply = reply  # the script for each prompt, where a test answers prompts differently
        self.prompts: list[str] = []  # every prompt submitted, in order
        self.params: list[SamplingParams] = []  # and how each was to be sampled
        self.running = threading.Event()  # set while a job generates
        self.paused = threading.Event()  # set: the worker takes no new job (to hold the queue full)
        self._jobs: WaitQueue[_Job] = WaitQueue(max_queue)
        self._closing = False
        self._worker = threading.Thread(target=self._run, name="fake-generator", daemon=True)
        self._worker.start()

    def count_tokens(self, prompt: str) -> int:
        return len(_PIECES.findall(prompt)) + 1

    def submit(
        self, prompt: str, params: SamplingParams, loop: asyncio.AbstractEventLoop | None = None
    ) -> GenerationStream:
        stream = GenerationStream(loop)
        self._jobs.put(_Job(prompt, params, stream))
        self.prompts.append(prompt)
        self.params.append(params)
        return stream

    def live_waiting(self) -> int:
        """Queued requests whose client is still there (the queue drops the others when it next looks)."""
        return self._jobs.live()

    def stats(self) -> GeneratorStats:
        return GeneratorStats(kind="fake", running=int(self.running.is_set()), waiting=len(self._jobs))

    def close(self) -> None:
        with self._jobs.cond:
            self._closing = True
        self._jobs.cancel_all()
        self._worker.join(timeout=5)

    def _next(self) -> _Job | None:
        with self._jobs.cond:
            while not self._closing:
                job = None if self.paused.is_set() else self._jobs.pop()
                if job is not None:
                    self.running.set()
                    return job
                self._jobs.cond.wait(timeout=0.02)
            return None

    def _run(self) -> None:
        while (job := self._next()) is not None:
            try:
                self._generate(job)
            finally:
                self.running.clear()

    def _generate(self, job: _Job) -> None:
        script = self.reply(job.prompt) if self.reply is not None else self.script
        pieces = _PIECES.findall(script)[: job.params.max_tokens]
        reason = "length" if len(pieces) < len(_PIECES.findall(script)) else "stop"
        produced = 0
        for piece in pieces:
            if job.stream.cancelled:
                reason = "cancelled"
                break
            job.stream.put(GenEvent("text", text=piece))
            produced += 1
        job.stream.put(
            GenEvent(
                "finished",
                finish_reason=reason,
                prompt_tokens=self.count_tokens(job.prompt),
                completion_tokens=produced,
            )
        )
