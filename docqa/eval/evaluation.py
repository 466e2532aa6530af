"""`docqa eval`: retrieval (and optionally answer) quality on a QA set in the format of
../shared/data/README.md, scored by exactly its rule (docqa.eval.scoring).

The documents the rows name (plus distractors) are ingested into one collection, reusing what is
already indexed and unchanged; every answerable row is then retrieved for, over the whole
collection or only the row's own document, and a rank is the first retrieved chunk that is a HIT.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from docqa.answering.builder import NO_SOURCES_ANSWER
from docqa.core.errors import InvalidRequestError
from docqa.core.files import sha256_file
from docqa.core.requests import AskRequest
from docqa.core.types import RetrievedChunk
from docqa.eval.scoring import is_hit, normalise
from docqa.service import DocQA

Scope = Literal["corpus", "document"]
ANSWERABLE_TYPES = frozenset({"span", "evidence"})
# How docqa says the sources do not answer (the system prompt asks for it in the question's language).
_DECLINE = re.compile(
    r"do(?:es)? not (?:answer|contain|say|mention|state|specify)|not (?:mentioned|stated|specified|found)|"
    r"no (?:information|answer)|cannot (?:be )?(?:answer|determin|find)|"
    r"未(?:提及|说明|找到|载明)|没有(?:提到|提及|相关)|无法",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class EvalRow:
    id: str
    question: str
    category: str
    doc: str | None
    answers: tuple[str, ...]
    is_impossible: bool
    answer_type: str
    pages: tuple[int, ...] = ()
    earlier: tuple[str, ...] = ()  # a follow-up's conversation: its earlier user turns, oldest first

    def request(self, collection: str, document_id: int | None) -> AskRequest:
        """The question as docqa is asked it: a follow-up with its conversation, which steers retrieval."""
        return AskRequest(self.question, collection, document_id=document_id, use_cache=False, earlier=self.earlier)

    @property
    def answerable(self) -> bool:
        return not self.is_impossible and self.answer_type in ANSWERABLE_TYPES


def load_rows(path: Path, doc_field: str) -> list[EvalRow]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidRequestError(f"{path.name} line {number}: not JSON ({exc.msg})") from None
        pages = raw.get("page")
        found = [p for a in raw.get("answers", []) for p in a.get("pages_found", [])]
        rows.append(
            EvalRow(
                id=str(raw["id"]),
                question=raw["question"],
                category=str(raw.get("category") or "-"),
                doc=raw.get(doc_field),
                answers=tuple(a["text"] for a in raw.get("answers", []) if a.get("text")),
                is_impossible=bool(raw.get("is_impossible")),
                answer_type=str(raw.get("answer_type", "span")),
                pages=tuple([pages] if isinstance(pages, int) else found),
                earlier=tuple(
                    str(turn.get("content", "")) for turn in raw.get("history") or [] if turn.get("role") == "user"
                ),
            )
        )
    return rows


def first_hit(chunks: Sequence[RetrievedChunk], document_id: int | None, row: EvalRow, by_page: bool) -> int | None:
    """1-based rank of the first HIT (from the row's document, holding an answer; with by_page also
    a chunk whose pages hold the row's answer page), or None."""
    for rank, chunk in enumerate(chunks, 1):
        if chunk.document_id != document_id:
            continue
        if any(is_hit(chunk.text, answer) for answer in row.answers):
            return rank
        if by_page and any(chunk.first_page <= p <= chunk.last_page for p in row.pages):
            return rank
    return None


def token_f1(prediction: str, references: Sequence[str]) -> float:
    """SQuAD-style token F1 on normalised text (CJK scored per character), best over references."""

    def tokens(text: str) -> list[str]:
        return re.findall(r"[\u3400-\u9fff]|[^\W_]+", normalise(text))

    best = 0.0
    predicted = Counter(tokens(prediction))
    for reference in references:
        expected = Counter(tokens(reference))
        common = sum((predicted & expected).values())
        if common:
            precision, recall = common / sum(predicted.values()), common / sum(expected.values())
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


def declines(answer: str) -> bool:
    return answer.strip() == NO_SOURCES_ANSWER or bool(_DECLINE.search(answer))


def _pct(values: list[float], q: int) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


@dataclass
class EvalOptions:
    retriever: str = "hybrid"  # resolved: never "auto"
    ks: tuple[int, ...] = (1, 3, 5)
    scope: Scope = "corpus"
    answers: bool = False
    limit: int | None = None
    details: Callable[[dict[str, Any]], None] | None = None  # receives each scored row's ranks and chunks


@dataclass
class _Tally:
    ranks: list[int | None] = field(default_factory=list)
    page_ranks: list[int | None] = field(default_factory=list)
    retrieval_ms: list[float] = field(default_factory=list)
    embed_ms: list[float] = field(default_factory=list)
    by_category: dict[str, list[int | None]] = field(default_factory=lambda: defaultdict(list))


def _recall(ranks: list[int | None], k: int) -> float:
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else float("nan")


def evaluate(
    qa: DocQA,
    rows: list[EvalRow],
    document_ids: dict[str, int],
    collection: str,
    options: EvalOptions,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Retrieve for every answerable row; document_ids maps a row's doc path to its document ID."""
    coll = qa.collection(collection)
    scored = [r for r in rows if r.answerable and r.doc in document_ids]
    if options.limit:
        scored = scored[: options.limit]
    k_max = max(options.ks)
    by_page = any(r.pages for r in scored)
    tally = _Tally()
    has_vectors = qa.status().embedder is not None and coll.embed_model is not None
    dense = options.retriever in ("dense", "hybrid") and has_vectors
    for i, row in enumerate(scored):
        doc_id = document_ids[row.doc or ""]
        vector = None
        if dense:
            started = time.perf_counter()
            vector = qa.embed_query(row.request(collection, None).search_text())
            tally.embed_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        chunks = qa.retrieve(
            row.request(collection, None).search_text(),
            k_max,
            collection,
            doc_id if options.scope == "document" else None,
            retriever=options.retriever,
            query_vector=vector,
        )
        tally.retrieval_ms.append((time.perf_counter() - started) * 1000)
        rank = first_hit(chunks, doc_id, row, by_page=False)
        tally.ranks.append(rank)
        tally.by_category[row.category].append(rank)
        page_rank = first_hit(chunks, doc_id, row, by_page=True) if by_page else None
        if by_page:
            tally.page_ranks.append(page_rank)
        if options.details is not None:
            options.details(_row_details(row, doc_id, rank, page_rank, chunks))
        if progress:
            progress(i + 1, len(scored))
    result: dict[str, Any] = {
        "questions": len(scored),
        "skipped_not_answerable": sum(1 for r in rows if not r.answerable),
        **{f"recall@{k}": round(_recall(tally.ranks, k), 4) for k in options.ks},
        "mrr": round(sum(1 / r for r in tally.ranks if r) / len(tally.ranks), 4) if tally.ranks else float("nan"),
        "retrieval_ms_p50": round(_pct(tally.retrieval_ms, 50), 2),
        "retrieval_ms_p95": round(_pct(tally.retrieval_ms, 95), 2),
        "retriever": options.retriever if dense or options.retriever == "bm25" else "bm25 (no embeddings)",
        "reranker": qa.status().reranker,
        "scope": options.scope,
        "chunks": qa.count_chunks(collection),
        "by_category": {
            category: {"questions": len(ranks), "recall@3": round(_recall(ranks, 3), 4)}
            for category, ranks in sorted(tally.by_category.items())
        },
    }
    if tally.embed_ms:
        result["query_embedding_ms_p50"] = round(_pct(tally.embed_ms, 50), 2)
    if by_page:
        result["by_page"] = {f"recall@{k}": round(_recall(tally.page_ranks, k), 4) for k in options.ks}
    if options.answers:
        result["answers"] = _answer_quality(qa, rows, document_ids, collection, options)
    return result


def _row_details(
    row: EvalRow, document_id: int, rank: int | None, page_rank: int | None, chunks: Sequence[RetrievedChunk]
) -> dict[str, Any]:
    """One scored row, for reading misses: where its first hit ranked and what came back instead."""
    return {
        "id": row.id,
        "category": row.category,
        "question": row.question,
        "document_id": document_id,
        "rank": rank,
        "page_rank": page_rank,
        "retrieved": [
            {
                "chunk_id": c.chunk_id,
                "document_id": c.document_id,
                "document": c.document_name,
                "ordinal": c.ordinal,
                "pages": [c.first_page, c.last_page],
                "score": round(c.score, 6),
            }
            for c in chunks
        ],
    }


def _answer_quality(
    qa: DocQA, rows: list[EvalRow], document_ids: dict[str, int], collection: str, options: EvalOptions
) -> dict[str, Any]:
    """Generate answers: token F1 on answerable rows, how often docqa declines on impossible ones."""
    answerable = [r for r in rows if r.answerable and r.doc in document_ids]
    impossible = [r for r in rows if r.is_impossible and r.doc in document_ids]
    if options.limit:
        answerable, impossible = answerable[: options.limit], impossible[: options.limit]
    f1s, false_declines, declined = [], 0, 0

    def generate(row: EvalRow) -> str:
        scope = document_ids[row.doc or ""] if options.scope == "document" else None
        return qa.ask(row.request(collection, scope)).answer

    # As many questions at once as the engine runs requests: it batches them on the GPU, where one
    # after another would leave it mostly idle. The engine's own count, not DOCQA_LLM_N_PARALLEL: where
    # the GPU's memory kept fewer sequences, more threads would only fill (or overflow) its queue.
    info = qa.generator_info
    parallel = info.parallel if info is not None else 1
    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        answers = list(pool.map(generate, answerable + impossible))
    for row, answer in zip(answerable + impossible, answers, strict=True):
        if row.is_impossible:
            declined += declines(answer)
        else:
            f1s.append(token_f1(answer, row.answers))
            false_declines += declines(answer)
    return {
        "answered": len(answerable),
        "f1": round(statistics.fmean(f1s), 4) if f1s else None,
        "declined_when_answerable": round(false_declines / len(answerable), 4) if answerable else None,
        "impossible": len(impossible),
        "declined_when_impossible": round(declined / len(impossible), 4) if impossible else None,
    }


def document_ids_for(qa: DocQA, collection: str, docs_dir: Path, rows: list[EvalRow]) -> dict[str, int]:
    """Map each row's doc path to the ID of its ingested document (rows whose file failed are left out)."""
    found: dict[str, int] = {}
    for rel in {r.doc for r in rows if r.doc}:
        path = (docs_dir / rel).resolve()
        doc = qa.find_document(str(path), collection)
        if doc is None and path.is_file():  # the same bytes as another file of the set: that document
            doc = qa.document_with_content(sha256_file(path), collection)
        if doc is not None and doc.status == "ready":
            found[rel] = doc.id
    return found
