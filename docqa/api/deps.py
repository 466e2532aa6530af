"""FastAPI dependencies, all in one place."""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from docqa.api.state import AppState
from docqa.core.errors import NotReadyError
from docqa.core.settings import Settings
from docqa.service import DocQA
from docqa.service.node import ModelServer


def get_state(request: Request) -> AppState:
    state: AppState = request.app.state.docqa
    return state


def get_settings(state: Annotated[AppState, Depends(get_state)]) -> Settings:
    return state.settings


# Declared so that the OpenAPI schema says how to authenticate; the key itself is checked below.
_BEARER = HTTPBearer(auto_error=False, description="One of DOCQA_API_KEYS (none configured: no key needed).")


def has_api_key(request: Request, settings: Settings) -> bool:
    """Whether the request carries one of the configured keys (none configured: every request does)."""
    keys = [k.strip().encode() for k in settings.api.keys.split(",") if k.strip()]
    if not keys:
        return True
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    given = token.strip().encode()
    # compare against every key, in constant time, so timing tells nothing about which one nearly matched
    matched = False
    for key in keys:
        matched |= hmac.compare_digest(given, key)
    return scheme.lower() == "bearer" and matched


def caller_key(request: Request, settings: Annotated[Settings, Depends(get_settings)]) -> str:
    """The API key the request was let in with ("" when none are configured): whose conversations it sees."""
    if not settings.api.keys.strip():
        return ""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def require_api_key(
    request: Request,
    settings: Annotated[Settings, Depends(get_settings)],
    _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)],
) -> None:
    """401 unless the request carries one of the configured keys (none configured: open)."""
    if not has_api_key(request, settings):
        raise HTTPException(401, "missing or wrong API key", headers={"WWW-Authenticate": "Bearer"})


def _not_ready(state: AppState) -> NotReadyError:
    if state.load_error:
        return NotReadyError(state.load_error)
    if state.waiting_for:  # which endpoint, and why, is /health's to say to a caller with a key
        return NotReadyError("waiting for the LLM endpoint to answer; retry when /health says ok")
    return NotReadyError("the models are still loading; retry when /health says ok")


def get_qa(state: Annotated[AppState, Depends(get_state)]) -> DocQA:
    if state.qa is None:
        raise _not_ready(state)
    return state.qa


def get_server(state: Annotated[AppState, Depends(get_state)]) -> ModelServer:
    server = state.server
    if server is None:
        raise _not_ready(state)
    return server


StateDep = Annotated[AppState, Depends(get_state)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
QADep = Annotated[DocQA, Depends(get_qa)]
ServerDep = Annotated[ModelServer, Depends(get_server)]
CallerKeyDep = Annotated[str, Depends(caller_key)]
