"""Text preparation for the SQLite FTS5 (BM25) index, for English and Chinese alike.

FTS5's unicode61 tokenizer splits on spaces and punctuation, which leaves a run of Chinese characters
as one giant token. We index CJK runs as overlapping character bigrams (the classic CJK trick that
needs no dictionary), and write queries the same way, so both languages share one index.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

_CJK_CHARS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{_CJK_CHARS}]+")
_WORD = re.compile(r"[^\W_]+")  # letters and digits, as FTS5's unicode61 splits (3M_2018_10K: 3m 2018 10k)
# "FY2018" and "FY18" name a fiscal year; filings write the year itself ("2018", "fiscal 2018"), as do
# file names and cover pages: the year is searched for beside the fiscal-year form.
_FISCAL_YEAR = re.compile(r"fy(\d{2}|\d{4})")
_CONTROL_TO_SPACE = str.maketrans({c: " " for c in (*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F)})

# Words too common in questions to help ranking; BM25's IDF would discount them anyway,
# but leaving them out keeps the OR query short and fast.
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "its",
        "may",
        "might",
        "must",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "shall",
        "should",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "under",
        "upon",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "about",
        "any",
        "all",
        "also",
        "been",
        "being",
        "into",
        "more",
        "most",
        "other",
        "such",
        "only",
        "same",
        "some",
        "very",
    ]
)


def _bigrams(run: str) -> str:
    if len(run) == 1:
        return run
    return " ".join(run[i : i + 2] for i in range(len(run) - 1))


def index_text(text: str) -> str:
    """The form of a chunk's text that goes into the FTS5 table: CJK runs as bigrams, control
    characters as spaces (FTS5 splits words at them either way; keyword search marks matches with them)."""
    return _CJK_RUN.sub(lambda m: f" {_bigrams(m.group())} ", text.translate(_CONTROL_TO_SPACE))


def is_stopword(word: str) -> bool:
    """Whether a lowercased word is one of the stopwords queries leave out."""
    return word in _STOPWORDS


def _is_term(token: str) -> bool:
    """Whether a lowercased token is worth searching for: any CJK bigram or character, and other
    words of two letters or more that are not stopwords."""
    return is_cjk(token) or (len(token) >= 2 and token not in _STOPWORDS)


def query_terms(text: str, max_terms: int = 64) -> list[str]:
    """A text's search terms (a question's, an answer's, a page's): lowercased words (CJK as bigrams),
    stopwords and repeats left out."""
    terms: list[str] = []
    seen: set[str] = set()
    for token in _WORD.findall(index_text(text).lower()):
        if not _is_term(token):
            continue
        for term in (token, *_fiscal_year(token)):
            if term not in seen:
                seen.add(term)
                terms.append(term)
        if len(terms) >= max_terms:
            break
    return terms[:max_terms]


def _fiscal_year(token: str) -> tuple[str, ...]:
    """The year a fiscal-year token names ("fy2018" and "fy18": "2018"), or nothing."""
    match = _FISCAL_YEAR.fullmatch(token)
    if match is None:
        return ()
    year = match.group(1)
    return (year if len(year) == 4 else f"20{year}",)


def is_cjk(term: str) -> bool:
    """Whether a term is Chinese (a character bigram, or a lone character)."""
    return bool(_CJK_RUN.fullmatch(term))


def words(text: str) -> set[str]:
    """The lowercased words of an indexed text (CJK already as bigrams), to compare with query terms."""
    return set(_WORD.findall(text.lower()))


def match_expression(terms: list[str]) -> str | None:
    """An FTS5 MATCH expression: the terms OR-ed, each quoted; None if there are none."""
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def match_query(text: str, max_terms: int = 64) -> str | None:
    """An FTS5 MATCH expression (terms OR-ed, each quoted) for a text's terms; None if it has none."""
    return match_expression(query_terms(text, max_terms))


_SEGMENT_BREAK = re.compile(r"[:;?!]")


def word_sequences(text: str) -> list[list[str]]:
    """A text's words in order, stopwords left out, one list per clause (a colon, semicolon or
    question mark ends one): the sequences naming_runs looks for runs in."""
    sequences = []
    for segment in _SEGMENT_BREAK.split(text):
        words = [token for token in _WORD.findall(index_text(segment).lower()) if _is_term(token)]
        if words:
            sequences.append(words)
    return sequences


def naming_runs(sequences: Sequence[Sequence[str]], title_words: AbstractSet[str], min_run: int = 2) -> set[str]:
    """The question's words that name a document: runs of at least min_run consecutive words of its
    word_sequences (stopwords passed over, a clause's end ends a run) that are all in its title."""
    names: set[str] = set()
    for sequence in sequences:
        run: list[str] = []
        for word in [*sequence, None]:
            if word is not None and word in title_words:
                run.append(word)
                continue
            if len(run) >= min_run:
                names.update(run)
            run = []
    return names


def words_of(text: str) -> list[str]:
    """A text's words as written (case kept), split as the index splits them."""
    return _WORD.findall(text)
