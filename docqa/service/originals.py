"""The files documents were read from, kept so that a viewer can show a cited page as the file draws it.

A file ingested from a path is read from that path again (when its bytes are still the ones ingested); an
uploaded file would be gone, so its bytes are kept under the data home, named by their SHA-256 (two documents
with the same bytes share one copy) and removed when no document of the store holds those bytes any more.
Queued uploads (a shared database) are read by workers elsewhere and are not kept here.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from docqa.core.errors import OriginalNotKeptError
from docqa.core.files import sha256_file
from docqa.store.models import DocumentRow


class Originals:
    """Uploaded originals under `root`, one file per content (root/ab/abcdef...)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def keep(self, sha256: str, source: Path) -> None:
        """Keep a copy of an uploaded file (written aside, then renamed: a crash leaves no half file)."""
        target = self._path(sha256)
        if target.is_file():
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".part")
        shutil.copyfile(source, partial)
        partial.replace(target)

    def forget(self, sha256: str) -> None:
        self._path(sha256).unlink(missing_ok=True)

    def of(self, document: DocumentRow) -> Path:
        """Where the document's original is now; OriginalNotKeptError where there is none with its bytes."""
        if document.source.startswith("upload:"):
            kept = self._path(document.sha256)
            if kept.is_file():
                return kept
            raise OriginalNotKeptError(
                document.name, "its upload was not kept (queued, or ingested before docqa kept them)"
            )
        path = Path(document.source)
        try:
            same = path.is_file() and sha256_file(path) == document.sha256
        except OSError:
            same = False
        if not same:
            raise OriginalNotKeptError(document.name, f"{path} is gone or changed since it was ingested")
        return path
