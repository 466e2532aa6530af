"""Who is asking: an API key's grant (which collections it may read, whether it may change them, how many
generations it may run at once). Keys themselves live hashed in the store (docqa.store.api_keys); the API
resolves a request's key to a Grant once (docqa.api.deps) and every route asks the grant."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

Role = Literal["admin", "writer", "reader"]
ROLES: tuple[Role, ...] = ("admin", "writer", "reader")


def key_hash(secret: str) -> str:
    """What the store keeps of a key: its SHA-256. Keys are 32 random bytes (docqa keys create), so a plain
    hash cannot be reversed by guessing; it is also what a caller's conversations are filed under."""
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class Grant:
    """What one caller may do. `collections` None: every collection (an admin key, or no keys configured)."""

    name: str  # the key's name ("" without keys); never the key itself
    role: Role
    collections: frozenset[str] | None
    owner: str  # what the caller's conversations and cached answers are filed under ("" without keys)
    max_generations: int | None = None  # None: the server's per-key default (DOCQA_API_GENERATIONS_PER_KEY)
    keyed: bool = True  # False: no keys are configured, one local user

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def can_read(self, collection: str) -> bool:
        return self.collections is None or collection in self.collections

    def can_write(self, collection: str) -> bool:
        return self.role != "reader" and self.can_read(collection)


OPEN = Grant(name="", role="admin", collections=None, owner="", keyed=False)
"""No keys configured: one local user who may do everything (what docqa did before keys existed)."""


def environment_grant(secret: str) -> Grant:
    """A key of DOCQA_API_KEYS: an admin, its conversations filed as before named keys existed."""
    return Grant(name="DOCQA_API_KEYS", role="admin", collections=None, owner=key_hash(secret)[:32])
