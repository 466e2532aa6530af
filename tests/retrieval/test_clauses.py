"""The words contracts write a clause in (docqa.profiles.contracts.clauses), for questions that name the
clause in other words."""

from __future__ import annotations

import pytest

from docqa.profiles.contracts.clauses import clause_words


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("When does each of these contracts expire?", "term"),
        ("Which contracts renew automatically?", "successive"),
        ("Which of these contracts have a non-compete clause?", "competing"),
        ("Which law governs each agreement?", "construed"),
        ("Which contracts restrict assignment without consent?", "transfer"),
        ("Which agreements give a right of first refusal?", "refusal"),
        # the kinds of CUAD's taxonomy the evidence bench does not ask about
        ("Which contracts have a source code escrow?", "deposit"),
        ("Is any license perpetual or irrevocable?", "royalty-free"),
        ("Which contracts forbid soliciting the other party's customers?", "customers"),
        ("Which agreements name a third-party beneficiary?", "beneficiary"),
        ("Does any contract contain a covenant not to sue?", "challenge"),
        ("Which contracts forbid disparaging the other party?", "derogatory"),
    ],
)
def test_a_named_clause_brings_its_drafting_words(question: str, expected: str) -> None:
    assert expected in clause_words(question)


def test_a_question_naming_no_clause_brings_none_and_words_are_not_repeated() -> None:
    assert clause_words("What was Northwind's revenue in 2025?") == ()
    words = clause_words("Which contracts renew or expire, and when does the renewal term end?")
    assert len(words) == len(set(words)) and {"renew", "term"} <= set(words)
