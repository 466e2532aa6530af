"""docqa as a generation node: `POST /v1/completions` and `/v1/tokenize` on one docqa process, and another
docqa process's endpoint generator (docqa.remote.openai_generator) generating through it. Real HTTP."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from docqa.components import load_generator
from docqa.core.errors import BusyError, ConfigError, EndpointUnavailableError
from docqa.core.sampling_params import NON_THINKING_SAMPLING, THINKING_CUTOFF
from docqa.engine.batching import BatchingGenerator
from docqa.llama.vocab import VocabCounter
from docqa.remote.openai_generator import OpenAIGenerator
from docqa.service import DocQA
from tests.support.fake_generator import SCRIPT, FakeGenerator
from tests.support.live_server import free_port, serve_app
from tests.support.paths import make_settings

GREEDY = replace(NON_THINKING_SAMPLING, temperature=0.0, max_tokens=24, seed=3)


@pytest.fixture
def fake_node(fake_generator: FakeGenerator, tmp_path: Path) -> Iterator[str]:
    qa = DocQA(make_settings(tmp_path / "data"), None, fake_generator)
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            yield f"{base}/v1"
    finally:
        qa.close()


def _client(url: str, count: object = None, max_in_flight: int = 8) -> OpenAIGenerator:
    return OpenAIGenerator(
        url,
        model="node",
        api_key=None,
        timeout_s=60,
        max_in_flight=max_in_flight,
        n_ctx=4096,
        prompt_format="plain",
        count_tokens=count if callable(count) else (lambda text: len(text.split()) + 1),
        tokenizer_label="words",
    )


def test_the_node_streams_a_raw_prompt_in_openai_completions_form(
    fake_node: str, fake_generator: FakeGenerator
) -> None:
    body = {
        "prompt": "Question: which law?\nAnswer:",
        "max_tokens": 64,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    with httpx.stream("POST", f"{fake_node}/completions", json=body, timeout=30) as response:
        lines = [line for line in response.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    assert fake_generator.prompts[-1] == body["prompt"]  # as sent: no template, no retrieval
    whole = httpx.post(f"{fake_node}/completions", json={**body, "stream": False}, timeout=30).json()
    assert whole["choices"][0]["text"] == SCRIPT
    assert whole["choices"][0]["finish_reason"] == "stop" and whole["usage"]["completion_tokens"] == len(SCRIPT.split())
    assert httpx.post(f"{fake_node}/tokenize", json={"prompt": "one two three"}, timeout=30).json() == {"count": 4}


def test_another_docqa_generates_through_the_node_and_hears_its_429(
    fake_node: str, fake_generator: FakeGenerator, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = _client(fake_node)
    events = list(client.submit("Question: which law?\nAnswer:", NON_THINKING_SAMPLING))
    assert "".join(e.text for e in events if e.kind == "text") == SCRIPT
    assert events[-1].completion_tokens == len(SCRIPT.split())
    monkeypatch.setattr(BusyError, "retry_after_s", 7)  # what the node says in its 429's Retry-After
    fake_generator.paused.set()
    held = [fake_generator.submit("filler", NON_THINKING_SAMPLING) for _ in range(4)]  # the node's queue is full
    try:
        with pytest.raises(BusyError) as caught:
            client.submit("Question: which law?\nAnswer:", NON_THINKING_SAMPLING)
        assert caught.value.retry_after_s == 7  # the node's own Retry-After, not the client's default (issue 40, 9)
    finally:
        for stream in held:
            stream.cancel()
        fake_generator.paused.clear()


@pytest.mark.slow
def test_a_docqa_node_gives_the_in_process_greedy_text(
    generator: BatchingGenerator, demo_model: Path, tmp_path: Path
) -> None:
    qa = DocQA(make_settings(tmp_path / "data"), None, generator)  # the session's engine: not closed here
    prompt = "Question: What is the capital of France?\nAnswer:"
    here = "".join(e.text for e in generator.submit(prompt, GREEDY) if e.kind == "text")
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            client = _client(f"{base}/v1", VocabCounter(demo_model, "auto"))
            assert client.count_tokens(prompt) == generator.count_tokens(prompt)
            there = "".join(e.text for e in client.submit(prompt, GREEDY) if e.kind == "text")
    finally:
        qa.store.close()
    assert there and there == here


def test_without_a_gguf_prompts_are_counted_by_the_server(
    fake_node: str, fake_generator: FakeGenerator, tmp_path: Path
) -> None:
    settings = make_settings(tmp_path / "client", llm={"endpoint": fake_node, "endpoint_model": "node"})
    client = load_generator(settings)
    prompt = "Question: which law governs the agreement?\nAnswer:"
    assert client.count_tokens(prompt) == fake_generator.count_tokens(prompt)  # the node's /v1/tokenize
    assert client.info.prompt_format == "qwen3"  # none given, no GGUF to read it from: Qwen3's


def test_counting_a_prompt_does_not_hold_the_nodes_other_requests(
    fake_node: str, fake_generator: FakeGenerator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tokenize route counts off the event loop: a long prompt's count (here 1 s) must not stall the
    streams and health checks the node is serving meanwhile."""
    real = fake_generator.count_tokens

    def slow_count(prompt: str) -> int:
        time.sleep(1.0)
        return real(prompt)

    monkeypatch.setattr(fake_generator, "count_tokens", slow_count)
    root = fake_node.removesuffix("/v1")
    counting = threading.Thread(target=lambda: httpx.post(f"{root}/v1/tokenize", json={"prompt": "a b"}, timeout=10))
    counting.start()
    time.sleep(0.2)
    started = time.monotonic()
    assert httpx.get(f"{root}/health", timeout=10).status_code == 200
    waited = time.monotonic() - started
    counting.join()
    assert waited < 0.5, f"/health waited {waited:.2f} s behind a token count"


def test_a_server_with_no_tokenize_route_and_no_gguf_is_a_clear_error(tmp_path: Path) -> None:
    """A server that answers, but 404 on every tokenize route, is a configuration error; one that does not
    answer at all is not up yet (issue 40, 2: an API process then waits for it)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class NotFound(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_error(404)

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        answering = f"http://127.0.0.1:{server.server_address[1]}/v1"
        llm = {"endpoint": answering, "endpoint_model": "m", "endpoint_timeout_s": 2}
        with pytest.raises(ConfigError, match="offers no tokenize route docqa knows; set DOCQA_LLM_MODEL"):
            load_generator(make_settings(tmp_path, llm=llm))
    finally:
        server.shutdown()
    nowhere = {"endpoint": f"http://127.0.0.1:{free_port()}/v1", "endpoint_model": "m", "endpoint_timeout_s": 2}
    with pytest.raises(EndpointUnavailableError, match="is not answering yet"):
        load_generator(make_settings(tmp_path, llm=nowhere))


def test_the_thinking_budget_closes_the_reasoning_over_an_endpoint(
    fake_node: str, fake_generator: FakeGenerator
) -> None:
    fake_generator.script = "<think> " + "step " * 60 + "</think> The laws of England [1]."
    client = _client(fake_node)
    prompt = "<|im_start|>assistant\n"
    params = replace(GREEDY, max_tokens=40, thinking_budget=10)
    events = list(client.submit(prompt, params))
    first = "".join(e.text for e in events[:10])
    assert events[10].text == THINKING_CUTOFF  # after 10 reasoning tokens: Qwen's closing sentence
    assert fake_generator.prompts[-1] == prompt + first + THINKING_CUTOFF  # the continuation's prompt
    cutoff = client.count_tokens(THINKING_CUTOFF)
    assert fake_generator.params[-1].max_tokens == 40 - 10 - cutoff
    assert events[-1].kind == "finished" and events[-1].completion_tokens == 40
    assert len(fake_generator.prompts) == 2

    fake_generator.script = "<think> short </think> The laws of England [1]."  # closed within the budget
    events = list(client.submit(prompt, params))
    assert THINKING_CUTOFF not in "".join(e.text for e in events) and len(fake_generator.prompts) == 3


@pytest.mark.slow
def test_a_prompt_over_the_context_is_a_400_naming_it(generator: BatchingGenerator, tmp_path: Path) -> None:
    """It was 200 with empty text, finish_reason "error" and no reason (issue 41, 12)."""
    qa = DocQA(make_settings(tmp_path / "data"), None, generator)  # the session's engine: not closed here
    too_long = "lease " * (generator.info.n_ctx + 50)
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            r = httpx.post(f"{base}/v1/completions", json={"prompt": too_long, "max_tokens": 8}, timeout=120)
            assert r.status_code == 400, r.text
            message = r.json()["error"]["message"]
            assert f"does not fit the {generator.info.n_ctx}-token context" in message
            body = {"prompt": too_long, "max_tokens": 8, "stream": True}
            with httpx.stream("POST", f"{base}/v1/completions", json=body, timeout=120) as response:
                lines = [line for line in response.iter_lines() if line.startswith("data: ")]
            assert '"type": "InvalidRequestError"' in lines[0] and "does not fit" in lines[0]
            assert lines[-1] == "data: [DONE]"
            ok = httpx.post(f"{base}/v1/completions", json={"prompt": "Answer:", "max_tokens": 4}, timeout=120)
            assert ok.status_code == 200  # the engine goes on serving
    finally:
        qa.store.close()


@pytest.mark.slow
def test_a_long_prompt_streams_its_progress_as_comments_that_keep_the_line_alive(
    generator: BatchingGenerator, tmp_path: Path
) -> None:
    """A node reading a long prompt said nothing until its first token, and a client's read timeout took it for
    a dead server (issue 40, 3): it now sends an SSE comment per prompt slice, which OpenAI clients skip."""
    qa = DocQA(make_settings(tmp_path / "data"), None, generator)  # the session's engine: not closed here
    prompt = "The lessee shall pay the rent. " * 400  # two slices of n_batch (2,048), within the 4,096 context
    assert generator.llama.n_batch < generator.count_tokens(prompt) < generator.info.n_ctx - 8
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            body = {"prompt": prompt, "max_tokens": 4, "stream": True}
            with httpx.stream("POST", f"{base}/v1/completions", json=body, timeout=300) as response:
                lines = [line for line in response.iter_lines() if line]
            client = _client(f"{base}/v1", generator.count_tokens)
            text = "".join(e.text for e in client.submit(prompt, replace(GREEDY, max_tokens=4)) if e.kind == "text")
    finally:
        qa.store.close()
    comments = [line for line in lines if line.startswith(": reading the prompt")]
    first_data = next(i for i, line in enumerate(lines) if line.startswith("data: "))
    assert len(comments) >= 1 and all(lines.index(c) < first_data for c in comments)
    assert lines[-1] == "data: [DONE]" and text  # docqa's own client reads through the comments
