"""Email (.eml, ingest.formats.eml_reader): the message as page 1, each attachment docqa reads as the pages after
it under its name and own page; attachments it cannot read are named in the warnings and leave the rest read;
an ingested email answers about its attachment with the attachment's page. Messages are made by the tests
with the standard library (no blobs)."""

from __future__ import annotations

import json
import tempfile
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from docqa.core.errors import ReadError
from docqa.service import DocQA
from ingest.formats.eml_reader import ATTACHMENT_PREFIX
from ingest.isolation import read_pdf_isolated
from ingest.readers import read_document
from tests.support import office_factory
from tests.support.paths import make_settings
from tests.support.pdf_factory import slow_pdf, text_pdf


def _message(folder: Path) -> Path:
    msg = EmailMessage()
    msg["From"] = "Dana Whitfield <dana@acme.example>"
    msg["To"] = "legal@northwind.example"
    msg["Date"] = "Tue, 14 Mar 2023 09:12:00 +0000"
    msg["Subject"] = "Signed amendment no. 2"
    msg.set_content("Hi all,\n\nthe countersigned amendment is attached. The cap is now EUR 2.5 million.\n\nDana\n")
    pdf = text_pdf(
        folder / "amendment.pdf",
        [[("AMENDMENT NO. 2", True)], [("The notice period for termination is ninety (90) days.", False)]],
    )
    msg.add_attachment(pdf.read_bytes(), maintype="application", subtype="pdf", filename="amendment.pdf")
    docx = office_factory.docx_file(folder / "msa.docx")
    msg.add_attachment(docx.read_bytes(), maintype="application", subtype="octet-stream", filename="../../msa.docx")
    msg.add_attachment(b"MZ\x90\x00", maintype="application", subtype="octet-stream", filename="setup.exe")
    msg.add_attachment(b"%PDF-1.7 broken", maintype="application", subtype="pdf", filename="scan.pdf")
    path = folder / "amendment.eml"
    path.write_bytes(bytes(msg))
    return path


def test_the_message_is_page_one_and_each_attachment_follows_under_its_name(tmp_path: Path) -> None:
    doc = read_document(_message(tmp_path))
    first = doc.pages[0].text.splitlines()
    assert first[0] == "## Email: Signed amendment no. 2"
    assert doc.title == "Signed amendment no. 2"  # the catalog's title: its Subject, not "From: Dana ..."
    assert "From: Dana Whitfield <dana@acme.example>" in first and "To: legal@northwind.example" in first
    assert "Attachments: amendment.pdf, msa.docx, setup.exe, scan.pdf" in first
    assert "The cap is now EUR 2.5 million." in doc.pages[0].text
    heads = [p.text.splitlines()[0] for p in doc.pages[1:]]
    assert heads[:2] == ["## Attachment: amendment.pdf, page 1", "## Attachment: amendment.pdf, page 2"]
    assert heads[2:] == ["## Attachment: msa.docx, page 1", "## Attachment: msa.docx, page 2"]  # no folders
    assert [p.number for p in doc.pages] == [1, 2, 3, 4, 5]
    assert "ninety (90) days" in doc.pages[2].text
    [exe, broken] = doc.warnings
    assert exe == "attachment setup.exe not read (docqa does not read .exe)"
    assert broken.startswith("attachment scan.pdf not read: ")


def test_an_html_only_message_is_read_as_html_and_an_attached_email_is_named(tmp_path: Path) -> None:
    msg = EmailMessage()
    msg["From"], msg["Subject"] = "ir@company.example", "Q3 results"
    html = '<html><head><meta charset="iso-8859-1"></head><body><h1>Q3</h1><p>Revenue rose 12% (€).</p>'
    msg.set_content(
        html + "<script>x()</script></body></html>", subtype="html"
    )  # sent as UTF-8, whatever its meta says
    inner = EmailMessage()
    inner["Subject"] = "forwarded"
    inner.set_content("old thread")
    msg.add_attachment(bytes(inner), maintype="application", subtype="octet-stream", filename="thread.eml")
    path = tmp_path / "q3.eml"
    path.write_bytes(bytes(msg))
    doc = read_document(path)
    assert "# Q3\n\nRevenue rose 12% (€)." in doc.pages[0].text and "x()" not in doc.pages[0].text
    assert len(doc.pages) == 1 and doc.warnings[0].startswith("attachment thread.eml not read (an attached email")


def test_a_file_that_is_no_email_fails_with_its_reason_in_the_isolated_reader(tmp_path: Path) -> None:
    path = tmp_path / "notes.eml"
    path.write_text("just some words\nwith no headers at all\n", encoding="utf-8")
    with pytest.raises(ReadError, match="not an email"):
        read_document(path)
    with pytest.raises(ReadError, match="not an email"):
        read_pdf_isolated(path, None, timeout_s=60, memory_mb=1024)
    assert read_pdf_isolated(_message(tmp_path), None, timeout_s=60, memory_mb=1024).pages[0].number == 1


def test_an_ingested_email_answers_about_its_attachment_with_its_page(tmp_path: Path) -> None:
    folder = tmp_path / "mail"
    folder.mkdir()
    _message(folder)
    for made in ("amendment.pdf", "msa.docx"):
        (folder / made).unlink()  # only the email is ingested
    qa = DocQA(make_settings(tmp_path / "data"), None, None)
    try:
        report: dict[str, Any] = qa.ingest([folder]).as_dict()
        assert report["added"] == 1 and not report["failed"], report
        [hit] = qa.retrieve("What is the notice period for termination?", 1)
        assert hit.document_name == "amendment.eml" and hit.first_page <= 3 <= hit.last_page
        assert "## Attachment: amendment.pdf, page 2" in hit.text
        [email] = qa.documents()
        assert json.loads(email.catalog or "{}")["title"] == "Signed amendment no. 2"
    finally:
        qa.store.close()


def test_a_reader_killed_at_its_time_limit_leaves_no_attachment_copy(tmp_path: Path) -> None:
    """Issue 60, item 10: an email whose attachment outlasts the time limit left its copy under /tmp for good
    (the child that read it was killed, so its clean-up never ran)."""
    msg = EmailMessage()
    msg["From"], msg["Subject"] = "legal@company.example", "scan"
    msg.set_content("The scan is attached.")
    slow = slow_pdf(tmp_path / "scan.pdf").read_bytes()
    msg.add_attachment(slow, maintype="application", subtype="pdf", filename="scan.pdf")
    path = tmp_path / "scan.eml"
    path.write_bytes(bytes(msg))
    before = set(Path(tempfile.gettempdir()).glob(f"{ATTACHMENT_PREFIX}*"))
    with pytest.raises(ReadError, match="timed out"):
        read_pdf_isolated(path, None, timeout_s=1, memory_mb=1024)
    assert set(Path(tempfile.gettempdir()).glob(f"{ATTACHMENT_PREFIX}*")) <= before


def test_an_attached_email_without_a_file_name_is_called_an_email(tmp_path: Path) -> None:
    msg = EmailMessage()
    msg["From"], msg["Subject"] = "ir@company.example", "fwd"
    msg.set_content("See the thread below.")
    inner = EmailMessage()
    inner["Subject"] = "the thread"
    inner.set_content("old thread")
    msg.add_attachment(inner)  # message/rfc822, no file name
    path = tmp_path / "fwd.eml"
    path.write_bytes(bytes(msg))
    doc = read_document(path)
    assert any("(an attached email" in w for w in doc.warnings), doc.warnings
    assert not any("without an extension" in w for w in doc.warnings)
