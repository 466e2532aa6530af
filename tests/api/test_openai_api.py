"""The OpenAI-compatible API, driven by the official `openai` client against a live server."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from docqa.api.routes.openai_compat import ChatCompletionBody, ChatMessage, ask_request, choose_thinking


def _client(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{base}/v1", api_key="unused-locally", timeout=300, max_retries=0)


def test_collections_are_listed_as_models(live_server: str) -> None:
    ids = [m.id for m in _client(live_server).models.list()]
    assert ids == ["docqa/default"]


def test_chat_completion_answers_with_citations(live_server: str) -> None:
    completion = _client(live_server).chat.completions.create(
        model="docqa/default",
        messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "What was Northwind's revenue in 2025?"},
        ],
        max_tokens=48,
        seed=1,
    )
    choice = completion.choices[0]
    assert choice.finish_reason in ("stop", "length")
    assert "Sources:\n[" in (choice.message.content or "")
    extra = completion.model_extra or {}
    citations = extra["citations"]
    assert citations and {"document", "pages", "number"} <= set(citations[0])
    assert "annual_report_2025.pdf" in [c["document"] for c in citations]
    assert completion.usage is not None and completion.usage.prompt_tokens > 100
    assert completion.usage.completion_tokens >= 1


def test_chat_completion_streams_in_openai_chunks(live_server: str) -> None:
    stream = _client(live_server).chat.completions.create(
        model="docqa/default",
        messages=[{"role": "user", "content": "How many robots did Northwind ship in 2025? /no_think"}],
        max_tokens=32,
        stream=True,
        stream_options={"include_usage": True},
    )
    content, finish, citations, usage = [], None, None, None
    n_chunks, sources = 0, []
    for chunk in stream:
        n_chunks += 1
        if chunk.usage is not None:
            usage = chunk.usage
        if (chunk.model_extra or {}).get("event"):
            sources.append(chunk.model_extra["event"])  # type: ignore[index]
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        assert not (delta.model_extra or {}).get("reasoning_content"), "thinking was switched off"
        content.append(delta.content or "")
        if chunk.choices[0].finish_reason:
            finish = chunk.choices[0].finish_reason
            citations = (chunk.model_extra or {}).get("citations")
    text = "".join(content)
    assert n_chunks >= 4 and finish in ("stop", "length")
    assert "Sources:" in text and citations
    assert usage is not None and usage.completion_tokens >= 1
    # each cited source also as Open WebUI's source event, its link the original file at the page
    shown = [c for c in citations if c.get("cited")] or citations
    assert [e["type"] for e in sources] == ["source"] * len(shown)
    first = sources[0]["data"]
    assert first["source"]["name"].startswith(f"[{shown[0]['number']}] {shown[0]['document']}, p")
    assert first["source"]["url"].startswith(f"{live_server}/v1/collections/default/documents/")
    assert "/file#page=" in first["source"]["url"] and first["document"][0]
    assert httpx.get(first["source"]["url"].split("#")[0]).status_code == 200


def test_unknown_model_and_empty_conversation_are_clear_errors(live_server: str) -> None:
    client = _client(live_server)
    with pytest.raises(openai.NotFoundError) as missing:
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert "docqa/<collection>" in str(missing.value)
    with pytest.raises(openai.NotFoundError, match="does not exist"):
        client.chat.completions.create(model="docqa/nope", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.BadRequestError, match="no user message"):
        client.chat.completions.create(model="docqa/default", messages=[{"role": "system", "content": "x"}])


def test_api_keys_apply_to_the_openai_routes(live_server: str) -> None:
    r = httpx.get(f"{live_server}/v1/models")
    assert r.status_code == 200  # no keys configured: open for local use


def _body(content: str, **kw: Any) -> ChatCompletionBody:
    return ChatCompletionBody(model="docqa/legal", messages=[ChatMessage(role="user", content=content)], **kw)


def test_thinking_is_chosen_by_soft_switch_then_template_kwargs_then_effort() -> None:
    assert choose_thinking(_body("q"), "What is it? /think") == (True, "What is it?")
    assert choose_thinking(_body("q", reasoning_effort="high"), "Tell me /no_think") == (False, "Tell me")
    assert choose_thinking(_body("q", chat_template_kwargs={"enable_thinking": True}), "q")[0] is True
    assert choose_thinking(_body("q", reasoning_effort="none"), "q")[0] is False
    assert choose_thinking(_body("q", reasoning_effort="medium"), "q")[0] is True
    assert choose_thinking(_body("q"), "a path like /thinking/x stays")[1] == "a path like /thinking/x stays"
    assert choose_thinking(_body("q"), "q")[0] is False  # docqa's default: answer at once
    request = ask_request(_body("Which law governs? /think", max_completion_tokens=99))
    assert (request.collection, request.thinking, request.max_tokens) == ("legal", True, 99)
    assert request.question == "Which law governs?"


def test_the_user_messages_before_the_last_are_the_conversations_earlier_questions() -> None:
    body = ChatCompletionBody(
        model="docqa/legal",
        messages=[
            ChatMessage(role="system", content="Be brief."),
            ChatMessage(role="user", content="What rent does the Zenith lease charge? /no_think"),
            ChatMessage(role="assistant", content="USD 12,000 a month [1]."),
            ChatMessage(role="user", content="  "),
            ChatMessage(role="user", content="And the governing law?"),
        ],
    )
    request = ask_request(body)
    assert request.question == "And the governing law?"
    assert request.earlier == ("What rent does the Zenith lease charge?",)  # switches and blank turns left out
    assert ask_request(_body("Which law governs?")).earlier == ()
