"""Named API keys, the same on SQLite and Postgres: each stored as its SHA-256 (the key itself is shown once,
when `docqa keys create` makes it), with its role, the collections it is granted and its own limit on
generations at once. Revoked keys stay listed (who had access, until when) and let nobody in."""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Integer, String, Text, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from docqa.core.errors import ApiKeyError
from docqa.core.tenants import ROLES, Grant, Role, key_hash
from docqa.store.models import Base, now

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
KEY_PREFIX = "dq_"  # a docqa key is told apart from other secrets at a glance (and by secret scanners)


class ApiKeyRow(Base):
    __tablename__ = "api_keys"
    __table_args__ = {"sqlite_autoincrement": True}  # noqa: RUF012 (SQLAlchemy's declarative form)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    collections: Mapped[str] = mapped_column(Text)  # JSON list of names; an admin's is [] (every collection)
    max_generations: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(default=now)
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)


@dataclass(frozen=True)
class KeyInfo:
    """A key as `docqa keys list` shows it: never the key, nor its hash."""

    name: str
    role: str
    collections: tuple[str, ...]
    max_generations: int | None
    created_at: str
    revoked_at: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "role": self.role,
            "collections": list(self.collections) if self.role != "admin" else "*",
            "max_generations": self.max_generations,
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
        }


def _info(row: ApiKeyRow) -> KeyInfo:
    return KeyInfo(
        row.name,
        row.role,
        tuple(json.loads(row.collections)),
        row.max_generations,
        row.created_at.isoformat(),
        row.revoked_at.isoformat() if row.revoked_at else None,
    )


def _checked(name: str, role: str, collections: list[str]) -> None:
    if not _NAME.fullmatch(name):
        raise ApiKeyError(f"key name {name!r}: 1-64 letters, digits, '.', '_', '@' or '-', the first a letter or digit")
    if role not in ROLES:
        raise ApiKeyError(f"role {role!r}: one of {', '.join(ROLES)}")
    if role != "admin" and not collections:
        raise ApiKeyError(f"key {name!r} grants no collection: name them with --collections a,b (or make it --admin)")


class ApiKeys:
    def __init__(self, session: Callable[[], AbstractContextManager[Session]]) -> None:
        """session: the store's transactions (Store.session), so errors are the store's (a database away)."""
        self._session = session

    def create(
        self, name: str, collections: list[str], role: Role = "writer", max_generations: int | None = None
    ) -> tuple[KeyInfo, str]:
        """A new key: (what is kept of it, the key itself, which only this call returns)."""
        _checked(name, role, collections)
        secret = KEY_PREFIX + secrets.token_urlsafe(32)
        kept = [] if role == "admin" else sorted(set(collections))
        with self._session() as s:
            if s.scalar(select(ApiKeyRow.id).where(ApiKeyRow.name == name)) is not None:
                raise ApiKeyError(f"a key named {name!r} exists already (revoked keys keep their names)")
            row = ApiKeyRow(
                name=name,
                key_hash=key_hash(secret),
                role=role,
                collections=json.dumps(kept),
                max_generations=max_generations,
            )
            s.add(row)
            s.flush()
            return _info(row), secret

    def list(self) -> list[KeyInfo]:
        with self._session() as s:
            return [_info(row) for row in s.scalars(select(ApiKeyRow).order_by(ApiKeyRow.id))]

    def revoke(self, name: str) -> KeyInfo:
        with self._session() as s:
            row = s.scalar(select(ApiKeyRow).where(ApiKeyRow.name == name))
            if row is None:
                raise ApiKeyError(f"no key named {name!r} (`docqa keys list` shows them)")
            if row.revoked_at is None:
                row.revoked_at = now()
            return _info(row)

    def any_made(self) -> bool:
        """Whether a named key was ever made: from then on a request needs a key, even once every named key is
        revoked (revoking the last one must not open the server)."""
        with self._session() as s:
            return s.scalar(select(ApiKeyRow.id).limit(1)) is not None

    def grant(self, secret: str) -> Grant | None:
        """The grant of a key presented (None: no such key, or revoked). Looked up by hash: the database index
        finds it, and nothing is compared byte by byte with a secret."""
        hashed = key_hash(secret)
        with self._session() as s:
            row = s.scalar(select(ApiKeyRow).where(ApiKeyRow.key_hash == hashed, ApiKeyRow.revoked_at.is_(None)))
            if row is None:
                return None
            role: Role = row.role  # type: ignore[assignment]  # written through _checked
            return Grant(
                name=row.name,
                role=role,
                collections=None if role == "admin" else frozenset(json.loads(row.collections)),
                owner=hashed[:32],
                max_generations=row.max_generations,
            )
