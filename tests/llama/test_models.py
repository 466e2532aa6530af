"""`docqa models`: list, pull from a Hugging Face endpoint (a local stand-in, no network) with its
checksum checked, and the one-line fix when a configured model file is missing."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from docqa.core.errors import ConfigError
from docqa.core.settings import LLMSettings
from docqa.llama import model_files as models
from docqa.llama.serial_generator import LlamaGenerator
from tests.support.live_server import free_port
from tests.support.paths import ROOT, SAMPLE_DOCS

PAYLOAD = b"GGUF" + bytes(4096)


def _hub(port: int, advertised_sha: str) -> http.server.ThreadingHTTPServer:
    class Handler(http.server.BaseHTTPRequestHandler):
        def _headers(self) -> None:
            self.send_response(200)
            self.send_header("X-Repo-Commit", "a" * 40)
            self.send_header("ETag", f'"{advertised_sha}"')
            self.send_header("X-Linked-Etag", f'"{advertised_sha}"')
            self.send_header("X-Linked-Size", str(len(PAYLOAD)))
            self.send_header("Content-Length", str(len(PAYLOAD)))
            self.end_headers()

        def do_HEAD(self) -> None:
            self._headers()

        def do_GET(self) -> None:
            self._headers()
            self.wfile.write(PAYLOAD)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def hub_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_DISABLE_TELEMETRY": "1"}
    env["DOCQA_DATA_DIR"] = str(tmp_path / "data")
    yield env


def _docqa(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "docqa", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def _make_data_home(env: dict[str, str]) -> None:
    """One document, BM25 only: `docqa ask` needs a data home to ask before it loads a model."""
    notes = SAMPLE_DOCS / "operations_handbook.md"
    assert _docqa(env, "ingest", "--no-embeddings", str(notes)).returncode == 0


def test_pull_verifies_the_checksum_and_list_shows_the_file(hub_env: dict[str, str], tmp_path: Path) -> None:
    port = free_port()
    server = _hub(port, hashlib.sha256(PAYLOAD).hexdigest())
    try:
        result = _docqa(
            {**hub_env, "HF_ENDPOINT": f"http://127.0.0.1:{port}"}, "models", "pull", "qwen3-embedding-0.6b"
        )
    finally:
        server.shutdown()
    assert result.returncode == 0, result.stderr
    target = tmp_path / "data" / "models" / "Qwen3-Embedding-0.6B-Q8_0.gguf"
    assert target.read_bytes() == PAYLOAD
    assert "sha256 verified" in result.stdout and "DOCQA_EMBED_MODEL=qwen3-embedding-0.6b" in result.stdout

    listing = json.loads(
        _docqa({**hub_env, "DOCQA_EMBED_MODEL": "qwen3-embedding-0.6b"}, "models", "list", "--json").stdout
    )
    assert listing["embedding"] == {"setting": "qwen3-embedding-0.6b", "path": str(target), "present": True}
    assert listing["reranker"] == {"setting": None, "path": None, "present": True, "note": "none (no reranking)"}
    missing = tmp_path / "Qwen3-Reranker-0.6B-Q8_0.gguf"
    shown = _docqa({**hub_env, "DOCQA_RERANK_MODEL": str(missing)}, "models", "list")
    assert f"reranker   {missing} -> {missing}  (missing)" in shown.stdout
    present = {m["name"]: m["present"] for m in listing["known"]}
    assert present == {"qwen3-14b": False, "qwen3-14b-q8": False, "qwen3-embedding-0.6b": True}


def test_a_corrupt_download_is_deleted_with_a_clear_error(hub_env: dict[str, str], tmp_path: Path) -> None:
    port = free_port()
    server = _hub(port, hashlib.sha256(b"something else").hexdigest())
    try:
        result = _docqa({**hub_env, "HF_ENDPOINT": f"http://127.0.0.1:{port}"}, "models", "pull", "qwen3-14b")
    finally:
        server.shutdown()
    assert result.returncode == 1
    assert "checksum mismatch for Qwen3-14B-Q4_K_M.gguf" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "data" / "models" / "Qwen3-14B-Q4_K_M.gguf").exists()


def test_an_unreachable_hub_is_one_clear_line(hub_env: dict[str, str]) -> None:
    env = {**hub_env, "HF_ENDPOINT": f"http://127.0.0.1:{free_port()}", "HF_HUB_ETAG_TIMEOUT": "2"}
    result = _docqa(env, "models", "pull", "qwen3-14b")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: could not download Qwen/Qwen3-14B-GGUF/"), lines


def test_a_missing_model_says_how_to_fix_it_in_one_line(hub_env: dict[str, str]) -> None:
    _make_data_home(hub_env)
    result = _docqa({**hub_env, "DOCQA_LLM_MODEL": "qwen3-14b"}, "ask", "What is the notice period?")
    assert result.returncode == 1
    lines = [line for line in result.stderr.strip().splitlines() if not line.startswith("WARNING")]
    assert len(lines) == 1, lines
    assert "generator model file not found" in lines[0] and "run `docqa models pull qwen3-14b`" in lines[0]


def test_weight_repacking_is_off_only_where_llama_cpp_has_its_amx_kernels(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import llama_cpp

    # The Makefile builds llama.cpp without AMX, so this build repacks (a regression in its flags fails here)
    assert models.weight_repacking_safe()
    monkeypatch.setattr(models, "_amx_warned", False)
    monkeypatch.setattr(llama_cpp, "llama_print_system_info", lambda: b"CPU : AVX512 = 1 | AMX_INT8 = 1 | REPACK = 1 |")
    with caplog.at_level("WARNING", logger="docqa.llama.model_files"):
        assert not models.weight_repacking_safe()
        assert not models.weight_repacking_safe()
    assert caplog.text.count("built with its AMX kernels") == 1
    assert "-mno-amx-int8" in caplog.text


def test_the_serial_engine_refuses_an_amx_build_on_the_cpu_with_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, demo_model: Path
) -> None:
    import llama_cpp

    monkeypatch.setattr(llama_cpp, "llama_print_system_info", lambda: b"CPU : AVX512 = 1 | AMX_INT8 = 1 |")
    with pytest.raises(ConfigError, match="-mno-amx-int8"):
        LlamaGenerator(demo_model, LLMSettings(engine="serial", n_gpu_layers=0))


@pytest.mark.parametrize("engine", ["batching", "serial"])
def test_a_model_file_llama_cpp_cannot_read_is_one_clear_line(
    hub_env: dict[str, str], tmp_path: Path, engine: str
) -> None:
    """A damaged GGUF (here: its magic, then noise) fails with what to check, not llama.cpp's bare
    ValueError and a traceback."""
    damaged = tmp_path / "Qwen3-14B-Q4_K_M.gguf"
    damaged.write_bytes(b"GGUF" + bytes(range(256)) * 64)
    env = {**hub_env, "DOCQA_LLM_MODEL": str(damaged), "DOCQA_LLM_ENGINE": engine}
    _make_data_home(hub_env)
    result = _docqa(env, "ask", "What is the notice period?")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"llama.cpp could not load the model {damaged}: not a GGUF file it can read" in result.stderr
