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
    gen, emb = state.qa.generator, state.qa.embedder
    memory_report = getattr(gen, "memory_report", None)  # the batching engine's KV cache and queue
    return JSONResponse(
        {
            "status": "ok",
            "generator": gen.info.model_id if gen else None,
            "embedder": emb.model_id if emb else None,
            "reranker": state.qa.reranker.model_id if state.qa.reranker else None,
            "engine": memory_report() if memory_report else {"kind": "serial"},
        }
    )
