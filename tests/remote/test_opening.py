"""The hand-off of an upstream request's opening (docqa.remote.opening): pure logic, no server."""

from __future__ import annotations

import threading
import time

from docqa.core.errors import BusyError
from docqa.remote.opening import Opening


def test_an_outcome_within_the_wait_is_the_caller_s() -> None:
    opening = Opening()
    refused = BusyError("busy")
    threading.Timer(0.05, opening.settle, args=(refused,)).start()
    assert opening.wait(5.0) is refused


def test_an_open_request_gives_the_caller_no_error() -> None:
    opening = Opening()
    assert opening.settle() is True
    assert opening.wait(0.0) is None


def test_an_outcome_after_the_wait_is_left_to_the_stream() -> None:
    opening = Opening()
    started = time.monotonic()
    assert opening.wait(0.05) is None
    assert time.monotonic() - started >= 0.05
    assert opening.settle(BusyError("busy")) is False  # the caller is gone: the stream must say it
