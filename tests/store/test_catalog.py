"""A document's catalog entry (docqa.store.catalog) and the filters asks put on it: pure text, no store."""

from __future__ import annotations

import pytest

from docqa.core.catalog_fields import parse_metadata, where_pairs
from docqa.core.errors import InvalidRequestError
from docqa.store import catalog
from docqa.store.catalog import matches, merged
from tests.store.test_filings import CONTRACT, COVER_WITH_SYMBOLS, TEN_K
from tests.support.profiles import read_catalog


def test_a_filing_is_catalogued_by_company_symbols_form_and_period() -> None:
    entry = read_catalog("JNJ_2024Q2_10Q.pdf", COVER_WITH_SYMBOLS)
    assert entry == {
        "kind": "filing",
        "form": "10-Q",
        "company": "JOHNSON & JOHNSON",
        "tickers": ["JNJ"],
        "fiscal_year": 2024,  # the file name's year: the company's own count
        "quarter": 2,
        "period_end": "2023-06",
    }


def test_another_document_is_catalogued_by_its_title() -> None:
    assert read_catalog("agency.txt", CONTRACT) == {"kind": "document", "title": "AGENCY AGREEMENT"}


LEGEND = "CERTAIN CONFIDENTIAL INFORMATION CONTAINED IN THIS DOCUMENT HAS BEEN OMITTED"
ONE_LINE = (
    "EXHIBIT 10.1 STRATEGIC SALES & MARKETING AGREEMENT THIS STRATEGIC SALES & MARKETING AGREEMENT (the "
    '"Agreement") is entered into as of the date last signed below by and between the parties named here'
)


@pytest.mark.parametrize(
    ("head", "title"),
    [
        # an EDGAR exhibit's label and a version mark stand above the title
        ("Exhibit 10.2\nExecution Version\n\nIP AGREEMENT\n\nThis Agreement is made", "IP AGREEMENT"),
        # a redaction legend is no title: the line that names what the document is, is
        (f"EXHIBIT 10.18\n{LEGEND}\nSUPPLY AGREEMENT\n", "SUPPLY AGREEMENT"),
        # a first paragraph on one line: its leading capitals, "&" inside them
        (ONE_LINE, "STRATEGIC SALES & MARKETING AGREEMENT"),
        ("Exhibit 4.23\n股权转让协议\n", "股权转让协议"),
        ("Quarterly Operations Review\nMinutes of the meeting", "Quarterly Operations Review"),  # no kind: first line
    ],
)
def test_a_contracts_title_is_the_line_that_names_what_it_is(head: str, title: str) -> None:
    assert read_catalog("exhibit.txt", head)["title"] == title


@pytest.mark.parametrize(
    ("where", "met"),
    [
        ([("company", "johnson & johnson")], True),
        ([("company", "Johnson")], True),  # the first words of the name
        ([("company", "jnj")], True),  # or a symbol
        ([("company", "John")], False),  # not a word of it
        ([("year", "2024"), ("form", "10-q")], True),
        ([("year", "2023")], False),
        ([("tags", "pharma")], True),  # a list field matches by item
        ([("tags", "phar")], False),
        ([("region", "EU")], False),  # a field the entry lacks
    ],
)
def test_a_filter_matches_a_catalog_entry(where: list[tuple[str, str]], met: bool) -> None:
    entry = merged(read_catalog("JNJ_2024Q2_10Q.pdf", COVER_WITH_SYMBOLS), {"tags": ["Pharma", "health"]})
    assert matches(entry, where) is met


def test_the_uploaders_fields_win_and_are_named_as_theirs() -> None:
    entry = merged({"kind": "document", "title": "EXHIBIT 10.1"}, {"title": "Agency agreement", "year": 2000})
    assert entry["title"] == "Agency agreement" and entry["user_fields"] == ["title", "year"]
    assert matches(entry, [("year", "2000")])


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("not json", "metadata: not JSON"),
        ('["a"]', "a JSON object is expected"),
        ('{"Company": "3M"}', "field names are 1-32 lowercase"),
        ('{"company": {"name": "3M"}}', "must be a string, a number or a list of strings"),
        ('{"tags": [1, 2]}', "must be a list of strings"),
        ('{"title": "' + "x" * 300 + '"}', "too long"),
        ('{"title": "\\ud800"}', "lone surrogate"),
        ('{"title": "a\\u0000b"}', "NUL character"),  # Postgres' text cannot hold it
        ('{"tags": ' + "[" * 100_000 + "]" * 100_000 + "}", "longer than"),
        ('{"tags": ' + "[" * 20_000 + "]" * 20_000 + "}", "nested too deep"),
        ('{"year": ' + "9" * 5_000 + "}", "not JSON docqa reads"),  # past Python's int_max_str_digits
    ],
)
def test_bad_metadata_is_refused_saying_why(raw: str, message: str) -> None:
    with pytest.raises(InvalidRequestError, match=message):
        parse_metadata(raw)


def test_where_pairs_from_json_and_from_the_command_line() -> None:
    assert where_pairs({"company": "3M", "year": 2022}) == (("company", "3M"), ("year", "2022"))
    assert where_pairs(["company=3M", "year=2022"]) == (("company", "3M"), ("year", "2022"))
    for bad in (["company"], {"Company": "3M"}, {"year": True}, {"company": ""}, {"company": "\ud800"}):
        with pytest.raises(InvalidRequestError, match="where"):
            where_pairs(bad)


def test_a_quarterly_report_takes_the_fiscal_year_its_text_names() -> None:
    """A 10-Q's cover gives only its quarter's end (July 2023); the company counts it in fiscal 2024."""
    cover = COVER_WITH_SYMBOLS.replace("June 30, 2023", "July 29, 2023")
    text = cover + "\nResults of operations for the second quarter of fiscal 2024 compared with fiscal 2023.\n"
    assert read_catalog("report.pdf", text)["fiscal_year"] == 2024
    assert read_catalog("report.pdf", cover)["fiscal_year"] == 2023  # nothing said: the period end's year
    far = cover + "\nOur fiscal 2031 plan.\n"  # not this period's year or the next: not taken
    assert read_catalog("report.pdf", far)["fiscal_year"] == 2023


def test_a_year_ending_in_january_takes_the_name_its_filer_gives_it() -> None:
    """The cover dates the year by its end (January 28, 2023); a filer that names it for its start says so
    where it defines its fiscal year, and the catalog's fiscal year follows it (a `--where year=2022` filter)."""
    note = "Fiscal 2022 represented the 52 weeks ended January 28, 2023."
    assert read_catalog("annual.pdf", TEN_K, [TEN_K, "Item 7. " + note])["fiscal_year"] == 2022
    assert read_catalog("annual.pdf", TEN_K, [TEN_K])["fiscal_year"] == 2023  # nothing said: the end's year
    assert read_catalog("ACME_2023_10K.pdf", TEN_K, [TEN_K, note])["fiscal_year"] == 2023  # the file's own count


def test_a_quarterly_report_named_by_nothing_takes_its_quarter_from_its_balance_sheet() -> None:
    """The same reading retrieval does (docqa.profiles.sec.fiscal_quarter): a June year end, so the quarter
    ended December 31, 2022 is the second of fiscal 2023. Its cover and file name give only the date."""
    cover = COVER_WITH_SYMBOLS.replace("June 30, 2023", "December 31, 2022")
    sheet = "Condensed Consolidated Balance Sheets (Unaudited) December 31, 2022 June 30, 2022 Assets Cash 837 775."
    entry = read_catalog("0001748790-23-000011.pdf", cover, [cover, sheet])
    assert (entry["quarter"], entry["fiscal_year"], entry["period_end"]) == (2, 2023, "2022-12")
    named = read_catalog("ACME_2023Q1_10Q.pdf", cover, [cover, sheet])  # the file name's quarter stands
    assert named["quarter"] == 1
    assert "quarter" not in read_catalog("0001748790-23-000011.pdf", cover, [cover])  # no balance sheet read


def test_a_filter_that_matches_nothing_says_which_condition_and_what_there_is() -> None:
    entries: list[dict[str, object]] = [
        {"company": "3M COMPANY", "fiscal_year": 2022, "form": "10-K"},
        {"company": "Apple Inc", "form": "10-Q"},
    ]
    assert catalog.why_none_match(entries, [("company", "3M")]) is None
    assert catalog.why_none_match(entries, [("company", "Amcor")]) == (
        "no document has company=Amcor; the values of company there are: 3M COMPANY, Apple Inc"
    )
    assert "'compnay' (did you mean company?); the fields there are: company, fiscal_year, form" in str(
        catalog.why_none_match(entries, [("compnay", "3M")])
    )
    assert catalog.why_none_match(entries, [("year", "1999")]) == (
        "no document has year=1999; the values of year there are: 2022"
    )
    assert "together" in str(catalog.why_none_match(entries, [("company", "3M"), ("form", "10-Q")]))
