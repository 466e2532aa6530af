"""The serial llama.cpp generator: one request at a time (`DOCQA_LLM_ENGINE=serial`).

`LlamaGenerator` owns one in-process llama.cpp model and context and one worker thread. Requests wait in
a bounded queue (beyond it: BusyError, HTTP 429) and run one at a time, so two calls never enter the
same llama.cpp context together. Tokens are pushed to the request's stream as they are sampled.
llama-cpp-python keeps the previous prompt's KV cache and reuses its longest common prefix, so a second
question over the same chunks skips most of the prompt. The continuous-batching engine (docqa.engine) implements
the same protocol (docqa.core.protocols.Generator).
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
from dataclasses import dataclass
from pathlib import Path

from docqa.core.errors import ConfigError, InvalidRequestError
from docqa.core.sampling_params import SamplingParams
from docqa.core.settings import LLMSettings
from docqa.core.streams import GenerationStream, GenEvent, WaitQueue
from docqa.core.types import GeneratorInfo, GeneratorStats
from docqa.llama.context import long_context_fields, yarn_of
from docqa.llama.memory_fit import SMALL_PASS
from docqa.llama.model_files import (
    AMX_FREE_CMAKE_ARGS,
    built_with_amx,
    cpu_threads,
    detect_prompt_format,
    model_label,
    offloaded,
    unreadable_model,
    use_flash_attention,
)
from docqa.llama.output_text import OutputText

logger = logging.getLogger(__name__)


@dataclass
class _Job:
    prompt: str
    params: SamplingParams
    stream: GenerationStream


def _flash_attention(settings: LLMSettings) -> bool:
    """Flash attention on a GPU, or as configured; on with a q8_0 KV cache, which llama.cpp quantizes only
    with it (off by the settings there: a clear error, not llama.cpp's failure to make the context)."""
    if settings.kv_cache_type != "q8_0":
        return use_flash_attention(settings.flash_attn, settings.n_gpu_layers)
    if settings.flash_attn is False:
        raise ConfigError(
            "DOCQA_LLM_KV_CACHE_TYPE=q8_0 needs flash attention: unset DOCQA_LLM_FLASH_ATTN or set it true"
        )
    return True


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
                n_ubatch=min(settings.n_ubatch or SMALL_PASS[1], n_batch),
                n_gpu_layers=settings.n_gpu_layers,
                flash_attn=_flash_attention(settings),
                n_threads=cpu_threads(settings.n_threads),
                n_threads_batch=cpu_threads(settings.n_threads),
                verbose=False,
                **long_context_fields(settings.kv_cache_type, yarn_of(settings)),
            )
        except ValueError as exc:  # llama.cpp failed to load the model or to make its context
            raise unreadable_model(model_path) from exc
        metadata = dict(self._llm.metadata)
        self.info = GeneratorInfo(
            model_id=model_label(model_path),
            n_ctx=int(self._llm.n_ctx()),
            prompt_format=detect_prompt_format(metadata, settings.prompt_format),
            on_cpu=not offloaded(settings.n_gpu_layers),
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

    def stats(self) -> GeneratorStats:
        with self._jobs.cond:
            return GeneratorStats(kind="serial", running=int(self._current is not None), waiting=len(self._jobs))

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
            except InvalidRequestError as exc:  # the request can never run (its prompt does not fit)
                job.stream.put(GenEvent("failed", text=str(exc), error=exc))
            except Exception as exc:  # report to this request, keep serving the others
                logger.exception("generation failed")
                job.stream.put(GenEvent("failed", text=f"generation failed: {exc}"))
            finally:
                with self._jobs.cond:
                    self._current = None

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
