"""What the profiles' vocabularies share: a question matched against a map of section titles to the words
that ask for them."""

from __future__ import annotations

import re

from docqa.core.query import Titles


def asking_pattern(*words: str) -> re.Pattern[str] | None:
    """One pattern of the alternatives in `words` (regular expressions; empty ones left out), matched as whole
    words in any case ("&" counts as part of a word: "S&P", "P&L"); None where there are none."""
    joined = "|".join(w for w in words if w)
    return re.compile(rf"(?<![\w&])(?:{joined})(?![\w&])", re.IGNORECASE) if joined else None


def specific_sections(question: str, patterns: tuple[tuple[Titles, re.Pattern[str]], ...]) -> tuple[Titles, ...]:
    """The sections whose words the question holds somewhere outside a longer match of another section."""
    spans = [[m.span() for m in pattern.finditer(question)] for _, pattern in patterns]
    every = [span for found in spans for span in found]

    def inside_a_longer(span: tuple[int, int]) -> bool:
        return any(a <= span[0] and span[1] <= b and b - a > span[1] - span[0] for a, b in every)

    return tuple(
        titles
        for (titles, _), found in zip(patterns, spans, strict=True)
        if any(not inside_a_longer(span) for span in found)
    )
