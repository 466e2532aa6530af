"""What a caller asks of docqa: a question (AskRequest) and the names it may use (collections)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from docqa.core.errors import InvalidRequestError

_COLLECTION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # fullmatch: "$" would allow a final newline
MAX_QUESTION_CHARS = 8000


def is_unicode_text(text: str) -> bool:
    """False for a string JSON can carry but no encoding can write: one with a lone surrogate ("\\ud800")."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def storable(text: str, what: str) -> str:
    """`text` unchanged, or an InvalidRequestError naming `what` where no database could keep it: a NUL
    (U+0000: Postgres' text refuses it, after the work was done) or a lone surrogate (no encoder writes it)."""
    if "\x00" in text:
        raise InvalidRequestError(f"{what} holds a NUL character (U+0000), which text cannot hold; remove it")
    if not is_unicode_text(text):
        raise InvalidRequestError(f"{what} holds a lone surrogate (\\ud800-\\udfff): not Unicode text")
    return text


def validate_collection_name(name: str) -> str:
    if not _COLLECTION_NAME.fullmatch(name):
        raise InvalidRequestError(f"invalid collection name '{name[:80]}': use 1-64 letters, digits, '.', '_' or '-'")
    return name


@dataclass(frozen=True)
class AskRequest:
    question: str
    collection: str | None = None
    thinking: bool = False
    top_k: int | None = None
    max_tokens: int | None = None
    document_id: int | None = None
    seed: int | None = None
    temperature: float | None = None  # None: the mode's recommended value (greedy for base models)
    use_cache: bool = True  # False: always generate, and leave the answer cache as it is
    ignore_eos: bool = False  # max_tokens whatever the model says: no EOS, no stop strings (benchmarks; not cached)
    # A conversation's earlier questions, oldest first: the last one steers retrieval and is shown to the
    # model, so that a follow-up ("and the governing law?") is read as the conversation means it.
    earlier: tuple[str, ...] = ()
    stop: tuple[str, ...] = ()  # strings that end the answer, besides the prompt's own (its answer is not cached)
    # Only documents whose catalog entry meets every (field, value): ("company", "3M"), ("year", "2022")
    # (docqa.store.catalog.matches).
    where: tuple[tuple[str, str], ...] = ()
    # Reasoning tokens before the engine closes </think> itself (thinking mode); None: the server's setting.
    thinking_budget: int | None = None
    # lookup | document | compare | collection (docqa.core.scopes); auto: chosen from the question and catalog
    scope: str = "auto"
    # the documents a `compare` (or `document`) question is about where the question names none; for a
    # `collection` question, the documents it reads (a selection of the collection)
    document_ids: tuple[int, ...] = ()
    # whose question (docqa.core.tenants.Grant.owner, "" without keys): its cached answer is filed under it,
    # so that one key cannot learn from the cache what another asked
    asker: str = ""

    def follows(self) -> str:
        """The question this one follows (the last earlier one, trimmed), or "" for none: what steers its
        retrieval and prompt, and so what its cached answer is filed under (a blank one is no follow-up)."""
        return self.earlier[-1].strip()[:MAX_QUESTION_CHARS] if self.earlier else ""

    def search_text(self) -> str:
        """What retrieval searches for: a follow-up with the question before it ("and the governing law?"
        alone finds every contract's clause; a question on a new topic still finds its own chunks, its terms
        being in the search, and may bring one of the last topic's)."""
        earlier = self.follows()
        return f"{earlier}\n{self.question}" if earlier else self.question
