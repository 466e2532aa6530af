"""Generation: the `Generator` protocol and the serial llama.cpp generator.

`LlamaGenerator` owns one in-process llama.cpp model and context and one worker thread. Requests wait in
a bounded queue (beyond it: BusyError, HTTP 429) and run one at a time, so two calls never enter the
same llama.cpp context together. Tokens are pushed to the request's stream as they are sampled.
llama-cpp-python keeps the previous prompt's KV cache and reuses its longest common prefix, so a second
question over the same chunks skips most of the prompt. The continuous-batching engine will implement
the same protocol.
"""

from __future__ import annotations

import asyncio
import codecs
import logging
import random
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from docqa.errors import ConfigError, InvalidRequestError
from docqa.models import (
    AMX_FREE_CMAKE_ARGS,
    built_with_amx,
    cpu_threads,
    model_label,
    offloaded,
    resolve_model,
    unreadable_model,
    use_flash_attention,
)
from docqa.settings import LLMSettings, Settings
from docqa.streams import GenerationStream, GenEvent, WaitQueue

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SamplingParams:
    temperature: float
    top_p: float
    top_k: int
    min_p: float
    max_tokens: int
    seed: int = -1
    stop: tuple[str, ...] = ()
    thinking_budget: int | None = None  # reasoning tokens before the engine closes </think> itself
    ignore_eos: bool = False  # generate max_tokens whatever the model says (benchmarks)


# Qwen3's recommended sampling (model card): greedy decoding is discouraged in thinking mode.
THINKING_SAMPLING = SamplingParams(temperature=0.6, top_p=0.95, top_k=20, min_p=0.0, max_tokens=1024)
NON_THINKING_SAMPLING = SamplingParams(temperature=0.7, top_p=0.8, top_k=20, min_p=0.0, max_tokens=1024)


@dataclass(frozen=True)
class GeneratorInfo:
    model_id: str
    n_ctx: int
    prompt_format: str  # qwen3 | chatml | gemma | plain
    parallel: int = 1  # requests generated at once (the batching engine: the sequences its memory fit kept)


class Generator(Protocol):
    info: GeneratorInfo

    def count_tokens(self, prompt: str) -> int: ...

    def submit(
        self, prompt: str, params: SamplingParams, loop: asyncio.AbstractEventLoop | None = None
    ) -> GenerationStream: ...

    def close(self) -> None: ...


def detect_prompt_format(metadata: dict[str, str], configured: str) -> str:
    if configured != "auto":
        return configured
    template = metadata.get("tokenizer.chat_template", "")
    if metadata.get("general.architecture") == "qwen3" or ("<think>" in template and "<|im_start|>" in template):
        return "qwen3"
    if "<|im_start|>" in template:
        return "chatml"
    if "<start_of_turn>" in template:
        return "gemma"
    return "plain"


class StopMatcher:
    """Holds back text that could be the start of a stop string, and cuts at the first full match."""

    def __init__(self, stops: tuple[str, ...]) -> None:
        self._stops = [s for s in stops if s]
        self._pending = ""

    def feed(self, text: str) -> tuple[str, bool]:
        """Returns (text safe to emit now, whether a stop string was reached)."""
        self._pending += text
        if not self._stops:
            out, self._pending = self._pending, ""
            return out, False
        cut = min((i for i in (self._pending.find(s) for s in self._stops) if i >= 0), default=-1)
        if cut >= 0:
            out, self._pending = self._pending[:cut], ""
            return out, True
        hold = 0
        for s in self._stops:
            for n in range(min(len(s) - 1, len(self._pending)), 0, -1):
                if self._pending.endswith(s[:n]):
                    hold = max(hold, n)
                    break
        out = self._pending[: len(self._pending) - hold]
        self._pending = self._pending[len(out) :]
        return out, False

    def flush(self) -> str:
        out, self._pending = self._pending, ""
        return out


class OutputText:
    """A completion's text as it streams: token bytes decoded as UTF-8 incrementally (one character can
    span tokens), then held back where it could start a stop string and cut at the first one."""

    def __init__(self, stops: tuple[str, ...]) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._stops = StopMatcher(stops)

    def decode(self, piece: bytes) -> str:
        return self._decoder.decode(piece)

    def feed(self, text: str) -> tuple[str, bool]:
        """(text safe to emit now, whether a stop string was reached)."""
        return self._stops.feed(text)

    def tail(self) -> str:
        """What is still held back, at the end of a generation that did not stop on a stop string."""
        return self._stops.flush() + self._decoder.decode(b"", final=True)


@dataclass
class _Job:
    prompt: str
    params: SamplingParams
    stream: GenerationStream


class LlamaGenerator:
    """One llama.cpp model and context, served by one worker thread in arrival order."""

    def __init__(self, model_path: Path, settings: LLMSettings) -> None:
        import llama_cpp

        if built_with_amx() and not offloaded(settings.n_gpu_layers):
            # llama-cpp-python's Llama cannot turn weight repacking off, as the batching engine does
            raise ConfigError(
                "DOCQA_LLM_ENGINE=serial cannot run on the CPU with a llama.cpp built with its AMX kernels "
                "(they crash on some CPUs): use the default batching engine, or rebuild llama-cpp-python "
                f"with CMAKE_ARGS='{AMX_FREE_CMAKE_ARGS}'"
            )
        self._llama_cpp = llama_cpp
        n_batch = min(2048, settings.n_ctx)
        try:
            self._llm = llama_cpp.Llama(
                str(model_path),
                n_ctx=settings.n_ctx,
                n_batch=n_batch,
                n_ubatch=min(settings.n_ubatch, n_batch),
                n_gpu_layers=settings.n_gpu_layers,
                flash_attn=use_flash_attention(settings.flash_attn, settings.n_gpu_layers),
                n_threads=cpu_threads(settings.n_threads),
                n_threads_batch=cpu_threads(settings.n_threads),
                verbose=False,
            )
        except ValueError as exc:  # llama.cpp failed to load the model or to make its context
            raise unreadable_model(model_path) from exc
        metadata = dict(self._llm.metadata)
        self.info = GeneratorInfo(
            model_id=model_label(model_path),
            n_ctx=int(self._llm.n_ctx()),
            prompt_format=detect_prompt_format(metadata, settings.prompt_format),
        )
        self._jobs: WaitQueue[_Job] = WaitQueue(settings.max_queue)
        self._closing = False
        self._current: _Job | None = None
        self._worker = threading.Thread(target=self._run, name="docqa-generator", daemon=True)
        self._worker.start()
        logger.info(
            "generator %s loaded (n_ctx %d, %s prompts)", self.info.model_id, self.info.n_ctx, self.info.prompt_format
        )

    def tokenize(self, prompt: str) -> list[int]:
        # special=True: the template's control tokens (<|im_start|>, <think>, ...) become single IDs.
        # Document text is fenced by the prompt builder, which strips such markers from it first.
        return self._llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)

    def count_tokens(self, prompt: str) -> int:
        return len(self.tokenize(prompt))

    def submit(
        self, prompt: str, params: SamplingParams, loop: asyncio.AbstractEventLoop | None = None
    ) -> GenerationStream:
        stream = GenerationStream(loop)
        self._jobs.put(_Job(prompt, params, stream))
        return stream

    def close(self) -> None:
        with self._jobs.cond:
            self._closing = True
            if self._current is not None:
                self._current.stream.cancel()
        self._jobs.cancel_all()
        self._worker.join(timeout=5)

    def _next_job(self) -> _Job | None:
        with self._jobs.cond:
            while not self._closing:
                job = self._jobs.pop()
                if job is not None:
                    self._current = job
                    return job
                self._jobs.cond.wait()
            return None

    def _run(self) -> None:
        while (job := self._next_job()) is not None:
            try:
                self._generate(job)
            except Exception as exc:  # report to this request, keep serving the others
                logger.exception("generation failed")
                job.stream.put(GenEvent("failed", text=f"generation failed: {exc}"))

    def _generate(self, job: _Job) -> None:
        llm, params, stream = self._llm, job.params, job.stream
        tokens = self.tokenize(job.prompt)
        room = self.info.n_ctx - len(tokens)
        if room <= 0:
            raise InvalidRequestError(
                f"prompt of {len(tokens)} tokens does not fit the {self.info.n_ctx}-token context"
            )
        max_tokens = min(params.max_tokens, room)
        llm.set_seed(params.seed if params.seed >= 0 else random.randrange(2**31))
        vocab = llm._model.vocab
        output = OutputText(params.stop)
        produced = 0
        reason = "length"
        for token in llm.generate(
            tokens,
            top_k=params.top_k,
            top_p=params.top_p,
            min_p=params.min_p,
            temp=params.temperature,
            repeat_penalty=1.0,
            reset=True,
        ):
            if stream.cancelled:
                reason = "cancelled"
                break
            if self._llama_cpp.llama_vocab_is_eog(vocab, token):
                reason = "stop"
                break
            produced += 1
            text, stopped = output.feed(output.decode(llm.detokenize([token], special=False)))
            if text:
                stream.put(GenEvent("text", text=text))
            if stopped:
                reason = "stop"
                break
            if produced >= max_tokens:
                break
        tail = output.tail() if reason != "stop" else ""
        if tail:
            stream.put(GenEvent("text", text=tail))
        stream.put(GenEvent("finished", finish_reason=reason, prompt_tokens=len(tokens), completion_tokens=produced))


def load_generator(settings: Settings) -> Generator:
    """The generator the settings name (the batching engine by default), its model loaded now."""
    path = resolve_model(settings.llm.model, "generator", "DOCQA_LLM_MODEL", settings.models_path)
    if settings.llm.engine == "batching":
        from docqa.engine.batching import BatchingGenerator  # imports this module: only once it runs

        return BatchingGenerator(path, settings.llm)
    return LlamaGenerator(path, settings.llm)
