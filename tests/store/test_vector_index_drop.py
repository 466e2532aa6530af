"""A deleted collection's FAISS file goes with it: SQLite gives the next collection the ID of a deleted last one,
which would otherwise open the old file (and its vectors) as its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from docqa.store.consistency import VectorIndexes
from docqa.store.db import SqliteStore


def test_dropping_a_collections_index_removes_its_file(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "docqa.sqlite3")
    indexes = VectorIndexes(store, tmp_path, auto_repair=True)
    coll = store.collection("gone", create=True)
    index = indexes.create(coll, 4)
    index.add(np.array([7], dtype=np.int64), np.ones((1, 4), dtype=np.float32))
    indexes.save(coll)
    assert indexes.path(coll).is_file()
    indexes.drop(coll)
    assert not indexes.path(coll).exists()
    assert store.drop_collection(coll)
    again = store.collection("next", create=True)
    assert again.id == coll.id and not indexes.path(again).exists()  # the ID comes back; the file does not
