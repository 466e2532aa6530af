"""GET /health: 503 while the models load (or failed to, or wait for their LLM endpoint), while shutting down,
and while the database or the LLM endpoint does not answer ("degraded", naming which); 200 when docqa can answer.
Open to load balancers; with API keys, only a request with an admin key sees the details (model files,
the engine's queue, why loading failed)."""

from __future__ import annotations

import os

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from docqa.api.deps import StateDep, sees_details

router = APIRouter(tags=["health"])


@router.get("/health", summary="Readiness: 200 when the models are loaded")
def health(state: StateDep, request: Request) -> JSONResponse:
    details = sees_details(request, state)
    if state.draining.is_set():  # tell load balancers first, while in-flight requests finish
        return JSONResponse({"status": "draining", "detail": "shutting down"}, status_code=503)
    served = state.server
    if served is None:
        status = "error" if state.load_error else "loading"
        detail = state.load_error or state.waiting_for
        return JSONResponse({"status": status, "detail": detail if details else None}, status_code=503)
    down = state.qa.down() if state.qa is not None else {}
    if down:  # what an ask needs does not answer: asks would fail 502/503, so a balancer should look elsewhere
        return JSONResponse(
            {"status": "degraded", "down": sorted(down), "detail": down if details else None}, status_code=503
        )
    if not details:
        return JSONResponse({"status": "ok"})
    loaded = served.status()
    return JSONResponse(
        {
            "status": "ok",
            "mode": "generator-only" if state.generator_only else "full",
            "process": os.getpid(),  # under `serve --workers N`, each process answers for itself
            "generator": loaded.generator,
            "embedder": loaded.embedder,
            "reranker": loaded.reranker,
            "engine": loaded.engine.as_dict() if loaded.engine else None,  # its queue, and KV cache where it has one
        }
    )
