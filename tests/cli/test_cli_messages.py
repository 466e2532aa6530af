"""What the CLI says where a new user goes wrong: files `docqa ingest` does not read, files it read
before, a data home that is not there. Real subprocesses; no model is loaded (BM25 only, or the
command stops before loading one)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.paths import SAMPLE_DOCS
from tests.support.pdf_factory import slow_pdf, text_pdf

DOCQA = [sys.executable, "-m", "docqa"]


def _ingest(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DOCQA_DATA_DIR": str(data_dir), "DOCQA_INGEST_OCR": "off"}
    return subprocess.run(
        [*DOCQA, "ingest", "--no-embeddings", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_a_folder_with_nothing_readable_fails_and_says_what_it_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "opendocument"
    folder.mkdir()
    for name in ("a.pages", "b.PAGES", "sheet.numbers"):
        (folder / name).write_bytes(b"PK\x03\x04")
    proc = _ingest(str(folder), data_dir=tmp_path / "data")
    assert proc.returncode == 1
    assert "skipped  3 files of types docqa does not read: .pages (2), .numbers (1)" in proc.stderr
    assert "nothing to ingest" in proc.stderr

    empty = tmp_path / "empty"
    empty.mkdir()
    proc = _ingest(str(empty), data_dir=tmp_path / "data")
    assert (
        proc.returncode == 1
        and "nothing to ingest: no file of a type docqa reads (PDF, text, Markdown, Word, Excel, PowerPoint, "
        "HTML, CSV, email) in"
        in proc.stderr
    )


def test_a_named_unsupported_file_fails_once_and_records_no_document(tmp_path: Path) -> None:
    doc = tmp_path / "memo.pages"
    doc.write_bytes(b"PK\x03\x04")
    data = tmp_path / "data"
    proc = _ingest(str(doc), "--json", data_dir=data)
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["failed"] == [{"path": str(doc), "error": report["failed"][0]["error"]}]
    assert report["failed"][0]["error"].startswith(
        "unsupported file type (.pages); docqa reads .csv, .docx, .eml, .htm, .html, .markdown, .md, .odp, .ods, "
        ".odt, .pdf, .pptx, .rtf"
    )
    plain = _ingest(str(doc), data_dir=data)
    assert plain.stderr.count("unsupported file type") == 1
    env = {**os.environ, "DOCQA_DATA_DIR": str(data)}
    listed = subprocess.run([*DOCQA, "docs", "list", "--json"], capture_output=True, text=True, env=env, timeout=60)
    assert json.loads(listed.stdout) == []


def test_a_mixed_folder_ingests_what_it_reads_and_counts_the_rest(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "handbook.md").write_text((SAMPLE_DOCS / "operations_handbook.md").read_text())
    (folder / "memo.pages").write_bytes(b"PK\x03\x04")
    (folder / "notes").write_text("no extension")
    proc = _ingest(str(folder), "--json", data_dir=tmp_path / "data")
    assert proc.returncode == 0
    report = json.loads(proc.stdout)
    assert report["added"] == 1 and report["skipped"] == {".pages": 1, "(none)": 1}


def test_a_folder_where_some_files_fail_exits_2_and_keeps_the_others(tmp_path: Path) -> None:
    folder = tmp_path / "partly"
    folder.mkdir()
    (folder / "handbook.md").write_text((SAMPLE_DOCS / "operations_handbook.md").read_text())
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7 not really")
    proc = _ingest(str(folder), data_dir=tmp_path / "data")
    assert proc.returncode == 2, proc.stderr
    assert "1 of 2 files failed (exit status 2); the others are saved" in proc.stderr
    assert proc.stderr.count("broken.pdf") == 1  # each failure said once
    report = json.loads(_ingest(str(folder), "--json", data_dir=tmp_path / "data").stdout)
    assert report["unchanged"] == 1 and len(report["failed"]) == 1


def test_an_unchanged_file_keeps_its_warnings_and_nothing_is_said_about_embeddings(tmp_path: Path) -> None:
    pdf = text_pdf(tmp_path / "half_scanned.pdf", [[("Termination needs 90 days notice.", False)], []])
    data = tmp_path / "data"
    first = _ingest(str(pdf), "--json", data_dir=data)
    warnings = json.loads(first.stdout)["files"][0]["warnings"]
    assert any("no text layer on pages 2" in w for w in warnings)
    again = json.loads(_ingest(str(pdf), "--json", data_dir=data).stdout)
    assert again["unchanged"] == 1 and again["files"][0]["warnings"] == warnings
    plain = _ingest(str(pdf), data_dir=data)
    assert "1 unchanged" in plain.stdout and "embeddings skipped" not in plain.stdout
    assert "no text layer on pages 2" in plain.stderr


def test_read_only_commands_never_create_a_data_home_and_name_the_one_in_use(tmp_path: Path) -> None:
    home = tmp_path / "not-here"
    env = {**os.environ, "DOCQA_DATA_DIR": str(home)}
    for args in (["ask", "what is the notice period?"], ["docs", "list"], ["check"]):
        proc = subprocess.run([*DOCQA, *args], capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
        assert proc.returncode == 1, args
        assert f"no docqa data home at {home}" in proc.stderr and "--data-dir, DOCQA_DATA_DIR" in proc.stderr
        assert "Traceback" not in proc.stderr
    assert not home.exists() and not (tmp_path / "indexes").exists()

    data = tmp_path / "data"
    assert _ingest(str(SAMPLE_DOCS / "operations_handbook.md"), data_dir=data).returncode == 0
    proc = subprocess.run(
        [*DOCQA, "docs", "list", "--collection", "contracts"],
        capture_output=True,
        text=True,
        env={**os.environ, "DOCQA_DATA_DIR": str(data)},
        timeout=60,
    )
    assert proc.returncode == 1
    assert "collection 'contracts' does not exist" in proc.stderr and f"data home in use: {data}" in proc.stderr


def test_a_bad_setting_is_one_line_naming_its_variable_not_a_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "DOCQA_DATA_DIR": str(tmp_path / "data"), "DOCQA_LLM_N_CTX": "lots"}
    proc = subprocess.run([*DOCQA, "docs", "list"], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "Error: invalid settings: DOCQA_LLM_N_CTX='lots': Input should be a valid integer" in proc.stderr
    # a rule across two fields names their group
    env = {**os.environ, "DOCQA_DATA_DIR": str(tmp_path / "data"), "DOCQA_CHUNKING_MAX_TOKENS": "100"}
    proc = subprocess.run([*DOCQA, "docs", "list"], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "DOCQA_CHUNKING: chunking.overlap_tokens must be smaller than chunking.max_tokens" in proc.stderr
    # a database URL is named without its value (its password)
    env = {**os.environ, "DOCQA_DATA_DIR": str(tmp_path / "data"), "DOCQA_DATABASE_URL": "mysql://u:secret@host/db"}
    proc = subprocess.run([*DOCQA, "docs", "list"], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "secret" not in proc.stderr
    assert "invalid settings: DOCQA_DATABASE_URL: not a Postgres URL" in proc.stderr


def test_a_broken_toml_an_unusable_data_home_and_a_bad_port_are_one_line_each(tmp_path: Path) -> None:
    """Issue 41, item 9: each of these printed a traceback (tomllib's, mkdir's under /proc, the socket's)."""
    bad_toml = tmp_path / "config" / "docqa.toml"
    bad_toml.parent.mkdir()
    bad_toml.write_text("data_dir = [\n")
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    cases = [
        (["docs", "list"], {"DOCQA_CONFIG": str(bad_toml)}, f"invalid settings: {bad_toml} is not valid TOML"),
        (
            ["ingest", "--no-embeddings", str(SAMPLE_DOCS)],
            {"DOCQA_DATA_DIR": str(a_file / "data")},
            f"data home {a_file / 'data'} cannot be used: Not a directory",
        ),
        (
            ["ingest", "--no-embeddings", str(SAMPLE_DOCS)],
            {"DOCQA_DATA_DIR": "/proc/docqa-data"},
            "data home /proc/docqa-data cannot be used",
        ),
        (["db", "upgrade"], {"DOCQA_DATA_DIR": str(a_file / "data")}, "cannot be used: Not a directory"),
        (["serve", "--port", "99999"], {}, "'--port': 99999 is not in the range 0<=x<=65535"),
        # issue 62 item 6: a database down, or named postgres:// as other tools write it, was a driver's traceback
        (
            ["db", "status"],
            {"DOCQA_DATABASE_URL": "postgresql+psycopg://u:secret@127.0.0.1:1/x"},
            "database postgresql+psycopg://u:***@127.0.0.1:1/x is unavailable: connection failed",
        ),
        (
            ["db", "upgrade"],
            {"DOCQA_DATABASE_URL": "postgres://u:secret@127.0.0.1:1/x"},
            "database postgresql+psycopg://u:***@127.0.0.1:1/x is unavailable: connection failed",
        ),
    ]
    for args, env, said in cases:
        proc = subprocess.run(
            [*DOCQA, *args], capture_output=True, text=True, env={**os.environ, **env}, timeout=60, cwd=tmp_path
        )
        assert proc.returncode != 0 and "Traceback" not in proc.stderr, (args, proc.stderr[-2000:])
        assert said in proc.stderr, (args, proc.stderr[-2000:])


def test_the_cli_says_why_an_answer_ended() -> None:
    """Issue 40, item 5: a cut at the token limit, a repetition stop and a cached replay were silent."""
    from docqa.cli.ask import ending_note
    from docqa.core.events import DoneEvent
    from docqa.core.types import Timings

    def done(reason: str, cached: bool = False) -> DoneEvent:
        return DoneEvent(Timings(), reason, cached=cached)

    assert ending_note(done("stop")) is None
    assert "token limit" in (ending_note(done("length")) or "")
    assert "repeating" in (ending_note(done("repetition")) or "")
    assert "answer cache" in (ending_note(done("stop", cached=True)) or "")


def test_serving_beyond_loopback_without_keys_is_warned_about() -> None:
    """Issue 41, item 13: a keyless node on 0.0.0.0 served completions, tokenize and embeddings to anyone."""
    from docqa.cli.serve import open_bind_warning

    assert open_bind_warning("127.0.0.1", "", False) is None and open_bind_warning("::1", "", True) is None
    assert open_bind_warning("localhost", "", False) is None
    assert open_bind_warning("0.0.0.0", "k1,k2", True) is None  # keys on: no warning
    node = open_bind_warning("0.0.0.0", "", True)
    assert node is not None and "without API keys" in node and "generate, tokenize and embed" in node
    assert "ask, upload and delete" in (open_bind_warning("192.168.1.5", " ", False) or "")


def test_serve_on_a_taken_port_says_so_before_loading_anything(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        env = {**os.environ, "DOCQA_DATA_DIR": str(tmp_path / "data")}
        started = time.monotonic()
        proc = subprocess.run(
            [*DOCQA, "serve", "--port", str(port)], capture_output=True, text=True, env=env, timeout=60
        )
    assert proc.returncode == 1 and "serving on" not in proc.stdout
    assert f"cannot serve on 127.0.0.1:{port}: the address is already in use" in proc.stderr
    assert time.monotonic() - started < 20  # no model was loaded (it was 6.5 s after the model, before)


def test_ctrl_c_during_ingest_says_one_line_and_no_traceback(tmp_path: Path) -> None:
    """Issue 62 item 9: Ctrl+C (SIGINT to the terminal's whole process group) printed the reading child's
    KeyboardInterrupt traceback above docqa's own line."""
    slow = slow_pdf(tmp_path / "slow.pdf")
    env = {**os.environ, "DOCQA_DATA_DIR": str(tmp_path / "data"), "DOCQA_INGEST_OCR": "off"}
    proc = subprocess.Popen(
        [*DOCQA, "ingest", "--no-embeddings", str(slow)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group, as a terminal's foreground job
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(4)  # the reading child is at the PDF (about 10 s of PDFium)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err


def test_a_worker_says_each_job_once(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 62 item 10: every job line of `docqa worker` came twice (its own handler, then the root's)."""
    import logging

    from docqa.cli.worker import _say_each_job

    jobs = logging.getLogger("docqa.service.jobs")
    before = (list(jobs.handlers), jobs.level, jobs.propagate)
    root = logging.getLogger()
    stream = logging.StreamHandler(sys.stderr)
    root.addHandler(stream)  # as make_settings' basicConfig leaves it
    try:
        _say_each_job()
        jobs.info("ingest job 7 (a.pdf): added, 12 pages")
        assert capsys.readouterr().err.count("ingest job 7 (a.pdf)") == 1
    finally:
        root.removeHandler(stream)
        jobs.handlers[:], jobs.level, jobs.propagate = before


def test_one_file_of_one_page_is_counted_in_the_singular(tmp_path: Path) -> None:
    proc = _ingest(str(SAMPLE_DOCS / "services_agreement_en.txt"), data_dir=tmp_path / "data")
    assert proc.returncode == 0, proc.stderr
    assert "1 added, 0 updated, 0 unchanged, 0 failed; 1 chunk from 1 page in " in proc.stdout, proc.stdout
