"""Search terms as the keyword index splits text: what a question's words become."""

from __future__ import annotations

from docqa.store.keyword import lexical


def test_a_fiscal_year_is_searched_as_the_year_it_names() -> None:
    assert lexical.query_terms("What is the FY2018 capital expenditure for 3M?") == [
        "fy2018",
        "2018",
        "capital",
        "expenditure",
        "3m",
    ]
    assert lexical.query_terms("FY22 net income") == ["fy22", "2022", "net", "income"]
    assert lexical.query_terms("fiscal 2018 revenue") == ["fiscal", "2018", "revenue"]
    assert lexical.query_terms("the FYI memo") == ["fyi", "memo"]  # not a fiscal year


def test_underscores_split_words_as_fts5_splits_them() -> None:
    """A file name such as 3M_2018_10K.pdf names the company and year in its title words."""
    assert lexical.words(lexical.index_text("3M_2018_10K.pdf")) == {"3m", "2018", "10k", "pdf"}
    assert lexical.query_terms("AMCOR_2023Q2_10Q") == ["amcor", "2023q2", "10q"]
