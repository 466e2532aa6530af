"""The FastAPI application: `create_app(settings)`; `docqa serve` runs it with uvicorn."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version

from fastapi import Depends, FastAPI
from starlette.concurrency import run_in_threadpool

from docqa.api import errors, staging
from docqa.api.cross_site import CrossSiteGuard
from docqa.api.deps import admin_only, caller, collection_reader, collection_writer
from docqa.api.draining import InFlight
from docqa.api.limits import BodySizeLimit
from docqa.api.metrics import Metrics, RequestCounter
from docqa.api.routes import (
    api_docs,
    ask,
    collections,
    completions,
    conversations,
    documents,
    health,
    jobs,
    metrics,
    openai_compat,
    web,
)
from docqa.api.state import AppState
from docqa.core.settings import Settings


def docqa_version() -> str:
    """pyproject.toml's version, the one version string, as the installed package records it; a source tree
    run without installing (PYTHONPATH, as the GPU benches run it) has no record and says so."""
    try:
        return version("docqa")
    except PackageNotFoundError:
        return "0+not-installed"


def create_app(settings: Settings | None = None, *, state: AppState | None = None, owns_state: bool = False) -> FastAPI:
    """Build the app. Models load in a background thread at startup; pass `state` to reuse loaded ones
    (the app then leaves them open at shutdown, unless `owns_state`)."""
    app_state = state or AppState(settings or Settings.load())
    owned = state is None or owns_state

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if not app_state.generator_only:  # a node has no data home
            settings = app_state.settings  # what a killed server left mid-upload goes
            staging.clear_stale(staging.staging_root(settings.data_dir, settings.database_url))
        if app_state.server is None and not app_state.loaded.is_set():
            threading.Thread(target=app_state.load, name="docqa-model-loader", daemon=True).start()
        yield
        if owned:
            await run_in_threadpool(app_state.close)

    keyed = bool(app_state.settings.api.keys.strip())
    app = FastAPI(
        title="docqa",
        version=docqa_version(),
        description="Ask questions about your documents; answers cite document names and pages.",
        lifespan=lifespan,
        # With API keys the schema is behind a key too (GET /openapi.json), and the browser pages, which
        # cannot send one, are off.
        docs_url=None,  # served from local files below (api_docs): FastAPI's loads from a CDN
        redoc_url=None,
        openapi_url=None if keyed else "/openapi.json",
    )
    app.state.docqa = app_state
    app_state.metrics = Metrics(lambda: app_state.qa, lambda: app_state.in_flight)
    if app_state.qa is not None:
        app_state.metrics.attach(app_state.qa)
    errors.install(app)
    app.include_router(health.router)  # open: load balancers probe it without a key
    authenticated = [Depends(caller)]  # and each route asks the caller's grant (docqa.api.deps)
    if not app_state.generator_only:  # a generation node serves only its models (completions, embeddings)
        web.mount(app)  # the page itself is open; its API calls carry the key
        app.include_router(collections.router, dependencies=authenticated)
        app.include_router(documents.router, dependencies=[Depends(collection_writer)])
        app.include_router(jobs.router, dependencies=[Depends(collection_reader)])
        app.include_router(ask.router, dependencies=authenticated)
        app.include_router(conversations.router, dependencies=[Depends(collection_reader)])
        app.include_router(openai_compat.router, dependencies=authenticated)
    else:
        app.include_router(completions.models_router, dependencies=authenticated)
    app.include_router(completions.router, dependencies=authenticated)
    app.include_router(metrics.router, dependencies=[Depends(admin_only)])
    if keyed:
        app.add_api_route("/openapi.json", lambda: app.openapi(), dependencies=authenticated, include_in_schema=False)
    else:
        api_docs.mount(app, "/openapi.json")
    app.add_middleware(
        BodySizeLimit,
        max_bytes=app_state.settings.max_upload_mb * 2**20,
        max_json_bytes=app_state.settings.api.max_json_mb * 2**20,
    )
    allowed_hosts = app_state.settings.api.allowed_hosts.split(",")
    app.add_middleware(CrossSiteGuard, open_without_keys=not keyed, allowed_hosts=allowed_hosts)
    app.add_middleware(InFlight, state=app_state)  # refuses work first when draining
    app.add_middleware(RequestCounter, metrics=app_state.metrics)  # outermost: counts 413s and 503s too
    return app
