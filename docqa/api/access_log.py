"""The access log never holds a secret sent in a query string (`?api_key=...`, `?token=...`): such values
are replaced by `***` before uvicorn writes the line. docqa reads keys only from the Authorization header,
but a client that puts one in the URL should not leave it in the logs."""

from __future__ import annotations

import logging
import re

_SECRET = re.compile(r"([?&](?:[\w.-]*(?:key|token|secret|password|passwd|auth)[\w.-]*)=)[^&#\s]*", re.IGNORECASE)


def redact(path: str) -> str:
    return _SECRET.sub(r"\1***", path)


class RedactSecrets(logging.Filter):
    """For uvicorn's access logger, whose record args are (client, method, path, http version, status)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], redact(args[2]), *args[3:])
        return True


def install() -> None:
    """docqa's own access line per request (docqa.api.metrics.RequestCounter writes it) shown at INFO
    whatever the log level, in place of uvicorn's (which shows raw paths: off in `serve`); the redaction
    stays on uvicorn's logger for anyone who turns its access log back on."""
    logging.getLogger("uvicorn.access").addFilter(RedactSecrets())
    access = logging.getLogger("docqa.access")
    access.setLevel(logging.INFO)
    if not access.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        access.addHandler(handler)
        access.propagate = False
