"""A quarterly report's fiscal quarter and year from its balance sheet's dates (docqa.profiles.sec.fiscal_quarter):
the heading layouts of three real 10-Qs (a June year end, a retail calendar, a calendar year), pure text."""

from __future__ import annotations

import pytest

from docqa.profiles.sec.fiscal_quarter import quarter_from_balance_sheet


@pytest.mark.parametrize(
    ("text", "period_end", "expected"),
    [
        # a year ending June 30: the quarter ended December 31, 2022 is the second of fiscal 2023
        (
            "Condensed Consolidated Balance Sheets\n(Unaudited)\n($ in millions) December 31, 2022 June 30, 2022",
            (2022, 12),
            (2, 2023),
        ),
        # a retail calendar (the Saturday nearest January 31): a table of contents line with three dates
        (
            "a) Condensed Consolidated Balance Sheets as of July 29, 2023, January 28, 2023, and July 30, 2022 3",
            (2023, 7),
            (2, 2024),
        ),
        ("Consolidated Balance Sheets at June 30, 2023 and December 31, 2022 1", (2023, 6), (2, 2023)),
        ("Balance Sheets as of May 1, 2021 and January 30, 2021", (2021, 5), (1, 2022)),
        ("Balance Sheets as of October 1, 2022 and January 1, 2022", (2022, 10), (3, 2022)),
        # the quarter a year before is no fiscal year's end; nor is a date of another month
        ("Balance Sheets as of June 30, 2023 and June 30, 2022", (2023, 6), None),
        ("Balance Sheets as of March 31, 2023", (2023, 6), None),
        ("The balance sheet is strong. Revenue rose.", (2023, 6), None),
    ],
)
def test_the_quarter_and_fiscal_year_a_10q_covers(
    text: str, period_end: tuple[int, int], expected: tuple[int, int] | None
) -> None:
    assert quarter_from_balance_sheet([text], period_end) == expected


def test_the_first_heading_with_both_dates_counts() -> None:
    texts = ["Our balance sheet remains strong.", "Balance Sheets\nDecember 31, 2022 June 30, 2022"]
    assert quarter_from_balance_sheet(texts, (2022, 12)) == (2, 2023)
