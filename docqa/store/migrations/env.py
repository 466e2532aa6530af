"""Alembic's entry point for docqa's schemas (docqa.store.schema runs it: the connection comes in
`config.attributes`, never from an alembic.ini; each database's revisions are in their own folder)."""

from __future__ import annotations

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, transaction_per_migration=True, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
