"""Queued uploads in an S3-compatible object store (DOCQA_INGEST_UPLOAD_STORE) instead of the database:
the job's row keeps only the object's key, the worker reads the file from the store, the object is deleted
once the document is in; a store that cannot be reached is an error naming it, without its keys."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest
from minio import Minio
from sqlalchemy import text

from docqa.core.errors import UploadStoreError
from docqa.core.settings import IngestSettings
from docqa.service import DocQA
from tests.support.paths import SAMPLE_DOCS, make_settings

BUCKET = "docqa-uploads"


def _store_url(host: str) -> str:
    return f"s3://test-key:test-secret@{host}/{BUCKET}?secure=false"


def test_a_queued_upload_waits_in_the_object_store_and_is_deleted_once_ingested(
    tmp_path: Path, postgres_url: str, s3_server: str
) -> None:
    ingest = IngestSettings(upload_store=_store_url(s3_server))
    with DocQA(make_settings(tmp_path, database_url=postgres_url, ingest=ingest)) as qa:
        queue = qa.ingest_queue()
        data = (SAMPLE_DOCS / "services_agreement_en.txt").read_bytes()
        job = queue.enqueue("deals", "contract.txt", "upload:contract.txt", data)
        with qa.store.session() as s:
            row = s.execute(text("SELECT data, object_key FROM ingest_jobs WHERE id = :id"), {"id": job.id}).one()
        assert row.data is None and row.object_key.endswith("/contract.txt")  # not a byte in the database
        client = Minio(s3_server, access_key="test-key", secret_key="test-secret", secure=False)
        stored = client.get_object(BUCKET, row.object_key)
        assert stored.read() == data
        stored.close()
        queue.run(job.id)  # what a worker does with it
        done = queue.job(job.id)
        assert done.status == "ready" and done.document_id is not None
        assert [d.name for d in qa.documents("deals")] == ["contract.txt"]
        # the upload's object is gone; its original is kept in the store too, for any API process to serve
        original = f"docqa/originals/{hashlib.sha256(data).hexdigest()}"
        assert [o.object_name for o in client.list_objects(BUCKET, recursive=True)] == [original]
    with DocQA(make_settings(tmp_path / "another_api", database_url=postgres_url, ingest=ingest)) as other:
        _, path = other.original(done.document_id, "deals")
        assert path.read_bytes() == data and path.is_relative_to(tmp_path / "another_api")
        assert other.originals.shared is not None
        assert other.originals.shared.kept() == {hashlib.sha256(data).hexdigest()}
        assert not [r for r in other.check() if r.collection == "(all collections)"]  # held: no problem
        with other.store.session() as s:  # in the object store, not in the database as well
            assert s.execute(text("SELECT count(*) FROM document_originals")).scalar() == 0
        other.delete_document(done.document_id, "deals")
    assert [o.object_name for o in client.list_objects(BUCKET, recursive=True)] == []


def test_an_unreachable_object_store_is_named_without_its_keys(tmp_path: Path, postgres_url: str) -> None:
    ingest = IngestSettings(upload_store="s3://test-key:test-secret@127.0.0.1:1/uploads?secure=false")
    with DocQA(make_settings(tmp_path, database_url=postgres_url, ingest=ingest)) as qa:
        started = time.monotonic()
        with pytest.raises(UploadStoreError) as caught:
            qa.ingest_queue().enqueue("deals", "a.txt", "upload:a.txt", b"Some text.")
        assert time.monotonic() - started < 60
    assert "s3://127.0.0.1:1/uploads" in str(caught.value) and "secret" not in str(caught.value)
