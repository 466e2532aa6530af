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


def test_an_upload_is_bounded_as_a_whole_and_the_cli_is_not(tmp_path: Path) -> None:
    """Issue 41, item 8: three copies of a file just under the per-document bound in one request cost three
    times its text; an upload ingested in the request now brings at most DOCQA_API_MAX_UPLOAD_CHARS
    characters, the file past it fails saying so, and the files after it are still tried."""
    import httpx

    from docqa.core.settings import APISettings
    from tests.support.live_server import free_port, serve_app

    sentence = "The notice period is sixty days. "  # 33 characters
    files = [
        ("files", ("a.txt", (sentence * 300).encode(), "text/plain")),  # 9,900 characters
        ("files", ("b.txt", (sentence * 301).encode(), "text/plain")),  # 9,933: 19,833 with a.txt
        ("files", ("c.txt", (sentence * 302).encode(), "text/plain")),  # 9,966: past 20,000
        ("files", ("d.txt", b"A short note.", "text/plain")),  # still fits
    ]
    settings = make_settings(tmp_path / "data", api=APISettings(max_upload_chars=20_000))
    qa = DocQA(settings, None, None)
    try:
        with serve_app(settings, qa, free_port()) as base:
            report = httpx.post(f"{base}/v1/collections/default/documents", files=files, timeout=60).json()
    finally:
        qa.close()
    results = {f["path"]: (f["status"], f.get("error")) for f in report["files"]}
    assert results["a.txt"][0] == results["b.txt"][0] == results["d.txt"][0] == "added", results
    assert results["c.txt"] == (
        "failed",
        "9,966 characters of text, with the 19,833 of the files before it over the upload's 20,000 limit "
        "(DOCQA_API_MAX_UPLOAD_CHARS): send it in another request",
    )
    # the same files from the CLI's library call: no upload bound
    folder = tmp_path / "folder"
    folder.mkdir()
    for _, (name, data, _type) in files:
        (folder / name).write_bytes(data)
    qa = DocQA(make_settings(tmp_path / "cli-data", api=APISettings(max_upload_chars=20_000)), None, None)
    try:
        assert {f.status for f in qa.ingest([folder]).files} == {"added"}
    finally:
        qa.close()
