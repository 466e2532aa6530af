"""What the office and web readers share: tidy cell and run text, table rows, and the ZIP package check."""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable
from pathlib import Path

from docqa.core.errors import ReadError

# No-break and typographic spaces (EDGAR's HTML is full of &#160;), zero-width characters and soft hyphens.
ODD_SPACES = str.maketrans({chr(c): " " for c in (0x00A0, *range(0x2000, 0x200B), 0x202F, 0x205F)})
INVISIBLE = re.compile("[\u00ad\u200b\u200c\u200d\u2060\ufeff]")
_RUNS_OF_SPACE = re.compile(r"[ \t\r\f\v]+")

# A package (.docx, .xlsx, .pptx) is a ZIP of XML parts. One whose parts inflate past this, or at a ratio no
# office file has, is refused before a parser inflates it (a "zip bomb": 42 kB that inflate to gigabytes).
MAX_UNPACKED_BYTES = 1 << 30
MAX_RATIO = 200  # office XML compresses 5-20x; a bomb's zeros, over 1,000x
RATIO_CHECKED_FROM = 10 << 20  # small parts may compress as they like


def tidy(text: str) -> str:
    """One line of a cell, run or element: odd spaces as spaces, invisible characters gone, spaces collapsed."""
    return _RUNS_OF_SPACE.sub(" ", INVISIBLE.sub("", text.translate(ODD_SPACES))).strip()


def row_line(cells: Iterable[str]) -> str:
    """A table row as one line: its cells joined by " | ", a cell's own line breaks (Excel's Alt+Enter, a
    quoted CSV field's, an HTML cell's source lines) as spaces, trailing empty cells and repeats of a merged
    cell (readers give a merged cell once per column it spans) left out; "" for an empty row."""
    out: list[str] = []
    for cell in cells:
        cell = tidy(cell.replace("\n", " ")).replace("|", "/")
        if out and cell and cell == out[-1]:
            continue
        out.append(cell)
    while out and not out[-1]:
        out.pop()
    return " | ".join(out) if any(out) else ""


def heading_line(text: str, level: int) -> str:
    """A heading as Markdown writes it, which the keyword index and citations read as a heading."""
    return f"{'#' * min(max(level, 1), 6)} {tidy(text)}"


def check_package(path: Path, kind: str) -> None:
    """That a .docx/.xlsx/.pptx file is a ZIP package whose parts inflate to a sane size; ReadError if not."""
    try:
        with zipfile.ZipFile(path) as package:
            parts = package.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise ReadError(f"not a valid {kind} file (not a ZIP package: {exc})") from None
    total = sum(part.file_size for part in parts)
    if total > MAX_UNPACKED_BYTES:
        raise ReadError(
            f"{kind} file unpacks to {total / 2**20:,.0f} MiB, over the {MAX_UNPACKED_BYTES >> 20} MiB limit"
        )
    for part in parts:
        if part.file_size > RATIO_CHECKED_FROM and part.file_size > MAX_RATIO * max(part.compress_size, 1):
            raise ReadError(
                f"{kind} file's part {part.filename!r} inflates {part.file_size // max(part.compress_size, 1):,}x "
                f"(to {part.file_size / 2**20:,.0f} MiB): refused as a compression bomb"
            )
