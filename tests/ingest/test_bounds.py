"""What one file may produce: past DOCQA_INGEST_MAX_PAGE_CHARS or _MAX_DOCUMENT_CHARS it fails with the
reason, and the other files go on."""

from __future__ import annotations

from pathlib import Path

from docqa.core.settings import IngestSettings
from docqa.service import DocQA
from tests.support.paths import make_settings


def _ingest(tmp_path: Path, files: dict[str, str]) -> dict[str, tuple[str, str | None]]:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    limits = IngestSettings(max_page_chars=5_000, max_document_chars=20_000)
    qa = DocQA(make_settings(tmp_path / "data", ingest=limits), None, None)
    try:
        report = qa.ingest([folder])
    finally:
        qa.close()
    return {Path(f.path).name: (f.status, f.error) for f in report.files}


def test_files_past_the_bounds_fail_with_the_reason_and_the_rest_go_on(tmp_path: Path) -> None:
    sentence = "The notice period is sixty days. "
    results = _ingest(
        tmp_path,
        {
            "fine.txt": sentence * 100,
            "bomb.txt": sentence * 100 + "\f" + "x" * 6_000,  # its second page is past the page bound
            "long.txt": (sentence * 100 + "\f") * 8,  # 8 pages of 3,300 characters: 26,400
            "huge.txt": "y" * 100_000,  # over 4 bytes a character of the bound: refused before it is read
            "contract.txt": sentence * 500,  # 16,500 characters on its one page: a long contract, not a bomb
        },
    )
    assert results["fine.txt"] == ("added", None)
    assert results["contract.txt"] == ("added", None)
    assert results["bomb.txt"] == (
        "failed", "page 2 has 6,000 characters of text, over the 5,000 limit (DOCQA_INGEST_MAX_PAGE_CHARS)"
    )  # fmt: skip
    assert results["long.txt"] == (
        "failed", "26,400 characters of text, over the 20,000 limit (DOCQA_INGEST_MAX_DOCUMENT_CHARS)"
    )  # fmt: skip
    assert results["huge.txt"] == (
        "failed", "at least 25,000 characters of text, over the 20,000 limit (DOCQA_INGEST_MAX_DOCUMENT_CHARS)"
    )  # fmt: skip
