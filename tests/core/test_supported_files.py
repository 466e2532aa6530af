"""The file types docqa reads are named alike everywhere a user meets them: the web page's file picker, the
README, and every reader behind them."""

from __future__ import annotations

import re
from pathlib import Path

from docqa.core.files import SUPPORTED_SUFFIXES

ROOT = Path(__file__).resolve().parents[2]


def test_the_web_pages_file_picker_offers_every_type_docqa_reads_and_no_other() -> None:
    page = (ROOT / "docqa/web/index.html").read_text(encoding="utf-8")
    [accept] = re.findall(r'accept="([^"]+)"', page)
    assert set(accept.split(",")) == set(SUPPORTED_SUFFIXES)


def test_the_readme_names_each_kind_of_file() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    kinds = ("PDF", "text", "Markdown", "Word", "Excel", "PowerPoint", "OpenDocument", "RTF", "HTML", "CSV", "email")
    for kind in kinds:
        assert kind in readme.split("It reads", 1)[1].split("\n", 1)[0], kind


def test_an_upload_whose_bytes_are_not_its_type_is_named_before_it_is_stored() -> None:
    from docqa.api.routes.documents import content_problem

    assert content_problem("lease.rtf", rb"{\rtf1\ansi hello}") is None
    assert content_problem("lease.rtf", b"Dear all") == r"not an RTF file (it does not start with {\rtf)"
    assert content_problem("memo.odt", b"plain words") == (
        "not an OpenDocument text file (.odt files are ZIP packages; this is not one)"
    )
    assert str(content_problem("model.xlsx", b"plain words")).startswith("not an Excel file")
    assert content_problem("deck.pptx", b"PK\x03\x04rest") is None
    assert content_problem("rows.csv", b"\x7fELF binary") == "binary content in a text file"
    assert str(content_problem("notes.pages", b"PK\x03\x04")).startswith("unsupported file type (.pages)")
