"""File helpers shared by ingestion (change detection) and model downloads (checksums)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, read in 4 MiB blocks (model files are many GB)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


# The files docqa reads: the ingest readers, folder walks and the upload check agree on these.
TEXT_SUFFIXES = frozenset({".txt", ".text", ".md", ".markdown"})
PDF_SUFFIXES = frozenset({".pdf"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
TABLE_SUFFIXES = frozenset({".csv", ".tsv"})
EMAIL_SUFFIXES = frozenset({".eml"})
RTF_SUFFIXES = frozenset({".rtf"})
# Office packages (ZIPs of XML parts), by the name their readers' errors use
PACKAGE_KINDS = {
    ".docx": "Word",
    ".xlsx": "Excel",
    ".pptx": "PowerPoint",
    ".odt": "OpenDocument text",
    ".ods": "OpenDocument spreadsheet",
    ".odp": "OpenDocument presentation",
}
SUPPORTED_SUFFIXES = frozenset().union(
    TEXT_SUFFIXES, PDF_SUFFIXES, HTML_SUFFIXES, TABLE_SUFFIXES, EMAIL_SUFFIXES, RTF_SUFFIXES, PACKAGE_KINDS
)


def rtf_problem(head: bytes) -> str | None:
    """Why bytes named .rtf are not RTF (every RTF file starts with "{\\rtf"), or None: the upload check and the
    reader say the same."""
    return None if head.lstrip().startswith(b"{\\rtf") else "not an RTF file (it does not start with {\\rtf)"


_UNSAFE_NAME = re.compile(r"[^\w.\- ()]+")


def staged_name(display: str, fallback: str) -> str:
    """A name to write a received file under in docqa's own staging folder: the client's name made safe (no
    folders, no odd characters), so that a reader that names its pages by the file ("Table: renewals.csv")
    names them as the uploader did, not "0.csv"; `fallback` where nothing of it is left."""
    name = _UNSAFE_NAME.sub("_", Path(display).name).strip(" .")[:120]
    return name if name and Path(name).suffix.lower() == Path(display).suffix.lower() else fallback


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def unsupported_type(path: Path) -> str:
    """Why a file is not read, in the words every interface shows."""
    kind = path.suffix.lower() or "without an extension"
    return f"unsupported file type ({kind}); docqa reads {', '.join(sorted(SUPPORTED_SUFFIXES))}"
