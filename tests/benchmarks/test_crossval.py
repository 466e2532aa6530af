"""Company-grouped cross-validation's choice and fold-out figure (bench/crossval.py): pure logic, no store."""

from __future__ import annotations

from bench.crossval import _report, folds
from docqa.eval.evaluation import EvalRow
from docqa.store.keyword.ranking import DEFAULT_RANKING


def _row(row_id: str) -> EvalRow:
    return EvalRow(row_id, "q", "", f"{row_id}.pdf", ("a",), False, "span")


def test_each_fold_chooses_on_itself_and_is_scored_on_the_other_at_the_cut_off_asked() -> None:
    shipped = {"head_slot": DEFAULT_RANKING.head_slot}
    other = {"head_slot": DEFAULT_RANKING.head_slot + 1}
    # fold A's questions a1, a2; fold B's b1, b2. The shipped point finds a1 first and b1 second; the other
    # finds a1 and a2 second, b1 and b2 first.
    results = [
        {"point": shipped, "ranks": {"corpus": {"a1": 1, "a2": 4, "b1": 2, "b2": 5}}},
        {"point": other, "ranks": {"corpus": {"a1": 2, "a2": 2, "b1": 1, "b2": 1}}},
    ]
    rows = [_row(i) for i in ("a1", "a2", "b1", "b2")]
    at3 = _report(results, [{"a1", "a2"}, {"b1", "b2"}], rows, ("corpus",), 3, {"A"}, {"B"})
    assert [f["point"] for f in at3["folds"]] == [other, other]
    assert at3["fold_out_recall@3"] == {"corpus": 1.0} and at3["dev_recall@3_defaults"] == {"corpus": 0.5}
    at1 = _report(results, [{"a1", "a2"}, {"b1", "b2"}], rows, ("corpus",), 1, {"A"}, {"B"})
    assert [f["point"] for f in at1["folds"]] == [shipped, other]  # at 1, A's choice is another one
    assert at1["fold_out_recall@1"] == {"corpus": 0.0} and at1["dev_recall@1_defaults"] == {"corpus": 0.25}


def test_folds_split_companies_by_name_not_by_question() -> None:
    assert folds(["3M", "ADOBE", "AMAZON", "3M"]) == ({"3M", "AMAZON"}, {"ADOBE"})
