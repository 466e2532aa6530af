"""Where queued uploads wait for a worker: in Postgres by default (docqa.store.postgres.ingest_jobs keeps the
bytes in the job's row), or in an S3-compatible object store (MinIO, S3, Ceph) when DOCQA_INGEST_UPLOAD_STORE
names one, so large files stay out of the database and its backups.

The store is named by one URL, as the database is: s3://ACCESS_KEY:SECRET_KEY@HOST[:PORT]/BUCKET, with
`?secure=false` for plain HTTP (a MinIO on the local network) and `&region=...` where the service needs one.
The bucket is made if it is missing. Errors name the store without its keys.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import parse_qs, unquote, urlparse

from docqa.core.errors import ConfigError, UploadStoreError
from docqa.core.extras import require

if TYPE_CHECKING:
    from minio import Minio

T = TypeVar("T")


class S3Uploads:
    def __init__(self, url: str) -> None:
        require("minio", "DOCQA_INGEST_UPLOAD_STORE (an S3 object store)")
        from minio import Minio  # imported where an object store is configured

        parsed = urlparse(url)
        bucket = parsed.path.strip("/")
        if parsed.scheme != "s3" or not parsed.hostname or not bucket or "/" in bucket:
            raise ConfigError(
                "DOCQA_INGEST_UPLOAD_STORE must look like s3://ACCESS_KEY:SECRET_KEY@HOST[:PORT]/BUCKET[?secure=false]"
            )
        options = {key: values[-1] for key, values in parse_qs(parsed.query).items()}
        secure = options.get("secure", "true").lower() not in ("false", "0", "no")
        host = f"{parsed.hostname}:{parsed.port}" if parsed.port else parsed.hostname
        self.location = f"s3://{host}/{bucket}"  # what errors say: no keys
        self._bucket = bucket
        self._client: Minio = Minio(
            host,
            access_key=unquote(parsed.username or ""),
            secret_key=unquote(parsed.password or ""),
            secure=secure,
            region=options.get("region"),
        )
        self._bucket_checked = False

    def put(self, key: str, data: bytes) -> None:
        def write() -> None:
            if not self._bucket_checked:
                if not self._client.bucket_exists(self._bucket):
                    self._client.make_bucket(self._bucket)
                self._bucket_checked = True
            self._client.put_object(self._bucket, key, io.BytesIO(data), len(data))

        self._guarded(write)

    def get(self, key: str) -> bytes:
        def read() -> bytes:
            response = self._client.get_object(self._bucket, key)
            try:
                return response.read()
            finally:
                response.close()
                response.release_conn()

        return self._guarded(read)

    def delete(self, key: str) -> None:
        self._guarded(lambda: self._client.remove_object(self._bucket, key))

    def keys(self, prefix: str) -> list[str]:
        """The objects' keys under a prefix (none where the bucket is not made yet)."""

        def listed() -> list[str]:
            if not self._client.bucket_exists(self._bucket):
                return []
            return [str(o.object_name) for o in self._client.list_objects(self._bucket, prefix, recursive=True)]

        return self._guarded(listed)

    def _guarded(self, action: Callable[[], T]) -> T:
        """Run an object-store call; any failure of the store or the network is UploadStoreError, named."""
        try:
            return action()
        except Exception as exc:  # minio's S3Error, urllib3's connection errors, ...
            reason = getattr(exc, "code", None) or type(exc).__name__
            raise UploadStoreError(self.location, str(reason)) from None


class S3Originals:
    """Uploaded originals in the object store, under docqa/originals/<sha256>, where one is configured: the
    files a deployment chose to keep out of its database (docqa.service.originals reads them; Postgres's
    `document_originals` holds them otherwise)."""

    def __init__(self, objects: S3Uploads) -> None:
        self._objects = objects

    @staticmethod
    def key(sha256: str) -> str:
        return f"docqa/originals/{sha256}"

    def put(self, sha256: str, data: bytes) -> None:
        self._objects.put(self.key(sha256), data)

    def get(self, sha256: str) -> bytes | None:
        try:
            return self._objects.get(self.key(sha256))
        except UploadStoreError as exc:
            if exc.reason == "NoSuchKey":
                return None
            raise

    def delete(self, sha256: str) -> None:
        self._objects.delete(self.key(sha256))

    def kept(self) -> set[str]:
        return {key.rsplit("/", 1)[-1] for key in self._objects.keys(self.key(""))}
