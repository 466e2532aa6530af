"""Stopping a generation that has stopped saying anything: a run of blank lines, or the same few words
over and over, until the token limit.

Small models do this (the demo model printed blank lines for six minutes on a CPU until its 1,024-token
limit), and large ones can on a bad prompt. The check runs on every model's text, in-process or remote,
and ends the answer with finish_reason "repetition" (never cached). The limits are documented in the
README ("Limits"): they are far from anything an answer needs, a table's rule lines and a list's bullets
included, whose repeated parts are short and carry changing text between them.
"""

from __future__ import annotations

from collections import Counter

# Blank lines in a row that end an answer: Markdown needs at most one between blocks.
MAX_BLANK_LINES = 8
# The same text repeated back to back, ending an answer once the repeats cover this many characters
# and number at least MIN_REPEATS: the unit can be up to MAX_UNIT_CHARS long (a sentence said again:
# the demo model repeated an 82-character line on a 10-K question until its 1,024-token limit).
REPEATED_CHARS = 240
MIN_REPEATS = 4
MAX_UNIT_CHARS = 200
# The repeat check runs once this much new text has come (a few tokens): it compares up to 200 units,
# too much to do for every token of 64 streams on the server's event loop.
CHECK_EVERY_CHARS = 32
_TAIL_CHARS = MAX_UNIT_CHARS * MIN_REPEATS + REPEATED_CHARS
# One line of some length said again and again, not only back to back: a table row longer than MAX_UNIT_CHARS,
# or two rows in turn (a user saw a row printed 18 times before the check above ended the answer). A line
# this long is a sentence or a row with its own text; the fourth time it is said, the answer ends.
LINE_REPEATS = 4
MIN_LINE_CHARS = 40


class RunawayWatch:
    """Fed the generated text piece by piece; says when the text has become a runaway."""

    def __init__(self) -> None:
        self._tail = ""
        self._unchecked = 0
        self._line = ""  # the line being said
        self._lines: Counter[str] = Counter()  # each long line said, how often
        self.unit: str | None = None  # the text repeated back to back, once a repeat ended the answer

    def feed(self, text: str) -> bool:
        self._tail = (self._tail + text)[-_TAIL_CHARS:]
        self._unchecked += len(text)
        if self._blank_run() or self._line_said_again(text):
            return True
        if self._unchecked < CHECK_EVERY_CHARS:
            return False
        self._unchecked = 0
        return self._repeating()

    def _line_said_again(self, text: str) -> bool:
        *ended, self._line = (self._line + text).split("\n")
        for line in ended:
            said = line.strip()
            if len(said) >= MIN_LINE_CHARS:
                self._lines[said] += 1
                if self._lines[said] >= LINE_REPEATS:
                    back_to_back = self._tail.rstrip("\n").endswith((line + "\n") * 2)
                    self.unit = line + "\n" if back_to_back else None
                    return True
        return False

    def _blank_run(self) -> bool:
        stripped = self._tail.rstrip("\n\r\t \u3000")
        trailing = self._tail[len(stripped) :]
        return trailing.count("\n") > MAX_BLANK_LINES or len(trailing) >= REPEATED_CHARS

    def _repeating(self) -> bool:
        tail = self._tail
        if len(tail) < REPEATED_CHARS:
            return False
        for size in range(1, MAX_UNIT_CHARS + 1):
            repeats = max(MIN_REPEATS, -(-REPEATED_CHARS // size))
            if size * repeats > len(tail):
                break
            unit = tail[-size:]
            if unit.strip() and tail.endswith(unit * repeats):
                self.unit = unit
                return True
        return False


def without_repeats(text: str, unit: str) -> str:
    """The text with the copies of `unit` that end it cut down to one: what a reader keeps of a runaway."""
    end = len(text)
    while (
        end >= 2 * len(unit)
        and text[end - len(unit) : end] == unit
        and text[end - 2 * len(unit) : end - len(unit)] == unit
    ):
        end -= len(unit)
    return text[:end]


# An answer cut at its token limit whose 3-word runs are nearly all repeats went round in a loop with small changes
# ("and the Uniform Commercial Code (UCC) and the UCC, and the UCC as adopted ... and the Uniform ..."), which the
# back-to-back check above cannot see: it is flagged as a repetition (and so not cached), not served again.
LOOP_RUN_WORDS = 3
LOOP_MIN_WORDS = 60
LOOP_DISTINCT_SHARE = 0.3


def looped(text: str) -> bool:
    """Whether fewer than 30% of the text's 3-word runs are distinct (text of 60 words or more): a list of 40
    "| contract | NOT STATED | - |" rows has 40%, prose nearly all."""
    words = text.split()
    if len(words) < LOOP_MIN_WORDS:
        return False
    runs = [tuple(words[i : i + LOOP_RUN_WORDS]) for i in range(len(words) - LOOP_RUN_WORDS + 1)]
    return len(set(runs)) < LOOP_DISTINCT_SHARE * len(runs)
