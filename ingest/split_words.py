"""Words a PDF's layout split in two, joined again by the document's own vocabulary.

Typesetters space a heading's letters out, or set a word's last glyph a little apart, and PDFium reads the
gap as a space: 3M's 10-K is stored with "Consolidated Balance Shee t", "Statement of Income" as "Incom e",
"Equit y", "Busines s". The keyword index then has neither "sheet" nor the statement's title the retrieval
steers to. The gap itself does not tell: "Shee t" is set with the same gap, relative to its font size and
its letters' spacing, as "used by" on the same page (measured with PDFium's glyph boxes). The words do: a
fragment that never stands alone in the document, followed by one or two letters that hardly ever do, that
together make a word the document uses elsewhere, is that word ("direct or" stays: "or" is a word of its
own in any contract, though "director" is written there too). No dictionary is needed, so it holds for any
language and for each filer's own terms; a word the document never writes whole stays as the PDF has it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

# a fragment of three letters or more, a space, then one or two letters written in the same case
_SPLIT = re.compile(r"\b([A-Za-z]{3,}) ([a-z]{1,2}|[A-Z]{1,2})\b(?![’'-])")
_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*")  # "company’s" is one word: its "s" stands not alone
MIN_WHOLE = 2  # the joined word is written whole at least this often in the document
MAX_TAIL_ALONE = 4  # a two-letter tail is a word of its own fewer times than this ("or", "to": always)
_ONE_LETTER_WORDS = frozenset({"a", "i"})  # the tails of one letter that are words; "e", "s", "t" are not
# small capitals: a word's first letter in a larger size, its others as smaller capitals, which some
# filings converted from HTML set apart ("MGM R ESORTS I NTERNATIONAL" on a 10-K's cover)
_SMALL_CAPS = re.compile(r"\b([A-Z]) ([A-Z]{3,})\b")


def join_split_words(pages: Sequence[str]) -> tuple[list[str], int]:
    """The pages with split words joined, and how many were."""
    words = Counter(w.lower() for text in pages for w in _WORD.findall(text))
    found = [m for text in pages for m in _SPLIT.finditer(text)]
    fragments = Counter(m.group(1).lower() for m in found)
    tails = Counter(m.group(2).lower() for m in found)
    joined = 0

    def join(match: re.Match[str]) -> str:
        nonlocal joined
        left, tail = match.group(1), match.group(2)
        if left[-1].isupper() != tail[0].isupper():  # "Part I", "Exhibit A": a name and its letter
            return match.group(0)
        whole = (left + tail).lower()
        # the fragment is never a word of its own here ("direct" in "direct or" is, elsewhere), and the tail
        # hardly ever ("assign or" is no "assignor", "contract or" no "contractor")
        left_alone = words[left.lower()] - fragments[left.lower()]
        tail_alone = words[tail.lower()] - tails[tail.lower()]
        tail_is_word = len(tail) > 1 or tail.lower() in _ONE_LETTER_WORDS  # "e" of "e.g." or "(e)" is none
        if words[whole] >= MIN_WHOLE and left_alone == 0 and not (tail_is_word and tail_alone >= MAX_TAIL_ALONE):
            joined += 1
            return left + tail
        return match.group(0)

    out = [_SPLIT.sub(join, text) for text in pages]
    out, capitals = _join_small_capitals(out, words)
    return out, joined + capitals


def _join_small_capitals(pages: list[str], words: Counter[str]) -> tuple[list[str], int]:
    """ "R ESORTS" as "RESORTS": a capital alone, then capitals that never stand alone in the document,
    that together make a word it writes whole elsewhere ("A NOTHER" stays where "another" is never written;
    "I NTERNATIONAL" is joined, "I" being a word notwithstanding)."""
    found = [m for text in pages for m in _SMALL_CAPS.finditer(text)]
    rests = Counter(m.group(2).lower() for m in found)
    joined = 0

    def join(match: re.Match[str]) -> str:
        nonlocal joined
        rest = match.group(2).lower()
        if words[match.group(1).lower() + rest] >= MIN_WHOLE and words[rest] == rests[rest]:
            joined += 1
            return match.group(1) + match.group(2)
        return match.group(0)

    return [_SMALL_CAPS.sub(join, text) for text in pages], joined
