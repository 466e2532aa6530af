"""Upload, list and delete the documents of a collection."""

from __future__ import annotations

import mimetypes
import re
import shutil
from functools import partial
from pathlib import Path, PurePath
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request, Response
from fastapi.responses import FileResponse, JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException

from docqa.api.deps import QADep, SettingsDep
from docqa.api.staging import staging_folder, staging_root
from docqa.core.catalog_fields import parse_metadata, where_pairs
from docqa.core.documents import FileResult, Source
from docqa.core.files import (
    PACKAGE_KINDS,
    PDF_SUFFIXES,
    RTF_SUFFIXES,
    SUPPORTED_SUFFIXES,
    rtf_problem,
    staged_name,
    unsupported_type,
)
from docqa.core.requests import validate_collection_name
from docqa.service import DocQA

router = APIRouter(prefix="/v1/collections/{name}/documents", tags=["documents"])

_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\:*?\"<>|]")
MAX_NAME_CHARS = 200


def safe_filename(raw: str | None) -> str:
    """A display name that can never act as a path: last component only, no control characters."""
    name = (raw or "").replace("\\", "/").split("/")[-1]
    name = _UNSAFE.sub("_", name).strip(" .") or "upload"
    if len(name) > MAX_NAME_CHARS:
        stem, dot, suffix = name.rpartition(".")
        name = (
            (stem[: MAX_NAME_CHARS - len(suffix) - 1] + "." + suffix)
            if dot and len(suffix) <= 10
            else name[:MAX_NAME_CHARS]
        )
    return name


def distinct_names(raws: list[str | None]) -> list[str]:
    """Each upload's display name, made distinct within one request. A name is the document's key in its
    collection (a later upload of that name replaces it), so two different files sent as `contract.txt`,
    or as `a/contract.txt` and `b/contract.txt` (a folder upload), would have stored only the last: the
    second and later ones are named `contract (2).txt`, ... instead, and the report shows each name."""
    taken: set[str] = set()
    names = []
    for raw in raws:
        name = safe_filename(raw)
        stem, suffix = Path(name).stem, Path(name).suffix
        n = 1
        while name in taken:
            n += 1
            name = f"{stem} ({n}){suffix}"
        taken.add(name)
        names.append(name)
    return names


def content_problem(name: str, head: bytes) -> str | None:
    """Why the bytes do not match the file type the name claims, or None."""
    suffix = Path(name).suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        return unsupported_type(Path(name))
    if suffix in PDF_SUFFIXES:
        return None if b"%PDF-" in head[:1024] else "not a PDF (no %PDF- header)"
    if suffix in PACKAGE_KINDS:
        ok = head.startswith(b"PK\x03\x04")
        kind = PACKAGE_KINDS[suffix]
        article = "an" if kind[0] in "AEIOU" else "a"
        return None if ok else f"not {article} {kind} file ({suffix} files are ZIP packages; this is not one)"
    if suffix in RTF_SUFFIXES:
        return rtf_problem(head)
    if head.startswith((b"%PDF-", b"PK\x03\x04", b"\x7fELF", b"\x89PNG", b"\xff\xd8\xff")):
        return "binary content in a text file"
    return None


# The body is read by hand (request.form, with bounds on files and fields), so FastAPI cannot infer it: it is
# declared here for /docs, clients' generators and the fuzzer (tests/api/test_fuzz.py).
UPLOAD_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["files"],
                    "properties": {
                        "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
                        "password": {"type": "string", "description": "For encrypted PDFs; never stored."},
                        "metadata": {
                            "type": "string",
                            "description": "A JSON object of catalog fields (company, period, title, tags).",
                        },
                    },
                }
            }
        },
    }
}


@router.post(
    "",
    summary="Upload and ingest files (multipart: parts named 'files'; optional fields 'password' for encrypted PDFs "
    "and 'metadata', a JSON object of catalog fields such as company, period, title, tags)",
    openapi_extra=UPLOAD_BODY,
)
async def upload(name: str, request: Request, qa: QADep, settings: SettingsDep) -> Any:
    validate_collection_name(name)
    try:
        form = await request.form(max_files=settings.api.max_files, max_fields=20)
    except StarletteHTTPException as exc:
        if exc.detail == "Invalid multipart data.":  # python-multipart's only word on it; say more
            raise HTTPException(
                400, "invalid multipart body: malformed, or a part header over 4 kB (such as a very long file name)"
            ) from None
        raise
    try:
        uploads = [f for f in form.getlist("files") if isinstance(f, UploadFile)]
        if not uploads:
            raise HTTPException(400, "no files: send multipart form parts named 'files'")
        tmp = staging_folder(staging_root(settings.data_dir, settings.database_url))
        try:
            raw_metadata = form.get("metadata")  # catalog fields for every file of this upload
            metadata = parse_metadata(raw_metadata) if isinstance(raw_metadata, str) and raw_metadata.strip() else None
            sources, rejected = [], []
            names = distinct_names([upload.filename for upload in uploads])
            for i, (upload, display) in enumerate(zip(uploads, names, strict=True)):
                head = await upload.read(1024)
                problem = content_problem(display, head)
                if problem:  # this file fails; the others in the request are still ingested
                    rejected.append(FileResult(display, "failed", error=problem))
                    continue
                fallback = f"file{Path(display).suffix.lower()}"
                path = tmp / str(i) / staged_name(display, fallback)  # one folder a file; its name made safe
                path.parent.mkdir()
                with path.open("wb") as out:
                    out.write(head)
                    while block := await upload.read(1 << 20):
                        out.write(block)
                sources.append(Source(path, f"upload:{display}", display, metadata))
            if not sources:
                raise HTTPException(415, "; ".join(f"{f.path}: {f.error}" for f in rejected))
            given = form.get("password")  # for encrypted PDFs; never logged or stored
            password = given if isinstance(given, str) and given else None
            # A password is never kept in the database: an upload that sends one is ingested in the request.
            if qa.queues_uploads and password is None:  # kept for `docqa worker`: 202 with each job's status URL
                jobs = await run_in_threadpool(_enqueue, qa, name, sources)
                return JSONResponse(
                    {
                        "collection": name,
                        "jobs": jobs,
                        "failed": [{"path": f.path, "error": f.error} for f in rejected],
                    },
                    status_code=202,
                )
            report = await run_in_threadpool(
                partial(qa.ingest_sources, max_chars=qa.settings.api.max_upload_chars), sources, name, None, password
            )
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        await form.close()
    report.files[:0] = rejected
    return report.as_dict()


def _enqueue(qa: DocQA, collection: str, sources: list[Source]) -> list[dict[str, Any]]:
    queue = qa.ingest_queue()
    jobs = []
    for source in sources:
        job = queue.enqueue(collection, source.name, source.key, source.path.read_bytes(), source.metadata)
        jobs.append({**job.as_dict(), "status_url": job_url(collection, job.id)})
    return jobs


def origin(source: str) -> str:
    """Where a document came from, as a client may see it: the name it was uploaded under, or the last two
    parts of the path it was ingested from ("contracts/lease.pdf"), so that two documents of one name (or
    a file and its twin) can be told apart without the server's directory layout."""
    if source.startswith("upload:"):
        return f"uploaded as {source.removeprefix('upload:')}"
    return "/".join(PurePath(source).parts[-2:])


def job_url(collection: str, job_id: int) -> str:
    return f"/v1/collections/{collection}/jobs/{job_id}"


@router.get("", summary="List the documents of a collection (and, with a database, the ingest jobs still running)")
def list_documents(
    name: str,
    qa: QADep,
    where: Annotated[
        list[str] | None,
        Query(description="Only the documents whose catalog has this value, as an ask's where selects: company=3M"),
    ] = None,
) -> dict[str, Any]:
    rows = [d.as_dict() for d in qa.documents(name, where_pairs(tuple(where or ())))]
    for row in rows:
        row["origin"] = origin(str(row.pop("source", "")))  # never the server-side path itself
    listing: dict[str, Any] = {"collection": name, "documents": rows}
    if qa.settings.database_url:
        listing["jobs"] = [
            {**job.as_dict(), "status_url": job_url(name, job.id)} for job in qa.ingest_queue().active(name)
        ]
    return listing


@router.delete("/{document_id}", status_code=204, summary="Delete a document, its chunks and vectors")
def delete_document(name: str, document_id: int, qa: QADep) -> Response:
    qa.delete_document(document_id, name)
    return Response(status_code=204)


@router.get(
    "/{document_id}/file",
    summary="The file a document was read from (uploads are kept; a path's file while its bytes are unchanged)",
    response_class=FileResponse,
)
def document_file(name: str, document_id: int, qa: QADep) -> FileResponse:
    """A document's original, never as active content on docqa's origin: PDFs and pictures inline (the page's
    viewer and a citation's link show them), text as plain text, everything else (HTML, SVG, XML, Office,
    email) as a download; each under a CSP sandbox with nothing allowed (a PDF without it: Chromium's own
    viewer does not open a PDF in a sandboxed document, and runs a PDF's scripts apart from the origin)."""
    document, path = qa.original(document_id, name)
    media, disposition = served_as(document.name)
    headers = {"Cache-Control": "private, no-cache"}  # nosniff: on every response (docqa.api.cross_site)
    if media != "application/pdf":
        headers["Content-Security-Policy"] = (
            "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'"
        )
    # never the server's path as its name
    return FileResponse(
        path, media_type=media, content_disposition_type=disposition, filename=document.name, headers=headers
    )


INLINE_TYPES = frozenset({"application/pdf", "image/png", "image/jpeg", "image/gif", "image/webp"})
TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".csv", ".tsv"})


def served_as(file_name: str) -> tuple[str, str]:
    """(Content-Type, Content-Disposition type) an original is served with: an allow-list shown inline, text
    as text/plain, the rest as an opaque download."""
    suffix = Path(file_name).suffix.lower()
    if suffix in TEXT_SUFFIXES:
        return "text/plain; charset=utf-8", "inline"
    media = mimetypes.guess_type(file_name)[0] or ""
    if media in INLINE_TYPES:
        return media, "inline"
    return "application/octet-stream", "attachment"
