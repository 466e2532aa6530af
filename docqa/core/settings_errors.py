"""A settings error in words a user can act on: each failing value named by its environment variable
(DOCQA_<GROUP>_<FIELD>), with pydantic's reason, and never the value of a setting that may hold a credential."""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable, Mapping

from pydantic import ValidationError

# Settings whose values may hold credentials (a database URL's password, an API key, an object store's
# secret): an error names them without their value.
_SECRET_FIELD = re.compile(r"(keys?|secrets?|passwords?|url|store|endpoint)$")


def _may_hold_a_secret(loc: list[str], groups: Collection[str]) -> bool:
    """A field named like a credential (DOCQA_API_KEYS, an item of it), or a whole group given at once
    (DOCQA_API='...': it may hold the keys)."""
    return any(_SECRET_FIELD.search(part) for part in loc) or (len(loc) == 1 and loc[0] in groups)


def describe_errors(exc: ValidationError, groups: Collection[str], known: Collection[str] = ()) -> str:
    """Each error as DOCQA_<GROUP>_<FIELD>=<value>: <pydantic's reason>; a rule across fields by its reason.
    groups: the settings' nested groups (a whole group given at once may hold a credential); known: every
    setting's variable name, to name the closest to one that does not exist."""
    parts = []
    for error in exc.errors():
        reason = str(error["msg"]).removeprefix("Value error, ")
        loc = [str(part) for part in error["loc"]]
        name = "DOCQA_" + "_".join(loc).upper()
        if error["type"] == "extra_forbidden":  # a misspelled field: said with the closest one there is
            parts.append(no_such_setting(name, known))
        elif not loc:
            parts.append(reason)
        elif error["type"] == "value_error" or _may_hold_a_secret(loc, groups):  # a rule's own words; no secret
            parts.append(f"{name}: {reason}")
        else:
            parts.append(f"{name}={error.get('input')!r}: {reason}")
    return "; ".join(parts)


# DOCQA_ variables that are no setting but are read all the same: where docqa.toml is, and the test suite's
# shared data and vocabulary (tests/support/paths.py)
OTHER_VARIABLES = frozenset({"DOCQA_CONFIG", "DOCQA_SHARED_DIR", "DOCQA_QWEN_VOCAB"})


def no_such_setting(name: str, known: Collection[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f"{name} is no setting" + (f" (did you mean {close[0]}?)" if close else " (docs/settings.md lists them)")


def unknown_variables(environ: Mapping[str, str], known: Collection[str]) -> list[str]:
    """The DOCQA_ variables of the environment that name no setting (a misspelled one, DOCQA_LLM_N_CTXX,
    was ignored without a word, and docqa ran with the default), each with the closest that does."""
    given: Iterable[str] = (name.upper() for name in environ)
    return [
        no_such_setting(name, known)
        for name in sorted(given)
        if name.startswith("DOCQA_") and name not in known and name not in OTHER_VARIABLES
    ]
