"""Optional dependencies: Postgres (psycopg, procrastinate) and an S3 object store (minio) are extras
(`pip install 'docqa[postgres]'`, `'docqa[s3]'`), so a one-laptop SQLite install carries none of them. They
are imported only where the settings choose them; `require` turns a missing one into an error naming the
extra and the setting that needs it."""

from __future__ import annotations

import importlib.util

from docqa.core.errors import ConfigError

EXTRAS = {"psycopg": "postgres", "procrastinate": "postgres", "minio": "s3"}


class MissingExtraError(ConfigError):
    def __init__(self, module: str, needed_by: str) -> None:
        extra = EXTRAS[module]
        super().__init__(
            f"{needed_by} needs docqa's '{extra}' extra ({module} is not installed): pip install 'docqa[{extra}]'"
        )


def require(module: str, needed_by: str) -> None:
    """Raise MissingExtraError when `module` (one of EXTRAS) cannot be imported."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a module set to None in sys.modules (blocked), or a broken one
        found = False
    if not found:
        raise MissingExtraError(module, needed_by)
