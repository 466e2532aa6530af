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

from sqlalchemy import text
from sqlalchemy.orm import Session

from docqa.store.keyword import lexical, passage_bm25
from docqa.store.keyword.filing_choice import FilingIdentities
from docqa.store.keyword.statements import asked_statements
from docqa.store.keyword.tables import PASSAGES_PER_CHUNK, chunk_scores
from docqa.store.keyword.term_stats import TermStats, index_version
from docqa.store.keyword.titles import DocumentTitles, title_words

TITLE_WEIGHT = 4.0  # BM25 weight of the title column against the body's 1.0
# Second pass: a chunk scores its best passage plus this share of its other matching passages, so a
# chunk where the question's words recur across passages (a long clause) edges out a single lucky one.
# CUAD, recall@1 by share: 0 -> 0.702, 0.3 -> 0.711, 0.6 -> 0.699, 1.0 -> 0.686 (TXT); PDF 0.679 -> 0.686 at 0.3.
OTHER_PASSAGES_SHARE = 0.3
# A document whose first-pass score is within this share of the top one's is a twin the question cannot
# tell apart; its best chunk is returned second (CUAD TXT recall@3 by share: off 0.927, 0.97 0.932,
# 0.9 0.934, 0.8 0.932, 0.6 0.926; recall@1 unchanged).
TWIN_SHARE = 0.9
# A question with at most this many terms besides the words naming its document gets the document's
# head chunk in third place (HEAD_SLOT 2) unless it is among the first three already. CUAD TXT, BM25:
# recall@3 0.934 -> 0.946 (Agreement Date 0.906 -> 0.981, Effective Date 0.887 -> 0.959, no category
# lower), MRR 0.822 -> 0.825, recall@1 unchanged by construction. Second place gave the same recall@3
# (MRR 0.828) but would push a short clause question's ("which law governs it?") second chunk out.
HEAD_QUESTION_TERMS = 3
HEAD_SLOT = 2
# With at most this many terms left, the question's other words are all in the head ("what is the
# date when the contract is effective?" against "... (the "Effective Date") ..."): BM25 has nothing left
# to rank the other chunks by, and the head goes first. CUAD TXT recall@1 0.722 -> 0.751 (Agreement Date
# 0.587 -> 0.751, Effective Date 0.551 -> 0.757, no category lower), PDF 0.699 -> 0.723; recall@3 unchanged.
# 2 gave 0.761, but would put the head first for "which law governs it?" (two words the head lacks).
HEAD_FIRST_TERMS = 1
# Second pass: a question term in one of a passage's headings ("12.3 Governing Law.", a line in
# capitals) adds this share of its IDF to the passage, as a heading field in BM25F would: a section's
# title names its subject in the reader's words. CUAD TXT recall@1 / @3 by weight: 0 0.711 / 0.946,
# 0.5 0.719 / 0.946, 1.0 0.722 / 0.946, 2.0 0.726 / 0.945, 3.0 0.724 / 0.943.
HEADING_WEIGHT = 1.0
# ... and a heading that is the title of a financial statement the question needs
# (docqa.store.keyword.statements) adds this share of the title's IDF: enough to put that statement's
# passages first whenever they hold any of the question's words. financebench_dev page recall@3, own filing /
# all filings, BM25, by weight: 0 0.662 / 0.588, 1 0.706 / -, 2 0.721 / -, 3 0.735 / -, 5 0.765 / 0.676,
# 8 0.809 / 0.721, 12 0.809 / 0.721, 20 0.809 / -, 40 0.809 / - (recall@1 rises on to 40: 0.50 -> 0.57).
# It replaced a bonus for two consecutive question terms in a passage's headings ("the cash flow
# statement"), weight 4 before it: with this one in place that bonus cost financebench_dev (own filing /
# all filings 0.838 / 0.750 at 0, 0.809 / 0.721 at 4) and CUAD TXT (recall@1 / @3 0.7566 / 0.9513 at 0,
# 0.7573 / 0.9508 at 4), and Chinese headings' overlapping bigrams all counted as consecutive terms.
STATEMENT_WEIGHT = 8.0
# Second pass: the words that name the document are the question's runs of at least this many
# consecutive words (stopwords passed over) that are all in its title column: a title and party
# names ("In the Cooperation Agreement between MG Capital Management Ltd. and ..."). A lone word that
# the head also uses is the question's own ("which state's law governs", while the preamble says
# "organised under the laws of the State of Delaware") and stays. Before, every title word was left
# out. CUAD TXT, BM25, recall@1 / @3 / MRR: all title words 0.751 / 0.946 / 0.847, runs of 2
# 0.755 / 0.949 / 0.850 (15 questions gained at 3 in 10 categories, 4 lost), runs of 3 0.751 / 0.947 / 0.847.
NAMING_RUN = 2
# A question naming a company with more filings than this for its period (none in financebench_dev has
# more than 5 in all) has the first pass's order decide among the rest: each costs a document's BM25.
MAX_FILINGS_SCORED = 8


def search(
    session: Session,
    collection_id: int,
    question: str,
    limit: int,
    document_id: int | None,
    stats: TermStats,
    titles: DocumentTitles,
    filing_identities: FilingIdentities,
) -> list[tuple[int, float]]:
    """(chunk ID, score; higher is better), best first, each chunk once.

    Two passes. The first ranks passages on title and body together and finds the document the
    question is about; collection-wide, it leaves out very common terms (see docqa.store.keyword.term_stats), and
    a document whose title names the question clearly better replaces its pick (docqa.store.keyword.titles),
    and where the question names a company that filed some of the documents, its pick is the best of
    those filings for the period asked (docqa.store.keyword.filing_choice).
    The second re-ranks that document's own passages on their body alone, with the words that name
    the document left out: those words (a contract's title and parties) also fill its preamble and
    signature block, and BM25 cannot tell them from the words of the clause asked about. The second
    pass runs when the question names its document (two or more of its words are in the top
    document's title) or is scoped to one document. A near-tie document (a twin) gets second place,
    and a question that says little beyond naming its document gets the document's head chunk."""
    terms = lexical.query_terms(question)
    version = index_version(session, stats.refresh(session))
    titles.refresh(session, version, PASSAGES_PER_CHUNK)
    ranked: list[tuple[int, float]] | None = None  # the first pass: every term, title and body
    chosen: set[int] = set()  # the filings the question names, if any
    if document_id is not None:
        top_document, rows = document_id, _document_rows(session, document_id)
        if rows is None:
            return []
    else:
        ranked = stats.tables.rank(session, collection_id, stats.selective(session, terms), TITLE_WEIGHT, limit)
        if not ranked:
            return []
        filing_identities.refresh(session, version)
        chosen = filing_identities.candidates(collection_id, question)
        if chosen:
            top_document = _best_filing(session, stats, ranked, chosen, terms)
        else:
            top_document = _document_of(session, ranked[0][0])
            top_document = titles.named_instead(collection_id, question, top_document) or top_document
        rows = _document_rows(session, top_document)  # the passage rowid range the second pass re-ranks
        if rows is None:
            return ranked[:limit]
    rest, asking = _split_terms(session, stats, rows, question, terms)
    must_name = document_id is None and not chosen
    statements = tuple(asked_statements(question))
    focused = _focused(session, top_document, rows, terms, rest, asking, must_name, stats, statements)
    if ranked is None and len(focused) < limit:
        # Inside one document the first pass only fills places the second leaves empty: skipped
        # otherwise (a 300-page report's passages, highlighted twice, took half of a question's time).
        ranked = _in_document(session, stats, top_document, rows, terms, TITLE_WEIGHT)
    if not focused:
        return (ranked or [])[:limit]
    lead = ranked[0][1] if ranked else 0.0
    merged = [(chunk_id, lead + score) for chunk_id, score in focused]
    if document_id is None and ranked:
        merged = _with_twin(session, ranked, top_document, question, terms, merged, stats, chosen, statements)
    merged = _with_head(rows, rest, merged)
    first_ids = {chunk_id for chunk_id, _ in merged}
    merged += [(chunk_id, score) for chunk_id, score in ranked or [] if chunk_id not in first_ids]
    return merged[:limit]


def best_passage(session: Session, stats: TermStats, question: str, chunk_id: int, document_id: int) -> int | None:
    """Which of a chunk's passages (their order in split_passages) the question matches best, scored as
    the second pass scores them (body BM25 and the headings' bonuses); None when none matches."""
    stats.refresh(session)
    terms = stats.weighted(session, lexical.query_terms(question))
    rows = (chunk_id * PASSAGES_PER_CHUNK, (chunk_id + 1) * PASSAGES_PER_CHUNK)
    bonus = _heading_bonus(tuple(asked_statements(question)))
    scored = passage_bm25.document_passages(
        session, stats, terms, rows, document_id, (0.0, 1.0), PASSAGES_PER_CHUNK, bonus
    )
    return scored[0][0] - rows[0] if scored else None


def _heading_bonus(statements: tuple[tuple[str, ...], ...]) -> passage_bm25.HeadingBonus:
    """What headings add in the second pass: the question's terms in them, and the statements it needs."""
    return passage_bm25.HeadingBonus(HEADING_WEIGHT, statements, STATEMENT_WEIGHT)


def _with_twin(
    session: Session,
    ranked: list[tuple[int, float]],
    top_document: int,
    question: str,
    terms: list[str],
    merged: list[tuple[int, float]],
    stats: TermStats,
    chosen: set[int],
    statements: tuple[tuple[str, ...], ...],
) -> list[tuple[int, float]]:
    """When another document scores within TWIN_SHARE of the top one in the first pass, the question
    does not tell them apart (two filings of one contract, a draft and its final version): its best
    chunk, re-ranked the same way, takes second place, and its other matches follow the top document's."""
    lead = ranked[0][1]
    twin = next(
        (d for chunk_id, score in ranked[1:] if score >= TWIN_SHARE * lead
         and (d := _document_of(session, chunk_id)) != top_document and (not chosen or d in chosen)),
        None,
    )  # fmt: skip
    rows = _document_rows(session, twin) if twin is not None else None
    if twin is None or rows is None:
        return merged
    rest, asking = _split_terms(session, stats, rows, question, terms)
    theirs = _focused(session, twin, rows, terms, rest, asking, True, stats, statements)
    if not theirs:
        return merged
    second = (theirs[0][0], merged[0][1])  # scores only order the list; ties keep this order
    return [merged[0], second, *merged[1:], *((chunk_id, lead) for chunk_id, _ in theirs[1:])]


def _best_filing(
    session: Session, stats: TermStats, ranked: list[tuple[int, float]], chosen: set[int], terms: list[str]
) -> int:
    """The first-pass ranking's best document among the chosen filings; when none of them is in it (an
    earnings release's dense figures filled the first page), the chosen filing whose passages score best."""
    for chunk_id, _ in ranked:
        if (document := _document_of(session, chunk_id)) in chosen:
            return document
    best: tuple[float, int] | None = None
    for document in sorted(chosen)[:MAX_FILINGS_SCORED]:
        rows = _document_rows(session, document)
        scored = _in_document(session, stats, document, rows, terms, TITLE_WEIGHT) if rows else []
        if scored and (best is None or scored[0][1] > best[0]):
            best = (scored[0][1], document)
    return best[1] if best else min(chosen)


def _with_head(rows: tuple[int, int], rest: list[str], merged: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """A question that says little beyond naming its document ("In the X agreement between A and B:
    what is the date of the contract?") asks about the document as a whole: its date, parties or
    title, which its head holds. Within the document, BM25 then has only a word or two to rank by,
    so the head chunk takes place HEAD_SLOT when it is not among the first ones already; when at most
    HEAD_FIRST_TERMS words are left, all the others are in the head itself, and it goes first."""
    if len(rest) > HEAD_QUESTION_TERMS:
        return merged
    slot = 0 if len(rest) <= HEAD_FIRST_TERMS else HEAD_SLOT
    head = rows[0] // PASSAGES_PER_CHUNK  # the document's chunks are one ID range, its head first
    if head in [chunk_id for chunk_id, _ in merged[: slot + 1]]:
        return merged
    others = [item for item in merged if item[0] != head]
    slot = min(slot, len(others))
    score = others[slot - 1][1] if slot else (others[0][1] if others else 0.0)
    return [*others[:slot], (head, score), *others[slot:]]


def _document_of(session: Session, chunk_id: int) -> int:
    return int(session.execute(text("SELECT document_id FROM chunks WHERE id = :id"), {"id": chunk_id}).scalar_one())


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
    session: Session, stats: TermStats, rows: tuple[int, int], question: str, terms: list[str]
) -> tuple[list[str], list[str]]:
    """The question's terms that are not in the document's title column (file name and head), and
    those that the second pass ranks by: all but the runs of two or more consecutive title words
    (see NAMING_RUN). The first list says whether the question names the document and how much it
    asks beyond that (the head rule); the second keeps a lone word that the head happens to use."""
    title = title_words(session, stats.tables, rows[0])
    names = lexical.naming_runs(lexical.word_sequences(question), title, NAMING_RUN)
    return [t for t in terms if t not in title], [t for t in terms if t not in names]


def _focused(
    session: Session,
    document_id: int,
    rows: tuple[int, int],
    terms: list[str],
    rest: list[str],
    asking: list[str],
    must_name: bool,
    stats: TermStats,
    statements: tuple[tuple[str, ...], ...],
) -> list[tuple[int, float]]:
    """The document's chunks whose passages match the question's words outside the runs that name
    the document (`asking`, from _split_terms), by body BM25 with a bonus for those words in
    headings and for the titles of the statements the question needs; none when the question must
    name the document and fewer than two of its words are in the title (`rest` is the others)."""
    if must_name and len(terms) - len(rest) < 2:
        return []
    weighted = stats.weighted(session, asking or terms)
    return _in_document(
        session, stats, document_id, rows, weighted, 0.0, OTHER_PASSAGES_SHARE, _heading_bonus(statements)
    )
