"""Bringing a database to docqa's schema with Alembic (`docqa db upgrade`, and when a store opens).

Each database has its revisions in its own folder of docqa.store.migrations (`postgres/`, `sqlite/`),
run on the connection given here. Several processes may open one store at once: on Postgres an advisory
lock, on SQLite a lock file beside the database, lets one of them migrate while the others wait. A store
already at the newest revision is told so by one query, without importing Alembic (~0.1 s).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DatabaseError

from docqa.store.file_lock import file_lock

if TYPE_CHECKING:
    from alembic.config import Config

_MIGRATIONS = Path(__file__).parent / "migrations"
# The newest revision of each database's folder (a test checks them against Alembic's own answer).
HEADS = {"postgresql": "0014", "sqlite": "s0011"}
_PG_LOCK = 7_410_000_001  # pg_advisory_lock key: one process migrates at a time


def _config(dialect: str) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    config.set_main_option("path_separator", "os")
    config.set_main_option("version_locations", str(_MIGRATIONS / _folder(dialect)))
    return config


def _folder(dialect: str) -> str:
    return "postgres" if dialect == "postgresql" else "sqlite"


def head(dialect: str) -> str:
    """The newest revision this docqa knows for the database kind ("postgresql", "sqlite"), from Alembic."""
    from alembic.script import ScriptDirectory

    found = ScriptDirectory.from_config(_config(dialect)).get_current_head()
    assert found is not None
    return found


def current(engine: Engine) -> str | None:
    """The database's revision (None: docqa's tables were never made there, or made before Alembic)."""
    with engine.connect() as conn:
        return _revision(conn)


def _revision(conn: Connection) -> str | None:
    try:
        found = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    except DatabaseError:  # no such table yet
        conn.rollback()
        return None
    return str(found) if found is not None else None


def at_head(engine: Engine) -> bool:
    return current(engine) == HEADS[engine.dialect.name]


def upgrade(engine: Engine) -> tuple[str | None, str]:
    """Apply the migrations the database lacks; returns (revision before, revision after)."""
    from alembic import command

    config = _config(engine.dialect.name)
    with _one_at_a_time(engine), engine.connect() as conn:
        before = _revision(conn)
        conn.commit()
        if before != HEADS[engine.dialect.name]:
            config.attributes["connection"] = conn
            command.upgrade(config, "head")
            conn.commit()
    return before, HEADS[engine.dialect.name]


@contextmanager
def _one_at_a_time(engine: Engine) -> Iterator[None]:
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _PG_LOCK})
            conn.commit()
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _PG_LOCK})
                conn.commit()
        return
    database = engine.url.database
    lock = Path(f"{database}.migrate.lock") if database else None
    if lock is None:  # an in-memory database: one process by definition
        yield
        return
    with file_lock(lock):
        yield
