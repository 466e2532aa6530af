"""Derived data brought up to date: `docqa reindex`, and `docqa serve` / `docqa ingest` when a document is stale
(docqa.store.derived). One document a transaction, so a run stopped halfway resumes where it stopped."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from docqa.service.facade import DocQA

# (documents done, documents to do): called after each document
ReindexProgress = Callable[[int, int], None]


@dataclass(frozen=True)
class ReindexReport:
    stale: int  # documents read by older rules when the run began
    done: int  # read again
    seconds: float
    rules: str  # the rules they are read with now


def reindex(qa: DocQA, collection: str | None = None, progress: ReindexProgress | None = None) -> ReindexReport:
    """Reads every stale document's derived data again (one collection's, or every collection's)."""
    collection_id = qa.collection(collection).id if collection is not None else None
    return _read_again(qa, qa.store.stale_documents(collection_id), progress)


def bring_up_to_date(qa: DocQA, say: Callable[[str], None]) -> ReindexReport | None:
    """Where documents are stale, says so in one line, reindexes them and says when it is done (serve, ingest)."""
    stale = qa.store.stale_documents()
    if not stale:
        return None
    rules = qa.store.derived_tag
    say(f"{len(stale)} documents were read by older rules than this docqa's ({rules}): reading them again")
    report = _read_again(qa, stale)
    say(f"reindexed {report.done} documents in {report.seconds:.1f} s")
    return report


def _read_again(qa: DocQA, stale: list[int], progress: ReindexProgress | None = None) -> ReindexReport:
    started = time.monotonic()
    done = 0
    for n, document_id in enumerate(stale, start=1):
        done += qa.store.rederive(document_id)
        if progress is not None:
            progress(n, len(stale))
    return ReindexReport(len(stale), done, round(time.monotonic() - started, 3), qa.store.derived_tag)
