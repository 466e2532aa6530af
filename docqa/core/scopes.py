"""What a question is about: one passage (`lookup`), one whole document (`document`), two or more named
documents side by side (`compare`), or every document of a collection (`collection`).

`auto` lets docqa choose from the question and the catalog (docqa.answering.scope_choice); the chosen scope
is said in the answer's metadata. Plain values, importable by every layer.
"""

from __future__ import annotations

from typing import Literal, get_args

from docqa.core.errors import InvalidRequestError

Scope = Literal["lookup", "document", "compare", "collection"]
AskedScope = Literal["auto", "lookup", "document", "compare", "collection"]
SCOPES: tuple[str, ...] = get_args(Scope)
ASKED_SCOPES: tuple[str, ...] = get_args(AskedScope)


def validate_scope(value: str) -> AskedScope:
    """The scope a caller asked for, or a clear error naming the ones there are."""
    scope = value.strip().lower()
    if scope not in ASKED_SCOPES:
        raise InvalidRequestError(f"unknown scope '{value[:40]}': use one of {', '.join(ASKED_SCOPES)}")
    return scope  # type: ignore[return-value]
