"""Secrets in query strings never reach the access log."""

from __future__ import annotations

import logging

from docqa.api.access_log import RedactSecrets, redact


def test_secret_query_values_are_redacted_and_the_rest_kept() -> None:
    assert redact("/v1/ask?api_key=s3cret&x=1") == "/v1/ask?api_key=***&x=1"
    assert redact("/health?token=abc&API-KEY=def&password=p") == "/health?token=***&API-KEY=***&password=***"
    assert redact("/v1/collections/keyboard/documents?limit=5") == "/v1/collections/keyboard/documents?limit=5"


def test_the_filter_rewrites_uvicorn_s_access_record() -> None:
    record = logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", "/metrics?key=top-secret", "1.1", 200), None,
    )  # fmt: skip
    assert RedactSecrets().filter(record)
    assert "top-secret" not in record.getMessage() and "/metrics?key=***" in record.getMessage()
