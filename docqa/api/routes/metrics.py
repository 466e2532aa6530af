"""GET /metrics: Prometheus text format (needs the API key when keys are configured)."""

from __future__ import annotations

from fastapi import APIRouter, Response

from docqa.api.deps import StateDep
from docqa.api.metrics import CONTENT_TYPE

router = APIRouter(tags=["metrics"])


@router.get("/metrics", summary="Prometheus metrics", response_class=Response)
def metrics(state: StateDep) -> Response:
    assert state.metrics is not None
    return Response(state.metrics.render(), media_type=CONTENT_TYPE)
