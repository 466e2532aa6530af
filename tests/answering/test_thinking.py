"""Splitting Qwen3 output into reasoning and answer, however the stream is cut."""

from __future__ import annotations

import random

import pytest

from docqa.answering.thinking import ThinkSplitter

CASES = [
    ("<think>\nThe notice is in 3.2.\n</think>\n\nSixty days [1].", "The notice is in 3.2.", "Sixty days [1]."),
    ("Sixty days [1].", "", "Sixty days [1]."),
    ("\n\n  Sixty days.", "", "Sixty days."),
    ("<think>\n\n</think>\n\nSixty days.", "", "Sixty days."),
    ("<think>unfinished reasoning cut by max_tokens", "unfinished reasoning cut by max_tokens", ""),
    ("Answer with a stray </think> tag.", "", "Answer with a stray  tag."),
    ("<thinking is not a tag", "", "<thinking is not a tag"),
    ("<think>a < b and c </thi nk> d</think>ok", "a < b and c </thi nk> d", "ok"),
]


def split_completion(text: str) -> tuple[str, str]:
    """(reasoning, answer) of a whole completion: the streaming splitter applied at once."""
    splitter = ThinkSplitter()
    parts = splitter.feed(text) + splitter.finish()
    reasoning = "".join(t for c, t in parts if c == "reasoning").rstrip()
    answer = "".join(t for c, t in parts if c == "answer").rstrip()
    return reasoning, answer


@pytest.mark.parametrize(("text", "reasoning", "answer"), CASES)
def test_whole_completion(text: str, reasoning: str, answer: str) -> None:
    assert split_completion(text) == (reasoning, answer)


@pytest.mark.parametrize(("text", "reasoning", "answer"), CASES)
def test_any_cut_of_the_stream_gives_the_same_split(text: str, reasoning: str, answer: str) -> None:
    rng = random.Random(7)
    for _ in range(50):
        cuts = sorted(rng.sample(range(1, len(text)), k=min(len(text) - 1, rng.randint(1, 8))))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        splitter = ThinkSplitter()
        parts = [p for piece in pieces for p in splitter.feed(piece)] + splitter.finish()
        got_reasoning = "".join(t for c, t in parts if c == "reasoning").rstrip()
        got_answer = "".join(t for c, t in parts if c == "answer").rstrip()
        assert (got_reasoning, got_answer) == (reasoning, answer), pieces


def test_reasoning_is_streamed_before_the_tag_closes() -> None:
    splitter = ThinkSplitter()
    assert splitter.feed("<think>") == []
    assert splitter.feed("first thought, ") == [("reasoning", "first thought, ")]
    assert splitter.feed("second</th") == [("reasoning", "second")]
    assert splitter.feed("ink>\n\nAnswer") == [("answer", "Answer")]
