"""Questions over whole documents and collections: the scope chosen (docqa.answering.scope_choice), then the
documents (or a long document's parts) planned as prompts for docqa.service.reading_run to read at once.

- `collection`: every ready document of the collection (or of a catalog filter), each searched on its own
  for the question's topic; its best passages, cut to `reading.document_tokens`, make its prompt. A document
  where the search finds none of the question's words is "not stated" without asking the model.
- `compare`: the same for each named (or pinned) document, then a comparison written from the findings.
- `document`: the document named, pinned, alone in the collection, or else the one the question's words
  match best; read whole in one prompt where it fits, else part by part (parts end where a top-level
  heading starts: a filing's Item, a contract's Article, a Chinese 章) and summarised from the parts' notes.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial

from docqa.answering import feedback, focus, packing
from docqa.answering.prompting import SYSTEM_PROMPT, PromptPlan, build_prompt, source_tag_tokens
from docqa.answering.reading import FINDING_SYSTEM, PART_SYSTEM, finding_question
from docqa.answering.scope_choice import NamedDocument, ScopeDecision, choose_scope, topic_of, without_names
from docqa.answering.shares import documents_share, shares
from docqa.core.errors import ConfigError, InvalidRequestError
from docqa.core.query import Query
from docqa.core.requests import AskRequest
from docqa.core.scopes import validate_scope
from docqa.core.types import RetrievedChunk
from docqa.service.asking import Asker, AskRun, Prepared, check
from docqa.service.reading_run import Part, ReadingPlan, ReadingRun, planned
from docqa.store.models import CollectionRow, DocumentRow

PLANNING_THREADS = min(8, os.cpu_count() or 1)
MAX_CHUNKS = 12  # chunks searched in one document given a larger share than its own
# A part's prompt leaves this much of the context beside its text (instructions, question, the notes' room).
PART_OVERHEAD_TOKENS = 512
_TOP_HEADING = re.compile(
    r"^\s*(?:PART\s+[IVX]+\b|ITEM\s+\d+[A-Z]?\b|ARTICLE\s+(?:[IVXLC]+|\d+)\b|第[一二三四五六七八九十百零\d]+[章节部分]|"
    r"SECTION\s+\d+\s*$|SCHEDULE\s+[A-Z\d]+\b|EXHIBIT\s+[A-Z\d.-]+\s*$)",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True)
class _Reading:
    asker: Asker
    request: AskRequest
    collection: CollectionRow
    decision: ScopeDecision
    started: float


def start(asker: Asker, request: AskRequest) -> AskRun | ReadingRun:
    """The question's run: a lookup as before, or a reading of whole documents (blocking; from async code,
    in a thread)."""
    started = time.perf_counter()
    check(request)
    if asker.generator is None:
        raise ConfigError("no generator loaded: open DocQA with generator=True to ask questions")
    coll = asker.collection(request.collection)
    decision = decide(asker, coll, request)
    if decision.scope == "lookup":
        return asker.start(request)
    key = asker.cache_key(request, decision.scope, decision.documents)
    cached = asker.cached(key)
    if cached is not None:
        return AskRun(asker, key, started, cached=cached)
    reading = _Reading(asker, request, coll, decision, started)
    if decision.scope == "document":
        return _document(reading, key)
    return ReadingRun(asker, key, _findings_plan(reading))


def decide(asker: Asker, coll: CollectionRow, request: AskRequest) -> ScopeDecision:
    """The scope asked for, or chosen from the question and the catalog (auto)."""
    asked = validate_scope(request.scope)
    pinned = _pinned(asker, coll, request)
    if asked == "lookup":
        return ScopeDecision("lookup", pinned, "asked")
    documents = [d for d in asker.store.documents(coll.id) if d.status == "ready"]
    chosen = choose_scope(request.question, [_named(d) for d in documents], pinned)
    if asked == "auto":
        return chosen
    if asked == "compare" and len(chosen.documents) < 2:
        raise InvalidRequestError(
            "a comparison needs two or more documents: name them in the question (by title, company or file name) "
            "or pass their IDs (document_ids)"
        )
    return ScopeDecision(asked, chosen.documents if asked != "collection" else (), "asked")


def _pinned(asker: Asker, coll: CollectionRow, request: AskRequest) -> tuple[int, ...]:
    ids = (*request.document_ids, *((request.document_id,) if request.document_id is not None else ()))
    for document_id in ids:
        asker.store.document(coll, document_id)  # 404 for another collection's document
    return tuple(dict.fromkeys(ids))


def _named(document: DocumentRow) -> NamedDocument:
    catalog = json.loads(document.catalog or "{}")
    names = [document.name, *(str(catalog[f]) for f in ("title", "company") if catalog.get(f))]
    return NamedDocument(document.id, tuple(names))


def _findings_plan(reading: _Reading) -> ReadingPlan:
    """One finding prompt per document of the collection (or of the comparison)."""
    asker, request, coll = reading.asker, reading.request, reading.collection
    if reading.decision.scope == "compare":
        documents = [asker.store.document(coll, d) for d in reading.decision.documents]
    else:
        documents = _collection_documents(reading)
    topic = topic_of(request.question)
    if reading.decision.scope == "compare":
        topic = without_names(topic, [_named(d) for d in documents]) or topic
    if asker.settings.reading.clause_words:
        topic = " ".join((topic, *asker.retriever.profiles_for(coll).drafting_words(request.question)))
    query = asker.retriever.understand(coll, topic, scoped=True)
    weights = asker.store.term_weights(query)
    search = partial(_search, reading, topic, query, weights)
    settings = asker.settings.reading
    room = _finding_room(reading)
    each = documents_share(len(documents), settings.document_tokens, settings.few_documents_tokens, room)
    # Tokenizing to fit each document's passages is most of the planning (~0.1 s a document with Qwen's
    # tokenizer, which runs outside the interpreter's lock): the documents are planned side by side, and each
    # document's prompt, once its share is known, is read while the others' are still made (ReadingRun).
    pool = ThreadPoolExecutor(PLANNING_THREADS, thread_name_prefix="docqa-reading-plan")
    try:
        found = list(pool.map(lambda d: search(d.id, settings.passages_per_document), documents))
        extra = feedback.expansion(found, weights, feedback.FEEDBACK) if settings.collection_feedback else {}
        if extra:
            search = partial(_search, reading, topic, query, feedback.widened(weights, extra))
            found = list(pool.map(partial(_rescored, reading, feedback.widened(weights, extra)), found))
        budgets = shares([f.need if f is not None else 0 for f in found], each, room)

        def part(document: DocumentRow, first: packing.Packable | None, budget: int) -> Part:
            chunks = _packed(reading, search, query, document.id, first, budget, each)
            return Part(document.name, document.id, _finding_prompt(reading, chunks) if chunks else None)

        parts = [pool.submit(part, *planning) for planning in zip(documents, found, budgets, strict=True)]
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=False)  # the parts' planning goes on in its threads, which end with it
    return _plan(reading, parts, len(documents))


def _finding_room(reading: _Reading) -> int:
    """The most tokens of passages one finding prompt can hold beside its instructions and its finding."""
    assert reading.asker.generator is not None
    n_ctx = reading.asker.generator.info.n_ctx
    return max(n_ctx - reading.asker.settings.reading.finding_tokens - PART_OVERHEAD_TOKENS, 256)


def _collection_documents(reading: _Reading) -> list[DocumentRow]:
    asker, request, coll = reading.asker, reading.request, reading.collection
    ready = [d for d in asker.store.documents(coll.id) if d.status == "ready"]
    if request.where:
        within = set(asker.within(coll, request.where))
        ready = [d for d in ready if d.id in within]
    if request.document_ids:  # the documents a caller selected (checked as the collection's in decide)
        ready = [d for d in ready if d.id in set(request.document_ids)]
    bound = asker.settings.reading.max_documents
    if len(ready) > bound:
        raise InvalidRequestError(
            f"this question reads every document, and {len(ready)} are selected; docqa reads at most {bound} for one "
            "question (DOCQA_READING_MAX_DOCUMENTS): narrow it with a catalog filter (where), or raise the bound"
        )
    if not ready:
        raise InvalidRequestError(f"no ready document in collection '{coll.name}' matches: nothing to read")
    return ready


def _search(
    reading: _Reading, topic: str, query: Query, weights: dict[str, float], document_id: int, chunks: int
) -> packing.Packable | None:
    """The document's best chunks for the topic, their paragraphs scored (None: none holds its words)."""
    asker = reading.asker
    assert asker.generator is not None
    ranked = asker.retriever.retrieve(reading.collection, topic, chunks, document_id, query=query)
    if not ranked:
        return None
    ranked_passages = partial(asker.store.ranked_passages, query)
    return packing.packable(ranked, weights, asker.generator.count_tokens, ranked_passages)


def _rescored(reading: _Reading, weights: dict[str, float], found: packing.Packable | None) -> packing.Packable | None:
    """The same chunks' paragraphs scored again with the widened weights (their reading reused)."""
    if found is None:
        return None
    asker = reading.asker
    assert asker.generator is not None
    return packing.packable(found.chunks, weights, asker.generator.count_tokens, again=found)


def _packed(
    reading: _Reading,
    search: Callable[[int, int], packing.Packable | None],
    query: Query,
    document_id: int,
    found: packing.Packable | None,
    budget: int,
    each: int,
) -> list[RetrievedChunk]:
    """The document's best paragraphs within its budget (docqa.answering.packing); a document given more than
    its share is searched again for as many more chunks; where no paragraph holds the question's words (a
    dense-only hit), windows around each chunk's centre."""
    asker = reading.asker
    assert asker.generator is not None
    if found is None:
        return []
    count = asker.generator.count_tokens
    # chunks searched in proportion to the budget against a collection's usual share: a comparison's document,
    # given a prompt's room, was searched for no more chunks than a collection's (its share was its `each`)
    usual = min(each, asker.settings.reading.document_tokens)
    more = min(MAX_CHUNKS, -(-asker.settings.reading.passages_per_document * budget // usual))
    if budget > usual and more > len(found.chunks):
        found = search(document_id, more) or found
    tags = source_tag_tokens(found.chunks[0].document_name, count)
    packed = packing.take(found, budget, count, tags, _finding_room(reading))
    if packed:
        return packed
    return focus.windows(query, list(found.chunks), asker.store.best_passage, count, budget)


def _finding_prompt(reading: _Reading, chunks: list[RetrievedChunk]) -> PromptPlan:
    # a finding is a sentence or two from its passages: read without reasoning
    question = finding_question(reading.request.question)
    return _prompt(reading, question, chunks, reading.asker.settings.reading.finding_tokens, FINDING_SYSTEM)


def _prompt(
    reading: _Reading,
    question: str,
    chunks: list[RetrievedChunk],
    max_tokens: int,
    system: str = SYSTEM_PROMPT,
    thinking: bool = False,
) -> PromptPlan:
    """The prompt of these chunks in the generator's template (by default with a lookup's instructions)."""
    asker = reading.asker
    assert asker.generator is not None
    info = asker.generator.info
    return build_prompt(
        question=question,
        ranked=chunks,
        prompt_format=info.prompt_format,
        thinking=thinking,
        n_ctx=info.n_ctx,
        max_tokens=max_tokens,
        count_tokens=asker.generator.count_tokens,
        system=system,
    )


def _plan(reading: _Reading, parts: list[Future[Part]], total: int, *, label: str = "documents") -> ReadingPlan:
    asker, request = reading.asker, reading.request
    mode, base, warnings = asker.sampling(request)
    # Findings and a part's notes are read without reasoning, whatever the mode (a thinking budget would take
    # their few tokens); the answer written from them is generated in the mode asked.
    _, plain, _ = asker.sampling(replace(request, thinking=False))
    settings = asker.settings.reading
    tokens = settings.finding_tokens if label == "documents" else min(settings.part_tokens, asker.max_tokens(request))
    finding = asker.params(request, plain, tokens, (), thinking=False)
    compose = asker.params(request, base, asker.max_tokens(request), (), thinking=mode == "thinking")
    if reading.decision.reason != "asked":
        warnings = (*warnings, f"read as a {reading.decision.scope} question: it {reading.decision.reason}")
    return ReadingPlan(
        scope=reading.decision.scope,
        question=request.question,
        mode=mode,
        parts=parts,
        label=label if total else "documents",
        finding_params=finding,
        compose_params=compose,
        warnings=warnings,
        started=reading.started,
        retrieval_ms=(time.perf_counter() - reading.started) * 1000,
        in_flight=asker.settings.reading.in_flight,
    )


# --- one whole document -------------------------------------------------------------------------------


def _document(reading: _Reading, key: object) -> AskRun | ReadingRun:
    asker = reading.asker
    assert asker.generator is not None
    document = _target(reading)
    chunks = _whole(asker, document.id)
    sizes = [asker.generator.count_tokens(c.text) for c in chunks]
    budget = _part_budget(asker, reading.request)
    if sum(sizes) <= budget and (plan := _whole_prompt(reading, chunks)) is not None:
        mode, base, warnings = asker.sampling(reading.request)
        params = asker.params(
            reading.request, base, asker.max_tokens(reading.request), plan.stop, thinking=mode == "thinking"
        )
        if reading.decision.reason != "asked":
            warnings = (*warnings, f"read {document.name} whole: the question {reading.decision.reason}")
        retrieval_ms = (time.perf_counter() - reading.started) * 1000
        prepared = Prepared(mode, plan, params, reading.started, retrieval_ms, warnings, "document", 1)
        return AskRun(asker, key, reading.started, prepared=prepared)  # type: ignore[arg-type]
    split = split_parts(chunks, sizes, budget)
    parts = [planned(Part(_pages_label(p), document.id, _part_prompt(reading, p))) for p in split]
    return ReadingRun(asker, key, _plan(reading, parts, len(parts), label="parts"), document_name=document.name)  # type: ignore[arg-type]


def _target(reading: _Reading) -> DocumentRow:
    asker, coll, named = reading.asker, reading.collection, reading.decision.documents
    if named:
        return asker.store.document(coll, named[0])
    ready = [d for d in asker.store.documents(coll.id) if d.status == "ready"]
    if len(ready) == 1:
        return ready[0]
    best = asker.retriever.retrieve(coll, reading.request.question, 1)
    if not best:
        raise InvalidRequestError(
            "which document? name it in the question (by title or file name) or pin it (document_id)"
        )
    return asker.store.document(coll, best[0].document_id)


def _whole(asker: Asker, document_id: int) -> list[RetrievedChunk]:
    ids = asker.store.chunk_ids_of_document(document_id).tolist()
    found = asker.store.fetch_chunks(ids)
    return sorted(found.values(), key=lambda c: c.ordinal)


def _part_budget(asker: Asker, request: AskRequest) -> int:
    """Tokens of document text one prompt may hold: the context less the answer and the instructions, and
    no more than the prompt budget where one is set (a CPU's)."""
    assert asker.generator is not None
    room = asker.generator.info.n_ctx - asker.max_tokens(request) - PART_OVERHEAD_TOKENS
    budget = asker.prompt_budget()
    return max(256, min(room, budget) if budget else room)


def _whole_prompt(reading: _Reading, chunks: list[RetrievedChunk]) -> PromptPlan | None:
    """All the document's chunks in order in one prompt; None when they do not all fit."""
    asker, request = reading.asker, reading.request
    assert asker.generator is not None
    thinking = request.thinking and asker.generator.info.can_think
    plan = _prompt(reading, request.question, chunks, asker.max_tokens(request), thinking=thinking)
    return plan if len(plan.sources) == len(chunks) else None


def split_parts(chunks: list[RetrievedChunk], sizes: list[int], budget: int) -> list[list[RetrievedChunk]]:
    """Consecutive chunks in parts of at most `budget` tokens; a part past half its budget ends before a
    chunk that opens with a top-level heading (Item, Article, Part, 第…章), so a part is one section where
    the sections allow it."""
    parts: list[list[RetrievedChunk]] = []
    current: list[RetrievedChunk] = []
    used = 0
    for chunk, size in zip(chunks, sizes, strict=True):
        opens_section = bool(_TOP_HEADING.match(chunk.text[:200]))
        if current and (used + size > budget or (opens_section and used > budget // 2)):
            parts.append(current)
            current, used = [], 0
        current.append(chunk)
        used += size
    if current:
        parts.append(current)
    return parts


def _pages_label(chunks: list[RetrievedChunk]) -> str:
    first, last = chunks[0].first_page, chunks[-1].last_page
    return f"pages {first}-{last}" if first != last else f"page {first}"


def _part_prompt(reading: _Reading, chunks: list[RetrievedChunk]) -> PromptPlan:
    # a part's notes, as a finding, without reasoning: the summary written from them is reasoned, if asked
    asker, request = reading.asker, reading.request
    notes = min(asker.settings.reading.part_tokens, asker.max_tokens(request))
    return _prompt(reading, request.question, chunks, notes, PART_SYSTEM)
