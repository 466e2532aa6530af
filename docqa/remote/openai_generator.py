"""A generator in another process: an OpenAI-compatible server (vLLM, SGLang, llama.cpp's server,
llama-cpp-python's, a docqa GPU node), chosen by DOCQA_LLM_ENDPOINT.

docqa renders the prompt itself (the same template, <think> handling and stop strings as in-process) and
sends it to the server's `/completions` route, streamed; the server only samples. So one GPU service can
serve several API processes, and FP8 weights or tensor parallelism are the server's business.

How a request goes: `submit` takes one of DOCQA_LLM_ENDPOINT_MAX_IN_FLIGHT places (none free: BusyError,
HTTP 429, at once: vLLM's own queue has no bound); a thread opens the request (a connection refused is tried
again once, before any token) and reads the server-sent events into the request's stream. `submit` waits up to
DOCQA_LLM_ENDPOINT_STATUS_WAIT_S for the server's status (docqa.remote.opening): a 429 or 503 within it
becomes docqa's 429 with its Retry-After, a failure an error naming the endpoint; after it, they end the
stream with an error event instead. A wait past DOCQA_LLM_ENDPOINT_TIMEOUT_S fails naming the endpoint. A
client that goes away cancels the stream, and the thread closes the upstream request within one event.

Not done here: a server that offers only chat completions, and the thinking budget (the in-process batching
engine closes </think> itself at the budget; here the server's max_tokens bounds reasoning and answer).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import httpx

from docqa.core.errors import BusyError, DocqaError, EndpointError, EndpointTimeoutError
from docqa.core.llm_settings import PROMPT_FORMATS
from docqa.core.sampling_params import THINKING_CUTOFF, SamplingParams
from docqa.core.streams import GenerationStream, GenEvent
from docqa.core.types import GeneratorInfo, GeneratorStats
from docqa.remote.chat_messages import ReasoningText, to_messages
from docqa.remote.opening import Opening

logger = logging.getLogger(__name__)

CONNECT_ATTEMPTS = 2  # a refused connection is tried once more (a server restarting), never after a token
RETRY_PAUSE_S = 0.5


PING_TIMEOUT_S = 3.0  # /health's look at the endpoint: a load balancer waits a few seconds at most


class OpenAIGenerator:
    """The Generator protocol over an OpenAI-compatible `/completions` route."""

    def __init__(
        self,
        base_url: str,
        *,
        model: str | None,
        api_key: str | None,
        timeout_s: float,
        max_in_flight: int,
        n_ctx: int,
        prompt_format: str,
        count_tokens: Callable[[str], int],
        tokenizer_label: str,
        api: str = "completions",
        status_wait_s: float = 1.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.chat = api == "chat"  # a chat-only server: messages out, reasoning deltas in (chat_messages)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0))
        self._timeout_s = timeout_s
        self._status_wait_s = status_wait_s
        self._client = httpx.Client(headers=headers, timeout=self._timeout)
        self.model = model or self._first_model()
        if prompt_format == "auto":  # the served model's own format, where the server is a docqa node
            prompt_format = self._served_format()
        self.info = GeneratorInfo(
            model_id=f"{self.model}@{self.base_url}", n_ctx=n_ctx, prompt_format=prompt_format, parallel=max_in_flight
        )
        self._count_tokens = count_tokens
        self._places = threading.BoundedSemaphore(max_in_flight)
        self._max_in_flight = max_in_flight
        self._lock = threading.Lock()
        self._running = 0
        logger.info(
            "generating through %s (model %s, %s prompts, tokens counted by %s)",
            self.base_url,
            self.model,
            prompt_format,
            tokenizer_label,
        )

    def count_tokens(self, prompt: str) -> int:
        return self._count_tokens(prompt)

    def submit(
        self, prompt: str, params: SamplingParams, loop: asyncio.AbstractEventLoop | None = None
    ) -> GenerationStream:
        if not self._places.acquire(blocking=False):
            raise BusyError(f"{self._max_in_flight} requests are already open on {self.base_url}; retry shortly")
        try:
            body = self._chat_body(prompt, params) if self.chat else self._body(prompt, params)
        except BaseException:
            self._places.release()
            raise
        stream, opening = GenerationStream(loop), Opening()
        with self._lock:
            self._running += 1
        relay = threading.Thread(
            target=self._open_and_relay,
            args=(body, stream, prompt, params, opening),
            name="docqa-endpoint",
            daemon=True,
        )
        relay.start()
        error = opening.wait(self._status_wait_s)
        if error is not None:
            raise error
        return stream

    def stats(self) -> GeneratorStats:
        with self._lock:
            return GeneratorStats(kind="endpoint", running=self._running, waiting=0)

    def close(self) -> None:
        self._client.close()

    def _body(self, prompt: str, params: SamplingParams) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "prompt": prompt,
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        # Sampling options outside OpenAI's own set: vLLM, SGLang and llama.cpp's servers read them. No
        # repetition penalty, as in-process (llama-cpp-python's server would apply 1.1 by default).
        body.update({"top_k": params.top_k, "min_p": params.min_p, "repeat_penalty": 1.0, "repetition_penalty": 1.0})
        if params.seed >= 0:
            body["seed"] = params.seed
        if params.stop:
            body["stop"] = list(params.stop)
        if params.ignore_eos:
            body["ignore_eos"] = True
        return body

    def _chat_body(self, prompt: str, params: SamplingParams) -> dict[str, Any]:
        """The same request for `/chat/completions`: the prompt's turns as messages, Qwen3's thinking switch
        as chat_template_kwargs (vLLM's and SGLang's way)."""
        messages, thinking = to_messages(prompt, self.info.prompt_format)
        body = self._body(prompt, params)
        del body["prompt"]
        body["messages"] = messages
        if thinking is not None:
            body["chat_template_kwargs"] = {"enable_thinking": thinking}
        return body

    def _open(self, body: dict[str, Any]) -> httpx.Response:
        """The upstream response, its status checked; the body is read by _relay."""
        url = f"{self.base_url}/{'chat/completions' if 'messages' in body else 'completions'}"
        for attempt in range(1, CONNECT_ATTEMPTS + 1):
            try:
                response = self._client.send(self._client.build_request("POST", url, json=body), stream=True)
            except httpx.ConnectError as exc:
                if attempt < CONNECT_ATTEMPTS:
                    time.sleep(RETRY_PAUSE_S)
                    continue
                raise EndpointError(f"LLM endpoint {self.base_url} unreachable: {exc}") from exc
            except httpx.TimeoutException as exc:
                raise self._timed_out("start answering") from exc
            if response.status_code == 200:
                return response
            detail = _error_text(response)
            if response.status_code in (429, 503):
                busy = BusyError(f"LLM endpoint {self.base_url} is busy ({response.status_code}): {detail}")
                busy.retry_after_s = _retry_after(response)
                raise busy
            raise EndpointError(f"LLM endpoint {self.base_url} answered {response.status_code}: {detail}")
        raise AssertionError("unreachable")

    def ping(self, timeout_s: float = PING_TIMEOUT_S) -> None:
        """EndpointError unless the endpoint lists its models within timeout_s (for /health)."""
        try:
            response = self._client.get(f"{self.base_url}/models", timeout=timeout_s)
        except httpx.HTTPError as exc:
            raise EndpointError(f"LLM endpoint {self.base_url} unreachable: {type(exc).__name__}") from exc
        if response.status_code != 200:
            raise EndpointError(f"LLM endpoint {self.base_url} answered {response.status_code} to GET /models")

    def _timed_out(self, what: str) -> EndpointTimeoutError:
        return EndpointTimeoutError(
            f"LLM endpoint {self.base_url} did not {what} within {self._timeout_s:g} s (DOCQA_LLM_ENDPOINT_TIMEOUT_S)"
        )

    def _open_and_relay(
        self, body: dict[str, Any], stream: GenerationStream, prompt: str, params: SamplingParams, opening: Opening
    ) -> None:
        """Open the request, say how that went to the submitter still waiting (docqa.remote.opening), or else
        to the stream, then relay its events."""
        try:
            response = self._open(body)
        except Exception as exc:
            failure = exc if isinstance(exc, DocqaError) else EndpointError(f"LLM endpoint {self.base_url}: {exc}")
            self._release()
            if not opening.settle(failure):
                stream.put(GenEvent("failed", text=str(failure), error=failure))
            return
        opening.settle()
        self._relay(response, stream, prompt, params)

    def _release(self) -> None:
        with self._lock:
            self._running -= 1
        self._places.release()

    def _relay(self, response: httpx.Response, stream: GenerationStream, prompt: str, params: SamplingParams) -> None:
        """Server-sent events to the stream, until [DONE], an error or the stream's cancellation. Token counts
        are the server's usage; a server that sends none (llama-cpp-python's) is counted here: the prompt by
        the tokenizer, the answer by its events (one token each from the servers measured).

        The thinking budget, as in-process: once the reasoning has run `thinking_budget` tokens without
        `</think>`, this request is closed and a continuation sent (the prompt, the text so far and Qwen's
        closing sentence with `</think>`), whose answer streams on for the tokens left."""
        # A chat request cannot continue an answer: there the thinking budget is the server's to keep.
        segment = _Segment(prompt, None if self.chat else params.thinking_budget)
        used = 0
        try:
            while True:
                self._read(response, stream, segment)
                if not segment.over_budget or segment.reason == "cancelled":
                    break
                response.close()
                used += segment.pieces + self._count_tokens(THINKING_CUTOFF)
                stream.put(GenEvent("text", text=THINKING_CUTOFF))
                if used >= params.max_tokens:
                    segment.reason = "length"
                    break
                segment = segment.continued(used)
                body = self._body(segment.prompt, replace(params, max_tokens=params.max_tokens - used))
                response = self._open(body)
            stream.put(
                GenEvent(
                    "finished",
                    finish_reason=segment.reason,
                    prompt_tokens=int(segment.first_usage.get("prompt_tokens") or self._count_tokens(prompt)),
                    completion_tokens=used + int(segment.usage.get("completion_tokens") or segment.pieces),
                )
            )
        except httpx.TimeoutException:
            timed_out = self._timed_out("send the next token")
            stream.put(GenEvent("failed", text=str(timed_out), error=timed_out))
        except (httpx.HTTPError, ValueError, DocqaError) as exc:
            failed = EndpointError(f"LLM endpoint {self.base_url} failed mid-answer: {exc}")
            stream.put(GenEvent("failed", text=str(failed), error=failed))
        finally:
            response.close()  # a cancelled request is closed upstream too
            self._release()

    def _read(self, response: httpx.Response, stream: GenerationStream, segment: _Segment) -> None:
        """One upstream request's events into the stream (until its end, a cancel or the budget)."""
        for event in _events(response.iter_lines()):
            if stream.cancelled:
                segment.reason = "cancelled"
                return
            if event.get("usage"):
                segment.usage = event["usage"]
            for choice in event.get("choices") or []:
                text = segment.reasoning.text(choice) if self.chat else choice.get("text")
                if text:
                    segment.add(text)
                    stream.put(GenEvent("text", text=text))
                if choice.get("finish_reason"):
                    segment.reason = "stop" if choice["finish_reason"] == "stop" else str(choice["finish_reason"])
            if segment.over_budget:
                return

    def _served_format(self) -> str:
        """The prompt format a docqa node says its model reads (its /v1/models entry's `prompt_format`);
        Qwen3's for a server that does not say (llama.cpp's, vLLM: their models are Qwen3 as docqa serves them),
        with a log line, since another model family would read a Qwen3 prompt wrongly."""
        try:
            response = self._client.get(f"{self.base_url}/models")
            response.raise_for_status()
            entries = response.json()["data"]
            said = next((e.get("prompt_format") for e in entries if e.get("id") == self.model), None)
        except (httpx.HTTPError, KeyError, TypeError, ValueError) as exc:
            said = None
            logger.warning("LLM endpoint %s did not list its models (%s)", self.base_url, exc)
        if isinstance(said, str) and said in PROMPT_FORMATS:
            return said
        logger.warning(
            "LLM endpoint %s does not say its model's prompt format: Qwen3's is used; set DOCQA_LLM_PROMPT_FORMAT "
            "or DOCQA_LLM_MODEL (a vocabulary-only GGUF) for another model family",
            self.base_url,
        )
        return "qwen3"

    def _first_model(self) -> str:
        try:
            response = self._client.get(f"{self.base_url}/models")
            response.raise_for_status()
            return str(response.json()["data"][0]["id"])
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
            raise EndpointError(
                f"LLM endpoint {self.base_url} did not list its models ({exc}); set DOCQA_LLM_ENDPOINT_MODEL"
            ) from exc


class _Segment:
    """One upstream request of an answer: its prompt, the text it added, and whether the thinking budget
    (counted over the whole answer) ran out inside an open <think>."""

    def __init__(self, prompt: str, budget: int | None, used: int = 0, first_usage: dict[str, Any] | None = None):
        self.prompt = prompt
        self.budget = budget
        self.used = used  # tokens of the answer before this request
        self.pieces = 0
        self.text: list[str] = []
        self.reason = "length"
        self.usage: dict[str, Any] = {}
        self._first_usage = first_usage
        self._tail = ""
        self.closed = budget is None
        self.reasoning = ReasoningText()

    @property
    def first_usage(self) -> dict[str, Any]:
        """The first request's usage (its prompt is the answer's)."""
        return self._first_usage if self._first_usage is not None else self.usage

    def add(self, text: str) -> None:
        self.pieces += 1
        self.text.append(text)
        self._tail = (self._tail + text)[-16:]
        if "</think>" in self._tail:
            self.closed = True

    @property
    def over_budget(self) -> bool:
        return not self.closed and self.budget is not None and self.used + self.pieces >= self.budget

    def continued(self, used: int) -> _Segment:
        """The next request: this prompt, this text and the closing sentence; no budget left to watch."""
        prompt = self.prompt + "".join(self.text) + THINKING_CUTOFF
        return _Segment(prompt, None, used, self.first_usage)


def _events(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """The JSON payloads of `data:` lines, up to `data: [DONE]`."""
    for line in lines:
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            return
        event = json.loads(data)
        if "error" in event:
            raise ValueError(str(event["error"]))
        yield event


def _error_text(response: httpx.Response) -> str:
    try:
        response.read()
        body = response.json()
        error = body.get("error", body) if isinstance(body, dict) else body
        message = error.get("message", error) if isinstance(error, dict) else error
        return str(message)[:300]
    except (httpx.HTTPError, ValueError):
        return response.text[:300]
    finally:
        response.close()


UNSAID_RETRY_AFTER_S = 2  # a busy server that sends no Retry-After


def _retry_after(response: httpx.Response) -> int:
    try:
        return max(1, int(float(response.headers.get("retry-after", UNSAID_RETRY_AFTER_S))))
    except ValueError:
        return UNSAID_RETRY_AFTER_S
