"""Row-level checks of one collection in SQLite: every document complete or failed, no orphans.

Documents are written in one transaction with their chunks, so none of this should ever fire; it is
here to prove that after crashes (tests kill ingests at random) and to repair a database that was
edited or damaged by hand. The FAISS side is checked in docqa.store.consistency.
"""

from __future__ import annotations

from sqlalchemy import text

from docqa.store.db import Store
from docqa.store.keyword import passages
from docqa.store.keyword.passage_stems import Stemmer

_REINDEX_MISSING = "reindex missing passages"  # a fix done in Python, not one SQL statement

# (query counting the bad rows, what is wrong, how repair fixes it)
_CHECKS: list[tuple[str, str, list[str]]] = [
    (
        "SELECT count(*) FROM documents d WHERE d.collection_id = :cid AND d.status = 'ready' "
        "AND d.n_chunks != (SELECT count(*) FROM chunks c WHERE c.document_id = d.id)",
        "ready documents whose chunk rows are incomplete",
        [
            "UPDATE documents SET status = 'failed', n_chunks = 0, "
            "error = 'incomplete ingest found by docqa check; ingest the file again' "
            "WHERE collection_id = :cid AND status = 'ready' "
            "AND n_chunks != (SELECT count(*) FROM chunks c WHERE c.document_id = documents.id)",
        ],
    ),
    (
        "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id "
        "WHERE d.collection_id = :cid AND d.status != 'ready'",
        "chunk rows of documents that are not ready",
        [
            "DELETE FROM chunks WHERE document_id IN "
            "(SELECT id FROM documents WHERE collection_id = :cid AND status != 'ready')",
        ],
    ),
]

# Not tied to a collection: rows that belong to nothing, and chunks the keyword index (its FTS5
# passages and their stems, docqa.store.keyword.index) lacks.
_PER_CHUNK = passages.PASSAGES_PER_CHUNK
_GLOBAL_CHECKS: list[tuple[str, str, list[str]]] = [
    (
        "SELECT count(*) FROM chunks WHERE document_id NOT IN (SELECT id FROM documents)",
        "orphan chunk rows without a document",
        ["DELETE FROM chunks WHERE document_id NOT IN (SELECT id FROM documents)"],
    ),
    *(
        (
            f"SELECT count(*) FROM {table} WHERE {key} / {_PER_CHUNK} NOT IN (SELECT id FROM chunks)",
            f"orphan {what} rows without a chunk",
            [f"DELETE FROM {table} WHERE {key} / {_PER_CHUNK} NOT IN (SELECT id FROM chunks)"],
        )
        for table, key, what in (("passage_fts", "rowid", "keyword-index"), ("passage_stems", "id", "passage-stem"))
    ),
    (
        f"SELECT count(*) FROM chunks WHERE id * {_PER_CHUNK} NOT IN (SELECT rowid FROM passage_fts) "
        f"OR id * {_PER_CHUNK} NOT IN (SELECT id FROM passage_stems)",
        "chunk rows missing from the keyword index or its stems",
        [_REINDEX_MISSING],
    ),
]


def _run(store: Store, checks: list[tuple[str, str, list[str]]], params: dict[str, int], repair: bool) -> list[str]:
    problems: list[str] = []
    with store.session() as s:
        for count_sql, what, fixes in checks:
            count = int(s.execute(text(count_sql), params).scalar() or 0)
            if count:
                problems.append(f"{count} {what}")
                if repair:
                    for fix in fixes:
                        if fix == _REINDEX_MISSING:
                            passages.reindex_all(s.connection(), Stemmer(), only_missing=True)
                        else:
                            s.execute(text(fix), params)
    return problems


def document_problems(store: Store, collection_id: int, *, repair: bool = False) -> list[str]:
    """What is wrong with this collection's rows; with repair, incomplete documents are marked failed
    (so the next ingest redoes them) and stray chunk rows are dropped."""
    return _run(store, _CHECKS, {"cid": collection_id}, repair)


def orphan_problems(store: Store, *, repair: bool = False) -> list[str]:
    return _run(store, _GLOBAL_CHECKS, {}, repair)
