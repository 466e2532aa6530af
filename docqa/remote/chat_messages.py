"""docqa's rendered prompt as chat messages, for servers that offer only `/chat/completions`
(DOCQA_LLM_ENDPOINT_API=chat), and their streamed reasoning turned back into docqa's `<think>` text.

docqa renders its prompts itself (docqa.answering.prompting), so that templates, stop strings and token
counts match in-process generation. A chat-only server applies its own template instead; the messages are
read back from the rendered turns (ChatML/Qwen3 and Gemma), and Qwen3's thinking switch becomes
`chat_template_kwargs.enable_thinking` (the empty think block docqa writes for non-thinking mode). The
server streams reasoning in `delta.reasoning_content` (vLLM, SGLang with a reasoning parser) or
`delta.reasoning` (newer vLLM); both are wrapped in `<think>` ... `</think>` for docqa's splitter, and a
server without a reasoning parser sends the `<think>` block inline in `content`, which passes through.
"""

from __future__ import annotations

import re
from typing import Any

from docqa.core.errors import ConfigError

_CHATML_TURN = re.compile(r"<\|im_start\|>(system|user|assistant)\n(.*?)<\|im_end\|>\n", re.DOTALL)
_CHATML_OPEN = "<|im_start|>assistant\n"
_GEMMA_TURN = re.compile(r"<start_of_turn>(user|model)\n(.*?)<end_of_turn>\n", re.DOTALL)
_GEMMA_OPEN = "<start_of_turn>model\n"
EMPTY_THINK = "<think>\n\n</think>\n\n"


def to_messages(prompt: str, prompt_format: str) -> tuple[list[dict[str, str]], bool | None]:
    """The messages of a rendered prompt, and Qwen3's enable_thinking (None: not a Qwen3 prompt)."""
    if prompt_format in ("qwen3", "chatml"):
        turns, opening = _CHATML_TURN, _CHATML_OPEN
    elif prompt_format == "gemma":
        turns, opening = _GEMMA_TURN, _GEMMA_OPEN
    else:
        raise ConfigError(
            f"DOCQA_LLM_ENDPOINT_API=chat needs a chat prompt format (qwen3, chatml, gemma), not {prompt_format}"
        )
    found = list(turns.finditer(prompt))
    rest = prompt[found[-1].end() :] if found else prompt
    if not found or not rest.startswith(opening) or rest[len(opening) :] not in ("", EMPTY_THINK):
        raise ConfigError("this prompt cannot be sent as chat messages (it continues an answer)")
    messages = [{"role": "assistant" if role == "model" else role, "content": text} for role, text in
                (m.groups() for m in found)]  # fmt: skip
    thinking = None if prompt_format != "qwen3" else rest[len(opening) :] != EMPTY_THINK
    return messages, thinking


class ReasoningText:
    """A chat stream's deltas as docqa's text: reasoning inside `<think>` ... `</think>`."""

    def __init__(self) -> None:
        self.in_reasoning = False

    def text(self, choice: dict[str, Any]) -> str:
        delta = choice.get("delta") or {}
        reasoning = delta.get("reasoning_content") or delta.get("reasoning") or ""
        content = delta.get("content") or ""
        out = ""
        if reasoning:
            if not self.in_reasoning:
                out += "<think>\n"
                self.in_reasoning = True
            out += reasoning
        if content:
            if self.in_reasoning:
                out += "\n</think>\n\n"
                self.in_reasoning = False
            out += content
        return out
