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
    for kind in ("PDF", "text", "Markdown", "Word", "Excel", "PowerPoint", "OpenDocument", "HTML", "CSV", "email"):
        assert kind in readme.split("It reads", 1)[1].split("\n", 1)[0], kind
