"""An uploader's own catalog fields (company, period, title, tags, ...): checked where they come in, kept
with the document (docqa.store.catalog)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from docqa.core.errors import InvalidRequestError
from docqa.core.requests import is_unicode_text

MAX_FIELDS = 20
MAX_VALUE_CHARS = 200
_FIELD = re.compile(r"[a-z][a-z0-9_]{0,31}")


def parse_metadata(raw: str) -> dict[str, Any]:
    """An upload's `metadata` form field: a JSON object of catalog fields."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidRequestError(f'metadata: not JSON ({exc.msg}); send an object like {{"company": "3M"}}') from None
    if not isinstance(value, dict):
        raise InvalidRequestError('metadata: a JSON object is expected, like {"company": "3M", "tags": ["lease"]}')
    return user_fields(value)


def user_fields(raw: Mapping[str, Any]) -> dict[str, Any]:
    """An uploader's metadata, checked: at most MAX_FIELDS fields named in lowercase letters, digits and
    underscores, each a string, a number or a list of strings (tags), none over MAX_VALUE_CHARS."""
    if len(raw) > MAX_FIELDS:
        raise InvalidRequestError(f"metadata: at most {MAX_FIELDS} fields")
    checked: dict[str, Any] = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not _FIELD.fullmatch(name):
            raise InvalidRequestError(
                f"metadata: field names are 1-32 lowercase letters, digits and '_', starting with a letter: {name!r}"
            )
        if isinstance(value, bool) or not isinstance(value, (str, int, float, list)):
            raise InvalidRequestError(f"metadata: {name} must be a string, a number or a list of strings")
        if isinstance(value, list) and not all(isinstance(v, str) for v in value):
            raise InvalidRequestError(f"metadata: {name} must be a list of strings")
        values = value if isinstance(value, list) else [value]
        if len(values) > MAX_FIELDS or any(len(str(v)) > MAX_VALUE_CHARS for v in values):
            raise InvalidRequestError(f"metadata: {name} is too long (at most {MAX_VALUE_CHARS} characters a value)")
        if not all(is_unicode_text(str(v)) for v in values):
            raise InvalidRequestError(f"metadata: {name} holds a lone surrogate: not Unicode text")
        checked[name] = value
    return checked
