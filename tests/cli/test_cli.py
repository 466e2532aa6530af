"""The `docqa` command as a user runs it: real subprocesses, real models, JSON output."""

from __future__ import annotations

import ctypes
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from docqa.cli.main import main
from tests.support.paths import SAMPLE_DOCS

pytestmark = pytest.mark.slow
DOCQA = [sys.executable, "-m", "docqa"]


def run(
    *args: str, data_dir: Path, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**(env or os.environ), "DOCQA_DATA_DIR": str(data_dir), "DOCQA_LLM_N_CTX": "4096"}
    proc = subprocess.run([*DOCQA, *args], capture_output=True, text=True, env=env, timeout=600)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_ingest_ask_list_check_rm(tmp_path: Path, sample_index: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(sample_index, data)

    ingest = json.loads(run("ingest", str(SAMPLE_DOCS), "--json", data_dir=data).stdout)
    assert ingest["unchanged"] == 4 and ingest["added"] == 0 and ingest["failed"] == []

    out = json.loads(
        run(
            "ask", "What was Northwind's revenue in 2025?", "--json", "--max-tokens", "16", "--seed", "1", data_dir=data
        ).stdout
    )
    assert set(out) >= {"answer", "reasoning", "mode", "citations", "timings"}
    assert set(out["timings"]) >= {"retrieval_ms", "ttft_ms", "total_ms", "prompt_tokens", "completion_tokens"}
    top = max(out["citations"], key=lambda c: c["score"])
    assert (top["document"], top["page"]) == ("annual_report_2025.pdf", 2)

    streamed = run("ask", "Who is the CEO of Northwind?", "--max-tokens", "8", "--verbose", data_dir=data)
    assert "Sources:" in streamed.stdout and "annual_report_2025.pdf" in streamed.stdout
    # one question, one sequence: no KV cells for a server's parallel requests and cached prompts
    assert "batching engine: 1 parallel sequences of up to 4096 tokens, 4096 KV cells" in streamed.stderr

    docs = json.loads(run("docs", "list", "--json", data_dir=data).stdout)
    assert len(docs) == 4
    kinds = sorted({d["catalog"]["kind"] for d in docs})  # the annual report reads as a filing, the rest not
    plain = [d["name"] for d in docs if d["catalog"]["kind"] == "document"]
    listed = json.loads(run("docs", "list", "--json", "--where", "kind=document", data_dir=data).stdout)
    assert [d["name"] for d in listed] == plain
    for command in (("docs", "list"), ("ask", "What was the revenue?")):  # a filter matching nothing says so
        none = run(*command, "--where", "kind=memo", data_dir=data, check=False)
        said = f"no document has kind=memo; the values of kind there are: {', '.join(kinds)}"
        assert none.returncode == 1 and said in none.stderr, none.stderr
    assert json.loads(run("check", "--json", data_dir=data).stdout) == {"ok": True, "problems": [], "repaired": False}

    run("docs", "rm", str(docs[0]["id"]), data_dir=data)
    assert len(json.loads(run("docs", "list", "--json", data_dir=data).stdout)) == 3


def test_errors_are_one_line_without_traceback(tmp_path: Path) -> None:
    proc = run("ask", "q", "--collection", "missing", data_dir=tmp_path, check=False)
    assert proc.returncode == 1
    assert f"no docqa data home at {tmp_path}" in proc.stderr and "Traceback" not in proc.stderr

    env_proc = subprocess.run(
        [*DOCQA, "ingest", "x.txt"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DOCQA_DATA_DIR": str(tmp_path), "DOCQA_EMBED_MODEL": "/no/such.gguf"},
    )
    assert env_proc.returncode == 1
    assert "model file not found: /no/such.gguf" in env_proc.stderr and "DOCQA_EMBED_MODEL" in env_proc.stderr


def test_bm25_only_ingest_reports_it(tmp_path: Path) -> None:
    proc = run("ingest", str(SAMPLE_DOCS / "operations_handbook.md"), "--no-embeddings", data_dir=tmp_path)
    assert "1 added" in proc.stdout and "(--no-embeddings): these files are found by BM25" in proc.stdout
    # With the default (auto) retriever nothing is embedded; asked to (hybrid), it is.
    proc = run("ingest", str(SAMPLE_DOCS / "services_agreement_en.txt"), "--json", data_dir=tmp_path)
    report = json.loads(proc.stdout)
    assert report["added"] == 1 and report["embeddings"] is False and report["tokens_embedded"] == 0
    plain = run("ingest", str(SAMPLE_DOCS / "annual_report_2025.pdf"), data_dir=tmp_path).stdout
    assert "no embeddings made: the retriever is BM25 keyword search (the default)" in plain  # no riddle
    env = {**os.environ, "DOCQA_RETRIEVAL_RETRIEVER": "hybrid"}
    proc = run("ingest", str(SAMPLE_DOCS / "supply_contract_zh.txt"), "--json", data_dir=tmp_path, env=env)
    assert json.loads(proc.stdout)["embeddings"] is True


def test_index_mismatch_is_reported_and_repaired(tmp_path: Path, sample_index: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(sample_index, data)
    for f in (data / "vectors").glob("*.faiss"):
        f.write_bytes(f.read_bytes()[:64])  # truncated, as by a crash mid-copy
    bad = run("check", "--json", data_dir=data, check=False)
    assert bad.returncode == 1 and json.loads(bad.stdout)["ok"] is False
    fixed = json.loads(run("check", "--repair", "--json", data_dir=data).stdout)
    assert fixed["repaired"] is True
    assert json.loads(run("check", "--json", data_dir=data).stdout)["ok"] is True


def test_shell_completion_script_and_help() -> None:
    from click.testing import CliRunner

    runner = CliRunner()
    script = runner.invoke(main, ["completion", "bash"])
    assert script.exit_code == 0 and "_DOCQA_COMPLETE=bash_complete" in script.output
    helped = runner.invoke(main, ["--help"])
    assert helped.exit_code == 0
    for command in ("ingest", "ask", "serve", "models", "check", "docs", "completion"):
        assert f"  {command} " in helped.output


def _interrupt(proc: subprocess.Popen[str], target: str) -> None:
    """SIGINT to the process (the kernel hands it to a thread of its choosing), or to one of its threads
    other than the main one, as the kernel may: tgkill(2), x86_64's and aarch64's syscall numbers."""
    if target == "process":
        proc.send_signal(signal.SIGINT)
        return
    tgkill = {"x86_64": 234, "aarch64": 131}[platform.machine()]
    others = sorted(int(tid) for tid in os.listdir(f"/proc/{proc.pid}/task") if int(tid) != proc.pid)
    assert ctypes.CDLL(None, use_errno=True).syscall(tgkill, proc.pid, others[-1], signal.SIGINT) == 0


@pytest.mark.parametrize("target", ["process", "a worker thread"])
def test_ctrl_c_during_a_long_prompt_exits_at_once(tmp_path: Path, target: str) -> None:
    """Ctrl+C while llama.cpp reads a long prompt: out within seconds, not after its current pass (a
    2,048-token pass of the demo model takes ~8 s on 2 cores; closing used to wait for it). Also when the
    signal lands on another thread than the main one (the CLI waited for the next event without waking,
    held past the whole prompt: seen in a loaded CI run)."""
    report = tmp_path / "report.txt"
    report.write_text(
        "\n\n".join(
            f"Section {i}. Depot {i} shipped {100 + i} crates of spare parts to plant {i % 7}." for i in range(900)
        ),
        encoding="utf-8",
    )
    data = tmp_path / "data"
    run("ingest", str(report), "--no-embeddings", data_dir=data)
    env = {**os.environ, "DOCQA_DATA_DIR": str(data), "DOCQA_LLM_PROMPT_BUDGET": "100000", "PYTHONFAULTHANDLER": "1"}
    if target == "a worker thread":  # one step reads the whole prompt (tens of seconds): no event comes before
        env |= {"DOCQA_LLM_N_BATCH": "16384", "DOCQA_LLM_N_UBATCH": "16384"}
    proc = subprocess.Popen(
        [*DOCQA, "ask", "How many crates did depot 450 ship?", "--max-tokens", "8", "--top-k", "3", "-v"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as a terminal starts it: a suite started in the background (`cmd &` without job control) runs
        # with SIGINT ignored, which children inherit, and Python then installs no Ctrl+C handler
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    lines: list[str] = []
    loaded = threading.Event()

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "batching engine:" in line:  # the model is loaded (its load time varies with the machine)
                loaded.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    assert loaded.wait(120), "".join(lines)
    time.sleep(2)  # retrieval done in milliseconds; the prompt (3 chunks of ~4k tokens) takes far longer to read
    assert proc.poll() is None, "".join(lines)
    _interrupt(proc, target)
    signalled = time.monotonic()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:  # where it hangs: every thread's stack (PYTHONFAULTHANDLER), then fail
        proc.send_signal(signal.SIGABRT)
        proc.wait(timeout=30)
        reader.join(timeout=10)
        raise AssertionError("still running 60 s after Ctrl+C:\n" + "".join(lines)[-12000:]) from None
    reader.join(timeout=10)
    err = "".join(lines)
    assert proc.returncode == 130 and "interrupted" in err, err
    assert time.monotonic() - signalled < 5, time.monotonic() - signalled
