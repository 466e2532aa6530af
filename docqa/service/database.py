"""Managing the shared database behind DOCQA_DATABASE_URL (`docqa db upgrade`, `docqa db status`)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import create_engine

from docqa.core.errors import NoDatabaseError
from docqa.core.settings import Settings
from docqa.store.postgres import schema


@dataclass(frozen=True)
class SchemaState:
    location: str  # the URL without its password
    before: str | None  # the revision found (None: docqa's tables were not there)
    after: str | None  # the revision left (the same as before for `status`)
    head: str  # the newest revision this docqa knows


def _url(settings: Settings) -> str:
    if not settings.database_url:
        raise NoDatabaseError()
    return settings.database_url


def database_status(settings: Settings) -> SchemaState:
    engine = create_engine(_url(settings), hide_parameters=True)
    try:
        found = schema.current(engine)
        return SchemaState(engine.url.render_as_string(hide_password=True), found, found, schema.head())
    finally:
        engine.dispose()


def upgrade_database(settings: Settings) -> SchemaState:
    """Apply the migrations the database lacks (safe while other docqa processes run: one migrates at a time)."""
    engine = create_engine(_url(settings), hide_parameters=True)
    try:
        before, after = schema.upgrade(engine)
        return SchemaState(engine.url.render_as_string(hide_password=True), before, after, schema.head())
    finally:
        engine.dispose()
