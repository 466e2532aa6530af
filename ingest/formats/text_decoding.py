"""Text files' bytes to text: UTF-8 (with or without BOM), UTF-32 or UTF-16 with BOM, UTF-16 without, else a
detected encoding. Text and Markdown files, CSV/TSV and HTML that declares no charset are decoded here, one way.
"""

from __future__ import annotations

import unicodedata

from docqa.core.errors import ReadError


def decode_text(data: bytes) -> tuple[str, list[str]]:
    """Decode a text file: UTF-8 (with or without BOM), UTF-32 or UTF-16 with BOM or without, else a
    detected encoding. NUL bytes past the start (where the binary check looks) are dropped and said: no
    text holds them, and Postgres cannot store them."""
    text, warnings = _decoded(data)
    if "\x00" in text:
        warnings = [*warnings, f"{text.count(chr(0))} NUL characters removed"]
        text = text.replace("\x00", "")
    return text, warnings


def _decoded(data: bytes) -> tuple[str, list[str]]:
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):  # before UTF-16's: FF FE begins both
        try:
            return data.decode("utf-32"), ["decoded as UTF-32"]
        except UnicodeDecodeError as exc:
            raise ReadError(f"starts with a UTF-32 byte-order mark but is not UTF-32 (byte {exc.start})") from None
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace"), []
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), ["decoded as UTF-16"]
        except UnicodeDecodeError as exc:
            raise ReadError(f"starts with a UTF-16 byte-order mark but is not UTF-16 (byte {exc.start})") from None
    if b"\x00" in data[:8192]:  # valid UTF-8 too, but no text file holds NUL bytes: UTF-32 or -16 without a mark?
        return _utf32_without_bom(data) or _utf16_without_bom(data)
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None or best.encoding is None:
        raise ReadError("not UTF-8, and its encoding could not be detected; convert it to UTF-8")
    return str(best), [f"decoded as {best.encoding} (not UTF-8)"]


def _utf32_without_bom(data: bytes) -> tuple[str, list[str]] | None:
    """Text in UTF-32 with no byte-order mark: every character four bytes whose highest is always NUL (no code
    point passes U+10FFFF), and, for Latin or Chinese text, the next one too; None where it is not that."""
    head = data[: 8192 - 8192 % 4]
    if len(data) % 4 or len(head) < 8:
        return None
    quarter = len(head) // 4
    for high, next_high, encoding in ((3, 2, "utf-32-le"), (0, 1, "utf-32-be")):
        if head[high::4].count(0) == quarter and head[next_high::4].count(0) >= 0.9 * quarter:
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError:
                return None
            return (
                (text, [f"decoded as {encoding.upper()} (no byte-order mark)"]) if _reads_as_text(text[:4096]) else None
            )
    return None


def _utf16_without_bom(data: bytes) -> tuple[str, list[str]]:
    """Text in UTF-16 with no byte-order mark: Latin-script text has a NUL in nearly every other byte (odd
    ones for little-endian); Chinese text has few NULs, but decodes to characters that are nearly all
    printable letters, which binary content does not. Anything else with NUL bytes is binary."""
    head = data[:8192]
    even, odd = head[0::2].count(0), head[1::2].count(0)
    half = max(len(head) // 2, 1)
    for zeros, other, encoding in ((odd, even, "utf-16-le"), (even, odd, "utf-16-be")):
        if zeros >= 0.4 * half and other <= 0.05 * half and len(data) % 2 == 0:
            try:
                return data.decode(encoding), [f"decoded as {encoding.upper()} (no byte-order mark)"]
            except UnicodeDecodeError:
                break
    if len(data) % 2 == 0:
        for encoding in ("utf-16-le", "utf-16-be"):
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError:
                continue
            if _reads_as_text(text[:4096]):
                return text, [f"decoded as {encoding.upper()} (no byte-order mark)"]
    raise ReadError("binary content (NUL bytes): this is not a text file")


def _reads_as_text(sample: str) -> bool:
    """Nearly every character a printable one or white space, and no private-use or unassigned ones."""
    good = sum(
        1 for c in sample if (c.isprintable() or c in "\n\r\t\f") and unicodedata.category(c) not in ("Co", "Cn")
    )
    return bool(sample) and good >= 0.97 * len(sample)
