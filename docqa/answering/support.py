"""The passage of a source that supports what the answer says of it, and the page that passage is on.

Choosing the cited page by the answer's words over whole pages went wrong where a chunk's first page
shares the answer's common words (the clause's title, the parties) and the clause itself sits on a later
page: 2 of 5 contract answers checked by hand cited page 1 for a clause on pages 2 and 3. Here only the
sentences that cite the source ([n]) speak for it (the whole answer where none does), each of their
terms weighs by how few of the source's lines hold it (a party's name on every line weighs nothing),
a number the answer repeats weighs double (a figure is the strongest evidence a filing has), and the
best run of up to three lines of one page wins (a run across a page break named the later page for a
passage that sits on the earlier one). The citation gets that run's page and its text, which the web page
highlights.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from docqa.answering.windows import page_at
from docqa.core.types import RetrievedChunk
from docqa.store.keyword import lexical

# Lines in a passage: one table row or sentence alone often lacks the words that say what it is.
PASSAGE_LINES = 3
MAX_QUOTE_CHARS = 400
NUMBER_WEIGHT = 2.0
_SENTENCE = re.compile(r"[^.!?。！？\n]+(?:[.!?。！？]+|\n|$)")
_LINE = re.compile(r"[^\n]+")
_NUMBER = re.compile(r"\d")


@dataclass(frozen=True)
class Support:
    page: int
    quote: str  # the passage as the source has it (whitespace kept), at most MAX_QUOTE_CHARS


def claims_for(answer: str, number: int, cited: set[int]) -> str:
    """The answer's sentences that cite [number]; the whole answer when it cites no source at all."""
    if not cited:
        return answer
    mark = re.compile(rf"\[\s*(?:\d{{1,3}}\s*[,，、]\s*)*{number}(?:\s*[,，、]\s*\d{{1,3}})*\s*\]")
    return " ".join(s.group(0) for s in _SENTENCE.finditer(answer) if mark.search(s.group(0)))


def supporting_passage(claims: str, chunk: RetrievedChunk) -> Support | None:
    """The run of up to PASSAGE_LINES lines of the chunk that best supports the claims, or None when
    no line shares a term with them."""
    wanted = set(lexical.query_terms(claims, max_terms=10_000))
    if not wanted:
        return None
    lines = [(m.start(), m.end(), set(lexical.query_terms(m.group(0), max_terms=10_000)) & wanted)
             for m in _LINE.finditer(chunk.text)]  # fmt: skip
    if not lines:
        return None
    held = [terms for _, _, terms in lines]
    weight = {
        term: math.log(1 + len(lines) / sum(term in h for h in held)) * (NUMBER_WEIGHT if _NUMBER.search(term) else 1)
        for term in set().union(*held)
    }
    pages = [page_at(chunk, start) for start, _, _ in lines]
    best: tuple[float, int, int] | None = None
    for i in range(len(lines)):
        n = min(PASSAGE_LINES, len(lines) - i)
        n = next((k for k in range(1, n) if pages[i + k] != pages[i]), n)  # a quote stays on one page
        run = lines[i : i + n]
        score = sum(weight[t] for t in set().union(*(terms for _, _, terms in run)))
        if score > 0 and (best is None or score > best[0]):
            best = (score, i, n)
    if best is None:
        return None
    _, i, n = best
    start, end = lines[i][0], lines[i + n - 1][1]
    return Support(pages[i], chunk.text[start:end][:MAX_QUOTE_CHARS])
