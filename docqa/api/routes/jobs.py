"""Ingest jobs' status (with DOCQA_DATABASE_URL, uploads are queued: docqa.service.jobs)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from docqa.api.deps import QADep
from docqa.api.routes.documents import job_url

router = APIRouter(prefix="/v1/collections/{name}/jobs", tags=["documents"])


@router.get("/{job_id}", summary="An ingest job: queued, parsing, embedding, ready or failed, with its progress")
def job_status(name: str, job_id: int, qa: QADep) -> dict[str, Any]:
    job = qa.ingest_queue().job(job_id, name)
    return {**job.as_dict(), "collection": name, "status_url": job_url(name, job.id)}


@router.get("", summary="The collection's ingest jobs still queued or running, and those ended in the last hour")
def recent_jobs(name: str, qa: QADep) -> dict[str, Any]:
    return {
        "collection": name,
        "jobs": [{**job.as_dict(), "status_url": job_url(name, job.id)} for job in qa.ingest_queue().recent(name)],
    }
