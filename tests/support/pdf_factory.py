"""Hand-built PDFs for tests: one page per entry of `pages`, each a list of (text, hidden) lines.

Written byte by byte so that tests need no PDF library and can build hostile files on purpose: a
small file whose content stream takes a PDF parser long and much memory, or text hidden from the eye
(render mode 3, invisible) that a text extractor still reads.
"""

from __future__ import annotations

import zlib
from pathlib import Path


def _escape(text: str) -> bytes:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode("latin-1")


def _page_content(lines: list[tuple[str, bool]]) -> bytes:
    ops = [b"BT /F1 11 Tf 72 760 Td 14 TL"]
    for text, hidden in lines:
        ops.append(b"%d Tr (%s) Tj T*" % (3 if hidden else 0, _escape(text)))
    ops.append(b"ET")
    return b"\n".join(ops) + b"\n"


def write_pdf(path: Path, contents: list[bytes], to_unicode: bytes | None = None) -> Path:
    """A PDF with one page per raw (uncompressed) content stream, Flate-compressed in the file; `to_unicode`,
    a CMap the font carries to map its codes to text (a file that maps them oddly, on purpose)."""
    n_pages = len(contents)
    font_obj = 3 + 2 * n_pages
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>"
        % (b" ".join(b"%d 0 R" % (3 + 2 * i) for i in range(n_pages)), n_pages),
    ]
    packed_once: dict[bytes, bytes] = {}  # pages that repeat one stream are compressed once
    for i, content in enumerate(contents):
        if content not in packed_once:
            packed_once[content] = zlib.compress(content, 9)
        packed = packed_once[content]
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>" % (font_obj, 4 + 2 * i)
        )
        objects.append(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed + b"\nendstream")
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding"
    if to_unicode is None:
        objects.append(font + b" >>")
    else:
        objects.append(font + b" /ToUnicode %d 0 R >>" % (font_obj + 1))
        objects.append(b"<< /Length %d >>\nstream\n" % len(to_unicode) + to_unicode + b"\nendstream")

    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return path


def text_pdf(path: Path, pages: list[list[tuple[str, bool]]], to_unicode: bytes | None = None) -> Path:
    return write_pdf(path, [_page_content(lines) for lines in pages], to_unicode)


def _lorem_stream(operators: int) -> bytes:
    """A content stream of `operators` lines of text, each moved one unit below the last."""
    return b"BT /F1 12 Tf 72 720 Td\n" + b"(lorem ipsum dolor sit amet) Tj 0 -1 Td\n" * operators + b"ET\n"


def bloated_pdf(path: Path, operators: int = 2_000_000) -> Path:
    """About 230 kB on disk; its one page's content stream inflates to ~80 MB of text operators, which
    PDFium needs over 1.2 GiB to read (3.2 s on the 2-core VM): a file that fails on memory."""
    return write_pdf(path, [_lorem_stream(operators)])


def slow_pdf(path: Path, pages: int = 400, operators_per_page: int = 20_000) -> Path:
    """About 1 MB on disk; 400 pages of 20,000 text operators each, which PDFium reads in ~10 s on the
    2-core VM within a few hundred MiB: a file that fails on time, not memory. (One bloated page was
    12 s once and 3.2 s with a later PDFium: a test's time limit needs this margin.)"""
    return write_pdf(path, [_lorem_stream(operators_per_page)] * pages)


def scanned_pdf(path: Path, lines: list[str]) -> Path:
    """A one-page PDF with no text layer: the lines typeset, rendered at 200 dpi, and kept as an image
    only, as a scanner writes them."""
    import pypdfium2

    typeset = text_pdf(path.with_suffix(".typeset.pdf"), [[(line, False) for line in lines]])
    source = pypdfium2.PdfDocument(str(typeset))
    bitmap = source[0].render(scale=200 / 72, grayscale=True)
    width, height = source[0].get_size()
    scan = pypdfium2.PdfDocument.new()
    page = scan.new_page(width, height)
    image = pypdfium2.PdfImage.new(scan)
    image.set_bitmap(bitmap)
    image.set_matrix(pypdfium2.PdfMatrix().scale(width, height))
    page.insert_obj(image)
    page.gen_content()
    scan.save(str(path))
    scan.close()
    source.close()
    typeset.unlink()
    return path


def encrypted_copy(source: Path, path: Path, password: str) -> Path:
    """`source` (a real PDF) encrypted with AES-128 under a user password (pypdf, a test dependency)."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for page in PdfReader(source).pages:
        writer.add_page(page)
    writer.encrypt(user_password=password, owner_password="owner", algorithm="AES-128")
    with path.open("wb") as fh:
        writer.write(fh)
    return path
