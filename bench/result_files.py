"""Result files named by date and commit, never overwritten: `<stem>_<YYYY-MM-DD>_<commit>[-N].json`."""

from __future__ import annotations

import datetime
import subprocess
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def commit() -> str:
    """The checked-out commit's short hash, with '+' when the work tree has changes."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True, cwd=RESULTS.parent
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
            cwd=RESULTS.parent,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "nogit"
    return head + ("+" if dirty else "")


def new_result_path(stem: str, folder: Path = RESULTS) -> Path:
    """A path for this run's result that no earlier run has taken."""
    folder.mkdir(parents=True, exist_ok=True)
    base = f"{stem}_{datetime.date.today().isoformat()}_{commit()}"
    path = folder / f"{base}.json"
    n = 1
    while path.exists():
        n += 1
        path = folder / f"{base}-{n}.json"
    return path
