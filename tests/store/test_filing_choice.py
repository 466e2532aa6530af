"""Filings chosen by the company and fiscal year a question names (docqa.profiles.sec.filers, over
the identities docqa.store.keyword.identities keeps), on a real SQLite store: another company's results
release, dense with the question's words, and the same
company's filing for another year must not take the place of the filing asked about."""

from __future__ import annotations

from pathlib import Path

from docqa.store.db import SqliteStore
from tests.support.profiles import PROFILES, filing_identities, understand
from tests.support.store_rows import bm25, save

COVER = """UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
FORM 10-K
For the fiscal year ended December 31, {year}
Commission file number 1-1234
{name}
(Exact name of registrant as specified in its charter)
"""
FILLER = "The company designs, makes and sells products through its segments in many countries. " * 30
STATEMENT = "Purchases of property, plant and equipment (1,577) (1,373). Capital expenditure for the year. "
RELEASE = "Beta Foods reports fiscal 2018 results\n" + (
    "Capital expenditure amount in USD millions for fiscal 2018 rose; capital expenditure guidance. " * 8
)
QUESTION = "What is the FY2018 capital expenditure amount (in USD millions) for Acme?"


def _filings(tmp_path: Path) -> tuple[SqliteStore, int, dict[str, int]]:
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    coll = store.collection("c", create=True).id
    heads = {}
    for name, year in (("ACME", 2017), ("ACME", 2018), ("GAMMA", 2018)):
        text = COVER.format(year=year, name=f"{name} CORPORATION")
        saved = save(
            store, coll, f"{name}_{year}_10K.pdf", [text + FILLER, STATEMENT + FILLER], None, sha=f"{name}{year}"
        )
        heads[f"{name}{year}"] = saved.chunk_ids[0]
    heads["BETA"] = save(store, coll, "BETA_2018Q4_EARNINGS.pdf", [RELEASE], None, sha="beta").chunk_ids[0]
    return store, coll, heads


def _document(store: SqliteStore, chunk_id: int) -> int:
    return store.fetch_chunks([chunk_id])[chunk_id].document_id


def test_the_company_and_year_named_choose_the_filing(tmp_path: Path) -> None:
    store, coll, heads = _filings(tmp_path)
    top = bm25(store, coll, QUESTION, 3)
    assert _document(store, top[0][0]) == _document(store, heads["ACME2018"])
    asked_2017 = bm25(store, coll, QUESTION.replace("FY2018", "FY2017"), 3)
    assert _document(store, asked_2017[0][0]) == _document(store, heads["ACME2017"])
    unnamed = understand(QUESTION)  # read without the filings' identities: the release wins
    assert _document(store, store.bm25(coll, unnamed, 3)[0][0]) == _document(store, heads["BETA"])


def test_a_question_naming_no_company_searches_every_filing(tmp_path: Path) -> None:
    store, coll, heads = _filings(tmp_path)
    top = bm25(store, coll, "What is the FY2018 capital expenditure amount in USD millions?", 3)
    assert _document(store, top[0][0]) == _document(store, heads["BETA"])


def test_a_question_naming_a_period_but_no_company_gets_a_filing_of_that_period(tmp_path: Path) -> None:
    store, coll, heads = _filings(tmp_path)
    question = "What is the FY2017 capital expenditure amount in USD millions?"
    # the first pass picks the 2018 release, dense with the words; the only filing of 2017 is ACME's
    assert _document(store, bm25(store, coll, question.replace("FY2017", "FY2018"), 3)[0][0]) == _document(
        store, heads["BETA"]
    )
    assert _document(store, bm25(store, coll, question, 3)[0][0]) == _document(store, heads["ACME2017"])


def test_a_replaced_filing_is_read_again(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    coll = store.collection("c", create=True).id

    def filing(name: str, year: int, body: str) -> list[int]:
        cover = COVER.format(year=year, name="ACME CORPORATION")
        return list(save(store, coll, name, [cover + FILLER, body + FILLER], None, sha=f"{name}{year}").chunk_ids)

    filing("acme-a.pdf", 2017, "Revenue grew in every segment. ")
    strong = filing("acme-b.pdf", 2018, STATEMENT)
    asked = QUESTION.replace("FY2018", "FY2019")
    assert bm25(store, coll, asked, 3)[0][0] in strong  # no filing reports on 2019: the first pass decides
    replaced = filing("acme-a.pdf", 2019, "Revenue grew in every segment. ")  # now it does
    assert bm25(store, coll, asked, 3)[0][0] in replaced


RETAIL_NOTE = (
    "Fiscal Year. The Company's fiscal year ends on the Saturday closest to the last day of January. "
    "Fiscal {named} represented the 52 weeks ended {end}. Revenue in fiscal {named} rose. "
)


def test_a_retailers_fiscal_year_named_for_its_start_picks_its_filing(tmp_path: Path) -> None:
    """A year that ended January 28, 2023 is the filer's "fiscal 2022" where its text says so: a question about
    FY2022 gets that 10-K, not the one whose year ended January 29, 2022 (dated 2022 on its cover)."""
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    coll = store.collection("c", create=True).id
    docs = {}
    for named, end in ((2021, "January 29, 2022"), (2022, "January 28, 2023")):
        cover = COVER.replace("December 31, {year}", end).format(name="ACME STORES, INC.", year=0)
        note = RETAIL_NOTE.format(named=named, end=end)
        if named == 2021:  # its outlook speaks of the next year: by its words alone it answers about 2022
            note += (
                "Capital expenditure planned for 2022: capital expenditure in 2022 of 1,900; 2022 capital expenditure. "
            )
        saved = save(
            store, coll, f"acme-annual-{named}.pdf", [cover + FILLER, STATEMENT + note + FILLER], None, sha=str(named)
        )
        docs[named] = _document(store, saved.chunk_ids[0])
    identities = filing_identities(store, coll)
    assert [identities[docs[n]].fiscal_years for n in (2021, 2022)] == [frozenset({2021}), frozenset({2022})]
    for year, expected in ((2022, 2022), (2021, 2021), (2023, 2022)):  # "2023": no filing is named so; dated so
        question = f"What was Acme's capital expenditure in FY{year}?"
        assert _document(store, bm25(store, coll, question, 3)[0][0]) == docs[expected], question


TEN_Q = """UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
FORM 10-Q
For the quarterly period ended {end}
Commission file number 1-1234
ACME PLC
(Exact name of registrant as specified in its charter)
"""


def test_a_10q_named_by_edgar_is_chosen_by_the_fiscal_quarter_its_balance_sheet_gives(tmp_path: Path) -> None:
    """A June year end: the 10-Q for the quarter ended December 31, 2022 is "Q2 of FY2023", the one for March 31,
    2023 "Q3"; their file names say nothing, their covers only the calendar dates."""
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    coll = store.collection("c", create=True).id
    docs = {}
    for accession, end, year_end in (
        ("0001748790-23-000011", "December 31, 2022", "June 30, 2022"),
        ("0001748790-23-000031", "March 31, 2023", "June 30, 2022"),
    ):
        sheet = f"Condensed Consolidated Balance Sheets (Unaudited) {end} {year_end} Assets Cash 837 775. "
        saved = save(store, coll, f"{accession}.pdf", [TEN_Q.format(end=end) + FILLER, sheet + FILLER], None, sha=end)
        docs[end] = _document(store, saved.chunk_ids[0])
    identities = filing_identities(store, coll)
    assert identities[docs["December 31, 2022"]].quarter == 2 and 2023 in identities[docs["December 31, 2022"]].years
    assert identities[docs["March 31, 2023"]].quarter == 3
    for question, expected in (
        ("What was Acme's cash at the end of Q2 of FY2023?", "December 31, 2022"),
        ("What was Acme's cash at the end of Q3 FY23?", "March 31, 2023"),
    ):
        assert _document(store, bm25(store, coll, question, 3)[0][0]) == docs[expected], question
