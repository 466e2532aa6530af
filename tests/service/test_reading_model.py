"""Questions over whole documents and collections on the real demo model and the batching engine: every
document visited once with its citations in it, a stop that frees the engine, a document read whole, and the
CLI's `--scope`."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from docqa.core.events import ReadingEvent
from docqa.core.requests import AskRequest
from docqa.llama.embedder import LlamaEmbedder
from docqa.llama.serial_generator import LlamaGenerator
from docqa.service import DocQA
from tests.support.paths import make_settings
from tests.support.reading import assert_every_document_read_once

pytestmark = pytest.mark.slow
QUESTION = "Which of these documents mention 2025 or a notice period?"


def test_every_document_is_read_once_and_each_citation_is_in_its_own_document(sample_qa: DocQA) -> None:
    events = list(sample_qa.stream(AskRequest(QUESTION, seed=3)))
    reading = [e for e in events if isinstance(e, ReadingEvent)]
    names = {d.name for d in sample_qa.documents()}
    assert sorted(e.document for e in reading) == sorted(names) and reading[-1].read == 4
    answer = sample_qa.ask(AskRequest(QUESTION, seed=3))  # the same answer, from the cache
    assert answer.scope == "collection" and answer.documents_read == 4 and answer.cached
    assert all(name in answer.answer for name in names)
    for citation in answer.citations:  # each source is a passage of the document its citation names
        chunk = sample_qa.chunk(citation.chunk_id)
        assert chunk.document_id == citation.document_id and chunk.document_name == citation.document


def test_stopping_a_collection_question_frees_the_engine(sample_qa: DocQA) -> None:
    generator = sample_qa.generator
    assert generator is not None

    async def stop_after_the_first_document() -> None:
        async for event in sample_qa.astream(AskRequest(QUESTION, use_cache=False, seed=4)):
            if isinstance(event, ReadingEvent):
                return  # the reader goes away: what the API does when its client does

    asyncio.run(stop_after_the_first_document())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (generator.stats().running or generator.stats().waiting):
        time.sleep(0.1)
    stats = generator.stats()
    assert (stats.running, stats.waiting) == (0, 0)


def test_a_document_that_fits_is_read_whole(sample_qa: DocQA) -> None:
    answer = sample_qa.ask(AskRequest("Summarize the operations handbook", max_tokens=24, seed=5))
    assert (answer.scope, answer.documents_read) == ("document", 1)
    assert {c.document for c in answer.citations} == {"operations_handbook.md"}
    handbook = (Path(__file__).resolve().parents[2] / "sample_docs" / "operations_handbook.md").read_text()
    assert answer.timings.prompt_tokens > sample_qa.count_tokens(handbook)  # all of it, and the instructions


def test_the_cli_prints_the_table_and_takes_the_scope(tmp_path: Path, sample_index: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(sample_index, data)
    env = {**os.environ, "DOCQA_DATA_DIR": str(data), "DOCQA_LLM_N_CTX": "4096"}
    ask = [sys.executable, "-m", "docqa", "ask", QUESTION, "--seed", "1"]
    shown = subprocess.run(ask, capture_output=True, text=True, env=env, timeout=600)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("Stated in ") and "of 4 documents." in shown.stdout
    assert "read as a collection question" in shown.stderr
    forced = subprocess.run([*ask, "--scope", "lookup", "--json"], capture_output=True, text=True, env=env, timeout=600)
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["scope"] == "lookup"


def test_the_serial_engine_reads_every_document_of_a_collection_question(
    sample_index: Path, embedder: LlamaEmbedder, serial_generator: LlamaGenerator, tmp_path: Path
) -> None:
    """DOCQA_LLM_ENGINE=serial takes one prompt at a time and queues at most 4: the four finding prompts of a
    collection question over the four sample documents are all read, each cited in its own document."""
    data = tmp_path / "data"
    shutil.copytree(sample_index, data)
    qa = DocQA(make_settings(data), embedder, serial_generator)
    try:
        assert_every_document_read_once(qa, AskRequest(QUESTION, seed=3))
    finally:
        qa.close()
