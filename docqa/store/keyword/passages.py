"""How a chunk becomes passages for the keyword index: cut into pieces of about 500 tokens, each with
its document's title column (docqa.store.keyword.tables stores them, in the chunk's transaction).

A passage's ID is chunk_id * 64 + its number, so a chunk's passages are one ID range and a search
returns each passage's parent chunk (small-to-big, docqa.store.keyword.index).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from docqa.store.keyword import lexical
from docqa.store.keyword.tables import PASSAGES_PER_CHUNK, DocumentPassages

PASSAGE_CHARS = 2000  # about 500 tokens of English
HEAD_CHARS = 1000  # how much of a document's first chunk joins its name in the title
_PARAGRAPH = re.compile(r"(\n\s*\n)")


def split_passages(chunk_text: str) -> list[str]:
    """Cut at paragraph breaks into pieces of about PASSAGE_CHARS; an overlong paragraph is cut
    into windows that overlap by 200 characters, so no sentence is lost at a cut."""
    passages: list[str] = []
    current = ""
    for part in _PARAGRAPH.split(chunk_text):
        if current.strip() and len(current) + len(part) > PASSAGE_CHARS:
            passages.append(current)
            current = ""
        current += part
        while len(current) > PASSAGE_CHARS * 3 // 2:
            passages.append(current[:PASSAGE_CHARS])
            current = current[PASSAGE_CHARS - 200 :]
    if current.strip() or not passages:
        passages.append(current)
    if len(passages) > PASSAGES_PER_CHUNK:  # only for chunks far beyond 4k tokens: merge the tail
        passages[PASSAGES_PER_CHUNK - 1 :] = ["".join(passages[PASSAGES_PER_CHUNK - 1 :])]
    return passages


def title_of(document_name: str, first_chunk_text: str) -> str:
    return lexical.index_text(f"{document_name} {first_chunk_text[:HEAD_CHARS]}")


def document_passages(
    document_id: int, collection_id: int, name: str, head: str, chunks: Iterable[tuple[int, str]]
) -> DocumentPassages:
    """A document as the keyword tables index it: its title (its name and `head`, its first chunk's text) and
    the passages of `chunks` ((chunk ID, text), in order)."""
    return DocumentPassages(document_id, collection_id, title_of(name, head), passages_of(chunks))


def passages_of(chunks: Iterable[tuple[int, str]]) -> list[tuple[int, str]]:
    """(passage ID, text) of (chunk ID, text) pairs, in order."""
    return [
        (chunk_id * PASSAGES_PER_CHUNK + k, passage)
        for chunk_id, chunk_text in chunks
        for k, passage in enumerate(split_passages(chunk_text))
    ]
