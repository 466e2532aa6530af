"""An API process generating through an LLM endpoint: started before its node, it waits for it and says so
(issue 40, 2: it failed for good with "offers no tokenize route docqa knows"); once up, /health says when
the node is gone (issue 41, 14: it said "ok" while every ask failed) and recovers when it is back. Real HTTP,
two docqa apps, the node's generator scripted."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from docqa.api.state import AppState
from docqa.core.llm_settings import LLMSettings
from docqa.core.settings import RetrievalSettings
from docqa.service import DocQA
from tests.support.fake_generator import SCRIPT, FakeGenerator
from tests.support.live_server import free_port, serve_app, serve_state
from tests.support.paths import make_settings


@contextmanager
def _node(generator: FakeGenerator, data_dir: Path, port: int) -> Iterator[str]:
    qa = DocQA(make_settings(data_dir), None, generator)
    try:
        with serve_app(qa.settings, qa, port) as base:
            yield base
    finally:
        qa.store.close()


def _until(check: Callable[[], bool], seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return False


def test_the_api_waits_for_its_node_says_when_it_is_gone_and_recovers(
    fake_generator: FakeGenerator, tmp_path: Path
) -> None:
    node_port = free_port()
    settings = make_settings(
        tmp_path / "api",
        llm=LLMSettings(endpoint=f"http://127.0.0.1:{node_port}/v1", endpoint_model="node", endpoint_timeout_s=10),
        retrieval=RetrievalSettings(retriever="bm25"),
    )
    state = AppState(settings)
    with serve_state(state, free_port(), loaded=False) as api:

        def health() -> httpx.Response:
            return httpx.get(f"{api}/health", timeout=10)

        assert _until(lambda: state.waiting_for is not None, 15), "no wait for the endpoint"
        assert "not answering yet" in (state.waiting_for or "") and f":{node_port}" in (state.waiting_for or "")
        r = health()
        assert r.status_code == 503 and r.json()["status"] == "loading"
        early = httpx.post(f"{api}/v1/completions", json={"prompt": "Answer:", "max_tokens": 8}, timeout=10)
        assert early.status_code == 503 and "waiting for the LLM endpoint" in early.json()["error"]["message"]

        with _node(fake_generator, tmp_path / "node", node_port):
            assert _until(lambda: health().status_code == 200), health().text
            done = httpx.post(f"{api}/v1/completions", json={"prompt": "Answer:", "max_tokens": 64}, timeout=30)
            assert done.status_code == 200 and done.json()["choices"][0]["text"] == SCRIPT
        # the node is gone: /health says so within its check interval, naming the endpoint as what is down
        assert _until(lambda: health().status_code == 503), health().text
        gone = health().json()  # no API keys here: the details are open
        assert gone["status"] == "degraded" and gone["down"] == ["llm_endpoint"]
        assert "unreachable" in gone["detail"]["llm_endpoint"]
        with _node(fake_generator, tmp_path / "node", node_port):  # back after a restart
            assert _until(lambda: health().status_code == 200), health().text
            again = httpx.post(f"{api}/v1/completions", json={"prompt": "Answer:", "max_tokens": 64}, timeout=30)
            assert again.status_code == 200 and again.json()["choices"][0]["text"] == SCRIPT
