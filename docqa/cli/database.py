"""`docqa db upgrade` and `docqa db status`: the store's schema (registered in docqa.cli.main)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from docqa.cli.options import common_options, emit_json, make_settings
from docqa.service.database import SchemaState, database_status, upgrade_database

NEEDS_UPGRADE = 3  # `docqa db status`'s exit code when the schema is behind


@click.group("db")
def db() -> None:
    """The store's schema: the Postgres database DOCQA_DATABASE_URL names, else the data home's SQLite file."""


def _report(state: SchemaState, as_json: bool, verb: str) -> None:
    if as_json:
        emit_json({"database": state.location, "before": state.before, "revision": state.after, "head": state.head})
        return
    click.echo(f"{state.location}: {verb}")


@db.command("upgrade")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
def upgrade(as_json: bool, data_dir: Path | None, verbose: bool) -> None:
    """Create docqa's tables, or bring them to this version's schema. API processes and workers also do
    this at start; running it first lets a deployment fail early and once."""
    state = upgrade_database(make_settings(data_dir, verbose))
    verb = (
        f"already at schema {state.after}"
        if state.before == state.after
        else f"schema {state.before or '(none)'} -> {state.after}"
    )
    _report(state, as_json, verb)


@db.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
def status(as_json: bool, data_dir: Path | None, verbose: bool) -> None:
    """Which schema revision the database has, and which this docqa needs. Exits 3 when it needs
    `docqa db upgrade`, so that a deployment script can tell."""
    state = database_status(make_settings(data_dir, verbose))
    current = "up to date" if state.after == state.head else "needs `docqa db upgrade`"
    _report(state, as_json, f"schema {state.after or '(none)'}, this docqa needs {state.head}: {current}")
    if state.after != state.head:
        sys.exit(NEEDS_UPGRADE)
