"""FastAPI dependencies, all in one place."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from docqa.api.state import AppState
from docqa.errors import NotReadyError
from docqa.service import DocQA
from docqa.settings import Settings


def get_state(request: Request) -> AppState:
    state: AppState = request.app.state.docqa
    return state


def get_settings(state: Annotated[AppState, Depends(get_state)]) -> Settings:
    return state.settings


def get_qa(state: Annotated[AppState, Depends(get_state)]) -> DocQA:
    if state.qa is None:
        raise NotReadyError(state.load_error or "the models are still loading; retry when /health says ok")
    return state.qa


StateDep = Annotated[AppState, Depends(get_state)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
QADep = Annotated[DocQA, Depends(get_qa)]
