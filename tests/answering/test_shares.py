"""Each document's share of a question's prompt tokens (docqa.answering.shares): pure logic."""

from __future__ import annotations

from docqa.answering.shares import documents_share, shares


def test_what_some_documents_leave_goes_to_those_that_need_more() -> None:
    # 5 x 2,048 in all: none, a short one and one within its share leave 3,596 to the two long ones
    assert shares([0, 500, 5000, 9000, 2048], 2048, 8000) == [2048, 2048, 3846, 3846, 2048]


def test_no_document_gets_past_its_need_or_the_most() -> None:
    # 10,240 in all: the three short ones leave 5,844; the 4,000-token one takes its 1,952, the long one the rest
    assert shares([100, 100, 100, 50_000, 4_000], 2048, 6_000) == [2048, 2048, 2048, 5_940, 4_000]
    assert shares([100, 100, 100, 50_000], 2048, 5_000) == [2048, 2048, 2048, 5_000]  # the most: the rest unspent
    assert shares([3000, 3000], 2048, 2048) == [2048, 2048]
    assert shares([], 2048, 8000) == []


def test_the_total_is_never_past_each_times_the_documents() -> None:
    needs = [0, 10, 9999, 2047, 2049, 30_000, 700]
    given = shares(needs, 2048, 16_000)
    spent = sum(min(g, n) for g, n in zip(given, needs, strict=True))
    assert spent <= 2048 * len(needs)


def test_few_documents_get_their_part_of_the_few_documents_budget() -> None:
    assert documents_share(2, 2048, 32_768, 15_000) == 15_000  # a comparison of two: up to what a prompt holds
    assert documents_share(8, 2048, 32_768, 15_000) == 4096
    assert documents_share(100, 2048, 32_768, 15_000) == 2048
    assert documents_share(100, 2048, 32_768, 1888) == 1888  # a small context: what its prompt holds
