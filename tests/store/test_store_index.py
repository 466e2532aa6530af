"""SQLite + FAISS on real files: transactions, FTS, consistency checks, atomic saves and repair."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy

from docqa.core.errors import IndexInconsistentError
from docqa.store import vectors as vector_index
from docqa.store.consistency import VectorIndexes
from docqa.store.db import SqliteStore
from docqa.store.keyword import lexical, term_stats
from docqa.store.keyword.ranking import DEFAULT_RANKING
from docqa.store.vectors import FaissIndex
from tests.support.profiles import PROFILES
from tests.support.store_rows import bm25, save

DIM = 8


def vectors(n: int, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def populated(tmp_path: Path, auto_repair: bool = True) -> tuple[SqliteStore, VectorIndexes, int]:
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    coll = store.collection("c", create=True)
    store.set_embedder(coll.id, "m", DIM)
    coll = store.collection("c")
    indexes = VectorIndexes(store, tmp_path / "vectors", auto_repair)
    index = indexes.get(coll)
    assert index is not None
    for i, name in enumerate(["a.txt", "b.txt"]):
        saved = save(
            store,
            coll.id,
            name,
            [f"{name} governing law", f"{name} fees"],
            vectors(2, i),
            sha=str(i),
        )
        index.add(np.asarray(saved.chunk_ids), vectors(2, i))
    index.save()
    return store, indexes, coll.id


def test_replacing_a_document_swaps_its_chunks_in_one_go(tmp_path: Path) -> None:
    store, _, cid = populated(tmp_path)
    before = set(store.chunk_ids(cid).tolist())
    saved = save(
        store,
        cid,
        "a.txt",
        ["new text"],
        vectors(1),
    )
    assert set(saved.removed_chunk_ids) < before
    after = set(store.chunk_ids(cid).tolist())
    assert after == (before - set(saved.removed_chunk_ids)) | set(saved.chunk_ids)
    assert min(saved.chunk_ids) > max(before), "chunk IDs are never reused"
    # the FTS rows followed the chunk rows (triggers, same transaction)
    assert bm25(store, cid, "governing", 10) and all(h[0] in after for h in bm25(store, cid, "governing", 10))
    assert bm25(store, cid, "new text", 10)[0][0] == saved.chunk_ids[0]


def test_bm25_is_scoped_to_its_collection(tmp_path: Path) -> None:
    store, _, cid = populated(tmp_path)
    other = store.collection("other", create=True)
    save(store, other.id, "x", ["governing law of elsewhere"], None, sha="x")
    ids_c = set(store.chunk_ids(cid).tolist())
    assert {h[0] for h in bm25(store, cid, "governing law", 50)} <= ids_c
    assert len(bm25(store, other.id, "governing law", 50)) == 1


def test_consistent_index_checks_clean(tmp_path: Path) -> None:
    store, indexes, _cid = populated(tmp_path)
    assert indexes.check(store.collection("c")).ok


def test_vectors_missing_from_faiss_are_detected_and_repaired(tmp_path: Path) -> None:
    store, indexes, cid = populated(tmp_path)
    # a crash after the SQLite commit, before the FAISS save: rows without vectors on disk
    save(
        store,
        cid,
        "c.txt",
        ["late"],
        vectors(1, 9),
    )
    coll = store.collection("c")
    report = indexes.check(coll)
    assert not report.ok and "have no FAISS vector" in report.problems[0]

    strict = VectorIndexes(store, tmp_path / "vectors", auto_repair=False)
    with pytest.raises(IndexInconsistentError, match="disagrees with SQLite"):
        strict.get(coll)

    repaired = VectorIndexes(store, tmp_path / "vectors", auto_repair=True).get(coll)
    assert repaired is not None and sorted(repaired.ids().tolist()) == sorted(store.chunk_ids(cid).tolist())
    assert indexes.check(coll).ok, "the repaired index was saved"


def test_orphan_vectors_are_detected(tmp_path: Path) -> None:
    store, indexes, _cid = populated(tmp_path)
    coll = store.collection("c")
    index = FaissIndex.load(indexes.path(coll), DIM)
    index.add(np.asarray([999_999]), vectors(1, 5))
    index.save()
    report = indexes.check(coll)
    assert any("have no chunk row" in p for p in report.problems)


def test_truncated_index_file_is_detected_and_rebuilt(tmp_path: Path) -> None:
    store, indexes, _cid = populated(tmp_path)
    coll = store.collection("c")
    path = indexes.path(coll)
    path.write_bytes(path.read_bytes()[:100])
    assert "not a readable FAISS index" in indexes.check(coll).problems[0]
    index = VectorIndexes(store, tmp_path / "vectors", auto_repair=True).get(coll)
    assert index is not None and len(index) == 4


def test_failed_save_leaves_the_previous_index_loadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, indexes, _cid = populated(tmp_path)
    coll = store.collection("c")
    index = indexes.get(coll)
    assert index is not None
    index.add(np.asarray([10_000]), vectors(1, 3))

    def crash(*_args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("docqa.store.vectors.os.replace", crash)
    with pytest.raises(OSError, match="disk full"):
        index.save()
    monkeypatch.undo()
    assert len(FaissIndex.load(indexes.path(coll), DIM)) == 4, "the old file is intact"
    assert not list(indexes.path(coll).parent.glob("*.tmp")), "no temp file left behind"


def test_search_can_be_limited_to_some_ids(tmp_path: Path) -> None:
    store, indexes, cid = populated(tmp_path)
    index = indexes.get(store.collection("c"))
    assert index is not None
    ids = store.chunk_ids(cid)
    hits = index.search(vectors(2, 0)[0], 4, allowed_ids=ids[2:])
    assert {h[0] for h in hits} <= set(ids[2:].tolist())
    assert index.search(vectors(2, 0)[0], 1)[0][0] == ids[0]  # its own vector is the nearest


def _contract(parties: str, clauses: list[str]) -> list[str]:
    preamble = f"SUPPLY AGREEMENT. This Supply Agreement is made between {parties}. " * 3
    filler = "The parties agree to cooperate in good faith on the matters set out in this schedule. " * 25
    return [preamble + filler] + [clause + " " + filler for clause in clauses]


def test_bm25_ranks_the_clause_asked_about_above_the_preamble_naming_the_parties(tmp_path: Path) -> None:
    """A question names its contract by title and parties; those words fill the preamble, so the
    clause itself must win on the question's other words (the document-focused second pass)."""
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    coll = store.collection("c", create=True)
    clauses = [
        "Fees are payable quarterly within thirty days of invoice.",
        "This agreement shall be governed by the laws of the State of New York.",
    ]
    signatures = "IN WITNESS WHEREOF: Acme Widgets Corp, by its CEO; Beta Logistics LLC, by its manager."
    acme = [*_contract("Acme Widgets Corp and Beta Logistics LLC", clauses), signatures]
    other = _contract(
        "Gamma Foods Inc and Delta Retail Ltd",
        ["This agreement shall be governed by the laws of England and Wales."],
    )
    acme_ids = save(store, coll.id, "acme.txt", acme, None).chunk_ids
    save(store, coll.id, "gamma.txt", other, None, sha="2")
    for n in range(20):  # a folder of other contracts, so that party names are rare words, as in real ones
        parties = f"Vendor{n} Holdings and Customer{n} Partners"
        texts = _contract(parties, ["Fees are due monthly. The laws of Delaware govern this agreement."])
        save(store, coll.id, f"c{n}.txt", texts, None, sha=f"s{n}")
    question = "In the Supply Agreement between Acme Widgets Corp and Beta Logistics LLC: which law governs it?"
    assert bm25(store, coll.id, question, 3)[0][0] == acme_ids[2]
    doc = store.fetch_chunks([acme_ids[0]])[acme_ids[0]].document_id
    assert bm25(store, coll.id, question, 3, document_id=doc)[0][0] == acme_ids[2]
    # A question that names no document keeps the first pass's ranking across documents.
    generic = "which law governs the agreement?"
    with store.session() as session:
        plain = store.keyword_tables.rank(
            session, coll.id, lexical.query_terms(generic), DEFAULT_RANKING.title_weight, 5
        )[:5]
    assert bm25(store, coll.id, generic, 5) == plain


def test_collection_wide_search_uses_the_rarest_terms_within_its_row_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At scale the first pass leaves out words so common that scoring every passage holding them
    costs more than they tell (docqa.store.keyword.term_stats); the counts are FTS5's, on its stemmed forms."""

    monkeypatch.setattr(term_stats, "ROW_BUDGET", 12)
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    coll = store.collection("c", create=True)
    for n in range(20):
        extra = " The zebra clause governs." if n == 7 else ""
        save(store, coll.id, f"d{n}.txt", [f"This agreement governs the supply of parts number {n}.{extra}"], None)
    stats = term_stats.TermStats(store.keyword_tables)
    with store.session() as session:
        assert stats.refresh(session).rows == 20  # a search reads the index's totals first
        assert stats.stems(["governs", "zebra", "agreement"]) == [["govern"], ["zebra"], ["agreement"]]
        assert stats.document_frequency(session, "agreement") == 20
        # zebra (1 passage) fits the budget of 12; agreement and governs (20 each) do not
        assert stats.selective(session, ["agreement", "zebra", "governs"]) == ["zebra"]
        assert stats.weighted(session, ["agreement", "zebra"]) == ["zebra"]  # in every passage: no BM25 weight
    top = bm25(store, coll.id, "Which agreement has the zebra clause that governs?", 1)
    assert store.fetch_chunks([top[0][0]])[top[0][0]].document_name == "d7.txt"


def test_float16_index_finds_what_an_exact_float32_one_finds_and_old_files_still_load(tmp_path: Path) -> None:
    import faiss

    rng = np.random.default_rng(3)
    data = rng.standard_normal((2_000, 64)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    ids = np.arange(10, 2_010, dtype=np.int64)
    exact = faiss.IndexIDMap2(faiss.IndexFlatIP(64))
    exact.add_with_ids(data, ids)
    current = FaissIndex(tmp_path / "new.faiss", 64)
    current.add(ids, data)
    # the vectors are spread over every list that a search scans in parallel
    assert all(current._index.invlists.list_size(n) > 0 for n in range(vector_index.SHARDS))
    assert sorted(current.ids().tolist()) == ids.tolist()
    overlap = []
    for query in data[:20] + 0.1 * rng.standard_normal((20, 64)).astype(np.float32):
        expected = [int(i) for i in exact.search(query.reshape(1, -1), 10)[1][0]]
        found = [i for i, _ in current.search(query, 10)]
        assert found[0] == expected[0]  # float16 rounding may swap only near-ties further down
        overlap.append(len(set(found) & set(expected)) / 10)
    assert np.mean(overlap) >= 0.95
    # An index file written by an earlier docqa (float32, IndexFlatIP) loads and answers the same.
    (tmp_path / "old.faiss").write_bytes(faiss.serialize_index(exact).tobytes())
    old = FaissIndex.load(tmp_path / "old.faiss", 64)
    assert old.search(data[5], 3)[0][0] == 15
    old.remove(np.asarray([15], dtype=np.int64))
    assert 15 not in [i for i, _ in old.search(data[5], 3)]


def test_a_small_collection_is_found_behind_a_large_one_that_outranks_it(tmp_path: Path) -> None:
    """The first pass ranks the whole index and keeps this collection's chunks; when the first page
    holds too few of them (a small collection beside a large one), it searches the collection alone."""
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    big = store.collection("big", create=True)
    small = store.collection("small", create=True)
    for n in range(30):
        save(store, big.id, f"b{n}.txt", [f"zebra zebra zebra crossing {n}"], None, sha=f"b{n}")
    filler = "The parties agree to cooperate in good faith on the matters set out in this schedule. " * 20
    saved = save(store, small.id, "s.txt", [filler + " A zebra is mentioned once here. " + filler], None, sha="s")
    found = [chunk_id for chunk_id, _ in bm25(store, small.id, "zebra", 3)]
    assert found == saved.chunk_ids
    assert len(bm25(store, big.id, "zebra", 3)) == 3


def test_a_lone_word_the_preamble_also_uses_still_ranks_the_clause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The preamble says "organised under the laws of the State of Delaware": "state" is in the head,
    but alone, not in a run naming the contract, so the second pass still ranks by it and finds the
    governing-law clause, not the one that shares three common words with the question."""
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    coll = store.collection("c", create=True)
    filler = "The parties agree to cooperate in good faith on the matters set out in this schedule. " * 25
    head = "SUPPLY AGREEMENT. This Supply Agreement is made between Acme Widgets Corp, organised under the laws "
    head += "of the State of Delaware, and Beta Logistics LLC. "
    clauses = [
        "Headings are for convenience only and do not affect the interpretation of this contract or the law.",
        "Construction. This Agreement is construed under the laws of the State of Kansas, which govern it.",
    ]
    acme = save(store, coll.id, "acme.txt", [head + filler, *(c + " " + filler for c in clauses)], None).chunk_ids
    common = "The laws of Delaware govern the interpretation of this contract."
    for n in range(20):  # other contracts: the parties' names are rare words, the clause's words common ones
        texts = _contract(f"Vendor{n} Holdings and Customer{n} Partners", [common])
        save(store, coll.id, f"c{n}.txt", texts, None, sha=f"s{n}")
    question = "In the Supply Agreement between Acme Widgets Corp and Beta Logistics LLC: " + (
        "which state's law governs the interpretation of the contract?"
    )
    assert bm25(store, coll.id, question, 3)[0][0] == acme[2]
    store.ranking = replace(store.ranking, naming_run=1)  # every title word names the document, as before
    assert bm25(store, coll.id, question, 3)[0][0] == acme[1]


def test_naming_runs_are_consecutive_title_words_within_one_sentence() -> None:
    title = lexical.words("supply agreement between acme widgets corp and beta logistics llc state of delaware")
    question = "In the Supply Agreement between Acme Widgets Corp. and Beta Logistics LLC: which state's law governs?"
    assert lexical.naming_runs(lexical.word_sequences(question), title) == {
        "supply", "agreement", "between", "acme", "widgets", "corp", "beta", "logistics", "llc"
    }  # fmt: skip
    # "llc" and "state" are neighbours only across the colon; a lone title word is not a name
    assert "state" in lexical.naming_runs(lexical.word_sequences(question), title, min_run=1)
    assert lexical.naming_runs(lexical.word_sequences("Which state? Delaware."), title) == set()
    chinese_title = lexical.words(lexical.index_text("供应协议"))  # held as bigrams: 供应 应协 协议
    assert lexical.naming_runs(lexical.word_sequences("在供应协议中，适用哪国法律？"), chinese_title) == {
        "供应",
        "应协",
        "协议",
    }


def test_a_twin_the_question_cannot_tell_apart_gets_second_place(tmp_path: Path) -> None:
    """The same contract filed twice (the question names both equally): the clause asked about comes
    first from one copy and second from the other, instead of the first copy's other chunks."""
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    coll = store.collection("c", create=True)
    parties = "Acme Widgets Corp and Beta Logistics LLC"
    clauses = ["This agreement shall be governed by the laws of the State of New York.", "Fees are due monthly."]
    first = save(store, coll.id, "acme-2015.txt", _contract(parties, clauses), None).chunk_ids
    second = save(store, coll.id, "acme-2016.txt", _contract(parties, clauses), None, sha="2").chunk_ids
    for n in range(20):  # other contracts, so that the parties' names are rare words
        texts = _contract(f"Vendor{n} Holdings and Customer{n} Partners", ["The laws of Delaware govern it."])
        save(store, coll.id, f"c{n}.txt", texts, None, sha=f"s{n}")
    question = "In the Supply Agreement between Acme Widgets Corp and Beta Logistics LLC: which law governs it?"
    top = [chunk_id for chunk_id, _ in bm25(store, coll.id, question, 3)]
    assert {top[0], top[1]} == {first[1], second[1]}, (top, first, second)
    # One copy alone: its chunks fill the list as before.
    store.delete_document(coll, store.fetch_chunks([second[0]])[second[0]].document_id)
    alone = [chunk_id for chunk_id, _ in bm25(store, coll.id, question, 3)]
    assert alone[0] == first[1] and second[1] not in alone


def test_a_question_about_the_document_itself_gets_its_head(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ "What is the date of the contract?" says little beyond naming the contract: its answer sits in
    the head, which BM25 on "date" and "contract" would rank below every chunk using those words."""
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    coll = store.collection("c", create=True)
    head = "SUPPLY AGREEMENT dated as of March 3, 2015, made between Acme Widgets Corp and Beta Logistics LLC. "
    body = [
        f"Clause {n}. Invoices under this contract are payable thirty days after the invoice date; the contract "
        "may be audited. The laws of the State of New York govern the interpretation of this contract."
        for n in range(5)
    ]
    acme = save(store, coll.id, "acme.txt", [head * 3, *body], None).chunk_ids
    for n in range(20):  # other contracts, so that the parties' names are rare words
        other = _contract(f"Vendor{n} Holdings and Customer{n} Partners", [])
        save(store, coll.id, f"c{n}.txt", other, None, sha=f"{n}")
    naming = "In the Supply Agreement between Acme Widgets Corp and Beta Logistics LLC: "
    about_itself = naming + "what is the date of the contract?"
    clause = naming + "which state's law governs the interpretation of the contract?"
    top = [chunk_id for chunk_id, _ in bm25(store, coll.id, about_itself, 3)]
    assert top[2] == acme[0]  # third, after the best two chunks of the second pass
    assert acme[0] not in [chunk_id for chunk_id, _ in bm25(store, coll.id, clause, 3)]  # five other words
    # Every word but "contract" is in the head ("dated as of"): nothing is left to rank the others by.
    dated = naming + "when was the contract dated?"
    assert bm25(store, coll.id, dated, 3)[0][0] == acme[0]
    short_clause = naming + "which law governs it?"  # two words the head lacks: the head stays third
    assert bm25(store, coll.id, short_clause, 3)[2][0] == acme[0]
    store.ranking = replace(store.ranking, head_first_terms=0)
    assert bm25(store, coll.id, dated, 3)[0][0] != acme[0]
    store.ranking = replace(store.ranking, head_question_terms=0)
    assert acme[0] not in [chunk_id for chunk_id, _ in bm25(store, coll.id, about_itself, 3)]


def test_a_database_error_does_not_carry_document_text(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES)
    secret = "CONFIDENTIAL clause text " * 50
    with pytest.raises(sqlalchemy.exc.SQLAlchemyError) as caught, store.session() as s:
        s.execute(sqlalchemy.text("INSERT INTO no_such_table(x) VALUES (:x)"), {"x": secret})
    assert "CONFIDENTIAL" not in str(caught.value)
    store.close()


def test_two_processes_writing_one_vector_index_lose_nothing(tmp_path: Path) -> None:
    """The CLI and the server ingest into one data home: each holds the index in memory, and the later save
    used to overwrite the other's vectors. Now a save that finds the file written by another since it read
    it rebuilds from SQLite's embeddings, under a lock file."""
    dim = 8
    rng = np.random.default_rng(0)
    first, second = (
        SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES),
        SqliteStore(tmp_path / "db.sqlite3", reader=PROFILES),
    )  # two processes' views
    cid = first.collection("c", create=True).id
    first.set_embedder(cid, "m", dim)
    coll_a, coll_b = first.collection("c"), second.collection("c")
    server = VectorIndexes(first, tmp_path / "vectors", auto_repair=True)
    cli = VectorIndexes(second, tmp_path / "vectors", auto_repair=True)

    def ingest(store: SqliteStore, indexes: VectorIndexes, coll: object, name: str) -> None:
        vectors = rng.normal(size=(2, dim)).astype(np.float32)
        saved = save(store, cid, name, [f"{name} one", f"{name} two"], vectors, sha=name)
        index = indexes.get(coll)  # type: ignore[arg-type]
        assert index is not None
        index.add(np.asarray(saved.chunk_ids, dtype=np.int64), vectors)

    ingest(first, server, coll_a, "a.txt")
    server.save(coll_a)
    ingest(second, cli, coll_b, "b.txt")  # the CLI read the file with a.txt's vectors, then added b.txt's
    ingest(first, server, coll_a, "c.txt")
    server.save(coll_a)  # the server's copy: a and c
    cli.save(coll_b)  # the CLI's copy: a and b; it would have overwritten c's vectors
    assert server.check(coll_a).problems == []
    assert len(FaissIndex.load(tmp_path / "vectors" / "collection-1.faiss", dim)) == 6
    first.close()
    second.close()
