"""Derived data brought up to date: `docqa reindex`, and `docqa serve` / `docqa ingest` when a document is stale
(docqa.store.derived). One document a transaction, so a run stopped halfway resumes where it stopped."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from docqa.service.facade import DocQA

logger = logging.getLogger(__name__)

# (documents done, documents to do): called after each document
ReindexProgress = Callable[[int, int], None]


@dataclass(frozen=True)
class ReindexReport:
    stale: int  # documents read by older rules when the run began
    done: int  # read again
    seconds: float
    rules: str  # the rules they are read with now


def stale_count(qa: DocQA, collection: str | None = None) -> int:
    """How many documents (of one collection, or all) older rules read."""
    return len(qa.store.stale_documents(_collection_id(qa, collection)))


def reindex(qa: DocQA, collection: str | None = None, progress: ReindexProgress | None = None) -> ReindexReport:
    """Reads every stale document's derived data again (one collection's, or every collection's)."""
    started = time.monotonic()
    stale = qa.store.stale_documents(_collection_id(qa, collection))
    done = 0
    for n, document_id in enumerate(stale, start=1):
        done += qa.store.rederive(document_id)
        if progress is not None:
            progress(n, len(stale))
    return ReindexReport(len(stale), done, round(time.monotonic() - started, 3), qa.store.derived_tag)


def bring_up_to_date(qa: DocQA, say: Callable[[str], None]) -> ReindexReport | None:
    """Where documents are stale, says so in one line, reindexes them and says when it is done (serve, ingest)."""
    count = stale_count(qa)
    if not count:
        return None
    say(f"{count} documents were read by older rules than this docqa's ({qa.store.derived_tag}): reading them again")
    report = reindex(qa)
    say(f"reindexed {report.done} documents in {report.seconds:.1f} s")
    return report


def _collection_id(qa: DocQA, collection: str | None) -> int | None:
    return qa.collection(collection).id if collection is not None else None
