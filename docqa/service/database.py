"""The store's schema (`docqa db upgrade`, `docqa db status`): the Postgres database DOCQA_DATABASE_URL names,
or else the data home's SQLite file."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine, create_engine
from sqlalchemy.exc import OperationalError

from docqa.core.errors import DatabaseUnavailableError, DataHomeNotFoundError
from docqa.core.extras import require
from docqa.core.settings import Settings
from docqa.store import schema
from docqa.store.db import make_data_home, sqlite_engine


@dataclass(frozen=True)
class SchemaState:
    location: str  # the URL without its password
    before: str | None  # the revision found (None: docqa's tables were not there)
    after: str | None  # the revision left (the same as before for `status`)
    head: str  # the newest revision this docqa knows


def _engine(settings: Settings, *, create: bool) -> Engine:
    if settings.database_url:
        require("psycopg", "DOCQA_DATABASE_URL (a Postgres store)")
        require("procrastinate", "DOCQA_DATABASE_URL (its schema holds the ingestion queue's)")
        return create_engine(settings.database_url, hide_parameters=True)
    if not create and not settings.database_path.is_file():
        raise DataHomeNotFoundError(str(settings.data_dir.resolve()))
    make_data_home(settings.database_path)
    return sqlite_engine(settings.database_path)


def database_status(settings: Settings) -> SchemaState:
    engine = _engine(settings, create=False)
    try:
        found = schema.current(engine)
        return SchemaState(_shown(engine), found, found, schema.HEADS[engine.dialect.name])
    except OperationalError as exc:  # down, refused, no such database: one line, not a driver's traceback
        raise DatabaseUnavailableError.said_by(_shown(engine), exc.orig) from None
    finally:
        engine.dispose()


def upgrade_database(settings: Settings) -> SchemaState:
    """Apply the migrations the store lacks (safe while other docqa processes run: one migrates at a time)."""
    engine = _engine(settings, create=True)
    try:
        before, after = schema.upgrade(engine)
        return SchemaState(_shown(engine), before, after, schema.HEADS[engine.dialect.name])
    except OperationalError as exc:
        raise DatabaseUnavailableError.said_by(_shown(engine), exc.orig) from None
    finally:
        engine.dispose()


def _shown(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=True)
