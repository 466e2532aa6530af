"""Files are read in a child process: a PDF that hangs, bloats or crashes the parser fails that file
only, with its reason recorded, and the parser keeps serving the next files."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from docqa.core.errors import ReadError
from ingest.isolation import read_pdf_isolated
from ingest.pdf_worker import crash_message, failure_message
from tests.support.paths import SAMPLE_DOCS
from tests.support.pdf_factory import bloated_pdf, slow_pdf

GOOD_PDF = SAMPLE_DOCS / "annual_report_2025.pdf"


@pytest.fixture(scope="module")
def bloated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bloated_pdf(tmp_path_factory.mktemp("hostile") / "bloated.pdf")


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return slow_pdf(tmp_path_factory.mktemp("hostile") / "slow.pdf")


def test_good_pdf_reads_the_same_in_the_child() -> None:
    doc = read_pdf_isolated(GOOD_PDF, None, timeout_s=60, memory_mb=1024)
    assert [p.number for p in doc.pages] == [1, 2, 3, 4]
    assert "EUR 184.6 million" in doc.pages[1].text


def test_a_pdf_that_runs_past_the_time_limit_is_killed(slow: Path) -> None:
    started = time.monotonic()
    with pytest.raises(ReadError, match=r"PDF parser timed out after 1 s"):
        read_pdf_isolated(slow, None, timeout_s=1, memory_mb=2048)
    assert time.monotonic() - started < 10
    assert len(read_pdf_isolated(GOOD_PDF, None, timeout_s=60, memory_mb=1024).pages) == 4


def test_a_pdf_that_bloats_past_the_memory_limit_fails(bloated: Path) -> None:
    with pytest.raises(ReadError, match=r"memory limit of 120 MiB"):
        read_pdf_isolated(bloated, None, timeout_s=120, memory_mb=120)
    assert len(read_pdf_isolated(GOOD_PDF, None, timeout_s=60, memory_mb=1024).pages) == 4


def _parsing_children() -> list[int]:
    """PIDs of the children that this process's PDF workers forked (never another process's)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    workers = {pid for pid, ppid in parents.items() if ppid == os.getpid()}
    return [pid for pid, ppid in parents.items() if ppid in workers]


def test_a_parser_that_crashes_fails_that_file_only(slow: Path) -> None:
    outcome: list[BaseException] = []

    def parse() -> None:
        try:
            read_pdf_isolated(slow, None, timeout_s=120, memory_mb=2048)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=parse)
    thread.start()
    deadline = time.monotonic() + 20
    while not (children := _parsing_children()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert children, "no parsing child found"
    for pid in children:
        os.kill(pid, signal.SIGSEGV)
    thread.join(30)
    assert outcome and isinstance(outcome[0], ReadError)
    assert str(outcome[0]) == "PDF parser crashed (SIGSEGV)"
    assert len(read_pdf_isolated(GOOD_PDF, None, timeout_s=60, memory_mb=1024).pages) == 4


def test_crash_messages_name_the_signal_or_exit_code() -> None:
    assert crash_message(signal.SIGKILL) == "PDF parser crashed (SIGKILL)"
    assert crash_message(3 << 8) == "PDF parser exited unexpectedly (exit code 3)"


def test_a_crash_near_the_memory_limit_is_named_as_the_limit() -> None:
    # PDFium aborts (SIGABRT) when it cannot allocate; its peak then sits near the limit
    assert failure_message(signal.SIGABRT, 95, 120) == "PDF parser went over its memory limit of 120 MiB"
    assert failure_message(signal.SIGSEGV, 40, 2048) == "PDF parser crashed (SIGSEGV)"
    assert failure_message(3 << 8, 110, 120) == "PDF parser exited unexpectedly (exit code 3)"


def test_a_hostile_pdf_fails_alone_in_a_folder(qa_factory, slow: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "inbox"
    folder.mkdir()
    (folder / "bloated.pdf").write_bytes(slow.read_bytes())
    (folder / "report.pdf").write_bytes(GOOD_PDF.read_bytes())
    qa = qa_factory(with_embedder=False, ingest={"pdf_timeout_s": 2})
    report = qa.ingest([folder])
    results = {f.path: f for f in report.files}
    assert results["bloated.pdf"].status == "failed"
    assert results["bloated.pdf"].error == "PDF parser timed out after 2 s"
    assert results["report.pdf"].status == "added"
    failed = [d for d in qa.documents() if d.status == "failed"]
    assert [(d.name, d.error) for d in failed] == [("bloated.pdf", "PDF parser timed out after 2 s")]


def test_text_files_are_read_in_the_child_under_the_same_limits(tmp_path: Path) -> None:
    """A text file goes through the same child: read as read_text reads it, and one that needs more memory
    than the limit fails alone, naming the text reader (a 50 MiB one-line file once took a server to 6 GB)."""
    from ingest.readers import read_text

    memo = tmp_path / "memo.txt"
    memo.write_text("Page one.\fPage two: the deposit is 12,500 EUR.", encoding="utf-8")
    assert read_pdf_isolated(memo, None, timeout_s=60, memory_mb=1024) == read_text(memo)
    huge = tmp_path / "one-line.txt"
    huge.write_bytes(b"x" * (60 * 2**20))
    with pytest.raises(ReadError, match=r"text reader went over its memory limit of 120 MiB"):
        read_pdf_isolated(huge, None, timeout_s=60, memory_mb=120)
    assert read_pdf_isolated(memo, None, timeout_s=60, memory_mb=1024).pages[1].text.endswith("12,500 EUR.")
