"""Folders named by the process that made them ("docqa-upload-<pid>-...", "docqa-job-<pid>-..."), so that what
a process killed with kill -9 (which runs no cleanup) left behind is found and removed by the next one, and
never the folder of a live process: several docqa processes may share a data home or a temp folder."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)


def process_folder(root: Path, prefix: str) -> Path:
    """A new folder under root, named by this process."""
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=root))


def clear_stale(root: Path, prefix: str) -> int:
    """Remove the folders of processes that are gone; returns how many."""
    removed = 0
    for folder in root.glob(f"{prefix}*") if root.is_dir() else []:
        pid = folder.name[len(prefix) :].split("-", 1)[0]
        if pid.isdigit() and _alive(int(pid)):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    if removed:
        logger.warning("removed %d folders left by stopped docqa processes in %s", removed, root)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True
