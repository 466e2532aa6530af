"""FastAPI dependencies, all in one place."""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from docqa.api.state import AppState
from docqa.core.errors import (
    AdminOnlyError,
    CollectionNotFoundError,
    DocqaError,
    NotPermittedError,
    NotReadyError,
)
from docqa.core.requests import validate_collection_name
from docqa.core.settings import Settings
from docqa.core.tenants import OPEN, Grant, environment_grant
from docqa.service import DocQA
from docqa.service.node import ModelServer


def get_state(request: Request) -> AppState:
    state: AppState = request.app.state.docqa
    return state


def get_settings(state: Annotated[AppState, Depends(get_state)]) -> Settings:
    return state.settings


# Declared so that the OpenAPI schema says how to authenticate; the key itself is checked below.
_BEARER = HTTPBearer(
    auto_error=False,
    description="A key of DOCQA_API_KEYS, or one made with `docqa keys create` (none of either: no key needed).",
)
_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _presented(request: Request) -> str:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def _environment_key(token: str, settings: Settings) -> bool:
    keys = [k.strip().encode() for k in settings.api.keys.split(",") if k.strip()]
    # compare against every key, in constant time, so timing tells nothing about which one nearly matched
    matched = False
    for key in keys:
        matched |= hmac.compare_digest(token.encode(), key)
    return matched


def grant_of(request: Request, state: AppState) -> Grant | None:
    """Who the request is (None: nobody we know: 401). No keys anywhere (neither DOCQA_API_KEYS nor a named
    key in the store): the one local user, OPEN. A named key is looked up by its hash in the store, so a key
    revoked with `docqa keys revoke` is refused from the next request."""
    token = _presented(request)
    if token and _environment_key(token, state.settings):
        return environment_grant(token)
    if state.generator_only:  # a node keeps no store: DOCQA_API_KEYS are its keys
        return None if state.settings.api.keys.strip() else OPEN
    qa = state.qa
    if qa is None:  # named keys live in the store, which opens with the models
        raise _not_ready(state)
    if token and (grant := qa.api_keys.grant(token)) is not None:
        return grant
    # no key, or one nobody made: let in only where no keys exist at all (clients send one anyway, "unused")
    if state.settings.api.keys.strip():
        return None
    state.named_keys = qa.api_keys.any_made()
    return None if state.named_keys else OPEN


def sees_details(request: Request, state: AppState) -> bool:
    """Whether /health may tell this request the details (model files, the engine's queue, why loading failed):
    an admin key, or anyone where no keys are configured. Never an error: a probe gets its status whatever
    the store says."""
    try:
        grant = grant_of(request, state)
    except NotReadyError:  # the store of named keys is not open yet: only DOCQA_API_KEYS are known
        return not state.settings.api.keys.strip()
    except DocqaError:  # the database is away: details as the last time it answered (none if it never did)
        return not state.settings.api.keys.strip() and state.named_keys is False
    return grant is not None and grant.is_admin


def caller(
    request: Request,
    state: Annotated[AppState, Depends(get_state)],
    _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)],
) -> Grant:
    """The caller's grant; 401 unless the request carries a key that is let in (no keys anywhere: open)."""
    grant = grant_of(request, state)
    if grant is None:
        raise HTTPException(401, "missing or wrong API key", headers={"WWW-Authenticate": "Bearer"})
    return grant


CallerDep = Annotated[Grant, Depends(caller)]


def readable(grant: Grant, collection: str) -> str:
    """The collection's name if the caller may read it; else the same 404 as a collection that does not exist,
    so a key learns nothing of collections it is not granted."""
    name = validate_collection_name(collection)
    if not grant.can_read(name):
        raise CollectionNotFoundError(name)
    return name


def collection_reader(name: str, grant: CallerDep) -> None:
    """Router dependency of /v1/collections/{name}/...: the caller may read the collection."""
    readable(grant, name)


def collection_writer(name: str, grant: CallerDep, request: Request) -> None:
    """Router dependency of .../documents: reads need the collection granted, changes a key that may write."""
    readable(grant, name)
    if request.method in _WRITES and not grant.can_write(name):
        raise NotPermittedError(name, "upload or delete documents")


def admin_only(grant: CallerDep) -> None:
    """Routes that speak of every collection at once (metrics): admin keys only."""
    if not grant.is_admin:
        raise AdminOnlyError("this route (it spans every collection)")


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
