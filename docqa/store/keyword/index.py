"""The keyword (BM25) index in SQLite FTS5: found small, returned big.

Each chunk (up to 4k tokens) is indexed as passages of about 500 tokens, so BM25 scores a clause
where it sits instead of diluting it over a long chunk; a search ranks passages and returns each
passage's parent chunk once (small-to-big). A passage row has two columns: `title`, what names the
whole document (its file name and the opening of its first chunk: a contract's title and parties, a
report's cover), so that a question naming the document lifts its passages; and `body`, the
passage's text. On CUAD (docqa eval, BM25, 4k-token chunks) recall@1 went from 0.50 with the file
name alone as title, to 0.48 with the document head, to 0.68 with passages, to 0.71 with the
second pass that `search` describes; recall@3 from 0.82 to 0.86 to 0.92 to 0.93.

Passages are written by docqa.store.keyword.passages, with their chunks, in the same transaction.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import bindparam, text
from sqlalchemy.orm import Session

from docqa.core.identity import DocumentIdentity
from docqa.core.query import Query
from docqa.store.keyword import lexical, passage_bm25
from docqa.store.keyword.identities import DocumentIdentities
from docqa.store.keyword.ranking import DEFAULT_RANKING, RankingConstants
from docqa.store.keyword.tables import PASSAGES_PER_CHUNK, chunk_scores
from docqa.store.keyword.term_stats import TermStats, index_version
from docqa.store.keyword.titles import DocumentTitles, title_words


def search(
    session: Session,
    collection_id: int,
    query: Query,
    limit: int,
    document_id: int | None,
    stats: TermStats,
    titles: DocumentTitles,
    identities: DocumentIdentities,
    rc: RankingConstants = DEFAULT_RANKING,
) -> list[tuple[int, float]]:
    """(chunk ID, score; higher is better), best first, each chunk once, for a question as retrieval
    understood it (`query`); `rc` holds the constants (docqa.store.keyword.ranking).

    Two passes. The first ranks passages on title and body together and finds the document the
    question is about; collection-wide, it leaves out very common terms (see docqa.store.keyword.term_stats), and
    a document whose title names the question clearly better replaces its pick (docqa.store.keyword.titles),
    and where the question names documents (query.named: a company's filings for the period asked, as a
    profile read it), its pick is the best of those.
    The second re-ranks that document's own passages on their body alone, with the words that name
    the document left out: those words (a contract's title and parties) also fill its preamble and
    signature block, and BM25 cannot tell them from the words of the clause asked about. The second
    pass runs when the question names its document (two or more of its words are in the top
    document's title) or is scoped to one document. A near-tie document (a twin) gets second place,
    and a question that says little beyond naming its document gets the document's head chunk."""
    terms = list(query.terms)
    version = index_version(session, stats.refresh(session))
    titles.refresh(session, version, PASSAGES_PER_CHUNK)
    ranked: list[tuple[int, float]] | None = None  # the first pass: every term, title and body
    chosen: set[int] = set()  # the documents the question names, if any
    owners: dict[int, int] = {}  # the first pass's chunks' documents
    identities.refresh(session, version)  # which profile's kind each document is
    if document_id is not None:
        top_document, rows = document_id, _document_rows(session, document_id)
        if rows is None:
            return []
    else:
        ranked = stats.tables.rank(session, collection_id, stats.selective(session, terms), rc.title_weight, limit)
        if not ranked:
            return []
        owners = _documents_of(session, [chunk_id for chunk_id, _ in ranked])
        chosen = set(query.named)
        if chosen:
            top_document = _best_named(session, stats, ranked, owners, chosen, terms, rc)
        else:
            top_document = owners[ranked[0][0]]
            top_document = titles.named_instead(collection_id, query.clauses, top_document, rc) or top_document
            if query.narrowed and identities.profile_of(top_document) is not None:
                chosen = _narrowed(query, top_document, identities.of_collection(collection_id))
                if chosen:  # the period names the filing, as a company's name would
                    top_document = _best_named(session, stats, ranked, owners, chosen, terms, rc)
        rows = _document_rows(session, top_document)  # the passage rowid range the second pass re-ranks
        if rows is None:
            return ranked[:limit]
    rest, asking = _split_terms(session, stats, rows, query, rc)
    must_name = document_id is None and not chosen
    profile = identities.profile_of(top_document)
    bonus = _heading_bonus(query, rc, profile)
    focused = _focused(session, top_document, rows, terms, rest, asking, must_name, stats, bonus, rc)
    if ranked is None and len(focused) < limit:
        # Inside one document the first pass only fills places the second leaves empty: skipped
        # otherwise (a 300-page report's passages, highlighted twice, took half of a question's time).
        ranked = _in_document(session, stats, top_document, rows, terms, rc.title_weight)
    if not focused:
        return (ranked or [])[:limit]
    lead = ranked[0][1] if ranked else 0.0
    merged = [(chunk_id, lead + score) for chunk_id, score in focused]
    if document_id is None and ranked:
        merged = _with_twin(session, ranked, owners, top_document, query, merged, stats, chosen, bonus, rc)
    head = query.head_rule(profile)
    if head != "never":
        merged = _with_head(rows, rest, merged, rc, head == "first")
    first_ids = {chunk_id for chunk_id, _ in merged}
    merged += [(chunk_id, score) for chunk_id, score in ranked or [] if chunk_id not in first_ids]
    return merged[:limit]


def ranked_passages(
    session: Session,
    stats: TermStats,
    query: Query,
    chunk_id: int,
    document_id: int,
    profile: str | None = None,
    rc: RankingConstants = DEFAULT_RANKING,
) -> list[tuple[int, float]]:
    """(passage number in split_passages order, score) of every passage of the chunk that the question
    matches, best first, scored as the second pass scores them (body BM25 and the headings' bonuses);
    `profile`: the profile whose kind the document is (whose favoured titles apply)."""
    stats.refresh(session)
    terms = stats.weighted(session, list(query.terms))
    rows = (chunk_id * PASSAGES_PER_CHUNK, (chunk_id + 1) * PASSAGES_PER_CHUNK)
    bonus = _heading_bonus(query, rc, profile)
    scored = passage_bm25.document_passages(
        session, stats, terms, rows, document_id, (0.0, 1.0), PASSAGES_PER_CHUNK, bonus
    )
    return [(rowid - rows[0], score) for rowid, score in scored]


def _heading_bonus(query: Query, rc: RankingConstants, profile: str | None) -> passage_bm25.HeadingBonus:
    """What headings add in the second pass: the question's terms in them, and the titles the profiles
    favour for it, those that apply to a document of `profile` (a filing's standard items only in a filing:
    a contract's "Competition" or "Taxes" clause is not Item 1's or the tax note)."""
    return passage_bm25.HeadingBonus(rc.heading_weight, tuple((f.titles, f.weight) for f in query.titles_in(profile)))


def _with_twin(
    session: Session,
    ranked: list[tuple[int, float]],
    owners: dict[int, int],
    top_document: int,
    query: Query,
    merged: list[tuple[int, float]],
    stats: TermStats,
    chosen: set[int],
    bonus: passage_bm25.HeadingBonus,
    rc: RankingConstants,
) -> list[tuple[int, float]]:
    """When another document scores within rc.twin_share of the top one in the first pass, the question
    does not tell them apart (two filings of one contract, a draft and its final version): its best
    chunk, re-ranked the same way, takes second place, and its other matches follow the top document's."""
    lead = ranked[0][1]
    twin = next(
        (d for chunk_id, score in ranked[1:] if score >= rc.twin_share * lead
         and (d := owners[chunk_id]) != top_document and (not chosen or d in chosen)),
        None,
    )  # fmt: skip
    rows = _document_rows(session, twin) if twin is not None else None
    if twin is None or rows is None:
        return merged
    rest, asking = _split_terms(session, stats, rows, query, rc)
    theirs = _focused(session, twin, rows, list(query.terms), rest, asking, True, stats, bonus, rc)
    if not theirs:
        return merged
    second = (theirs[0][0], merged[0][1])  # scores only order the list; ties keep this order
    return [merged[0], second, *merged[1:], *((chunk_id, lead) for chunk_id, _ in theirs[1:])]


def _best_named(
    session: Session,
    stats: TermStats,
    ranked: list[tuple[int, float]],
    owners: dict[int, int],
    chosen: set[int],
    terms: list[str],
    rc: RankingConstants,
) -> int:
    """The first-pass ranking's best document among the chosen ones; when none of them is in it (an
    earnings release's dense figures filled the first page), the chosen document whose passages score best."""
    for chunk_id, _ in ranked:
        if (document := owners[chunk_id]) in chosen:
            return document
    best: tuple[float, int] | None = None
    for document in sorted(chosen)[: rc.max_filings_scored]:
        rows = _document_rows(session, document)
        scored = _in_document(session, stats, document, rows, terms, rc.title_weight) if rows else []
        if scored and (best is None or scored[0][1] > best[0]):
            best = (scored[0][1], document)
    return best[1] if best else min(chosen)


def _narrowed(query: Query, top_document: int, identities: Mapping[int, DocumentIdentity]) -> set[int]:
    """For a question naming no document but what narrows to some (a period), whose first-pass pick is a
    recognised document outside them: those documents to choose from, the pick's own issuer's where it has
    one among them (the sec profile's periods: "SG&A in FY2023" picked a company's 2017 annual report on its
    words; its FY2023 one holds the answer). Empty when the pick is among them already."""
    if top_document in query.narrowed:
        return set()
    names = _issuer_names(identities.get(top_document))
    same_issuer = {doc for doc in query.narrowed if names & _issuer_names(identities.get(doc))}
    return same_issuer or set(query.narrowed)


def _issuer_names(identity: DocumentIdentity | None) -> set[tuple[str, ...]]:
    return set(identity.names) if identity is not None else set()


def _with_head(
    rows: tuple[int, int], rest: list[str], merged: list[tuple[int, float]], rc: RankingConstants, cover: bool = False
) -> list[tuple[int, float]]:
    """A question that says little beyond naming its document ("In the X agreement between A and B:
    what is the date of the contract?") asks about the document as a whole: its date, parties or
    title, which its head holds. Within the document, BM25 then has only a word or two to rank by,
    so the head chunk takes place rc.head_slot when it is not among the first ones already; when at most
    rc.head_first_terms words are left, all the others are in the head itself, and it goes first. A
    question about what a filing's cover states (`cover`: its securities registered under Section 12(b),
    their exchanges and symbols, the filer's status) gets the head, which is that cover, first."""
    if len(rest) > rc.head_question_terms and not cover:
        return merged
    slot = 0 if len(rest) <= rc.head_first_terms or cover else rc.head_slot
    head = rows[0] // PASSAGES_PER_CHUNK  # the document's chunks are one ID range, its head first
    if head in [chunk_id for chunk_id, _ in merged[: slot + 1]]:
        return merged
    others = [item for item in merged if item[0] != head]
    slot = min(slot, len(others))
    score = others[slot - 1][1] if slot else (others[0][1] if others else 0.0)
    return [*others[:slot], (head, score), *others[slot:]]


def _documents_of(session: Session, chunk_ids: list[int]) -> dict[int, int]:
    """Each chunk's document, in one statement (a search looks up the first pass's chunks: on Postgres
    each statement is a round trip)."""
    found = session.execute(
        text("SELECT id, document_id FROM chunks WHERE id IN :ids").bindparams(bindparam("ids", expanding=True)),
        {"ids": sorted(set(chunk_ids))},
    )
    return {int(chunk_id): int(document_id) for chunk_id, document_id in found}


def _document_rows(session: Session, document_id: int) -> tuple[int, int] | None:
    """The passage rowid range of a document. Its chunks are written in one transaction, so their
    IDs form one range, and FTS5 seeks straight to it (queries still check the document ID)."""
    lo, hi = session.execute(
        text("SELECT min(id), max(id) FROM chunks WHERE document_id = :did"), {"did": document_id}
    ).one()
    if lo is None:
        return None
    return int(lo) * PASSAGES_PER_CHUNK, (int(hi) + 1) * PASSAGES_PER_CHUNK


def _in_document(
    session: Session,
    stats: TermStats,
    document_id: int,
    rows: tuple[int, int],
    terms: list[str],
    title_weight: float,
    other_passages: float = 0.0,
    headings: passage_bm25.HeadingBonus = passage_bm25.NO_HEADINGS,
) -> list[tuple[int, float]]:
    """The document's chunks by the BM25 of their passages (docqa.store.keyword.passage_bm25: FTS5's scores,
    without FTS5 reading every term's posting list across the index)."""
    scored = passage_bm25.document_passages(
        session,
        stats,
        terms,
        rows,
        document_id,
        (title_weight, 1.0),
        PASSAGES_PER_CHUNK,
        headings,
    )
    return chunk_scores(((rowid // PASSAGES_PER_CHUNK, score) for rowid, score in scored), other_passages)


def _split_terms(
    session: Session, stats: TermStats, rows: tuple[int, int], query: Query, rc: RankingConstants
) -> tuple[list[str], list[str]]:
    """The question's terms that are not in the document's title column (file name and head), and
    those that the second pass ranks by: all but the runs of two or more consecutive title words
    (rc.naming_run). The first list says whether the question names the document and how much it
    asks beyond that (the head rule); the second keeps a lone word that the head happens to use."""
    title = title_words(session, stats.tables, rows[0])
    names = lexical.naming_runs(query.clauses, title, rc.naming_run)
    return [t for t in query.terms if t not in title], [t for t in query.terms if t not in names]


def _focused(
    session: Session,
    document_id: int,
    rows: tuple[int, int],
    terms: list[str],
    rest: list[str],
    asking: list[str],
    must_name: bool,
    stats: TermStats,
    bonus: passage_bm25.HeadingBonus,
    rc: RankingConstants,
) -> list[tuple[int, float]]:
    """The document's chunks whose passages match the question's words outside the runs that name
    the document (`asking`, from _split_terms), by body BM25 with a bonus for those words in
    headings and for the titles of the statements the question needs; none when the question must
    name the document and fewer than two of its words are in the title (`rest` is the others)."""
    if must_name and len(terms) - len(rest) < 2:
        return []
    weighted = stats.weighted(session, asking or terms)
    return _in_document(session, stats, document_id, rows, weighted, 0.0, rc.other_passages_share, bonus)
