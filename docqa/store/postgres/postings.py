"""The keyword index's posting lists in Postgres: per (stem, passage) its frequency, read by the first pass.

A collection-wide search scores up to 10,000 passages (docqa.store.keyword.term_stats.ROW_BUDGET). Reading
each candidate's tsvector to count the question's terms cost ~10 us a passage (TOAST, decompression), 65
ms at 2,000 chunks; reading the terms' posting lists from a covering index in stem order is what an inverted
index does, and Postgres sums BM25 over them in one query. Stems are docqa's stem IDs
(docqa.store.keyword.passage_stems.stem_id, a 64-bit hash), the same the passages' stored stems use.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from sqlalchemy import Connection, bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, BIGINT, FLOAT, INTEGER
from sqlalchemy.orm import Session

_COPY = "COPY keyword_postings (stem, collection_id, passage_id, document_id, length, tf) FROM STDIN"

# FTS5's bm25() over the posting lists. `terms`: the question's stems in its order with their IDFs (a stem
# twice counts twice, as two phrases do in FTS5). A passage scores for a term when its body holds it, or
# its document's title does (every passage of a document whose title matches is a candidate, as in FTS5,
# with the title's counts given as :tdocs/:tstems/:ttfs); its frequency is title_weight x title + body.
_SCORE_SQL = """
WITH terms AS (
    SELECT t.stem, t.idf FROM unnest(:stems, :idf) AS t(stem, idf)
), hits AS (
    SELECT passage_id, length, stem, tf AS body, 0 AS title FROM keyword_postings
    WHERE stem = ANY(:stems) AND collection_id = :cid
    UNION ALL
    SELECT p.id, p.length, t.stem, 0, t.tf FROM passages p
    JOIN unnest(:tdocs, :tstems, :ttfs) AS t(document_id, stem, tf) ON p.document_id = t.document_id
), per_term AS (
    SELECT passage_id, max(length) AS length, stem, :tw * sum(title) + sum(body) AS f FROM hits
    GROUP BY passage_id, stem
)
SELECT x.passage_id, sum(t.idf * (x.f * (:k1 + 1.0)) / (x.f + :k1 * (1 - :b + :b * x.length / :avg))) AS score
FROM per_term x JOIN terms t ON t.stem = x.stem
GROUP BY x.passage_id ORDER BY score DESC, x.passage_id LIMIT :k
"""


def write(
    session: Session | Connection,
    collection_id: int,
    document_id: int,
    passages: Sequence[tuple[int, int, Sequence[int]]],
) -> None:
    """The postings of a document's passages, each (passage ID, length, body stem IDs), by COPY in the
    caller's transaction (a 100-chunk document is ~40,000 rows)."""
    connection = session.connection() if isinstance(session, Session) else session
    driver = connection.connection.driver_connection
    assert driver is not None
    with driver.cursor() as cursor, cursor.copy(_COPY) as copy:
        for passage_id, length, stems in passages:
            for stem, tf in Counter(stems).items():
                copy.write_row((stem, collection_id, passage_id, document_id, length, tf))


def forget(session: Session | Connection, document_id: int) -> None:
    session.execute(text("DELETE FROM keyword_postings WHERE document_id = :d"), {"d": document_id})


def score(
    session: Session,
    collection_id: int,
    terms: Sequence[tuple[int, float]],
    titles: Sequence[tuple[int, int, int]],
    shape: tuple[float, float, float, float, int],
) -> list[tuple[int, float]]:
    """(passage ID, score), best first, at most `fetch`: `terms` (stem ID, IDF) in the question's order,
    `titles` (document, stem ID, count) for the documents whose title holds any, `shape` (title weight,
    average length, k1, b, fetch)."""
    title_weight, average, k1, b, fetch = shape
    arrays = {
        "stems": ARRAY(BIGINT),
        "idf": ARRAY(FLOAT),
        "tdocs": ARRAY(INTEGER),
        "tstems": ARRAY(BIGINT),
        "ttfs": ARRAY(INTEGER),
    }
    found = session.execute(
        text(_SCORE_SQL).bindparams(*(bindparam(name, type_=kind) for name, kind in arrays.items())),
        {
            "cid": collection_id,
            "stems": [stem for stem, _ in terms],
            "idf": [idf for _, idf in terms],
            "tdocs": [document for document, _, _ in titles],
            "tstems": [stem for _, stem, _ in titles],
            "ttfs": [count for _, _, count in titles],
            "tw": title_weight,
            "avg": average,
            "k1": k1,
            "b": b,
            "k": fetch,
        },
    ).all()
    return [(int(passage), float(value)) for passage, value in found]
