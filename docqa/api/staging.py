"""Where uploads wait while they are ingested: inside the data home (`<data_dir>/uploads/`), in a folder
named by the process that made it, so that a server killed mid-upload (kill -9 runs no cleanup) leaves
nothing in the system's temp folder, and the next server clears what dead processes left (never the
folders of a live one: several docqa processes may share a data home)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from docqa.core import process_folders
from docqa.core.process_folders import process_folder

PREFIX = "docqa-upload-"


def staging_root(data_dir: Path, database_url: str | None) -> Path:
    """`<data_dir>/uploads`; with a database, where a data home may never be made (./indexes in whatever
    folder the server started in), the system's temp folder's `docqa-uploads`."""
    return Path(tempfile.gettempdir()) / "docqa-uploads" if database_url else data_dir / "uploads"


def staging_folder(root: Path) -> Path:
    """A new folder for one upload's files."""
    return process_folder(root, PREFIX)


def clear_stale(root: Path) -> int:
    """Remove the upload folders of processes that are gone; returns how many."""
    return process_folders.clear_stale(root, PREFIX)
