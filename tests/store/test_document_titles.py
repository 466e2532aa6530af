"""The title-named document (docqa.store.keyword.titles) on a real SQLite store: a question that names its
contract plainly but asks in rare words that another contract uses throughout."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from docqa.store.db import SqliteStore
from tests.support.profiles import PROFILES
from tests.support.store_rows import bm25, save

FILLER = "The parties agree to cooperate in good faith on the matters set out in this schedule. " * 25
QUESTION = (
    "In the AGENCY AGREEMENT involving Biopure Corporation: may a party terminate if the other undergoes a "
    "change of control, such as a merger, stock sale or transfer of substantially all of its assets?"
)


def _save(store: SqliteStore, collection_id: int, name: str, texts: list[str]) -> list[int]:
    return list(save(store, collection_id, name, texts, None, sha=name).chunk_ids)


def _folder(tmp_path: Path) -> tuple[SqliteStore, int, list[int], list[int]]:
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    coll = store.collection("c", create=True)
    head = "BIOPURE CORPORATION AGENCY AGREEMENT. This Agency Agreement is made between Biopure Corporation "
    head += "and Northway Agents Ltd. "
    clause = "Either party may terminate this Agreement on a change of control of the other party. "
    biopure = _save(store, coll.id, "biopure.txt", [head + FILLER, clause + FILLER])
    merger_words = (
        "A party that undergoes a merger, stock sale or transfer of substantially all of its assets "
        "undergoes a change of control, and the other party may terminate. "
    ) * 3
    merger = _save(
        store,
        coll.id,
        "merger.txt",
        ["MERGER AGREEMENT between Gamma Holdings and Delta Partners. " + FILLER, *[merger_words + FILLER] * 3],
    )
    for n in range(20):  # other contracts, so that names are rare words
        _save(store, coll.id, f"c{n}.txt", [f"SUPPLY AGREEMENT between Vendor{n} Inc and Buyer{n} LLC. " + FILLER])
    return store, coll.id, biopure, merger


def _document(store: SqliteStore, chunk_id: int) -> int:
    return store.fetch_chunks([chunk_id])[chunk_id].document_id


def test_the_document_the_question_names_beats_one_that_uses_its_clause_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, coll, biopure, merger = _folder(tmp_path)
    top = bm25(store, coll, QUESTION, 3)
    assert _document(store, top[0][0]) == _document(store, biopure[0])
    assert top[0][0] == biopure[1]  # and inside it, the clause asked about
    store.ranking = replace(store.ranking, title_margin=1e9)  # titles never overrule the first pass
    assert _document(store, bm25(store, coll, QUESTION, 3)[0][0]) == _document(store, merger[0])


def test_titles_follow_deletions_and_other_collections(tmp_path: Path) -> None:
    store, coll, biopure, merger = _folder(tmp_path)
    biopure_document = _document(store, biopure[0])
    assert _document(store, bm25(store, coll, QUESTION, 3)[0][0]) == biopure_document
    store.delete_document(store.collection("c"), biopure_document)
    left = [_document(store, chunk_id) for chunk_id, _ in bm25(store, coll, QUESTION, 3)]
    assert biopure_document not in left and left[0] == _document(store, merger[0])
    # The same contract in another collection is not offered to this one.
    other = store.collection("other", create=True)
    _save(store, other.id, "biopure-copy.txt", ["BIOPURE CORPORATION AGENCY AGREEMENT. " + FILLER])
    assert {_document(store, chunk_id) for chunk_id, _ in bm25(store, coll, QUESTION, 3)} <= set(left)
