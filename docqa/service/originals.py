"""The files documents were read from, kept so that a viewer can show a cited page as the file draws it.

A file ingested from a path is read from that path again (when its bytes are still the ones ingested); an
uploaded file would be gone, so its bytes are kept under the data home, named by their SHA-256 (two documents
with the same bytes share one copy) and removed when no document of the store holds those bytes any more.

With a shared database the process that ingests an upload (a worker, for a queued one) is often not the one
asked for its file: the bytes are then also kept where every process reads them (`shared`: the database,
docqa.store.postgres.originals, or the object store that uploads wait in, docqa.store.uploads.S3Originals),
and an API process that has no copy reads them from there once and keeps them under its own data home. A
copy another API process read stays there after its last document is deleted elsewhere (only documents of
the store can reach it).
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from docqa.core.errors import OriginalNotKeptError
from docqa.core.files import sha256_file
from docqa.store.models import DocumentRow
from docqa.store.protocol import Store

ORIGINAL_GRACE_S = 3600  # a kept original this young may belong to an upload still being ingested


class SharedOriginals(Protocol):
    """Originals where every process of a deployment reads them (the shared database or object store)."""

    def put(self, sha256: str, data: bytes) -> None: ...

    def get(self, sha256: str) -> bytes | None: ...

    def delete(self, sha256: str) -> None: ...

    def kept(self) -> set[str]: ...


class Originals:
    """Uploaded originals under `root`, one file per content (root/ab/abcdef...), and in `shared` if given."""

    def __init__(self, root: Path, shared: SharedOriginals | None = None) -> None:
        self.root = root
        self.shared = shared
        self._pinned: Counter[str] = Counter()  # contents kept for uploads being ingested in this process
        self._pins = threading.Lock()

    @contextmanager
    def pinned(self, shas: Sequence[str]) -> Iterator[None]:
        """While an upload is ingested, its kept bytes are not forgotten: deleting another document with the same
        bytes meanwhile (no document holds them yet) removed the file the upload was about to become."""
        with self._pins:
            self._pinned.update(shas)
        try:
            yield
        finally:
            with self._pins:
                self._pinned.subtract(shas)
                self._pinned = +self._pinned

    def is_pinned(self, sha256: str) -> bool:
        with self._pins:
            return self._pinned[sha256] > 0

    def _path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def keep(self, sha256: str, source: Path) -> None:
        """Keep a copy of an uploaded file (written aside, then renamed: a crash leaves no half file)."""
        target = self._path(sha256)
        if not target.is_file():
            self._write_aside(target, lambda partial: shutil.copyfile(source, partial))
        if self.shared is not None:
            self.shared.put(sha256, target.read_bytes())

    def forget(self, sha256: str) -> None:
        self._path(sha256).unlink(missing_ok=True)
        if self.shared is not None:
            self.shared.delete(sha256)

    def kept(self) -> set[str]:
        """The contents kept, here and in `shared`."""
        here = {p.name for p in self.root.glob("??/*") if p.is_file() and len(p.name) == 64}
        return here | (self.shared.kept() if self.shared is not None else set())

    def recent(self, sha256: str) -> bool:
        """Whether this content was kept here in the last ORIGINAL_GRACE_S (its upload may be being ingested)."""
        try:
            return time.time() - self._path(sha256).stat().st_mtime < ORIGINAL_GRACE_S
        except OSError:
            return False

    def _from_shared(self, sha256: str) -> Path | None:
        """The shared copy, written under this data home, or None."""
        data = self.shared.get(sha256) if self.shared is not None else None
        if data is None:
            return None
        target = self._path(sha256)
        self._write_aside(target, lambda partial: partial.write_bytes(data))
        return target

    @staticmethod
    def _write_aside(target: Path, write: Callable[[Path], object]) -> None:
        """Write beside the target, then rename: a crash leaves no half file, and two processes fetching
        one original at once (each its own partial file) leave the same bytes."""
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.part")
        write(partial)
        partial.replace(target)

    def of(self, document: DocumentRow) -> Path:
        """Where the document's original is now; OriginalNotKeptError where there is none with its bytes."""
        if document.source.startswith("upload:"):
            kept = self._path(document.sha256)
            if kept.is_file():
                return kept
            fetched = self._from_shared(document.sha256)
            if fetched is not None:
                return fetched
            raise OriginalNotKeptError(
                document.name, "its uploaded file was not kept (ingested before docqa kept uploads): upload it again"
            )
        path = Path(document.source)
        try:
            same = path.is_file() and sha256_file(path) == document.sha256
        except OSError:
            same = False
        if not same:
            raise OriginalNotKeptError(document.name, f"{path} is gone or changed since it was ingested")
        return path


def forget_unheld(originals: Originals, store: Store, shas: Sequence[str]) -> None:
    """Drop the kept originals of these contents where no document of the store holds them any more."""
    for sha in set(shas):
        if originals.is_pinned(sha):  # an upload of these bytes is being ingested here
            continue
        if not any(store.document_with_content(c.id, sha, other_than="") for c in store.collections()):
            originals.forget(sha)


def unheld_originals(originals: Originals, store: Store, repair: bool) -> list[str]:
    """Kept originals that no document holds (a process killed mid-upload: uploads are kept before they are
    ingested), and uploaded documents whose original is kept nowhere. Originals kept in the last
    ORIGINAL_GRACE_S here may belong to an upload being ingested now: neither listed nor removed."""
    kept = originals.kept()
    documents = [d for c in store.collections() for d in store.documents(c.id)]
    unheld = sorted(sha for sha in kept - {d.sha256 for d in documents} if not originals.recent(sha))
    if repair:
        for sha in unheld:
            originals.forget(sha)
    problems = [f"{len(unheld)} kept original file(s) that no document holds"] if unheld else []
    missing = [
        d.name for d in documents if d.source.startswith("upload:") and d.status == "ready" and d.sha256 not in kept
    ]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        problems.append(f"{len(missing)} uploaded document(s) whose file was not kept ({shown}): upload them again")
    return problems
