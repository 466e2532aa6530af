"""Bringing a Postgres database to docqa's schema with Alembic (`docqa db upgrade`, and at start).

The migrations live in docqa.store.postgres.migrations and run on the connection given here; an
advisory lock lets several API processes and workers start at once, one of them migrating.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, text

if TYPE_CHECKING:
    from alembic.config import Config

# Alembic is imported where it is used: it costs ~0.1 s, which every `docqa` command on SQLite would pay.

_MIGRATIONS = Path(__file__).parent / "migrations"
_LOCK = 7_410_000_001  # pg_advisory_lock key: one process migrates at a time


def _config() -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    return config


def head() -> str:
    """The newest revision this docqa knows."""
    from alembic.script import ScriptDirectory

    found = ScriptDirectory.from_config(_config()).get_current_head()
    assert found is not None
    return found


def current(engine: Engine) -> str | None:
    """The database's revision (None: docqa's tables were never made there)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine) -> tuple[str | None, str]:
    """Apply the migrations the database lacks; returns (revision before, revision after)."""
    from alembic import command
    from alembic.runtime.migration import MigrationContext

    config = _config()
    with engine.connect() as conn:
        conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _LOCK})
        try:
            before = MigrationContext.configure(conn).get_current_revision()
            conn.commit()
            config.attributes["connection"] = conn
            command.upgrade(config, "head")
            conn.commit()
        finally:
            conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _LOCK})
            conn.commit()
    return before, head()
