"""A document's text as the paragraphs a collection question scores: where each starts and ends, its words,
and the title it stands under (docqa.answering.packing scores and packs them).

A paragraph ends at a blank line. A longer block is cut where a numbered clause starts inside it: text
extracted from a PDF by another tool, or a contract filed as plain text, often runs a whole article on one
line ("... the environment. 2.2 Exclusivity. Provided that ..."), and a cut every 1,500 characters split the
clause from its own title, which then lent it nothing (on 100 CUAD contracts, 241 of 671 labelled clauses
lay in such blocks: docs/benchmarks/reading.md). A piece still too long is cut at a line break, else after a
sentence.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache

from docqa.store.keyword import lexical

PARAGRAPH_CHARS = 1500  # a block longer than this is cut at its clauses, then at line breaks or sentences
HEADING_CHARS = 200  # a paragraph this short, just before a taken one, is taken with it (its heading)
SECTION_TITLES = True  # a paragraph without its own title takes its section's heading line's
CLAUSE_STARTS = True  # an overlong block is cut where a numbered clause starts inside it
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")
# Where a numbered clause starts inside a block: at a line's start, or after a sentence's end, an outline number
# ("2.2", "10.15.", "3.", "Section 4") and the clause's first word, or a Chinese article or item number
# ("第十二条", "三、"). A lettered item ("(b)", "ii)") is not a cut: it is most often part of its clause's
# sentence (docs/benchmarks/reading.md compares the two).
_CLAUSE_START = re.compile(
    r"(?:\n|(?<=[.;:])[ \t]+|(?<=[。；：]))[ \t]*(?="
    r"(?:(?:section|article|clause)[ \t]+)?\d{1,3}(?:\.\d{1,3})*\.?[ \t]+[\"'“(A-Za-z]"
    r"|第[一二三四五六七八九十百零\d]+条|[一二三四五六七八九十]+、)",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.;:。；])\s+")
# A clause's own title at its start: a number ("7.1", "12.", "(b)", "Section 4") then a few words ending in a
# period or colon ("7.1 Term."), or words in capitals ending so ("TERM AND TERMINATION.").
_NUMBERED_TITLE = re.compile(
    r"\s*(?:(?:section|article|clause)\s+)?(?:\d+(?:\.\d+)*|[ivxlc]+|\(?[a-z\d]{1,3}\))[.)]?\s+([^.:\n]{2,80}?)[.:]",
    re.IGNORECASE,
)
_CAPITALS_TITLE = re.compile(r"\s*([A-Z][A-Z ,;&/'-]{2,80})[.:]")
# A heading line: an optional number ("42.0", "9.", "Article 7", "(b)") then at most 80 characters of words.
_HEADING_LINE = re.compile(
    r"(?:(?:section|article|clause)\s+)?(?:\d+(?:\.\d+)*|[ivxlc]+|\(?[a-z\d]{1,3}\))?[.)]?\s*([^.;:\n]{3,80})[.:]?",
    re.IGNORECASE,
)
_SUFFIX = re.compile(r"(?:ations?|ities|ity|ments?|ings?|ions?|ive|ed|es|s)$")


def paragraphs(text: str) -> list[tuple[int, int]]:
    """[start, end) of the text's paragraphs: split at blank lines, an overlong one at its clauses (then at
    its line breaks or sentences)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for gap in [*_BLANK_LINE.finditer(text), None]:
        end = gap.start() if gap else len(text)
        if text[start:end].strip():
            spans += _within(text, start, end)
        start = gap.end() if gap else end
    return spans


def _within(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """An overlong block's pieces: its clauses (where CLAUSE_STARTS), each still overlong one cut again."""
    if end - start <= PARAGRAPH_CHARS:
        return [(start, end)]
    cuts = [m.end() for m in _CLAUSE_START.finditer(text, start, end)] if CLAUSE_STARTS else []
    bounds = [start, *(c for c in cuts if start < c < end), end]
    pieces = [(s, e) for s, e in itertools.pairwise(bounds) if text[s:e].strip()]
    return [part for s, e in pieces for part in _cut_long(text, s, e)]


def _cut_long(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A piece cut to at most PARAGRAPH_CHARS: at its last line break in the second half of that length, else
    after its last sentence there, else at the length itself."""
    pieces = []
    while end - start > PARAGRAPH_CHARS:
        low, high = start + PARAGRAPH_CHARS // 2, start + PARAGRAPH_CHARS
        cut = text.rfind("\n", low, high)
        if cut <= start:
            ends = [m.end() for m in _SENTENCE_END.finditer(text, low, high)]
            cut = ends[-1] if ends else high
        pieces.append((start, cut))
        start = cut
    return [*pieces, (start, end)]


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A word without its commonest English endings, so that 'compete' meets 'competing', 'assignment'
    meets 'assign' (each side stemmed alike; other scripts unchanged). Kept per word: a collection question
    stems some 600,000 words of 100 contracts' paragraphs, a few thousand of them distinct."""
    return _SUFFIX.sub("", word) if len(word) > 5 and word.isascii() else word


def paragraph_words(text: str) -> list[str]:
    """The text's words as paragraphs are scored: lower-cased and stemmed, CJK as the index's bigrams."""
    return [stem(word.lower()) for word in lexical.words_of(lexical.index_text(text))]


def title(text: str, spans: list[tuple[int, int]], n: int) -> str:
    """The title a paragraph stands under: its own leading one ("7.1 Term. The term of ...", "TERMINATION.
    Either party ..."), else the short paragraph before it (a heading line)."""
    start, end = spans[n]
    head = min(end, start + 120)
    own = _NUMBERED_TITLE.match(text, start, head) or _CAPITALS_TITLE.match(text, start, head)
    if own:
        return own.group(1)
    return "".join(text[slice(*spans[k])] for k in heading_of(spans, n))


def titles(text: str, spans: list[tuple[int, int]]) -> list[str]:
    """Each paragraph's title (`title`), and with SECTION_TITLES, for a paragraph without its own, the
    heading line its section stands under ("42.0 NON-COMPETITION" over "42.1 ... shall not enter into an
    agreement ..."), up to the next heading line: a clause's body need not repeat its heading's words."""
    found, section = [], ""
    for n in range(len(spans)):
        line = text[slice(*spans[n])]
        heading = SECTION_TITLES and is_heading_line(line)
        if heading:
            section = line
        found.append(title(text, spans, n) or ("" if heading else section))
    return found


def is_heading_line(paragraph: str) -> bool:
    """A paragraph that is only a heading: a few words, no sentence ("9. NON-COMPETITION.", "Article 7 Term",
    "NOTICES"), in capitals or with every major word capitalised."""
    words = _HEADING_LINE.fullmatch(paragraph.strip())
    if not words:
        return False
    body = words.group(1)
    letters = [w for w in re.findall(r"[A-Za-z][A-Za-z'-]*", body) if len(w) > 3]
    return bool(letters) and (body.isupper() or all(w[0].isupper() for w in letters))


def heading_of(spans: list[tuple[int, int]], n: int) -> set[int]:
    """The paragraph just before the n-th where it is short enough to be its heading (HEADING_CHARS)."""
    if n > 0 and spans[n - 1][1] - spans[n - 1][0] <= HEADING_CHARS:
        return {n - 1}
    return set()
