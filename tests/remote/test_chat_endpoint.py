"""Servers with only /chat/completions (DOCQA_LLM_ENDPOINT_API=chat): docqa's prompt as messages, Qwen3's
thinking switch as chat_template_kwargs, reasoning deltas back as <think> text. A stub server records what
it was sent; the prompts are rendered by docqa's own templates."""

from __future__ import annotations

import json
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from docqa.answering.prompting import render
from docqa.core.errors import ConfigError
from docqa.core.sampling_params import NON_THINKING_SAMPLING
from docqa.remote.chat_messages import EMPTY_THINK, ReasoningText, to_messages
from docqa.remote.openai_generator import OpenAIGenerator

Behaviour = Callable[[BaseHTTPRequestHandler], None]
SENT: list[dict[str, Any]] = []


def _chat_stream(handler: BaseHTTPRequestHandler) -> None:
    SENT.append({"path": handler.path, **handler.body})  # type: ignore[attr-defined]
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.end_headers()
    deltas = [{"role": "assistant"}, {"reasoning_content": "The clause "}, {"reasoning": "names England."},
              {"content": "English law"}, {"content": " governs [1]."}]  # fmt: skip
    for delta in deltas:
        event = {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        handler.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
    end = {
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 7},
    }
    handler.wfile.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())


def _client(url: str, prompt_format: str) -> OpenAIGenerator:
    return OpenAIGenerator(
        url, model="qwen3", api_key=None, timeout_s=10, max_in_flight=4, n_ctx=4096, prompt_format=prompt_format,
        count_tokens=lambda text: len(text.split()), tokenizer_label="words", api="chat",
    )  # fmt: skip


@pytest.mark.parametrize("thinking", [True, False])
def test_a_qwen3_prompt_goes_as_messages_with_its_thinking_switch(
    upstream: Callable[[Behaviour], str], thinking: bool
) -> None:
    client = _client(upstream(_chat_stream), "qwen3")
    prompt = render("qwen3", "Which law governs?", [], thinking)
    events = list(client.submit(prompt, NON_THINKING_SAMPLING))
    sent = SENT[-1]
    assert sent["path"] == "/v1/chat/completions" and "prompt" not in sent
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert sent["messages"][1]["content"].endswith("Question: Which law governs?")
    assert sent["chat_template_kwargs"] == {"enable_thinking": thinking}
    text = "".join(e.text for e in events if e.kind == "text")
    assert text == "<think>\nThe clause names England.\n</think>\n\nEnglish law governs [1]."
    assert events[-1].kind == "finished" and events[-1].completion_tokens == 7


def test_messages_are_read_back_from_every_chat_template() -> None:
    messages, thinking = to_messages(render("chatml", "Q?", [], False), "chatml")
    assert [m["role"] for m in messages] == ["system", "user"] and thinking is None
    messages, thinking = to_messages(render("gemma", "Q?", [], False), "gemma")
    assert [m["role"] for m in messages] == ["user"] and thinking is None
    assert to_messages(render("qwen3", "Q?", [], False), "qwen3")[1] is False
    with pytest.raises(ConfigError, match="needs a chat prompt format"):
        to_messages(render("plain", "Q?", [], False), "plain")
    continued = render("qwen3", "Q?", [], True) + "<think>\nSo far"
    with pytest.raises(ConfigError, match="continues an answer"):
        to_messages(continued, "qwen3")
    assert render("qwen3", "Q?", [], False).endswith(EMPTY_THINK)


def test_inline_think_passes_through_and_reasoning_is_closed_once() -> None:
    reading = ReasoningText()
    assert reading.text({"delta": {"content": "<think>\nhm\n</think>\n\nYes."}}) == "<think>\nhm\n</think>\n\nYes."
    assert reading.text({"delta": {"reasoning_content": "a"}}) == "<think>\na"
    assert reading.text({"delta": {"reasoning_content": "b"}}) == "b"
    assert reading.text({"delta": {"content": "c"}}) == "\n</think>\n\nc"
    assert reading.text({"delta": {}}) == ""
