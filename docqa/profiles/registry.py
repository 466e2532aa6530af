"""The profiles a deployment uses, as one object: the store's DocumentReader and retrieval's question reader.

Built-in profiles are listed here; another package adds its own through the `docqa.profiles` entry point
group (docs/profiles.md), without touching docqa. DOCQA_RETRIEVAL_PROFILES chooses among them (`auto`: every one
installed; `none`: the generic core alone).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from importlib.metadata import entry_points
from typing import Any

from docqa.core.errors import InvalidRequestError
from docqa.core.identity import ChunksSaying, DocumentIdentity
from docqa.core.query import FavouredTitles, HeadRule
from docqa.profiles.contracts.profile import ContractsProfile
from docqa.profiles.csrc.profile import CsrcProfile
from docqa.profiles.protocol import Hints, Profile
from docqa.profiles.sec.profile import SecProfile

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "docqa.profiles"
# in the order a document is offered to them: a Chinese cover is read before an English one's rules are tried
BUILT_IN: dict[str, Callable[[], Profile]] = {"csrc": CsrcProfile, "sec": SecProfile, "contracts": ContractsProfile}


def spec_names(spec: str | None) -> list[str] | None:
    """The profile names a choice gives (DOCQA_RETRIEVAL_PROFILES, a collection's): None for `auto` (or nothing),
    [] for `none`, else the names by comma, lowercased."""
    wanted = (spec or "").strip().lower()
    if wanted in ("", "auto"):
        return None
    if wanted == "none":
        return []
    return [n.strip() for n in wanted.split(",") if n.strip()]


def installed() -> dict[str, Callable[[], Profile]]:
    """Every profile that can be switched on: the built-in ones, then those other packages register."""
    found = dict(BUILT_IN)
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name in found:
            logger.warning("profile %r from %s is ignored: the name is taken", point.name, point.value)
            continue
        try:
            found[point.name] = point.load()
        except Exception as exc:  # a broken package: said once, the others still load
            logger.error(
                "profile %r from %s could not be loaded (%s: %s)", point.name, point.value, type(exc).__name__, exc
            )
    return found


class ProfileSet:
    """The profiles switched on, in order. Implements docqa.core.identity.DocumentReader for the store."""

    def __init__(self, profiles: Sequence[Profile]) -> None:
        self.profiles = tuple(profiles)
        self.head_chars = max((p.head_chars for p in self.profiles), default=0)
        # what read a document: the store records it, and the answer cache keys on it
        self.version_tag = ",".join(f"{p.name}@{p.version}" for p in self.profiles) or "none"

    @classmethod
    def named(cls, spec: str) -> ProfileSet:
        """The profiles a DOCQA_RETRIEVAL_PROFILES value names: `auto` (every installed one), `none`, or names
        by comma."""
        known = installed()
        names = spec_names(spec)
        if names is None:
            return cls([make() for make in known.values()])
        unknown = [n for n in names if n not in known]
        if unknown:
            raise InvalidRequestError(
                f"DOCQA_RETRIEVAL_PROFILES: no profile {', '.join(map(repr, unknown))}; installed: {', '.join(known)}"
                " (or auto, none)"
            )
        return cls([known[n]() for n in known if n in names])

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.profiles)

    def identity(self, file_name: str, head: str, chunks_saying: ChunksSaying) -> DocumentIdentity | None:
        """The first profile's identity of the document, None where none knows it."""
        for profile in self.profiles:
            found = profile.identity(file_name, head, chunks_saying)
            if found is not None:
                return found
        return None

    def catalog(self, file_name: str, head: str, texts: Sequence[str]) -> dict[str, Any] | None:
        """The first profile's catalog fields for the document, None where none knows it."""
        for profile in self.profiles:
            found = profile.catalog(file_name, head, texts)
            if found is not None:
                return found
        return None

    def understand(self, question: str, identities: Mapping[int, DocumentIdentity] | None) -> tuple[Hints, str | None]:
        """What every profile reads in the question, merged (each profile sees only its own documents), and
        the profile whose head rule it is."""
        named: set[int] = set()
        narrowed: set[int] = set()
        favoured: list[FavouredTitles] = []
        head: HeadRule = "auto"
        head_in: str | None = None
        for profile in self.profiles:
            own = None if identities is None else {d: i for d, i in identities.items() if i.profile == profile.name}
            hints = profile.understand(question, own)
            named |= hints.named
            narrowed |= hints.narrowed
            favoured += hints.favoured
            if hints.head != "auto" and head_in is None:
                head, head_in = hints.head, profile.name
        hints = Hints(frozenset(named), frozenset(narrowed), tuple(favoured), head)
        return hints, head_in

    def drafting_words(self, question: str) -> tuple[str, ...]:
        """The words documents write what the question asks about in, from every profile, without repeats."""
        found: list[str] = []
        for profile in self.profiles:
            found += [w for w in profile.drafting_words(question) if w not in found]
        return tuple(found)

    def subset(self, spec: str | None) -> ProfileSet:
        """The profiles a collection chooses among these (`spec`: names by comma; None or `auto`: all of these);
        a name not among them is refused, naming those that are."""
        names = spec_names(spec)
        if names is None:
            return self
        unknown = [n for n in names if n not in self.names]
        if unknown:
            raise InvalidRequestError(
                f"profiles: {', '.join(map(repr, unknown))} not switched on here; on: {', '.join(self.names) or 'none'}"
                " (DOCQA_RETRIEVAL_PROFILES), or auto, none"
            )
        return ProfileSet([p for p in self.profiles if p.name in names])

    def with_weights(self, name: str, **values: float) -> ProfileSet:
        """The same profiles with one profile's weights changed (a benchmark's grid: bench.crossval)."""
        profile = next((p for p in self.profiles if p.name == name), None)
        weights = getattr(profile, "weights", None)
        if profile is None or weights is None:
            raise InvalidRequestError(f"no profile {name!r} with weights among {', '.join(self.names) or 'none'}")
        changed = type(profile)(dataclasses.replace(weights, **values))  # type: ignore[call-arg]
        return ProfileSet([changed if p is profile else p for p in self.profiles])
