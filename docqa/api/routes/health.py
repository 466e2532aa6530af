"""GET /health: 503 while the models load (or failed to) and while shutting down; 200 when docqa can answer."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from docqa.api.deps import StateDep

router = APIRouter(tags=["health"])


@router.get("/health", summary="Readiness: 200 when the models are loaded")
def health(state: StateDep) -> JSONResponse:
    if state.draining.is_set():  # tell load balancers first, while in-flight requests finish
        return JSONResponse({"status": "draining", "detail": "shutting down"}, status_code=503)
    if state.qa is None:
        status = "error" if state.load_error else "loading"
        return JSONResponse({"status": status, "detail": state.load_error}, status_code=503)
    loaded = state.qa.status()
    return JSONResponse(
        {
            "status": "ok",
            "generator": loaded.generator,
            "embedder": loaded.embedder,
            "reranker": loaded.reranker,
            "engine": loaded.engine.as_dict() if loaded.engine else None,  # its queue, and KV cache where it has one
        }
    )
