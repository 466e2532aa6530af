"""Alembic's entry point for docqa's Postgres schema. docqa runs it itself (docqa.store.postgres.schema):
the connection comes in `config.attributes`, never from an alembic.ini."""

from __future__ import annotations

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, transaction_per_migration=True)
with context.begin_transaction():
    context.run_migrations()
