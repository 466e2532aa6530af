"""Catalog fields as they come in: an uploader's own (company, period, title, tags, ...), kept with the
document (docqa.store.catalog), and an ask's filter on them (`where`). Both name fields alike."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from docqa.core.errors import InvalidRequestError
from docqa.core.requests import storable

MAX_FIELDS = 20
MAX_VALUE_CHARS = 200
MAX_METADATA_CHARS = 200_000
_FIELD = re.compile(r"[a-z][a-z0-9_]{0,31}")


def parse_metadata(raw: str) -> dict[str, Any]:
    """An upload's `metadata` form field: a JSON object of catalog fields."""
    if len(raw) > MAX_METADATA_CHARS:  # what MAX_FIELDS fields of MAX_FIELDS values could take, with room
        raise InvalidRequestError(f"metadata: longer than {MAX_METADATA_CHARS:,} characters")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidRequestError(f'metadata: not JSON ({exc.msg}); send an object like {{"company": "3M"}}') from None
    except RecursionError:  # lists nested thousands deep
        raise InvalidRequestError(
            "metadata: nested too deep; a field is a string, a number or a list of strings"
        ) from None
    except ValueError as exc:  # an integer of thousands of digits (Python's int_max_str_digits)
        raise InvalidRequestError(f"metadata: not JSON docqa reads ({str(exc)[:80]})") from None
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
        for v in values:
            storable(str(v), f"metadata: {name}")
        checked[name] = value
    return checked


MAX_WHERE_FIELDS = 10


def where_pairs(raw: Mapping[str, object] | Sequence[str] | None) -> tuple[tuple[str, str], ...]:
    """A catalog filter as (field, value) pairs, from a JSON object ({"company": "3M", "year": 2022}) or
    from `field=value` strings (the CLI's --where); an InvalidRequestError names what is wrong."""
    if not raw:
        return ()
    items: list[tuple[object, object]] = []
    if isinstance(raw, Mapping):
        items = list(raw.items())
    else:
        for spec in raw:
            field, sep, wanted = spec.partition("=")
            if not sep:
                raise InvalidRequestError(f"where: {spec!r} is not field=value (like company=3M or year=2022)")
            items.append((field.strip(), wanted))
    if len(items) > MAX_WHERE_FIELDS:
        raise InvalidRequestError(f"where: at most {MAX_WHERE_FIELDS} conditions")
    pairs = []
    for name, value in items:
        if not isinstance(name, str) or not _FIELD.fullmatch(name):
            raise InvalidRequestError(f"where: {str(name)[:40]!r} is no catalog field (lowercase letters, digits, '_')")
        if isinstance(value, bool) or not isinstance(value, (str, int, float)) or not str(value).strip():
            raise InvalidRequestError(f"where: {name} needs a non-empty string or number")
        text = str(value)
        if len(text) > MAX_VALUE_CHARS:
            raise InvalidRequestError(f"where: {name}'s value is over {MAX_VALUE_CHARS} characters")
        pairs.append((name, storable(text, f"where: {name}")))
    return tuple(pairs)
