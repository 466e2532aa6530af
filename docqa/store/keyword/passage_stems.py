"""Each passage's words as FTS5 indexes them, stored beside the passage, so a search can count a
question's terms in one document's passages without asking FTS5 to tokenise them again.

The second pass of a search scores every matching passage of one document. It used to find them with
FTS5 and count the terms from `highlight()`'s marks, which tokenises each passage's whole text at
every query: at 100,000 chunks that was ~6 ms per document, a third of a question's time. Here a
passage's stems are written once, when the passage is, as an array of 64-bit stem IDs (a hash of
the stem: two stems of an index share one about once in 10^9 indexes of 200,000 distinct stems), and a
term's frequency is counted with numpy over the document's arrays (~0.6 ms for 100 passages, where
Python's `str.count` over the same stems as text took 8.5 ms): a one-stem term counts its stem, and
a term FTS5 splits into several ("e_mail") counts them as a phrase, adjacent and in order, as FTS5 does.

Stems are FTS5's own: words are cut out here (runs of letters and digits, as unicode61 cuts them,
CJK already written as bigrams by docqa.store.keyword.lexical) and each distinct word is stemmed once by a
private in-memory FTS5 table with passage_fts's tokenizer (case folding, diacritics removed, porter),
remembered. Cutting words here instead of in FTS5 is ~5 times faster to write (FTS5's `fts5vocab`
instance table returns ~1.5 us a token); a word FTS5 would cut differently (a combining mark, a
private-use character) is stemmed by FTS5 all the same, into however many tokens FTS5 makes of it.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
from collections.abc import Sequence

import numpy as np

from docqa.store.keyword import lexical

TOKENIZER = "porter unicode61 remove_diacritics 2"  # must equal passage_fts's
STEMS_DDL = (
    "CREATE TABLE IF NOT EXISTS passage_stems (id INTEGER PRIMARY KEY, body BLOB NOT NULL, headings BLOB NOT NULL)"
)
_ID = np.dtype("<i8")
_WORD = re.compile(r"[^\W_]+")  # letters and digits: unicode61's token characters, near enough
_MEMO_LIMIT = 200_000
# A heading: a short title after a section number ("12.3 Governing Law.", "Section 2. Retention of
# Agent;", "4.1 Formation of the Channel   (a)"), or a line in capitals ("TERMS AND CONDITIONS").
# Filings number theirs "Item 7.", "Part II", "Note 5".
_NUMBERED_HEADING = re.compile(
    r"[ \t]*(?:(?:section|article|clause|item|part|note)[ \t]+)?(?:\d+[a-z]?(?:\.\d+)*|[ivxlc]+)\.?[ \t]+"
    r"([^.:;]{3,80}?)(?=[.:;]|[ \t]{3}|$)",
    re.I,
)
# A Markdown heading ("## Liquidity"): Markdown files', and the Word, PowerPoint, Excel and HTML readers' headings
_ITEM_NUMBER = re.compile(r"[ \t]*item[ \t]+(\d+[a-z]?)\b", re.I)
_MARKDOWN_HEADING = re.compile(r"[ \t]{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$")
_CAPS_HEADING = re.compile(r"[ \t]*([A-Z][A-Z0-9 ,&/'()-]{3,80})[ \t]*$")
# A line in title case: a statement's or section's title in a filing ("Consolidated Statements of Cash
# Flows", "Liquidity and Capital Resources"). Lines with digits are table rows, not titles.
_TITLE_LINE = re.compile(r"[ \t]*([A-Z][^\d\n.:;,]{2,80}?)[ \t]*$")
# One word in title case or capitals alone on a line ("Employees", "Competition.", "SEASONALITY"), and how
# long the line below must be for it to be a heading above a paragraph (docqa.store.keyword.passage_stems)
_ONE_WORD_LINE = re.compile(r"[ \t]*([A-Z][a-z]{3,30}|[A-Z]{4,30})[.:]?[ \t]*$")
_PARAGRAPH_LINE = 40
# the words a title leaves in lowercase
_SMALL_WORDS = frozenset(
    ["a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "of", "on", "or", "per", "the", "to", "with"]
)
# Chinese headings: "第二节 概览", "一、发行人基本情况", "（二）控股股东及实际控制人"; the title runs to the first
# punctuation, digit or space (PDF text often runs a heading into its paragraph), at most 20 characters.
# The Chinese characters a heading's title is read in (and, for the migrations that re-read Chinese
# headings, what makes a document Chinese: docqa.store.keyword.fts5_tables, docqa.store.postgres.keyword_tables)
CHINESE_CHARS = "\u3400-\u4dbf\u4e00-\u9fff"
_CJK_MARK = (
    r"(?:第[一二三四五六七八九十百零〇\d]+[节章篇部分]|[一二三四五六七八九十]+、|[（(][一二三四五六七八九十]+[）)])"
)
_CJK_TITLE = rf"[ \t]*([{CHINESE_CHARS}][^：:，,。；;（(\d\s]{{1,19}})"
_CJK_HEADING = re.compile(r"[ \t]*" + _CJK_MARK + _CJK_TITLE)
# The same heading run into the end of the paragraph before it: PDF text of a Chinese filing often joins a
# heading's line to the sentence above ("……稳定性。（四）发行人控股子公司基本情况截至本……").
_CJK_HEADING_IN_LINE = re.compile(r"(?<=[。；！？])" + _CJK_MARK + _CJK_TITLE)
# A Chinese sentence or table row is no numbered heading ("2010 年 6 月 22 日，江苏省……", "1 江苏爱康实业有限
# 责任公司 4,533.00"): a numbered title with Chinese characters has no digits, no sentence punctuation and no
# space between two Chinese words (a table row's cells).
_NOT_CJK_TITLE = re.compile(
    rf"[{CHINESE_CHARS}].*[\d，。；！？、]|[\d，。；！？、].*[{CHINESE_CHARS}]|[{CHINESE_CHARS}][ \t]+[{CHINESE_CHARS}]"
)
_HEADING_WORDS = 10
# A financial statement's title heading a line that goes on with the company's name or the dates
# ("Consolidated Statements of Cash Flows GENERAL MILLS, INC. AND SUBSIDIARIES", "Consolidated Balance Sheets
# — December 31, 2018 and 2017"): too long or too punctuated for the rules above, and the heading that steers
# a question about a statement's line. Only a consolidated or condensed statement's: MD&A's run-in
# "Balance Sheet:" and "Statements of Operations:" discuss them. What follows the title has no lowercase word
# but the small ones (a sentence that starts with the words has: "Consolidated statements of operations data
# for the years").
_STATEMENT_TITLE = re.compile(
    r"[ \t]*((?:condensed[ \t]+consolidated|condensed|consolidated)[ \t]+(?:balance[ \t]+sheets?"
    r"|statements?[ \t]+of[ \t]+(?:consolidated[ \t]+)?(?:income|operations|earnings"
    r"|comprehensive[ \t]+(?:income|loss)|cash[ \t]+flows?|financial[ \t]+(?:position|condition)"
    r"|(?:changes[ \t]+in[ \t]+)?(?:stockholders|shareholders)['’]?[ \t]+equity)))"
    r"(?=[^\w]|$)(.*)$",
    re.I,
)
_AFTER_STATEMENT_TITLE = "(—–-"  # a dash before the dates, "(Unaudited)", "(In millions)"
_PAGE_NUMBER = re.compile(r"(?<![\d,])\d{1,3}$")  # a contents line ends with its page's number
# A statement's title used as a modifier in a heading: MD&A's "Off-Balance Sheet Arrangements", the
# derivative notes' "Balance Sheet Location" and "Income Statement Classification" (ASC 815's tables),
# "Balance Sheet Hedging", "Key Balance Sheet Data", "Gross Amounts Offset in the Balance Sheet", and the
# guarantors' "Condensed Consolidating Statement of Cash Flows" (S-X Rule 3-10), a note. Those words
# are indexed as one, so that the statement's title, which a question about its lines looks for
# (statement_weight), is found only where a heading is the statement.
_STATEMENT_PHRASE = (
    r"balance[ \t]+sheets?|income[ \t]+statements?"
    r"|statements?[ \t]+of[ \t]+(?:income|operations|earnings|cash[ \t]+flows?|financial[ \t]+position)"
)
_STATEMENT_AS_MODIFIER = re.compile(
    rf"\b(?:off[- \t]*|consolidating[ \t]+)(?:{_STATEMENT_PHRASE})"
    rf"|(?:{_STATEMENT_PHRASE})(?=[ \t]+(?:locations?|classifications?|hedg\w*|data|information|components?"
    rf"|arrangements|offsets?|offsetting)\b)"
    rf"|(?<=location on )(?:the[ \t]+)?(?:{_STATEMENT_PHRASE})|(?<=offset in the )(?:{_STATEMENT_PHRASE})",
    re.I,
)
# A passage keeps the last headings before it in its document: a statement's title is on its page's
# first lines, and the rows below it, in the page's later passages, are still that statement's.
CARRIED_HEADINGS = 3


class Stemmer:
    """FTS5's indexed forms of words and texts; thread-safe. Words are remembered (bounded)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute(f"CREATE VIRTUAL TABLE words USING fts5(w, content='', tokenize='{TOKENIZER}')")
        self._db.execute("CREATE VIRTUAL TABLE word_stems USING fts5vocab(words, 'instance')")
        self._stems: dict[str, list[str]] = {}
        # Stem IDs: a word of one stem (nearly all) in `_one`, so a text's words map in one C-level
        # pass (`map(dict.get)`; a loop over words in Python took as long as cutting them out); a word
        # of none or several stems in `_other`.
        self._one: dict[str, int] = {}
        self._other: dict[str, list[int]] = {}

    def stems(self, words: Sequence[str]) -> list[list[str]]:
        """Each word's FTS5 tokens: usually one stem; a word the tokenizer splits gives several, one
        of only separators none."""
        with self._lock:
            self._learn([w for w in words if w not in self._stems])
            return [self._stems[w] for w in words]

    def ids(self, text: str) -> list[int]:
        """The IDs of the text's stems, in order."""
        words = _WORD.findall(text)
        with self._lock:
            found = list(map(self._one.get, words))
            if None not in found:  # nearly always, once the words are known: return before a second scan
                return found  # type: ignore[return-value]  # no None in it
            self._learn([w for w, i in zip(words, found, strict=True) if i is None and w not in self._other])
            found = list(map(self._one.get, words))
            if None not in found:
                return found  # type: ignore[return-value]
            ids: list[int] = []
            for word in words:
                one = self._one.get(word)
                if one is None:
                    ids += self._other[word]
                else:
                    ids.append(one)
            return ids

    def _learn(self, words: Sequence[str]) -> None:
        """Stem the words not met yet (all of them again after the memo was cleared: bounded)."""
        missing = list(dict.fromkeys(words))
        if not missing:
            return
        if len(self._stems) + len(missing) > _MEMO_LIMIT:
            self._stems.clear()
            self._one.clear()
            self._other.clear()
        self._db.executemany("INSERT INTO words(rowid, w) VALUES (?, ?)", list(enumerate(missing)))
        found: list[list[str]] = [[] for _ in missing]
        for stem, row in self._db.execute("SELECT term, doc FROM word_stems ORDER BY doc, offset"):
            found[row].append(stem)
        self._db.execute("INSERT INTO words(words) VALUES ('delete-all')")
        for word, stems in zip(missing, found, strict=True):
            self._stems[word] = stems
            if len(stems) == 1:
                self._one[word] = stem_id(stems[0])
            else:
                self._other[word] = [stem_id(s) for s in stems]


def stem_id(stem: str) -> int:
    return int.from_bytes(hashlib.blake2b(stem.encode(), digest_size=8).digest(), "little", signed=True)


def encode(ids: Sequence[int]) -> bytes:
    return np.asarray(ids, dtype=_ID).tobytes()


def counts(arrays: Sequence[bytes], phrases: Sequence[Sequence[int]]) -> np.ndarray:
    """(phrase, array) -> how often the phrase's stem IDs occur in the encoded array, adjacent and in
    order (0 for a phrase of no stems)."""
    found = np.zeros((len(phrases), len(arrays)), dtype=np.int64)
    ids = np.frombuffer(b"".join(arrays), dtype=_ID)
    owner = np.repeat(np.arange(len(arrays)), [len(a) // _ID.itemsize for a in arrays])
    for n, phrase in enumerate(phrases):
        width = len(phrase)
        if not width or len(ids) < width:
            continue
        starts = len(ids) - width + 1
        hit = ids[:starts] == phrase[0]
        for k in range(1, width):  # the same array, k places on
            hit &= (ids[k : k + starts] == phrase[k]) & (owner[k : k + starts] == owner[:starts])
        found[n] = np.bincount(owner[:starts][hit], minlength=len(arrays))
    return found


def heading_texts(body: str) -> list[str]:
    """The titles of a passage's headings: a Markdown heading, a short title after a section number, a line
    in capitals, a line in title case, or one capitalised word on its own line above a paragraph (a
    filing's "Employees", "Competition", "Properties")."""
    found = []
    lines = body.split("\n")
    for n, line in enumerate(lines):
        match = (
            _statement_title(line)
            or _MARKDOWN_HEADING.match(line)
            or _CJK_HEADING.match(line)
            or _NUMBERED_HEADING.match(line)
            or _CAPS_HEADING.match(line)
            or _title_line(line)
            or _word_above_paragraph(line, lines[n + 1] if n + 1 < len(lines) else "")
        )
        if (
            match is not None
            and len(match.group(1).split()) <= _HEADING_WORDS
            and (match.re is not _NUMBERED_HEADING or not _NOT_CJK_TITLE.search(match.group(1)))
        ):
            found.append(_with_item_number(line, match))
        found.extend(in_line.group(1) for in_line in _CJK_HEADING_IN_LINE.finditer(line))
    return found


def indexed_heading(heading: str) -> str:
    """A heading as the index holds it: a statement's title used as a modifier is one word
    ("Off-Balance Sheet Arrangements" -> "OffBalanceSheet Arrangements")."""
    return _STATEMENT_AS_MODIFIER.sub(lambda m: re.sub(r"[\s-]+", "", m.group(0)), heading)


def _with_item_number(line: str, match: re.Match[str]) -> str:
    """A heading's title, with "Item 2" before it where the line numbers a filing's item ("Item 2.
    Properties"): the item's number tells Item 2's Properties from a note's "Property and Equipment", which
    the stems cannot (both are "properti")."""
    item = _ITEM_NUMBER.match(line) if match.re is _NUMBERED_HEADING else None
    return f"Item {item.group(1)} {match.group(1)}" if item else match.group(1)


def _statement_title(line: str) -> re.Match[str] | None:
    """A line that starts with a financial statement's title and goes on with no sentence after it."""
    match = _STATEMENT_TITLE.match(line)
    if match is None or not match.group(1)[0].isupper():
        return None
    after = match.group(2).strip()
    sentence = after[:1] not in _AFTER_STATEMENT_TITLE and not after[:1].isupper()
    if after and (sentence or _PAGE_NUMBER.search(after)):
        return None  # a sentence's words ("... in our Consolidated Balance Sheets."), a contents line's page
    rest = re.findall(r"[^\W\d_]+", after)
    if rest[:1] and rest[0].lower() == "data":  # Item 6's "Statement of Operations Data", a table of years
        return None
    if any(word.islower() and word not in _SMALL_WORDS for word in rest) or len(rest) > _HEADING_WORDS:
        return None
    return match


def _word_above_paragraph(line: str, below: str) -> re.Match[str] | None:
    """One capitalised word alone on its line, with a sentence below it: a run-in heading. A lone word
    above a short line is a table's label or a name in a list, no heading."""
    match = _ONE_WORD_LINE.match(line)
    if match is None or len(below.strip()) < _PARAGRAPH_LINE or not below.lstrip()[:1].isupper():
        return None
    return match


def _title_line(line: str) -> re.Match[str] | None:
    match = _TITLE_LINE.match(line)
    if match is None:
        return None
    words = match.group(1).split()
    capitalised = all(w[0].isupper() or w in _SMALL_WORDS for w in words)
    return match if capitalised and sum(w not in _SMALL_WORDS for w in words) >= 2 else None


def stored_rows(stemmer: Stemmer, passages: Sequence[tuple[int, str]]) -> list[dict[str, object]]:
    """passage_stems rows for (rowid, passage text) pairs of one document, in its order: the stems of its
    indexed form (lexical.index_text), and those of its headings (heading_rows)."""
    return [
        {"id": rowid, "body": encode(stemmer.ids(lexical.index_text(passage))), "headings": headings}
        for (rowid, passage), (_, headings) in zip(passages, heading_rows(stemmer, passages), strict=True)
    ]


def heading_rows(stemmer: Stemmer, passages: Sequence[tuple[int, str]]) -> list[tuple[int, bytes]]:
    """(rowid, headings' stems) for (rowid, passage text) pairs of one document, in its order: a passage's
    own headings with the CARRIED_HEADINGS last ones before it (read from the text as written: a Chinese
    heading before its characters are cut into bigrams). What a migration writes again when the rule that
    reads headings changes."""
    rows: list[tuple[int, bytes]] = []
    carried: list[str] = []
    for rowid, passage in passages:
        own = [indexed_heading(heading) for heading in heading_texts(passage)]
        rows.append((rowid, encode(stemmer.ids(lexical.index_text("\n".join([*carried, *own]))))))
        carried = [*carried, *own][-CARRIED_HEADINGS:]
    return rows
