"""`docqa serve --generator-only`: a node with models and no data home, serving /v1/completions,
/v1/tokenize and /v1/embeddings; and a docqa with no model of its own (DOCQA_LLM_ENDPOINT and
DOCQA_EMBED_ENDPOINT) that ingests, searches by vectors and answers through it. Real HTTP."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from click.testing import CliRunner

from docqa.api.state import AppState
from docqa.cli.main import main
from docqa.core.errors import EndpointError
from docqa.core.requests import AskRequest
from docqa.engine.batching import BatchingGenerator
from docqa.llama.embedder import LlamaEmbedder
from docqa.remote.openai_embedder import OpenAIEmbedder
from docqa.service import DocQA
from docqa.service.node import ModelNode
from tests.support.fake_generator import FakeGenerator
from tests.support.live_server import free_port, serve_app, serve_state, sse_events
from tests.support.paths import SAMPLE_DOCS, make_settings

ANSWER = "The agreement is governed by the laws of England [1]."
QUESTION = "Which law governs the services agreement?"


@pytest.fixture
def bare_node(fake_generator: FakeGenerator, tmp_path: Path) -> Iterator[str]:
    """A node with a generator and no embedder."""
    state = AppState(make_settings(tmp_path / "never"), generator_only=True, node=ModelNode(fake_generator, None))
    with serve_state(state, free_port()) as base:
        yield base


def test_a_node_serves_its_models_and_nothing_of_a_data_home(bare_node: str, tmp_path: Path) -> None:
    health = httpx.get(f"{bare_node}/health").json()
    assert health["status"] == "ok" and health["mode"] == "generator-only" and health["embedder"] is None
    assert httpx.post(f"{bare_node}/v1/tokenize", json={"prompt": "two words"}).json() == {"count": 3}
    assert [m["id"] for m in httpx.get(f"{bare_node}/v1/models").json()["data"]] == ["fake-generator"]
    done = httpx.post(f"{bare_node}/v1/completions", json={"prompt": "Which law?", "max_tokens": 64}, timeout=30)
    assert done.status_code == 200 and "governed by the laws of England" in done.json()["choices"][0]["text"]
    for method, path in (("GET", "/v1/collections"), ("POST", "/v1/ask"), ("GET", "/")):
        assert httpx.request(method, f"{bare_node}{path}").status_code == 404, path
    refused = httpx.post(f"{bare_node}/v1/embeddings", json={"input": "a question"})
    assert refused.status_code == 404 and "DOCQA_EMBED_MODEL" in refused.json()["error"]["message"]
    assert not (tmp_path / "never").exists()  # no data home made


@pytest.mark.slow
def test_a_docqa_without_models_embeds_and_answers_through_the_node(
    fake_generator: FakeGenerator, embedder: LlamaEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The demo model has no query instruction; give it one, to see queries embedded as queries on the node.
    monkeypatch.setattr(embedder, "query_instruction", "Instruct: find the clause\nQuery:")
    node = ModelNode(fake_generator, embedder)  # the session's models: not closed here
    state = AppState(make_settings(tmp_path / "never"), generator_only=True, node=node)
    with serve_state(state, free_port()) as base:
        url = f"{base}/v1"
        texts = ["The supplier shall deliver the goods.", "Either party may terminate on notice."]
        body = httpx.post(f"{url}/embeddings", json={"input": texts}, timeout=60).json()
        sent = np.asarray([row["embedding"] for row in body["data"]])
        assert np.allclose(sent, embedder.embed_documents(texts), atol=1e-5)
        assert len(httpx.get(f"{url}/models").json()["data"]) == 2  # the generator, then the embedder
        remote = OpenAIEmbedder(url, model=None, api_key=None, timeout_s=60)
        assert remote.dim == embedder.dim and remote.model_id == f"{embedder.model_id} via {url}"
        question = "Which law governs the agreement?"
        assert np.allclose(remote.embed_query(question), embedder.embed_query(question), atol=1e-5)
        assert not np.allclose(remote.embed_query(question), remote.embed_documents([question])[0], atol=1e-3)
        remote.close()

        settings = make_settings(
            tmp_path / "client",
            llm={"endpoint": url},  # its model from the node's /v1/models
            embed={"endpoint": url},
            retrieval={"retriever": "hybrid"},
        )
        qa = DocQA.open(settings)
        try:
            assert qa.status().embedder == f"{embedder.model_id} via {url}"
            report = qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt", SAMPLE_DOCS / "operations_handbook.md"])
            assert report.embeddings and report.count("added") == 2
            assert qa.ask(AskRequest(question, use_cache=False)).answer == ANSWER
            assert qa.retrieve(question, 2)[0].document_name == "services_agreement_en.txt"
        finally:
            qa.close()
    assert not (tmp_path / "never").exists()


def test_an_embedding_endpoint_that_cannot_be_reached_is_named(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(EndpointError, match=f"the embedding endpoint {url} cannot be reached"):
        OpenAIEmbedder(url, model=None, api_key=None, timeout_s=5)


@pytest.mark.slow
@pytest.mark.parametrize("thinking", [False, True], ids=["non-thinking", "thinking"])
def test_a_model_less_docqa_answers_as_in_process_through_a_node(
    tiny_qwen3: Path, tmp_path: Path, thinking: bool
) -> None:
    """The same seed: the same answer and reasoning in-process and through a --generator-only node (a
    Qwen3-architecture model, so the two modes' prompts and sampling really differ), by the library and by
    the REST stream. Sampled at 0.7, not greedy: this random-weight model's greedy choice is a blank token
    over and over, which the runaway check ends at once (an empty answer would prove nothing)."""
    llm = {"model": str(tiny_qwen3), "n_ctx": 4096, "n_parallel": 2, "prefix_cache_slots": 0}
    request = AskRequest(QUESTION, thinking=thinking, temperature=0.7, seed=5, max_tokens=24, use_cache=False)
    docs = [SAMPLE_DOCS / "services_agreement_en.txt", SAMPLE_DOCS / "operations_handbook.md"]

    local = DocQA.open(make_settings(tmp_path / "local", llm=llm))
    try:
        local.ingest(docs)
        here = local.ask(request)
        node = ModelNode(local.generator, None)  # the same engine, now behind HTTP
        state = AppState(local.settings, generator_only=True, node=node)
        with serve_state(state, free_port()) as base:
            # the client reads only the GGUF's vocabulary, to count tokens and pick Qwen3's template
            client_llm = {"endpoint": f"{base}/v1", "model": str(tiny_qwen3), "n_ctx": 4096}
            remote = DocQA.open(make_settings(tmp_path / "client", llm=client_llm))
            try:
                remote.ingest(docs)
                there = remote.ask(request)
                with serve_app(remote.settings, remote, free_port()) as api:
                    body = {"question": QUESTION, "thinking": thinking, "temperature": 0.7, "seed": 5,
                            "max_tokens": 24, "cache": False, "stream": True}  # fmt: skip
                    with httpx.stream("POST", f"{api}/v1/ask", json=body, timeout=120) as r:
                        events = list(sse_events(r))
                    chat = {"model": "docqa/default", "messages": [{"role": "user", "content": QUESTION}],
                            "temperature": 0.7, "seed": 5, "max_tokens": 24,
                            "chat_template_kwargs": {"enable_thinking": thinking}}  # fmt: skip
                    openai = httpx.post(f"{api}/v1/chat/completions", json=chat, timeout=120).json()
                env = {"DOCQA_DATA_DIR": str(tmp_path / "client"), "DOCQA_LLM_ENDPOINT": f"{base}/v1",
                       "DOCQA_LLM_MODEL": str(tiny_qwen3), "DOCQA_LLM_N_CTX": "4096"}  # fmt: skip
                mode = "--think" if thinking else "--no-think"
                options = ["--seed", "5", "--temperature", "0.7", "--max-tokens", "24", "--no-cache", "--json", mode]
                cli = CliRunner().invoke(main, ["ask", QUESTION, *options], env=env)
            finally:
                remote.close()
    finally:
        local.close()
    assert here.mode == there.mode == ("thinking" if thinking else "non-thinking")
    assert (there.answer, there.reasoning) == (here.answer, here.reasoning)
    assert len(there.answer) > 20 and there.timings.completion_tokens == here.timings.completion_tokens == 24
    assert [c.chunk_id for c in there.citations] == [c.chunk_id for c in here.citations]
    streamed = "".join(data["text"] for kind, data in events if kind == "answer").strip()
    assert streamed == here.answer
    content = openai["choices"][0]["message"]["content"]  # the OpenAI route, through the node: the answer, then
    assert content.split("\n\nSources:")[0].strip() == here.answer and "Sources:" in content  # its sources
    assert cli.exit_code == 0, cli.output
    assert json.loads(cli.stdout)["answer"] == here.answer, cli.output  # `docqa ask`, through the node


def test_a_docqa_without_the_models_file_renders_prompts_the_nodes_way(
    generator: BatchingGenerator, tmp_path: Path
) -> None:
    """Issue 40, item 1: a model-less docqa picked Qwen3's prompt format for the demo model (a Gemma base
    model) served by a node, so the same greedy request read another prompt and answered '<source>...'. The
    node now says its model's format in /v1/models, and the answer through it is the in-process one."""
    state = AppState(make_settings(tmp_path / "never"), generator_only=True, node=ModelNode(generator, None))
    docs = [SAMPLE_DOCS / "services_agreement_en.txt"]
    request = AskRequest(QUESTION, use_cache=False, temperature=0.0, seed=7, max_tokens=24)
    local = DocQA(make_settings(tmp_path / "local"), None, generator)
    local.ingest(docs)
    in_process = local.ask(request)
    local.retriever.close()  # not local.close(): the generator is the session's
    local.store.close()
    with serve_state(state, free_port()) as base:
        listed = httpx.get(f"{base}/v1/models", timeout=10).json()["data"]
        served = generator.info.prompt_format
        assert listed[0]["prompt_format"] == served and served != "qwen3"  # the demo model is a base model
        qa = DocQA.open(make_settings(tmp_path / "client", llm={"endpoint": f"{base}/v1"}), embedder=False)
        try:
            assert qa.generator is not None and qa.generator.info.prompt_format == served
            qa.ingest(docs)
            through = qa.ask(request)
        finally:
            qa.close()
    assert through.timings.prompt_tokens == in_process.timings.prompt_tokens  # the same prompt, token for token
    # Greedy text through the node's batch may part from in-process's after a few dozen characters (CPU
    # float sums differ with the batch); a wrong prompt format answered "<source>..." from the first token.
    assert through.answer[:40] == in_process.answer[:40] and "<source>" not in through.answer


def test_a_nodes_completion_is_tokenized_outside_the_engines_loop(
    generator: BatchingGenerator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The node's /v1/completions counts the prompt in a worker thread, and the engine takes those tokens:
    tokenized in its loop, a 16-ask burst of 12k-token prompts held a GPU node's steps back ~0.4 s."""
    threads: list[str] = []
    tokenize = generator.llama.tokenize

    def recording(text: str, special: bool = True) -> list[int]:
        threads.append(threading.current_thread().name)
        return tokenize(text, special)

    monkeypatch.setattr(generator.llama, "tokenize", recording)
    monkeypatch.setattr(generator.tokenized, "_tokenize", recording)
    state = AppState(make_settings(tmp_path / "never"), generator_only=True, node=ModelNode(generator, None))
    prompt = "The depot ledger lists crates of roof tiles, slate and timber. Which crate holds slate?"
    with serve_state(state, free_port()) as base:
        done = httpx.post(f"{base}/v1/completions", json={"prompt": prompt, "max_tokens": 4}, timeout=60)
    assert done.status_code == 200 and done.json()["usage"]["prompt_tokens"] > 10
    assert threads and "docqa-batching" not in threads, threads
