"""Shared fixtures. Real components throughout: the demo GGUF through llama.cpp, FAISS, SQLite files.

The loaded models are shared by the whole session (loading is the slow part); each test that writes
gets its own data directory.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DOCS = ROOT / "sample_docs"
SHARED = Path(os.environ.get("DOCQA_SHARED_DIR", ROOT.parent / "shared"))
QWEN_VOCAB = Path(os.environ.get("DOCQA_QWEN_VOCAB", SHARED / "tools" / "ggml-vocab-qwen2.gguf"))


@pytest.fixture(scope="session")
def demo_model() -> Path:
    from docqa.models import demo_model_path

    return demo_model_path()


@pytest.fixture(scope="session")
def embedder(demo_model: Path):  # type: ignore[no-untyped-def]
    from docqa.settings import EmbedSettings
    from ingest.embedding import LlamaEmbedder

    return LlamaEmbedder(demo_model, EmbedSettings())


@pytest.fixture(scope="session")
def generator(demo_model: Path):  # type: ignore[no-untyped-def]
    """The default engine (continuous batching), as `docqa serve` runs it."""
    from docqa.engine.batching import BatchingGenerator
    from docqa.settings import LLMSettings

    gen = BatchingGenerator(demo_model, LLMSettings(n_ctx=4096, n_parallel=4, max_queue=8))
    yield gen
    gen.close()


@pytest.fixture(scope="session")
def serial_generator(demo_model: Path):  # type: ignore[no-untyped-def]
    """The one-request-at-a-time fallback (DOCQA_LLM_ENGINE=serial)."""
    from docqa.generation import LlamaGenerator
    from docqa.settings import LLMSettings

    gen = LlamaGenerator(demo_model, LLMSettings(n_ctx=4096, max_queue=4))
    yield gen
    gen.close()


def make_settings(data_dir: Path, **overrides: object):  # type: ignore[no-untyped-def]
    from docqa.settings import Settings

    return Settings(data_dir=data_dir, **overrides)


@pytest.fixture
def settings(tmp_path: Path):  # type: ignore[no-untyped-def]
    return make_settings(tmp_path / "data")


@pytest.fixture
def qa_factory(embedder, generator, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Build DocQA objects over the session's loaded models, each on a data dir of the test's."""
    from docqa.service import DocQA

    opened: list[DocQA] = []

    def make(data_dir: Path | None = None, *, with_embedder: bool = True, **overrides: object) -> DocQA:
        qa = DocQA(
            make_settings(data_dir or tmp_path / "data", **overrides), embedder if with_embedder else None, generator
        )
        opened.append(qa)
        return qa

    yield make
    for qa in opened:
        qa.indexes.save_all()
        qa.store.close()


@pytest.fixture(scope="session")
def sample_index(embedder, generator, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir with sample_docs/ ingested once (the slow step), copied by tests that change it."""
    from docqa.service import DocQA

    data = tmp_path_factory.mktemp("sample-index")
    qa = DocQA(make_settings(data), embedder, generator)
    report = qa.ingest([SAMPLE_DOCS])
    qa.indexes.save_all()
    qa.store.close()
    assert report.count("added") == 4, report.as_dict()
    return data


@pytest.fixture
def sample_qa(sample_index: Path, qa_factory, tmp_path: Path):  # type: ignore[no-untyped-def]
    data = tmp_path / "copy"
    shutil.copytree(sample_index, data)
    return qa_factory(data)


@pytest.fixture(scope="session")
def tiny_qwen3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not QWEN_VOCAB.is_file():
        pytest.skip(f"Qwen vocab GGUF not found at {QWEN_VOCAB} (set DOCQA_QWEN_VOCAB)")
    from tests.tiny_qwen3 import build_tiny_qwen3

    return build_tiny_qwen3(QWEN_VOCAB, tmp_path_factory.mktemp("qwen3") / "tiny-qwen3.gguf")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def sse_events(response: Any) -> Iterator[tuple[str, Any]]:
    """(event, data) of a streamed answer's Server-Sent Events, each as it arrives; response: httpx's."""
    kind = ""
    for line in response.iter_lines():
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            yield kind, json.loads(line[6:])


@contextmanager
def serve_app(settings, qa, port: int) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """docqa's real ASGI app under uvicorn on a loopback port, over an opened DocQA."""
    import uvicorn

    from docqa.api.main import create_app
    from docqa.api.state import AppState

    state = AppState(settings, qa=qa)
    state.loaded.set()
    server = uvicorn.Server(uvicorn.Config(create_app(state=state), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def live_server(sample_qa) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """The app over a copy of the sample index."""
    with serve_app(sample_qa.settings, sample_qa, free_port()) as base:
        yield base
