"""Questions about the lines of a filing's financial statements, in an analyst's words, labelled by the
statement's own pages: does retrieval find the statement that holds a metric, for metrics nobody tuned on?

FinanceBench asks mostly for numbers that a 10-K's or 10-Q's balance sheet, income statement or cash flow
statement holds, and docqa steers a question to a statement by the metrics it names
(docqa/profiles/sec/statements.py). Its dev questions name a few dozen metrics; users and the
filings kept back name others. This writes, for every 10-K and 10-Q in a folder, questions about the
standard captions of the three statements (Regulation S-X Article 5's balance sheet and income statement
captions, ASC 230's cash flow sections) and the textbook measures read from them, from fixed templates
(bench/statement_templates.py) written before any was scored: set M is the one whose misses may be read
while mending, set N other metrics and phrasings, held out until the mending is done.

The evidence is the statement's pages: the first page after the cover and contents headed by a line that is
the statement's title ("Consolidated Statements of Cash Flows", "Condensed Consolidated Balance Sheets",
perhaps with the company's name) and that is a table (at least `_TABLE_FIGURES` figures), and the next page
when it goes on under the same title. A filing whose statement is not found gives no question about it (counted).

    python -m bench.statement_questions --docs ../shared/data/financebench_dev/pdf --out /tmp/fb_stmt.jsonl [--set N]
    docqa eval /tmp/fb_stmt.jsonl --docs ../shared/data/financebench_dev --doc-field doc_pdf \\
        --no-embeddings --json --data-dir /tmp/fbm --details /tmp/fbm.jsonl --scope document
    python -m bench.section_questions --score after=/tmp/fbm.jsonl [before=...] --note "..."

The per-statement figures come from `--score` of bench/section_questions.py (a question's category is its
statement). A hit is a top-k chunk whose pages hold one of the statement's pages; the same figure may also
be stated in MD&A or a note, which this set does not count.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from bench.section_questions import Filing, _squash, evidence_row, write_set
from bench.statement_templates import STATEMENT_SETS

# A statement's title (letters only, lower case), with or without "condensed" and "consolidated"; the
# comprehensive income statement is not the income statement.
STATEMENT_TITLES = {
    "balance_sheet": re.compile(r"(?:balancesheets?|statements?of(?:consolidated)?financial(?:position|condition))"),
    "income_statement": re.compile(r"statements?of(?:consolidated)?(?:income|operations|earnings)"),
    "cash_flow_statement": re.compile(r"statements?of(?:consolidated)?cashflows?"),
}
# What may follow a title on its heading line: nothing, "(continued)", "(unaudited)", the company's name
_AFTER_TITLE = re.compile(r"(?:continued|unaudited)*$|.*(?:subsidiaries|companies|inc|corporation|company)$")
_HEAD_LINES = 6  # a title this far down a page still heads it (after "Table of Contents", the company)
# Some PDFs put every word on a line of its own: then the title must start within this many letters
_HEAD_LETTERS = 80
_TABLE_FIGURES = 40  # figures that make a page a statement rather than a list of statements or the audit report
_FIGURE = re.compile(r"\d[\d,]*(?:\.\d+)?")
_FIRST_PAGE = 3  # the cover and the table of contents come before


def _heading_line(title: re.Pattern[str], page: str, head_lines: int = _HEAD_LINES) -> bool:
    """A line among the page's first is the title (and perhaps the company's name), nothing more."""
    lines = [_squash(line) for line in page.splitlines() if line.strip()][:head_lines]
    for line in lines:
        bare = re.sub(r"^(?:condensed)?(?:consolidated)?", "", line)
        found = title.match(bare)
        if found and _AFTER_TITLE.match(bare[found.end() :]):
            return True
    return False


def _heads(title: re.Pattern[str], page: str) -> bool:
    """The title starts the page's text, words on lines of their own (not Item 6's "Statement of
    Operations Data")."""
    letters = _squash(page[:2000])
    found = title.search(letters[: _HEAD_LETTERS + 60])
    return found is not None and found.start() <= _HEAD_LETTERS and not letters[found.end() :].startswith("data")


def _is_contents(page: str) -> bool:
    """A page with lines that are two statements' titles lists them (a table of contents)."""
    return sum(_heading_line(title, page, head_lines=1000) for title in STATEMENT_TITLES.values()) >= 2


def _is_table(page: str) -> bool:
    return len(_FIGURE.findall(page)) >= _TABLE_FIGURES


def statement_pages(filing: Filing, statement: str) -> list[int]:
    """The statement's pages (1-based): its first table page headed by a line that is its title, and the
    next if it goes on under the same title; failing any such line, the first table page whose text starts
    with the title; [] when not found."""
    title = STATEMENT_TITLES[statement]
    for heads in (_heading_line, _heads):
        for number in range(_FIRST_PAGE, len(filing.pages) + 1):
            page = filing.pages[number - 1]
            if heads(title, page) and _is_table(page) and not _is_contents(page):
                more = number < len(filing.pages) and heads(title, filing.pages[number])
                return [number, number + 1] if more else [number]
    return []


def rows_for(
    filing: Filing, docs_root: Path, templates: dict[str, tuple[str, ...]]
) -> tuple[list[dict[str, object]], list[str]]:
    """The questions on one filing, and the statements not found."""
    rows: list[dict[str, object]] = []
    missing: list[str] = []
    for statement, phrasings in templates.items():
        pages = statement_pages(filing, statement)
        if not pages:
            missing.append(statement)
            continue
        for n, template in enumerate(phrasings):
            question = template.format(co=filing.company, period=filing.period)
            rows.append(evidence_row(filing, docs_root, f"{statement}-{n}", question, statement, pages))
    return rows, missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=Path, required=True, help="The folder of filings (named like 3M_2018_10K.pdf).")
    parser.add_argument("--out", type=Path, required=True, help="Where the set goes (outside the project).")
    parser.add_argument("--set", default="M", choices=sorted(STATEMENT_SETS), help="M: mended on; N: held out")
    args = parser.parse_args()
    templates = STATEMENT_SETS[args.set]
    filings, count, missing = write_set(args.docs, args.out, lambda filing, root: rows_for(filing, root, templates))
    print(json.dumps({"filings": filings, "questions": count, "statements_not_found": dict(missing)}))


if __name__ == "__main__":
    main()
