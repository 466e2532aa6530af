"""docqa generating through a server nobody here wrote: llama-cpp-python's own OpenAI-compatible server
(`python -m llama_cpp.server`, its `server` extra) on the demo model, started once for the module."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from docqa.components import load_generator
from docqa.core.requests import AskRequest
from docqa.core.sampling_params import NON_THINKING_SAMPLING
from docqa.core.settings import LLMSettings
from docqa.llama.embedder import LlamaEmbedder
from docqa.llama.serial_generator import LlamaGenerator
from docqa.service import DocQA
from tests.support.live_server import free_port
from tests.support.paths import SAMPLE_DOCS, make_settings
from tests.support.reading import assert_every_document_read_once

pytestmark = pytest.mark.slow
GREEDY = replace(NON_THINKING_SAMPLING, temperature=0.0, max_tokens=24, seed=7)


@pytest.fixture(scope="module")
def llama_server(demo_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(demo_model), "--host", "127.0.0.1"]
    command += ["--port", str(port), "--n_ctx", "4096", "--model_alias", "demo"]
    with log.open("w") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_endpoint_generates_the_in_process_greedy_text(llama_server: str, demo_model: Path, tmp_path: Path) -> None:
    settings = LLMSettings(model=demo_model, endpoint=llama_server, n_ctx=4096)
    remote = load_generator(make_settings(tmp_path, llm=settings))
    local = LlamaGenerator(demo_model, LLMSettings(n_ctx=4096))
    try:
        prompt = "Question: Name three colours of the rainbow.\nAnswer:"
        assert remote.count_tokens(prompt) == local.count_tokens(prompt)  # the GGUF's vocabulary, no weights
        assert remote.info.model_id == f"demo@{llama_server}"
        assert remote.info.prompt_format == local.info.prompt_format  # read from the same GGUF
        there = list(remote.submit(prompt, GREEDY))
        here = list(local.submit(prompt, GREEDY))
        text = "".join(e.text for e in there if e.kind == "text")
        assert text and text == "".join(e.text for e in here if e.kind == "text")
        assert there[-1].kind == "finished" and there[-1].prompt_tokens > 0 and there[-1].completion_tokens > 0
        unnamed = load_generator(make_settings(tmp_path, llm=LLMSettings(endpoint=llama_server)))  # no GGUF
        assert abs(unnamed.count_tokens(prompt) - local.count_tokens(prompt)) <= 1  # its /extras/tokenize (BOS aside)
    finally:
        local.close()
        remote.close()


def test_docqa_answers_through_the_endpoint(llama_server: str, demo_model: Path, tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data", llm=LLMSettings(model=demo_model, endpoint=llama_server))
    qa = DocQA(settings, None, load_generator(settings))
    try:
        qa.ingest([SAMPLE_DOCS])
        answer = qa.ask(AskRequest("What was the revenue in 2025?", max_tokens=32, use_cache=False))
        # the demo base model may stop at once (a plain prompt's stop strings): what is checked is the path
        assert answer.citations and answer.finish_reason in ("stop", "length")
        assert answer.timings.prompt_tokens > 500 and answer.timings.completion_tokens >= 1
    finally:
        qa.close()


def test_docqa_answers_through_the_servers_chat_route(llama_server: str, demo_model: Path, tmp_path: Path) -> None:
    """DOCQA_LLM_ENDPOINT_API=chat: the prompt's turns as messages, the server's own chat template (the
    base demo model has none in its GGUF: its turns are written in Gemma's form, the server picks its own)."""
    llm = LLMSettings(model=demo_model, endpoint=llama_server, endpoint_api="chat", prompt_format="gemma")
    settings = make_settings(tmp_path / "data", llm=llm)
    qa = DocQA(settings, None, load_generator(settings))
    try:
        qa.ingest([SAMPLE_DOCS])
        answer = qa.ask(AskRequest("What was the revenue in 2025?", max_tokens=32, use_cache=False))
        # the server read the messages (their tokens, by its own count, hold the sources); the base model in
        # a chat template may end its turn at once: what is checked is the path
        assert answer.citations and answer.finish_reason in ("stop", "length", "repetition")
        assert answer.timings.prompt_tokens > 500
    finally:
        qa.close()


def test_a_collection_question_is_read_through_the_endpoint(
    llama_server: str, demo_model: Path, sample_index: Path, embedder: LlamaEmbedder, tmp_path: Path
) -> None:
    """Every document's finding prompt sent to the server at once (it reads them one after another): each
    document read once, the answer's table naming all four, each citation in its own document."""
    data = tmp_path / "data"
    shutil.copytree(sample_index, data)
    settings = make_settings(data, llm=LLMSettings(model=demo_model, endpoint=llama_server))
    qa = DocQA(settings, embedder, load_generator(settings))
    try:
        question = "Which of these documents mention 2025 or a notice period?"
        assert_every_document_read_once(qa, AskRequest(question, seed=3, max_tokens=24))
    finally:
        qa.close()
