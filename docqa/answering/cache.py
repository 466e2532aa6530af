"""Answer cache: the same question on an unchanged collection, mode and model is answered from SQLite.

The key covers everything that shapes an answer: the normalised question, collection, mode, model,
top_k, document scope, max_tokens, temperature and seed, and who asked (an API key's answers are found
only by that key: with a shared cache a key could confirm what another asked by asking it). Invalidation
needs no bookkeeping here: the store deletes a collection's cached answers in the same transaction that
adds, replaces or deletes one of its documents, so a cached answer can never outlive the text it was drawn from.
Reasoning is kept only for thinking-mode answers. Only finished answers with some text are cached (a blank
one, which a small model can produce, would be served again without a chance to do better), and a replayed
answer is marked `cached` and keeps the token counts it was generated with (usage reports stay true).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, replace

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from docqa.core.errors import is_disk_full
from docqa.core.events import AnswerDelta, AskEvent, CitationsEvent, DoneEvent, ReasoningDelta
from docqa.core.types import Answer, Citation, Timings
from docqa.store.protocol import Store

logger = logging.getLogger(__name__)

_SPACES = re.compile(r"\s+")
_TRAILING = re.compile(r"[\s?？!！.。,，;；:：]+$")
CACHEABLE_FINISH = frozenset({"stop", "length", "no_sources"})


def normalise_question(question: str) -> str:
    """Case, width, spacing and closing punctuation do not make a different question."""
    folded = unicodedata.normalize("NFKC", question).casefold()
    return _TRAILING.sub("", _SPACES.sub(" ", folded).strip())


@dataclass(frozen=True)
class CacheKey:
    collection_id: int
    digest: str
    generation: int = 0  # the collection's generation when the question was looked up (Store.generation)


def cache_key(
    collection_id: int,
    question: str,
    *,
    thinking: bool,
    model_id: str,
    top_k: int,
    document_id: int | None,
    max_tokens: int,
    temperature: float | None,
    seed: int | None,
    retrieval: str,
    earlier: tuple[str, ...] = (),
    generation: int = 0,
    prompt_budget: int | None = None,
    where: tuple[tuple[str, str], ...] = (),
    thinking_budget: int | None = None,
    scope: str = "lookup",
    document_ids: tuple[int, ...] = (),
    asker: str = "",
) -> CacheKey:
    """retrieval: how the sources were found (Retriever.signature): another retriever, embedding model or
    fusion weight finds other sources, so its answers are other entries."""
    parts = {
        "q": normalise_question(question),
        "retrieval": retrieval,
        "thinking": thinking,
        "model": model_id,
        "top_k": top_k,
        "document": document_id,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "seed": seed,
    }
    if earlier:  # a follow-up's answer depends on the question before it (absent: the keys as before)
        parts["earlier"] = [normalise_question(q) for q in earlier]
    if where:  # a catalog filter finds other sources
        parts["where"] = sorted([name, value.strip().casefold()] for name, value in where)
    if thinking_budget is not None:  # reasoning cut sooner or later: another answer
        parts["thinking_budget"] = thinking_budget
    if scope != "lookup":  # a whole document or collection read: another answer (absent: the keys as before)
        parts["scope"] = scope
    if document_ids:
        parts["documents"] = sorted(document_ids)
    if asker:  # a key's answers are its own: another key cannot confirm what it asked (absent: no keys)
        parts["asker"] = asker
    if prompt_budget is not None:  # sources cut to a budget (a CPU's) are other sources: another answer
        parts["prompt_budget"] = prompt_budget
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return CacheKey(collection_id, digest, generation)


def _citation(data: dict[str, object]) -> Citation:
    pages = data["pages"]
    assert isinstance(pages, list)
    return Citation(
        number=int(data["number"]),  # type: ignore[call-overload]
        document=str(data["document"]),
        document_id=int(data["document_id"]),  # type: ignore[call-overload]
        pages=(int(pages[0]), int(pages[1])),
        chunk_id=int(data["chunk_id"]),  # type: ignore[call-overload]
        score=float(data["score"]),  # type: ignore[arg-type]
        page=None if data.get("page") is None else int(data["page"]),  # type: ignore[call-overload]
        cited=bool(data.get("cited")),
        section=None if data.get("section") is None else str(data["section"]),
        ocr=bool(data.get("ocr")),
        quote=None if data.get("quote") is None else str(data["quote"]),
    )


class AnswerCache:
    def __init__(self, store: Store, max_entries: int) -> None:
        self._store = store
        self._max_entries = max_entries
        self.hits = 0
        self.misses = 0

    def get(self, key: CacheKey) -> Answer | None:
        with self._store.session() as s:
            row = s.execute(
                text("SELECT answer FROM answer_cache WHERE collection_id = :cid AND key = :key"),
                {"cid": key.collection_id, "key": key.digest},
            ).scalar()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        data = json.loads(row)
        timings = data.get("timings") or {}
        return Answer(
            answer=data["answer"],
            reasoning=data["reasoning"],
            mode=data["mode"],
            citations=[_citation(c) for c in data["citations"]],
            timings=Timings(
                prompt_tokens=int(timings.get("prompt_tokens") or 0),
                completion_tokens=int(timings.get("completion_tokens") or 0),
            ),
            finish_reason=data["finish_reason"],
            cached=True,
            warnings=list(data.get("warnings") or []),
            scope=str(data.get("scope") or "lookup"),
            documents_read=int(data.get("documents_read") or 0),
        )

    def put(self, key: CacheKey, answer: Answer) -> None:
        """Keep an answer; one that cannot be written (a full disk) is only not cached: its ask still answers."""
        if answer.finish_reason not in CACHEABLE_FINISH or not answer.answer.strip():
            return
        try:
            self._insert(key, answer)
        except (SQLAlchemyError, OSError) as exc:
            logger.warning("answer not cached: %s", type(exc).__name__ if not is_disk_full(exc) else "disk full")

    def _insert(self, key: CacheKey, answer: Answer) -> None:
        data = answer.as_dict()
        if answer.mode != "thinking":
            data["reasoning"] = ""
        with self._store.session() as s:
            # Only while the collection is as its retrieval saw it: an ask that raced a delete or an ingest
            # (the change emptied the cache; this answer may cite what is gone) is not cached.
            s.execute(
                text(
                    "INSERT INTO answer_cache(collection_id, key, answer, created_at) "
                    "SELECT :cid, :key, :answer, CURRENT_TIMESTAMP WHERE coalesce((SELECT generation FROM "
                    "collection_generations WHERE collection_id = :cid), 0) = :generation "
                    "ON CONFLICT (collection_id, key) DO UPDATE SET answer = excluded.answer, "
                    "created_at = excluded.created_at"
                ),
                {
                    "cid": key.collection_id,
                    "key": key.digest,
                    "answer": json.dumps(data, ensure_ascii=False),
                    "generation": key.generation,
                },
            )
            order = self._store.cache_order  # the column that orders entries by their writing
            s.execute(  # keep the newest max_entries of the collection
                text(
                    f"DELETE FROM answer_cache WHERE collection_id = :cid AND {order} NOT IN (SELECT {order} FROM "
                    f"answer_cache WHERE collection_id = :cid ORDER BY {order} DESC LIMIT :n)"
                ),
                {"cid": key.collection_id, "n": self._max_entries},
            )

    def entries(self) -> int:
        with self._store.session() as s:
            return int(s.execute(text("SELECT count(*) FROM answer_cache")).scalar() or 0)


def replay(answer: Answer, elapsed_ms: float) -> Iterator[AskEvent]:
    """A cached answer as the events a generated one streams: citations, reasoning, answer, done."""
    yield CitationsEvent(
        [replace(c, page=None, cited=False, quote=None) for c in answer.citations],
        answer.mode,
        tuple(answer.warnings),
        answer.scope,
    )
    if answer.reasoning:
        yield ReasoningDelta(answer.reasoning)
    yield AnswerDelta(answer.answer)
    timings = replace(answer.timings, retrieval_ms=0.0, ttft_ms=elapsed_ms, total_ms=elapsed_ms)
    yield DoneEvent(timings, answer.finish_reason, list(answer.citations), cached=True)
