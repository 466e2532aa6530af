"""Where uploads wait while they are ingested: inside the data home (`<data_dir>/uploads/`), in a folder
named by the process that made it, so that a server killed mid-upload (kill -9 runs no cleanup) leaves
nothing in the system's temp folder, and the next server clears what dead processes left (never the
folders of a live one: several docqa processes may share a data home)."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)
PREFIX = "docqa-upload-"


def staging_root(data_dir: Path, database_url: str | None) -> Path:
    """`<data_dir>/uploads`; with a database, where a data home may never be made (./indexes in whatever
    folder the server started in), the system's temp folder's `docqa-uploads`."""
    return Path(tempfile.gettempdir()) / "docqa-uploads" if database_url else data_dir / "uploads"


def staging_folder(root: Path) -> Path:
    """A new folder for one upload's files."""
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=root))


def clear_stale(root: Path) -> int:
    """Remove the upload folders of processes that are gone; returns how many."""
    removed = 0
    for folder in root.glob(f"{PREFIX}*") if root.is_dir() else []:
        pid = folder.name[len(PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and _alive(int(pid)):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    if removed:
        logger.warning("removed %d upload folders left by stopped docqa processes in %s", removed, root)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True
