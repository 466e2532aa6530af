"""Row-level checks of one collection in the store: every document complete or failed, no orphans.

Documents are written in one transaction with their chunks, so none of this should ever fire; it is
here to prove that after crashes (tests kill ingests at random) and to repair a database that was
edited or damaged by hand. The FAISS side is checked in docqa.store.consistency.
"""

from __future__ import annotations

from sqlalchemy import text

from docqa.store.keyword.passage_stems import Stemmer
from docqa.store.keyword.tables import MISSING_PASSAGES
from docqa.store.protocol import Store

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


def _global_checks(store: Store) -> list[tuple[str, str, list[str]]]:
    """Not tied to a collection: rows that belong to nothing, and chunks the keyword index
    (docqa.store.keyword.tables) lacks."""
    tables = store.keyword_tables
    keyword = [
        (count_sql, what, [_REINDEX_MISSING] if what == MISSING_PASSAGES else tables.orphan_fixes())
        for count_sql, what in tables.checks()
    ]
    return [
        (
            "SELECT count(*) FROM chunks WHERE document_id NOT IN (SELECT id FROM documents)",
            "orphan chunk rows without a document",
            ["DELETE FROM chunks WHERE document_id NOT IN (SELECT id FROM documents)"],
        ),
        *keyword,
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
                            store.keyword_tables.reindex_all(s.connection(), Stemmer(), only_missing=True)
                        else:
                            s.execute(text(fix), params)
    return problems


def document_problems(store: Store, collection_id: int, *, repair: bool = False) -> list[str]:
    """What is wrong with this collection's rows; with repair, incomplete documents are marked failed
    (so the next ingest redoes them) and stray chunk rows are dropped."""
    return _run(store, _CHECKS, {"cid": collection_id}, repair)


def orphan_problems(store: Store, *, repair: bool = False) -> list[str]:
    return _run(store, _global_checks(store), {}, repair)
