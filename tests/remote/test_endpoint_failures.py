"""The endpoint generator (docqa.remote.openai_generator) against a stub upstream that misbehaves: busy,
stalled, gone, or streaming to a client that leaves. Real HTTP on a loopback port; no model."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import httpx
import pytest

from docqa.core.errors import BusyError, EndpointError, EndpointTimeoutError
from docqa.core.sampling_params import NON_THINKING_SAMPLING
from docqa.remote.openai_generator import OpenAIGenerator
from docqa.service import DocQA
from tests.support.live_server import free_port, serve_app
from tests.support.paths import SAMPLE_DOCS, make_settings

Behaviour = Callable[[BaseHTTPRequestHandler], None]


def _stream(handler: BaseHTTPRequestHandler, pieces: list[str], pause_s: float = 0.0) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.end_headers()
    for piece in pieces:
        event = {"choices": [{"index": 0, "text": piece, "finish_reason": None}]}
        handler.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        handler.wfile.flush()
        time.sleep(pause_s)
    last = {"index": 0, "text": "", "finish_reason": "stop"}
    usage = {"choices": [last], "usage": {"prompt_tokens": 5, "completion_tokens": len(pieces)}}
    handler.wfile.write(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode())


def _generator(url: str, timeout_s: float = 5.0, max_in_flight: int = 4, status_wait_s: float = 1.0) -> OpenAIGenerator:
    return OpenAIGenerator(
        url,
        model="m",
        api_key=None,
        timeout_s=timeout_s,
        max_in_flight=max_in_flight,
        n_ctx=4096,
        prompt_format="chatml",
        count_tokens=lambda text: len(text) // 4,
        tokenizer_label="a test's estimate",
        status_wait_s=status_wait_s,
    )


def _busy(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(429)
    handler.send_header("Retry-After", "7")
    handler.send_header("Content-Type", "application/json")
    handler.end_headers()
    handler.wfile.write(b'{"error": {"message": "queue full"}}')


def _late(seconds: float, then: Behaviour) -> Behaviour:
    """An upstream that sends its status (and all after it) only `seconds` after the request."""

    def behaviour(handler: BaseHTTPRequestHandler) -> None:
        time.sleep(seconds)
        then(handler)

    return behaviour


def _answer(handler: BaseHTTPRequestHandler) -> None:
    _stream(handler, ["Sixty", " days."])


def _listing_behind_a_stream(base: str, route: str, body: dict[str, object]) -> tuple[httpx.Response, float, str]:
    """Stream `body` to `route` in a thread; while it waits for its upstream's headers, list the collections:
    (the listing, how long it waited, the streamed text)."""
    streamed: list[str] = []

    def stream() -> None:
        with httpx.stream("POST", f"{base}{route}", json=body, timeout=30) as r:
            streamed.append("".join(r.iter_text()))

    streaming = threading.Thread(target=stream)
    streaming.start()
    time.sleep(0.3)  # the stream is waiting for the upstream's headers
    started = time.monotonic()
    listed = httpx.get(f"{base}/v1/collections", timeout=30)
    waited = time.monotonic() - started
    streaming.join(30)
    return listed, waited, streamed[0] if streamed else ""


def test_a_streamed_answer_comes_through_with_its_usage(upstream: Callable[[Behaviour], str]) -> None:
    generator = _generator(upstream(lambda h: _stream(h, ["Sixty", " days."])))
    events = list(generator.submit("prompt", NON_THINKING_SAMPLING))
    assert [e.text for e in events if e.kind == "text"] == ["Sixty", " days."]
    assert (events[-1].kind, events[-1].finish_reason, events[-1].completion_tokens) == ("finished", "stop", 2)
    assert generator.stats().running == 0


def test_an_upstream_429_is_docqa_s_429_with_its_retry_after(upstream: Callable[[Behaviour], str]) -> None:
    url = upstream(_busy)
    with pytest.raises(BusyError, match=f"LLM endpoint {url} is busy \\(429\\): queue full") as caught:
        _generator(url).submit("prompt", NON_THINKING_SAMPLING)
    assert caught.value.retry_after_s == 7


def test_a_stalled_upstream_times_out_naming_the_endpoint(upstream: Callable[[Behaviour], str]) -> None:
    url = upstream(lambda handler: time.sleep(3))
    started = time.monotonic()
    with pytest.raises(EndpointTimeoutError, match=f"LLM endpoint {url} did not start answering within 0.5 s"):
        _generator(url, timeout_s=0.5).submit("prompt", NON_THINKING_SAMPLING)
    assert time.monotonic() - started < 2.5
    stalls_mid_answer = upstream(lambda handler: _stream(handler, ["one", "two"], pause_s=2.0))
    events = list(_generator(stalls_mid_answer, timeout_s=0.5).submit("prompt", NON_THINKING_SAMPLING))
    assert events[0].text == "one"
    assert events[-1].kind == "failed" and "did not send the next token within 0.5 s" in events[-1].text
    assert isinstance(events[-1].error, EndpointTimeoutError)  # its type travels with it: a 504, not a 500


def test_a_timeout_mid_answer_is_a_504_on_every_non_streamed_ask_route(
    upstream: Callable[[Behaviour], str], tmp_path: Path
) -> None:
    """Issue 40, item 3: a non-streamed /v1/ask whose endpoint stalled after its first token answered 500
    {"type": "DocqaError"}: the timeout lost its type on the way."""
    stalls = upstream(lambda handler: _stream(handler, ["one", "two"], pause_s=2.0))
    qa = DocQA(make_settings(tmp_path / "data"), None, _generator(stalls, timeout_s=0.5))
    qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt"])
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            asked = httpx.post(f"{base}/v1/ask", json={"question": "Which law governs?", "cache": False}, timeout=30)
            chat = {"model": "docqa/default", "messages": [{"role": "user", "content": "Which law governs?"}]}
            chatted = httpx.post(f"{base}/v1/chat/completions", json=chat, timeout=30)
    finally:
        qa.close()
    for r in (asked, chatted):
        assert r.status_code == 504, r.text
        assert r.json()["error"]["type"] == "EndpointTimeoutError" and "did not send the next token" in r.text


def test_an_upstream_slow_to_answer_its_status_gets_its_stream_at_the_status_wait(
    upstream: Callable[[Behaviour], str],
) -> None:
    """llama.cpp's server sends a streamed request's status only when it starts on that prompt: submit stops
    waiting for it after status_wait_s (an ask's citations go out then), and the answer follows."""

    generator = _generator(upstream(_late(1.5, _answer)), status_wait_s=0.2)
    started = time.monotonic()
    stream = generator.submit("prompt", NON_THINKING_SAMPLING)
    returned_s = time.monotonic() - started
    events = list(stream)
    assert 0.15 < returned_s < 1.0, f"submit returned after {returned_s:.2f} s"
    assert [e.text for e in events if e.kind == "text"] == ["Sixty", " days."] and events[-1].kind == "finished"
    assert generator.stats().running == 0


def test_a_refusal_after_the_status_wait_ends_the_stream_naming_the_endpoint(
    upstream: Callable[[Behaviour], str],
) -> None:
    """A 429 that comes after submit stopped waiting cannot be docqa's status any more: it ends the stream,
    typed (a non-streamed ask still answers 429), and the request's place is free again."""

    url = upstream(_late(0.8, _busy))
    generator = _generator(url, max_in_flight=1, status_wait_s=0.1)
    events = list(generator.submit("prompt", NON_THINKING_SAMPLING))
    assert [e.kind for e in events] == ["failed"]
    assert isinstance(events[0].error, BusyError) and f"LLM endpoint {url} is busy (429): queue full" in events[0].text
    assert generator.stats().running == 0
    generator.submit("prompt", NON_THINKING_SAMPLING).cancel()  # its one place was given back


def test_a_non_streamed_ask_refused_after_the_status_wait_is_still_a_429(
    upstream: Callable[[Behaviour], str], tmp_path: Path
) -> None:
    qa = DocQA(make_settings(tmp_path / "data"), None, _generator(upstream(_late(0.8, _busy)), status_wait_s=0.1))
    qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt"])
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            asked = httpx.post(f"{base}/v1/ask", json={"question": "Which law governs?", "cache": False}, timeout=30)
    finally:
        qa.close()
    assert asked.status_code == 429, asked.text
    assert "is busy (429): queue full" in asked.text and asked.headers.get("retry-after") == "7"


def test_an_ask_s_citations_go_out_before_a_slow_upstream_s_status(
    upstream: Callable[[Behaviour], str], tmp_path: Path
) -> None:
    """Through an upstream that answers its status late, the ask's citations event comes at the status wait,
    not with the upstream's status (the user sees the sources while the prompt waits its turn there)."""

    qa = DocQA(make_settings(tmp_path / "data"), None, _generator(upstream(_late(2.0, _answer)), status_wait_s=0.2))
    qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt"])
    seen: dict[str, float] = {}
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            body = {"question": "Which law governs?", "cache": False, "stream": True}
            started = time.monotonic()
            with httpx.stream("POST", f"{base}/v1/ask", json=body, timeout=30) as r:
                for line in r.iter_lines():
                    if line.startswith("event: "):
                        seen.setdefault(line[7:], time.monotonic() - started)
    finally:
        qa.close()
    assert seen["citations"] < 1.5, f"the citations came after {seen['citations']:.2f} s"
    assert seen["answer"] >= 2.0 and "done" in seen


def test_an_unreachable_endpoint_is_named() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    with pytest.raises(EndpointError, match=f"LLM endpoint {url} unreachable"):
        _generator(url).submit("prompt", NON_THINKING_SAMPLING)


def test_a_client_that_leaves_frees_its_place(upstream: Callable[[Behaviour], str]) -> None:
    closed = threading.Event()

    def long_answer(handler: BaseHTTPRequestHandler) -> None:
        try:
            _stream(handler, ["word "] * 200, pause_s=0.02)
        except (BrokenPipeError, ConnectionResetError):
            closed.set()

    generator = _generator(upstream(long_answer), max_in_flight=1)
    stream = generator.submit("prompt", NON_THINKING_SAMPLING)
    with pytest.raises(BusyError, match="1 requests are already open"):  # its one place is taken
        generator.submit("prompt", NON_THINKING_SAMPLING)
    next(iter(stream))
    stream.cancel()  # the client went away
    assert closed.wait(5), "the upstream request was not closed"
    deadline = time.monotonic() + 5
    while generator.stats().running and time.monotonic() < deadline:
        time.sleep(0.02)
    assert generator.stats().running == 0
    generator.submit("prompt", NON_THINKING_SAMPLING).cancel()  # its place is free again


def test_an_upstream_slow_to_answer_does_not_hold_the_api_back(
    upstream: Callable[[Behaviour], str], tmp_path: Path
) -> None:
    """A server that sends its headers only with its first token (after reading the whole prompt) held the
    API's event loop for that long: every other answer and request waited. The submit now runs in a thread."""

    qa = DocQA(make_settings(tmp_path / "data"), None, _generator(upstream(_late(1.5, _answer))))
    qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt"])
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            body = {"question": "Which law governs?", "cache": False, "stream": True}
            listed, waited, answered = _listing_behind_a_stream(base, "/v1/ask", body)
    finally:
        qa.close()
    assert listed.status_code == 200
    assert waited < 0.5, f"a listing waited {waited:.2f} s behind an ask's upstream"
    assert "Sixty" in answered and "days." in answered


def test_an_upstream_slow_to_answer_a_raw_completion_does_not_hold_the_api_back(
    upstream: Callable[[Behaviour], str], tmp_path: Path
) -> None:
    """The same through the API's own /v1/completions (a raw prompt passed on to the endpoint)."""

    qa = DocQA(make_settings(tmp_path / "data"), None, _generator(upstream(_late(1.5, _answer))))
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            body = {"prompt": "Which law governs?", "max_tokens": 8, "stream": True}
            listed, waited, completed = _listing_behind_a_stream(base, "/v1/completions", body)
    finally:
        qa.close()
    assert listed.status_code == 200
    assert waited < 0.5, f"a listing waited {waited:.2f} s behind a completion's upstream"
    assert "Sixty" in completed


def test_a_client_gone_while_its_prompt_is_submitted_frees_the_upstream(
    upstream: Callable[[Behaviour], str], tmp_path: Path
) -> None:
    """The submit runs in a thread; a non-streamed ask whose client leaves meanwhile is cancelled, and the
    stream that arrives after is cancelled too, instead of generating for nobody."""
    closed = threading.Event()

    def slow_long_answer(handler: BaseHTTPRequestHandler) -> None:
        time.sleep(1.0)
        try:
            _stream(handler, ["word "] * 300, pause_s=0.02)
        except (BrokenPipeError, ConnectionResetError):
            closed.set()

    generator = _generator(upstream(slow_long_answer), max_in_flight=1)
    qa = DocQA(make_settings(tmp_path / "data"), None, generator)
    qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt"])
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            with pytest.raises(httpx.ReadTimeout):  # the client leaves while the prompt is being submitted
                httpx.post(f"{base}/v1/ask", json={"question": "Which law governs?", "cache": False}, timeout=0.4)
            assert closed.wait(4), "the upstream kept generating for a client that had left"
    finally:
        qa.close()
