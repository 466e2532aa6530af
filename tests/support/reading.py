"""What every generator must do for a question over a whole collection, checked the same way for each."""

from __future__ import annotations

from docqa.core.events import ReadingEvent
from docqa.core.requests import AskRequest
from docqa.service import DocQA


def assert_every_document_read_once(qa: DocQA, request: AskRequest) -> None:
    """The question streamed (each document read once, by its reading event), asked again (the same answer from
    the cache, read as a collection question), its table naming every document, each citation in its own."""
    events = list(qa.stream(request))
    names = {d.name for d in qa.documents()}
    assert sorted(e.document for e in events if isinstance(e, ReadingEvent)) == sorted(names)
    answer = qa.ask(request)
    assert answer.scope == "collection" and answer.documents_read == len(names) and answer.cached
    assert all(name in answer.answer for name in names)
    for citation in answer.citations:
        assert qa.chunk(citation.chunk_id).document_id == citation.document_id
