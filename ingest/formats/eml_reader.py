"""Email (.eml): the message as its first page (who wrote it to whom, when, the subject, the body), then the
pages of each attachment docqa reads, in the order the message holds them.

Contracts and their amendments travel as attachments, and what a negotiation agreed is often in the mail that
carried them: a question about either should find it, and a citation should say which. So an attachment's pages
follow the message's, each headed by the attachment's name and its own page ("Attachment: msa.pdf, page 3"),
read by the reader of its type (the caller's `read_attachment`: PDF, Word, Excel, ...), under the same limits,
in the same child process. An attachment of another type, an email attached to an email, or one that fails to
read is named in the file's warnings and leaves the rest read. The body is the plain-text part where the
message has one, else its HTML part read as HTML files are.
"""

from __future__ import annotations

import email
import email.policy
import re
import shutil
import tempfile
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path

from docqa.core.errors import ReadError
from docqa.core.files import EMAIL_SUFFIXES, SUPPORTED_SUFFIXES
from docqa.core.process_folders import process_folder
from docqa.core.types import Page, ParsedDocument
from ingest.formats.html_reader import read_html_bytes
from ingest.formats.text_units import heading_line

_HEADERS = ("From", "To", "Cc", "Date")
ATTACHMENT_PREFIX = "docqa-eml-"  # the folders attachments are read from: "docqa-eml-<pid>-..."
_UNSAFE_NAME = re.compile(r"[^\w.\- ()]+")


def read_eml(path: Path, read_attachment: Callable[[Path], ParsedDocument]) -> ParsedDocument:
    message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    if not isinstance(message, EmailMessage) or not any(message.get(h) for h in (*_HEADERS, "Subject")):
        raise ReadError("not an email: no From, To, Date or Subject header")
    warnings: list[str] = []
    attachments = [part for part in message.iter_attachments() if isinstance(part, EmailMessage)]
    names = [_name(part, n) for n, part in enumerate(attachments, 1)]
    pages = [Page(1, _message_page(message, names, warnings))]
    for part, name in zip(attachments, names, strict=True):
        for page in _attachment_pages(part, name, read_attachment, warnings):
            pages.append(Page(len(pages) + 1, page))
    return ParsedDocument(pages, warnings, title=str(message.get("Subject") or "").strip() or None)


def _message_page(message: EmailMessage, attachments: list[str], warnings: list[str]) -> str:
    lines = [heading_line(f"Email: {message.get('Subject') or '(no subject)'}", 2), ""]
    lines += [f"{h}: {message[h]}" for h in _HEADERS if message.get(h)]
    if attachments:
        lines.append("Attachments: " + ", ".join(attachments))
    body = _body(message, warnings)
    return "\n".join(lines) + ("\n\n" + body if body else "")


def _body(message: EmailMessage, warnings: list[str]) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if not isinstance(part, EmailMessage):
        return ""
    try:
        text = part.get_content()
    except (LookupError, UnicodeError, ValueError):  # an unknown or lying charset
        raw = part.get_payload(decode=True)
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else ""
        warnings.append("the body's charset is unknown or wrong: read as UTF-8")
    if not isinstance(text, str):
        return ""
    if part.get_content_subtype() == "html":
        try:
            pages = read_html_bytes(text.encode("utf-8"), encoding="utf-8").pages  # over its meta charset
            return "\n\n".join(page.text for page in pages)
        except ReadError:
            return ""
    return text.replace("\r\n", "\n").strip()


def _attachment_pages(
    part: EmailMessage, name: str, read_attachment: Callable[[Path], ParsedDocument], warnings: list[str]
) -> list[str]:
    suffix = Path(name).suffix.lower()
    if suffix in EMAIL_SUFFIXES or part.get_content_type() == "message/rfc822":
        warnings.append(f"attachment {name} not read (an attached email: save it and ingest it on its own)")
        return []
    if suffix not in SUPPORTED_SUFFIXES:
        warnings.append(f"attachment {name} not read (docqa does not read {suffix or 'files without an extension'})")
        return []
    data = part.get_payload(decode=True)
    if not isinstance(data, bytes) or not data:
        warnings.append(f"attachment {name} not read: it is empty")
        return []
    # named by this process: the reading child may be killed at its time limit (no cleanup runs), and the worker
    # that forked it then removes the folders of processes that are gone (ingest.pdf_worker)
    folder = process_folder(Path(tempfile.gettempdir()), ATTACHMENT_PREFIX)
    try:
        saved = folder / name
        saved.write_bytes(data)
        try:
            parsed = read_attachment(saved)
        except ReadError as exc:
            warnings.append(f"attachment {name} not read: {exc}")
            return []
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    warnings += [f"attachment {name}: {w}" for w in parsed.warnings]
    return [heading_line(f"Attachment: {name}, page {page.number}", 2) + "\n\n" + page.text for page in parsed.pages]


def _name(part: EmailMessage, number: int) -> str:
    """The attachment's file name, made safe to write (no folders, no odd characters); a made-up one if none."""
    name = _UNSAFE_NAME.sub("_", Path(part.get_filename() or "").name).strip(" .")
    return name[:120] or f"attachment-{number}"
