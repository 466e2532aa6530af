"""The store on a real Postgres (with pgvector) answers as the SQLite store does: the same BM25 scores,
the same top chunks, the same counts after replacing and deleting, cached answers dropped with a change,
vectors searched within their collection, and `check` finding and repairing what is broken."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from sqlalchemy import text

from docqa.answering.cache import AnswerCache, CacheKey
from docqa.cli.main import main
from docqa.core.types import Answer, Timings
from docqa.profiles.sec.identity import FilingIdentity
from docqa.store import schema
from docqa.store.audit import document_problems, orphan_problems
from docqa.store.db import SqliteStore
from docqa.store.keyword import lexical
from docqa.store.keyword.ranking import DEFAULT_RANKING
from docqa.store.models import SavedDocument
from docqa.store.postgres.keyword_tables import PostgresKeywordTables
from docqa.store.postgres.store import PostgresStore
from docqa.store.postgres.tsvectors import tsquery_literal, tsvector_literal
from docqa.store.postgres.vectors import PgVectorIndexes
from docqa.store.protocol import Store
from tests.store.test_derived import COVER, EMPLOYEES_CHUNK, ZH_CHUNK
from tests.store.test_passage_bm25 import CLAUSES
from tests.support.profiles import PROFILES, filing_identities
from tests.support.store_rows import bm25, drafts, save

QUESTIONS = [
    "Can the supplier terminate on notice, and what does termination end?",
    "Which fees are late and how is notice given by e_mail?",  # e_mail: a phrase of two stems
    "naive readings of the governing laws",
    "Who indemnifies whom against claims?",
    "Acme2 Beta2 master agreement",  # title words
    "In the Master Agreement between Acme3 Corp and Beta3 LLC, how long does information stay confidential?",
    "zebra",
]


def _same(first: list[tuple[int, float]], second: list[tuple[int, float]]) -> bool:
    """The same chunks in the same order, with the same scores (to float rounding)."""
    return [c for c, _ in first] == [c for c, _ in second] and [s for _, s in first] == pytest.approx(
        [s for _, s in second], rel=1e-9
    )


def _fill(store: Store, documents: int = 6) -> int:
    coll = store.collection("c", create=True)
    for n in range(documents):
        chunks = [f"Master Agreement {n} between Acme{n} Corp and Beta{n} LLC. " + CLAUSES[n % len(CLAUSES)]]
        chunks += [CLAUSES[(n + k) % len(CLAUSES)] * (k + 1) for k in range(1, 4)]
        save(store, coll.id, f"d{n}.txt", chunks, None)
    return coll.id


@pytest.fixture
def both(tmp_path: Path, postgres_url: str) -> tuple[SqliteStore, PostgresStore]:
    return SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES), PostgresStore(postgres_url, reader=PROFILES)


def test_scores_and_rankings_equal_sqlite(both: tuple[SqliteStore, PostgresStore]) -> None:
    sqlite, postgres = both
    for store in both:
        _fill(store)
    for question in QUESTIONS:
        terms = lexical.query_terms(question)
        with sqlite.session() as a, postgres.session() as b:
            first = sqlite.keyword_tables.rank(a, 1, terms, DEFAULT_RANKING.title_weight, 10)
            second = postgres.keyword_tables.rank(b, 1, terms, DEFAULT_RANKING.title_weight, 10)
        assert _same(first, second), question
        assert _same(bm25(sqlite, 1, question, 5), bm25(postgres, 1, question, 5)), question
    assert QUESTIONS and any(bm25(sqlite, 1, q, 3) for q in QUESTIONS)  # the comparison compared something


def test_counts_follow_replacements_and_deletes(both: tuple[SqliteStore, PostgresStore]) -> None:
    for store in both:
        cid = _fill(store)
        save(store, cid, "d2.txt", ["A short replacement about zebras and termination."], None, sha="new")
        store.delete_document(store.collection("c"), store.documents(cid)[0].id)
    sqlite, postgres = both
    with sqlite.session() as a, postgres.session() as b:
        assert sqlite.keyword_tables.totals(a) == postgres.keyword_tables.totals(b)
        for stem in ("termin", "zebra", "agreement", "acme2", "fee"):
            found = sqlite.keyword_tables.document_frequency(a, stem)
            assert found == postgres.keyword_tables.document_frequency(b, stem), stem
        assert postgres.keyword_tables.document_frequency(b, "acme0") == 0  # the deleted document's title
    for question in QUESTIONS:
        assert _same(bm25(sqlite, 1, question, 5), bm25(postgres, 1, question, 5)), question
    assert orphan_problems(postgres) == [] and document_problems(postgres, 1) == []


def test_search_is_scoped_to_its_collection(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, reader=PROFILES)
    mine = _fill(store, documents=2)
    other = store.collection("other", create=True)
    save(store, other.id, "z.txt", ["The zebra clause: zebras graze the zebra field."], None)
    assert bm25(store, other.id, "zebra clause", 3) and bm25(store, mine, "zebra clause", 3) == []


def test_cached_answers_go_with_a_change_and_the_oldest_are_evicted(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, reader=PROFILES)
    cid = _fill(store, documents=1)
    cache = AnswerCache(store, max_entries=2)
    answer = Answer("It ends.", "", "non-thinking", [], Timings(), "stop")
    for n in range(3):
        cache.put(CacheKey(cid, f"k{n}", store.generation(cid)), answer)
    assert cache.get(CacheKey(cid, "k0")) is None and cache.get(CacheKey(cid, "k2")) is not None
    stale = store.generation(cid)
    save(store, cid, "new.txt", ["Another contract."], None)
    assert cache.get(CacheKey(cid, "k2")) is None  # the change emptied the collection's cache
    cache.put(CacheKey(cid, "late", stale), answer)  # retrieved before the change: not cached
    assert cache.get(CacheKey(cid, "late")) is None


def test_vectors_are_found_within_their_collection_and_document(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, reader=PROFILES)
    rng = np.random.default_rng(0)
    collections = []
    for name in ("a", "b"):
        coll = store.collection(name, create=True)
        store.set_embedder(coll.id, "m", 8)
        vectors = rng.normal(size=(6, 8)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        saved = save(store, coll.id, f"{name}.txt", [f"chunk {i}" for i in range(6)], vectors)
        collections.append((store.collection(name), saved.chunk_ids, vectors))
    indexes = PgVectorIndexes(store)
    (a, a_ids, a_vectors), (_, b_ids, _) = collections
    index = indexes.get(a)
    assert index is not None and len(index) == 6
    found = index.search(a_vectors[3], 3)
    exact = np.argsort(-(a_vectors @ a_vectors[3]))[:3]
    assert [cid for cid, _ in found] == [a_ids[i] for i in exact]  # exact order on a small set
    assert found[0][1] == pytest.approx(1.0, abs=1e-3)  # cosine similarity, halfvec precision
    assert not {cid for cid, _ in index.search(a_vectors[3], 12)} & set(b_ids)
    assert [cid for cid, _ in index.search(a_vectors[3], 2, np.array(a_ids[4:]))] == sorted(
        a_ids[4:], key=lambda i: -float(a_vectors[a_ids.index(i)] @ a_vectors[3])
    )
    ids, stored = store.embeddings(a.id, 8)
    assert list(ids) == a_ids and np.allclose(stored, a_vectors, atol=1e-3)
    assert indexes.check(a).ok


def test_check_finds_and_repairs_a_damaged_keyword_index(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, reader=PROFILES)
    cid = _fill(store, documents=3)
    before = bm25(store, cid, QUESTIONS[0], 5)
    with store.session() as s:
        s.execute(text("DELETE FROM passages WHERE document_id = (SELECT min(id) FROM documents)"))
        s.execute(text("UPDATE keyword_totals SET tokens = tokens + 5"))
    problems = orphan_problems(store, repair=True)
    assert any("keyword-index totals" in p for p in problems) and any("missing" in p for p in problems)
    assert orphan_problems(store) == []
    assert _same(bm25(store, cid, QUESTIONS[0], 5), before)


def test_the_schema_is_migrated_once_and_checked(postgres_url: str) -> None:
    first = PostgresStore(postgres_url, reader=PROFILES)
    assert schema.current(first.engine) == schema.head("postgresql") == "0014" and first.integrity_ok()
    PostgresStore(postgres_url, reader=PROFILES)  # a second process at start: nothing left to do
    assert "password" not in first.location and first.location.startswith("postgresql+psycopg://")


def test_reindex_reads_only_the_stale_documents_again_on_postgres(postgres_url: str) -> None:
    """A document older rules read (no version recorded, its headings as a rule before them read none) is read
    again by reindex, its catalog too; a document read with today's rules is left as it is."""
    store = PostgresStore(postgres_url, reader=PROFILES)
    coll = store.collection("stale-headings", create=True).id
    old = save(store, coll, "10-K.txt", [EMPLOYEES_CHUNK], None, sha="one-word").document_id
    fresh = save(store, coll, "招股说明书.pdf", [ZH_CHUNK], None, sha="zh-headings").document_id
    assert store.stale_documents(coll) == []
    query = text("SELECT document_id, headings FROM passages WHERE document_id IN (:old, :fresh) ORDER BY id")
    ids = {"old": old, "fresh": fresh}
    with store.session() as s:
        written = [(d, bytes(h)) for d, h in s.execute(query, ids)]
        s.execute(text("UPDATE passages SET headings = ''::bytea WHERE document_id IN (:old, :fresh)"), ids)
        s.execute(text("UPDATE documents SET derived = NULL, catalog = NULL WHERE id = :old"), ids)
    assert store.stale_documents(coll) == [old]
    assert store.rederive(old) and store.stale_documents(coll) == []
    with store.session() as s:
        read_again = [(d, bytes(h)) for d, h in s.execute(query, ids)]
    assert [h for d, h in read_again if d == old] == [h for d, h in written if d == old] != [b""]
    assert {h for d, h in read_again if d == fresh} == {b""}  # not stale: left as it was
    entry = next(d for d in store.documents(coll) if d.id == old).as_dict()["catalog"]
    assert entry["kind"] == "document"  # the catalog read again
    assert orphan_problems(store) == []  # the index's counts still agree with its passages


def test_an_old_postgres_data_home_is_migrated_and_read_again_by_docqa_reindex(postgres_url: str) -> None:
    """A database as docqa left it at revision 0006 (before the heading revisions, the derived versions and the
    collections' profiles), its headings read by an older rule: `docqa db upgrade` changes its schema only, and
    `docqa reindex` reads its documents again."""
    store = PostgresStore(postgres_url, reader=PROFILES)
    coll = store.collection("old-home", create=True).id
    doc = save(store, coll, "ACME_2017_10K.pdf", [COVER + EMPLOYEES_CHUNK], None, sha="old-home").document_id
    query = text("SELECT headings FROM passages WHERE document_id = :d ORDER BY id")
    with store.session() as s:
        written = [bytes(h) for (h,) in s.execute(query, {"d": doc})]
        s.execute(text("UPDATE passages SET headings = ''::bytea WHERE document_id = :d"), {"d": doc})
        s.execute(text("""UPDATE documents SET catalog = '{"kind": "document"}' WHERE id = :d"""), {"d": doc})
        s.execute(text("ALTER TABLE documents DROP COLUMN derived"))
        s.execute(text("ALTER TABLE collections DROP COLUMN profiles"))
        s.execute(text("UPDATE alembic_version SET version_num = '0006'"))
    store.close()
    runner, env = CliRunner(), {"DOCQA_DATABASE_URL": postgres_url}
    upgraded = runner.invoke(main, ["db", "upgrade", "--json", "--data-dir", "/nonexistent"], env=env)
    assert upgraded.exit_code == 0 and json.loads(upgraded.stdout)["revision"] == "0014", upgraded.output
    done = runner.invoke(main, ["reindex", "--collection", "old-home", "--json"], env=env)
    assert done.exit_code == 0 and json.loads(done.stdout)["done"] == 1, done.output
    store = PostgresStore(postgres_url, reader=PROFILES)
    with store.session() as s:
        assert [bytes(h) for (h,) in s.execute(query, {"d": doc})] == written != [b""]
    entry = store.documents(coll)[0].as_dict()["catalog"]
    assert entry["kind"] == "filing" and entry["company"] == "ACME CORP" and orphan_problems(store) == []


def test_tsvector_and_tsquery_literals_quote_what_postgres_would_misread() -> None:
    assert tsvector_literal(["it's", "a\\b", "it's"]) == "'it''s':1,3 'a\\\\b':2"
    assert tsquery_literal([["e", "mail"], ["fee"]]) == "('e' <-> 'mail') | ('fee')"
    assert tsvector_literal(["w"] * 300).count(",") == 254  # Postgres keeps 256 positions at most


def test_a_phrase_of_several_stems_scores_as_on_sqlite(
    both: tuple[SqliteStore, PostgresStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40, item 9: Postgres scores a phrase of several stems ("e_mail": e, mail) in Python
    (_scored_here), which no question reached: query_terms splits "e_mail" before it gets there. Here the
    terms go to rank() as a caller's would hold them, so that path runs, and must give SQLite's scores."""
    from docqa.store.postgres.keyword_tables import PostgresKeywordTables

    sqlite, postgres = both
    for store in both:
        _fill(store)
    calls: list[int] = []
    scored_here = PostgresKeywordTables._scored_here

    def counted(self: PostgresKeywordTables, *args: object) -> list[tuple[int, float]]:
        calls.append(1)
        return scored_here(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(PostgresKeywordTables, "_scored_here", counted)
    for terms in (["e_mail"], ["late", "e_mail", "notice"], ["e_mail", "termination"]):
        with sqlite.session() as a, postgres.session() as b:
            first = sqlite.keyword_tables.rank(a, 1, terms, DEFAULT_RANKING.title_weight, 10)
            second = postgres.keyword_tables.rank(b, 1, terms, DEFAULT_RANKING.title_weight, 10)
        assert first and _same(first, second), terms
    assert len(calls) == 3  # the phrase path ran for each


def _save_once(store: Store, cid: int, source: str, sha: str) -> SavedDocument:
    return store.save_document(
        collection_id=cid,
        source=source,
        name=source,
        sha256=sha,
        size_bytes=1,
        pages=1,
        warnings=[],
        chunks=drafts("The supplier ships within ten days."),
        embeddings=None,
        unique_content=True,
    )


def test_the_same_bytes_saved_under_another_source_come_back_as_the_stored_document(
    both: tuple[SqliteStore, PostgresStore],
) -> None:
    """Issue 42 item 2: what save_document finds under its write lock, on both databases."""
    for store in both:
        cid = store.collection("c", create=True).id
        first = _save_once(store, cid, "a/contract.txt", "same")
        again = _save_once(store, cid, "upload:contract copy.txt", "same")
        assert first.twin is None and first.chunk_ids
        assert again.twin is not None
        assert (again.document_id, again.twin.source) == (first.document_id, "a/contract.txt")
        assert again.chunk_ids == [] and [d.source for d in store.documents(cid)] == ["a/contract.txt"]
        assert _save_once(store, cid, "b.txt", "other").twin is None  # other bytes are another document


def test_two_workers_saving_the_same_file_at_once_store_it_once(postgres_url: str) -> None:
    """Issue 42 item 2, the race: every worker hashed the file before any had stored it, so the pipeline's
    check found nothing for any of them; they save at the same moment, each from its own store and
    connections, as `docqa worker` processes do. Before the check under the write lock: 6 documents."""
    stores = [PostgresStore(postgres_url, reader=PROFILES) for _ in range(6)]
    cid = stores[0].collection("race", create=True).id
    start = threading.Barrier(len(stores))

    def worker(n: int) -> SavedDocument:
        start.wait()
        return _save_once(stores[n], cid, f"upload:copy {n}.txt", "same bytes")

    with ThreadPoolExecutor(len(stores)) as pool:
        saved = list(pool.map(worker, range(len(stores))))
    documents = stores[0].documents(cid)
    assert len(documents) == 1
    assert sum(s.twin is None for s in saved) == 1 and {s.document_id for s in saved} == {documents[0].id}


def _identity_on_postgres(postgres_url: str, file_name: str, form_line: str, name: str, body: str) -> FilingIdentity:
    """The identity a Postgres store keeps for a filing of two chunks: an SEC cover, then `body`."""
    store = PostgresStore(postgres_url, reader=PROFILES)
    coll = store.collection(f"identity-{file_name}", create=True).id
    cover = (
        f"UNITED STATES\nSECURITIES AND EXCHANGE COMMISSION\n{form_line}\nCommission file number 1-1234\n{name}\n"
        "(Exact name of registrant as specified in its charter)\n"
    )
    doc = save(store, coll, file_name, [cover, body], None, sha=file_name).document_id
    return filing_identities(store, coll)[doc]


def test_a_retailers_fiscal_year_is_read_from_its_text_on_postgres(postgres_url: str) -> None:
    """The identity's fiscal-year name comes from the chunks that define the year (LIKE conditions in SQL,
    docqa.store.keyword.identities), the same on Postgres as on SQLite."""
    note = "Fiscal Year. Fiscal 2022 represented the 52 weeks ended January 28, 2023 (“fiscal 2022”). 100% of it."
    form_line = "FORM 10-K\nFor the fiscal year ended January 28, 2023"
    identity = _identity_on_postgres(postgres_url, "acme-annual.pdf", form_line, "ACME STORES, INC.", note)
    assert identity.fiscal_years == frozenset({2022}) and 2022 in identity.years


def test_a_10qs_fiscal_quarter_is_read_from_its_balance_sheet_on_postgres(postgres_url: str) -> None:
    """A 10-Q named by nothing: its quarter and fiscal year come from the chunks that name a balance sheet
    (LIKE conditions in SQL, docqa.store.keyword.identities), the same on Postgres as on SQLite."""
    sheet = "Condensed Consolidated Balance Sheets (Unaudited) December 31, 2022 June 30, 2022 Assets Cash 837 775."
    form_line = "FORM 10-Q\nFor the quarterly period ended December 31, 2022"
    identity = _identity_on_postgres(postgres_url, "0001748790-23-000011.pdf", form_line, "ACME PLC", sheet)
    assert identity.quarter == 2 and 2023 in identity.years
