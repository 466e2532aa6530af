"""Questions about a filing's standard sections, in an analyst's words, labelled from the filings' own item
headings: does retrieval find the section a question's topic lives in, on questions nobody tuned on?

FinanceBench's dev questions are mostly about the financial statements; the questions on filings kept back
also ask what a 10-K's standard sections hold (legal proceedings, risks, properties, dividends, market risk,
controls, competition, employees, liquidity). This writes such a set for every 10-K and 10-Q in a folder:
- the questions come from fixed templates (bench/section_templates.py, two phrasings per topic), written
  from the forms' item titles and an analyst's everyday words before any was scored, and never changed to
  suit a result. `--set A` (the default) is the set whose misses were read while mending; `--set B` the same
  topics in other words, held out until the mending was done; `--set C` what an analyst asks of any filer
  about its business, cover, acquisitions, restructuring, segments, lawsuits and dividends (FinanceBench's
  generic wording and an analyst's own), labelled by the cover's Section 12(b) table, Item 1's first pages
  and the headings of the notes and of MD&A; `--set D` why a line of the results changed, labelled by MD&A's
  results of operations (up to eight pages from its sub-heading);
- the evidence pages come from the PDF's own item headings ("Item 3. Legal Proceedings", read by
  pypdfium2's plain text, not by docqa's reader): the pages from the item's heading to the next item's
  heading; a topic that is a sub-heading of Item 1 or 7 (Competition, Employees or Human Capital, Liquidity
  and Capital Resources) takes the pages from that sub-heading line to the next item's heading, at most
  three pages. Legal proceedings also take the legal notes' pages (Item 3 often only points to them), and
  repurchases and dividends the pages of their own headings in MD&A and the equity note. A filing whose
  headings are not found gives no question for that topic (counted).

    python -m bench.section_questions --docs ../shared/data/financebench_dev/pdf --out /tmp/fb_sections.jsonl [--set B]
    docqa eval /tmp/fb_sections.jsonl --docs ../shared/data/financebench_dev --doc-field doc_pdf \\
        --no-embeddings --json --data-dir /tmp/fbs --details /tmp/fbs.jsonl [--scope document]
    python -m bench.section_questions --score after=/tmp/fbs.jsonl [before=/tmp/old.jsonl ...]

`--score` prints page recall@1/3/5 per topic of each details file and writes them to
bench/results/section_questions_<date>_<commit>.json (`--note` says what the runs were).

The set stays outside the project (its pages are the filings'). A question is a page hit when a top-k chunk's
pages hold one of the section's pages, so a long section (risk factors) is an easy target and a short one
(legal proceedings, often one paragraph) a hard one; the per-topic figures are what to read.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium

from bench.result_files import new_result_path
from bench.section_templates import COMPANY_NAMES, TEMPLATE_SETS, TEMPLATES

_NAME = re.compile(r"([A-Z0-9]+)_(\d{4})(Q\d)?_(10K|10Q)\b")
_ITEM = re.compile(r"^\s*item\s*(\d{1,2}[abc]?)\b\s*[.:\-\u2013\u2014]?(.*)$", re.IGNORECASE | re.MULTILINE)
_TOC_ITEMS = 5  # a page naming this many items before the first heading is a table of contents
_SUB_PAGES = 3

# The items in the order they appear, each with its title's first word as Regulation S-K and the forms
# give it (a 10-Q has two parts that reuse the numbers); a line "Item 8 of Part II" is a reference, no heading.
TEN_K_ITEMS = {
    "1": "business",
    "1A": "risk",
    "1B": "unresolved",
    "1C": "cybersecurity",
    "2": "properties",
    "3": "legal",
    "4": "mine",
    "5": "market",
    "6": "selected",
    "7": "management",
    "7A": "quantitative",
    "8": "financial",
    "9": "changes",
    "9A": "controls",
    "9B": "other",
    "9C": "disclosure",
    "10": "directors",
    "11": "executive",
    "12": "security",
    "13": "certain",
    "14": "principal",
    "15": "exhibits",
    "16": "form",
}
TEN_Q_ITEMS = {
    "I-1": "financial",
    "I-2": "management",
    "I-3": "quantitative",
    "I-4": "controls",
    "II-1": "legal",
    "II-1A": "risk",
    "II-2": "unregistered",
    "II-3": "defaults",
    "II-4": "mine",
    "II-5": "other",
    "II-6": "exhibits",
}

# The notes' headings a topic's note may carry (set C's topics)
_ACQUISITIONS = "notes/acquisitions|business combinations|acquisitions and divestitures|acquisitions and dispositions"
_RESTRUCTURING = (
    "notes/restructuring|restructuring charges|restructuring and other charges|restructuring activities"
    "|restructuring and related activities|restructuring and other related charges|restructuring costs"
)
_SEGMENTS = (
    "notes/segment information|segment reporting|segments|business segment information|reportable segments"
    "|segment and geographic information|geographic information|operating segments|business segments"
)
_RESULTS_TITLES = "results of operations|consolidated results of operations|results of operations overview"
_RESULTS = f"7/{_RESULTS_TITLES}"
_RESULTS_10Q = f"I-2/{_RESULTS_TITLES}"
# topic -> where it is in a 10-K, and in a 10-Q (None: no such section): an item ("3"), a sub-heading in an
# item ("1/competition"), an item's first pages ("1#2"), the cover's securities table ("cover"), or a note's
# heading in the financial statements ("notes/...")
SECTIONS: dict[str, tuple[str, str | None]] = {
    "legal": ("3", "II-1"),
    "risks": ("1A", "II-1A"),
    "properties": ("2", None),
    "equity": ("5", "II-2"),
    "market_risk": ("7A", "I-3"),
    "controls": ("9A", "I-4"),
    "competition": ("1/competition", None),
    "employees": ("1/employees|human capital|our employees|human capital resources", None),
    "liquidity": ("7/liquidity and capital resources|liquidity", "I-2/liquidity and capital resources|liquidity"),
    "industry": ("1#2", None),
    "registered_securities": ("cover", "cover"),
    "acquisitions": (_ACQUISITIONS, _ACQUISITIONS),
    "restructuring": (_RESTRUCTURING, _RESTRUCTURING),
    "segments": (_SEGMENTS, _SEGMENTS),
    "results_margins": (_RESULTS, _RESULTS_10Q),
    "results_lines": (_RESULTS, _RESULTS_10Q),
}
# How many pages from its sub-heading a topic's section spans at most (_SUB_PAGES where not named): the
# results of operations run over several pages of tables and the reasons beside them.
SUB_PAGES_OF = {"results_margins": 8, "results_lines": 8}


@dataclass(frozen=True)
class Filing:
    """One 10-K or 10-Q: its file, who filed it, for when, and its pages' plain text."""

    path: Path
    company: str
    period: str
    form: str
    pages: list[str]


def read_filing(path: Path) -> Filing | None:
    """The filing named like `3M_2018_10K.pdf` or `AMCOR_2023Q2_10Q.pdf`, or None for other files."""
    match = _NAME.match(path.name)
    if match is None:
        return None
    prefix, year, quarter, form = match.groups()
    period = f"{quarter} FY{year}" if quarter else f"FY{year}"
    pdf = pdfium.PdfDocument(path)
    try:
        pages = [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    finally:
        pdf.close()
    name = COMPANY_NAMES.get(prefix, prefix.title())
    return Filing(path, name, period, "10-K" if form == "10K" else "10-Q", pages)


def item_pages(filing: Filing) -> dict[str, int]:
    """Each item's heading page (1-based), walking the pages after the table of contents in the form's order,
    so a cross-reference to an earlier item ("see Item 7") is not taken for its heading."""
    titles = TEN_K_ITEMS if filing.form == "10-K" else TEN_Q_ITEMS
    order = list(titles)
    found: dict[str, int] = {}
    at = 0  # index into order of the next item that may be found
    for number, text in enumerate(filing.pages, 1):
        items = [(m.group(1).upper(), _squash(m.group(2))) for m in _ITEM.finditer(text)]
        if not found and len({item for item, _ in items}) >= _TOC_ITEMS:
            continue  # the table of contents, before the first heading
        for item, title in items:
            for k in range(at, len(order)):
                if order[k].split("-")[-1] == item and title.startswith(titles[order[k]]):
                    found.setdefault(order[k], number)
                    at = k + 1
                    break
    return found


def _squash(text: str) -> str:
    return re.sub(r"[^a-z]", "", text.lower())


def section_pages(filing: Filing, where: str, items: dict[str, int], span: int = _SUB_PAGES) -> list[int]:
    """The pages that hold a section: an item's ("3"), or a sub-heading's inside an item ("1/competition", `|`
    between a title's spellings; at most `span` pages from it)."""
    order = [k for k, _ in sorted(items.items(), key=lambda kv: kv[1])]
    if where == "cover":  # "Securities registered pursuant to Section 12(b) of the Act"
        return [n for n, text in enumerate(filing.pages[:3], 1) if "12(b)" in text][:1]
    if where.startswith("notes/"):  # a note's heading, or the same heading in MD&A, which tells it too
        titles = {_squash(t) for t in where[6:].split("|")}
        return heading_pages(filing, titles, items.get("7", items.get("I-1")), items.get("9", items.get("I-3")))
    if "#" in where:
        item, _, count = where.partition("#")
        return list(range(items[item], items[item] + int(count))) if item in items else []
    if "/" not in where:
        if where not in items:
            return []
        later = [items[k] for k in order if items[k] > items[where]]
        end = later[0] if later else items[where]
        return list(range(items[where], end + 1))
    within, _, spellings = where.partition("/")
    if within not in items:
        return []
    titles = {_squash(t) for t in spellings.split("|")}
    after = [items[k] for k in order if items[k] > items[within]]
    for number in range(items[within], (after[0] if after else len(filing.pages)) + 1):
        lines = filing.pages[number - 1].splitlines()
        if any(_squash(line) in titles for line in lines if line.strip()[:1].isalnum()):  # no bullet list
            later = [items[k] for k in order if items[k] > number]
            end = min(later[0] if later else number, number + span - 1)
            return list(range(number, max(end, number) + 1))
    return []


_NOTE_PREFIX = re.compile(r"^(note)?\d*")
# A 10-K's Item 3 often only points to a note ("see Note 16, Commitments and Contingencies"): the note's
# legal pages are the section's too, found by their heading lines after Item 8's heading.
LEGAL_NOTE_TITLES = {
    "legalproceedings",
    "litigation",
    "commitmentsandcontingencies",
    "contingencies",
    "legalmatters",
    "contingenciesandlegalproceedings",
    "commitmentscontingenciesandguarantees",
}


# Repurchases and dividends are also told where the cash they took is (MD&A's liquidity section) and in the
# equity note, under headings of their own.
EQUITY_TITLES = {
    "sharerepurchases",
    "stockrepurchases",
    "sharerepurchaseprogram",
    "stockrepurchaseprogram",
    "repurchasesofcommonstock",
    "sharerepurchasesanddividends",
    "dividends",
    "cashdividends",
    "commonstockdividends",
    "dividendsandsharerepurchases",
}


def heading_pages(filing: Filing, titles: set[str], start: int | None, end: int | None) -> list[int]:
    """The pages from `start` to `end` with a line that is one of `titles` (squashed, a note's number
    left out), each with the next page."""
    if start is None:
        return []
    pages: set[int] = set()
    for number in range(start, (end or len(filing.pages)) + 1):
        for line in filing.pages[number - 1].splitlines():
            if line.strip()[:1].isalnum() and _NOTE_PREFIX.sub("", _squash(line)) in titles:
                pages.update((number, number + 1))
    return sorted(p for p in pages if p <= len(filing.pages))


def more_pages(filing: Filing, topic: str, items: dict[str, int]) -> list[int]:
    """A topic's pages outside its item: the legal notes in the financial statements (after Item 8 or
    Part I Item 1), the repurchase and dividend headings after the risk factors."""
    if topic == "legal":
        return heading_pages(filing, LEGAL_NOTE_TITLES, items.get("8", items.get("I-1")), items.get("9"))
    if topic == "equity":
        return heading_pages(filing, EQUITY_TITLES, items.get("2", items.get("I-2")), items.get("9"))
    return []


def rows_for(
    filing: Filing, docs_root: Path, templates: dict[str, tuple[str, str]] = TEMPLATES
) -> tuple[list[dict[str, object]], list[str]]:
    """The questions on one filing, and the topics whose section was not found."""
    items = item_pages(filing)
    rows: list[dict[str, object]] = []
    missing: list[str] = []
    for topic in templates:
        in_10k, in_10q = SECTIONS[topic]
        where = in_10k if filing.form == "10-K" else in_10q
        if where is None:
            continue
        pages = section_pages(filing, where, items, SUB_PAGES_OF.get(topic, _SUB_PAGES))
        if pages:
            pages = sorted(set(pages) | set(more_pages(filing, topic, items)))
        if not pages:
            missing.append(topic)
            continue
        for n, template in enumerate(templates[topic]):
            question = template.format(co=filing.company, period=filing.period, form=filing.form)
            rows.append(evidence_row(filing, docs_root, f"{topic}-{n}", question, topic, pages))
    return rows, missing


def evidence_row(
    filing: Filing, docs_root: Path, key: str, question: str, category: str, pages: list[int]
) -> dict[str, object]:
    """One question of a set, in `docqa eval`'s QA format: its evidence is the filing's `pages`."""
    doc = str(filing.path.relative_to(docs_root))
    return {
        "id": f"{filing.path.stem}-{key}",
        "question": question,
        "category": category,
        "doc": doc,
        "doc_pdf": doc,
        "answers": [{"text": "", "pages_found": pages}],
        "is_impossible": False,
        "answer_type": "evidence",
    }


def write_set(
    docs: Path, out_path: Path, rows_of: Callable[[Filing, Path], tuple[list[dict[str, object]], list[str]]]
) -> tuple[int, int, Counter[str]]:
    """Writes the questions `rows_of` asks of every filing in `docs` to `out_path`, one JSON line each:
    (filings, questions, what was not found in how many filings)."""
    missing: Counter[str] = Counter()
    count = filings = 0
    with out_path.open("w", encoding="utf-8") as out:
        for path in sorted(docs.glob("*.pdf")):
            filing = read_filing(path)
            if filing is None:
                continue
            filings += 1
            rows, absent = rows_of(filing, docs.parent)
            missing.update(absent)
            count += len(rows)
            for row in rows:
                out.write(json.dumps(row) + "\n")
    return filings, count, missing


def page_recall_by_topic(details: Path) -> dict[str, dict[str, float]]:
    """Page recall@1/3/5 per topic and in all, from a `docqa eval --details` file of this set."""
    ranks: dict[str, list[int | None]] = {}
    for line in details.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        ranks.setdefault(row["category"], []).append(row.get("page_rank"))
    ranks["all"] = [r for topic in list(ranks) for r in ranks[topic]]

    def share(found: list[int | None], k: int) -> float:
        return round(sum(1 for r in found if r is not None and r <= k) / len(found), 3)

    return {
        topic: {"questions": len(found), **{f"@{k}": share(found, k) for k in (1, 3, 5)}}
        for topic, found in ranks.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=Path, help="The folder of filings (named like 3M_2018_10K.pdf).")
    parser.add_argument("--out", type=Path, help="Where the set goes (outside the project).")
    parser.add_argument(
        "--set",
        default="A",
        choices=sorted(TEMPLATE_SETS),
        help="A TEMPLATES, B HELD_OUT_TEMPLATES, C FILING_TEMPLATES, D REASON_TEMPLATES",
    )
    parser.add_argument(
        "--score", nargs="+", metavar="LABEL=DETAILS", help="Instead: page recall per topic of eval --details files."
    )
    parser.add_argument("--note", default="", help="With --score: what the runs were (commit, set, scope).")
    args = parser.parse_args()
    if args.score:
        runs = {label: page_recall_by_topic(Path(path)) for label, _, path in (s.partition("=") for s in args.score)}
        out = new_result_path("section_questions")
        out.write_text(json.dumps({"note": args.note, "runs": runs}, indent=1) + "\n")
        print(json.dumps({label: figures["all"] for label, figures in runs.items()}), f"written {out}")
        return
    if args.docs is None or args.out is None:
        parser.error("--docs and --out are needed to write the set")
    templates = TEMPLATE_SETS[args.set]
    filings, count, missing = write_set(args.docs, args.out, lambda filing, root: rows_for(filing, root, templates))
    summary = {"filings": filings, "questions": count, "sections_not_found": dict(missing), "out": str(args.out)}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
