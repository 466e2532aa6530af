"""A settings error in words a user can act on: each failing value named by its environment variable
(DOCQA_<GROUP>_<FIELD>), with pydantic's reason, and never the value of a setting that may hold a credential."""

from __future__ import annotations

import re
from collections.abc import Collection

from pydantic import ValidationError

# Settings whose values may hold credentials (a database URL's password, an API key, an object store's
# secret): an error names them without their value.
_SECRET_FIELD = re.compile(r"(keys?|secrets?|passwords?|url|store|endpoint)$")


def _may_hold_a_secret(loc: list[str], groups: Collection[str]) -> bool:
    """A field named like a credential (DOCQA_API_KEYS, an item of it), or a whole group given at once
    (DOCQA_API='...': it may hold the keys)."""
    return any(_SECRET_FIELD.search(part) for part in loc) or (len(loc) == 1 and loc[0] in groups)


def describe_errors(exc: ValidationError, groups: Collection[str]) -> str:
    """Each error as DOCQA_<GROUP>_<FIELD>=<value>: <pydantic's reason>; a rule across fields by its reason.
    groups: the settings' nested groups (a whole group given at once may hold a credential)."""
    parts = []
    for error in exc.errors():
        reason = str(error["msg"]).removeprefix("Value error, ")
        loc = [str(part) for part in error["loc"]]
        name = "DOCQA_" + "_".join(loc).upper()
        if not loc:
            parts.append(reason)
        elif error["type"] == "value_error" or _may_hold_a_secret(loc, groups):  # a rule's own words; no secret
            parts.append(f"{name}: {reason}")
        else:
            parts.append(f"{name}={error.get('input')!r}: {reason}")
    return "; ".join(parts)
