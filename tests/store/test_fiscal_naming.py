"""How a filer names its fiscal year (docqa.profiles.sec.fiscal_naming): sentences in the styles retailers and
Japanese filers use to define their year; pure text, no store."""

from __future__ import annotations

import pytest

from docqa.profiles.sec.fiscal_naming import fiscal_years_named, needs_reading

ENDED_JAN_2023 = frozenset({(2023, 1)})


@pytest.mark.parametrize(
    ("text", "period_ends", "named"),
    [
        # named for its start year, the date tied to the name before it or in a parenthesis after it
        ("Fiscal 2022 represented the 52 weeks ended January 28, 2023, and fiscal 2021 represented the 52 "
         "weeks ended January 29, 2022.", ENDED_JAN_2023, {2022}),
        ("for the 52 weeks ended January 28, 2023 (“fiscal 2022”) and the 52 weeks ended January 29, 2022",
         ENDED_JAN_2023, {2022}),
        ("Fiscal Year 2022 ended on January 28, 2023.", ENDED_JAN_2023, {2022}),
        ("the fiscal year ended March 31, 2023 (\"fiscal 2022\")", frozenset({(2023, 3)}), {2022}),
        # named for its end year
        ("Fiscal 2023 included 52 weeks ended January 28, 2023, and fiscal 2022 included 52 weeks ended "
         "January 29, 2022.", ENDED_JAN_2023, {2023}),
        # no sentence ties them: the year the report speaks of clearly more often
        ("Fiscal 2023, fiscal 2022 and fiscal 2021 included 52 weeks. " + "In fiscal 2023 sales rose. " * 6
         + "In fiscal 2022 sales fell. In fiscal 2024 we expect growth.", ENDED_JAN_2023, {2023}),
        # nothing said, or too little to tell
        ("For the fiscal year ended January 28, 2023", ENDED_JAN_2023, set()),
        ("In fiscal 2022 sales rose. In fiscal 2023 they fell.", ENDED_JAN_2023, set()),
        # a name two years off is another year's
        ("Fiscal 2020 represented the 52 weeks ended January 28, 2023.", ENDED_JAN_2023, set()),
        # another date between the name and the period end: the name is that date's
        ("Fiscal 2022 ended on February 1, 2022; the 52 weeks ended January 28, 2023", ENDED_JAN_2023, set()),
    ],
)  # fmt: skip
def test_the_fiscal_year_a_filing_names_its_period_by(
    text: str, period_ends: frozenset[tuple[int, int]], named: set[int]
) -> None:
    assert fiscal_years_named([text], period_ends) == named


def test_only_an_annual_reports_year_ending_early_in_a_calendar_year_is_read() -> None:
    assert needs_reading("10-K", {(2023, 1)}) and needs_reading("20-F", {(2023, 3)})
    assert not needs_reading("10-K", {(2022, 12)}) and not needs_reading("10-K", {(2023, 6)})
    assert not needs_reading("10-Q", {(2023, 3)}) and not needs_reading("10-K", set())
