"""Domain errors -> HTTP responses, in one place. Clients never see tracebacks or file paths."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from docqa.core.errors import BusyError, DiskFullError, DocqaError, is_disk_full

logger = logging.getLogger(__name__)
MAX_PROBLEMS = 10  # a body with a thousand bad fields is described by its first ten


def error_body(kind: str, message: str) -> dict[str, dict[str, str]]:
    """docqa's error shape. A message that names what the client sent may hold a lone surrogate ("\\ud800",
    which JSON carries and no encoder writes): it is written escaped, never as a 500."""
    return {"error": {"type": kind, "message": message.encode("utf-8", "backslashreplace").decode("utf-8")}}


async def docqa_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, DocqaError)
    headers = {"Retry-After": str(exc.retry_after_s)} if isinstance(exc, BusyError) else None
    public = getattr(exc, "public_message", None)  # an error whose own message names server paths
    if public is not None:
        logger.warning("%s", exc)
    return JSONResponse(
        error_body(type(exc).__name__, public or str(exc)), status_code=exc.http_status, headers=headers
    )


async def http_error(_request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's own HTTP errors (401, 413, 415, 400, ...) in docqa's error shape."""
    assert isinstance(exc, StarletteHTTPException)
    return JSONResponse(
        error_body("HTTPError", str(exc.detail)), status_code=exc.status_code, headers=getattr(exc, "headers", None)
    )


async def validation_error(_request: Request, exc: Exception) -> JSONResponse:
    """A request that does not fit its schema: 422 in docqa's error shape, naming each field and what is
    wrong with it, never echoing the input (it may be 20 MB, or a NaN that JSON cannot write)."""
    assert isinstance(exc, RequestValidationError)
    problems = []
    for error in exc.errors()[:MAX_PROBLEMS]:
        field = ".".join(str(part) for part in error.get("loc", ()) if part != "body") or "body"
        problems.append(f"{field}: {error.get('msg', 'invalid')}")
    return JSONResponse(error_body("ValidationError", "; ".join(problems)[:2000]), status_code=422)


async def unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    if is_disk_full(exc):
        return _disk_full(request)
    logger.exception("unhandled error", exc_info=exc)
    return JSONResponse(error_body("InternalError", "internal error; see the server log"), status_code=500)


async def resource_error(request: Request, exc: Exception) -> Response:
    """An OS or database error: a full disk is a 507 here, answered like any handled error (counted and
    logged as the 507 it is, with no traceback); anything else goes on to unexpected_error, a 500."""
    if is_disk_full(exc):
        return _disk_full(request)
    raise exc


def _disk_full(request: Request) -> JSONResponse:
    """507, and what to do: nothing was committed half (one transaction a file)."""
    data_dir = request.app.state.docqa.settings.data_dir
    logger.error("disk full at %s", data_dir)
    message = f"disk full at {data_dir}: nothing was written; free space and retry"
    return JSONResponse(error_body(DiskFullError.__name__, message), status_code=DiskFullError.http_status)


async def client_gone(_request: Request, _exc: Exception) -> Response:
    """The client left while its body was read (an upload cut off): nobody reads this answer; it is counted
    and logged as 499, nginx's code for it, not as a 500 with a traceback."""
    return Response(status_code=499)


def install(app: FastAPI) -> None:
    app.add_exception_handler(DocqaError, docqa_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(OSError, resource_error)
    app.add_exception_handler(OperationalError, resource_error)
    app.add_exception_handler(ClientDisconnect, client_gone)
    app.add_exception_handler(Exception, unexpected_error)
