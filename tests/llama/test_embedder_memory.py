"""An embedder's memory is bounded per decode (issue 60, item 3): llama.cpp keeps every output token's logits
on the host, and keeps that buffer at its largest, so a model with a 262k-word vocabulary (the demo model)
grew a process by 2.9 GB for one 8,000-character text, and a node was OOM-killed by one request of long
texts. Measured in a child process, whose peak memory is its own; and the node refuses a request by its
tokens before embedding any of it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import numpy as np
import pytest

from docqa.api.state import AppState
from docqa.core.settings import EmbedSettings
from docqa.llama.embedder import LlamaEmbedder
from docqa.service.node import MAX_EMBED_REQUEST_TOKENS, ModelNode
from tests.support.live_server import free_port, serve_state
from tests.support.paths import make_settings

pytestmark = pytest.mark.slow

_CHILD = """
import json, resource, sys
from pathlib import Path
from docqa.api.state import AppState
from docqa.core.settings import EmbedSettings
from docqa.llama.embedder import LlamaEmbedder
embedder = LlamaEmbedder(Path(sys.argv[1]), EmbedSettings(max_output_mb=int(sys.argv[2])))
loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
text = ("The supplier shall deliver the goods within thirty days of the order. " * 120)[:8000]
embedder.embed_documents([text])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"window": embedder.window, "grew_mb": (peak - loaded) / 1024}))
"""


def test_one_long_text_costs_at_most_the_output_bound(demo_model: Path) -> None:
    found = subprocess.run(
        [sys.executable, "-c", _CHILD, str(demo_model), "256"], capture_output=True, text=True, timeout=600, check=True
    )
    result = json.loads(found.stdout.strip().splitlines()[-1])
    assert result["window"] < 200  # 256 MB over 2 x 4 bytes x (262,144 words + 640 dims) a token
    assert result["grew_mb"] < 256 + 150, result  # the bound, and some room for llama.cpp's other buffers


def test_a_text_longer_than_the_bound_is_embedded_in_pieces(demo_model: Path) -> None:
    bounded = LlamaEmbedder(demo_model, EmbedSettings(max_output_mb=16))
    try:
        assert bounded.window == 32  # the least piece
        text = "Section 7. The supplier shall deliver the goods within thirty days of each order. " * 3
        pieces = bounded._windows(text)
        assert len(pieces) > 1 and all(len(p) <= 32 for p in pieces)
        vector = bounded.embed_documents([text])[0]
        assert np.isfinite(vector).all() and abs(float(np.linalg.norm(vector)) - 1) < 1e-4
    finally:
        bounded.close()


def test_the_node_refuses_a_request_of_too_many_tokens_before_embedding(
    embedder: LlamaEmbedder, tmp_path: Path
) -> None:
    node = ModelNode(None, embedder)  # the session's embedder: not closed here
    state = AppState(make_settings(tmp_path / "never"), generator_only=True, node=node)
    texts = ["clause " * 9_000] * 15  # within the characters a request may bring (15 x 63,000), 135,000 tokens
    with serve_state(state, free_port()) as base:
        refused = httpx.post(f"{base}/v1/embeddings", json={"input": texts}, timeout=60)
        assert refused.status_code == 400, refused.text
        assert f"more than {MAX_EMBED_REQUEST_TOKENS:,} tokens" in refused.json()["error"]["message"]
        fine = httpx.post(f"{base}/v1/embeddings", json={"input": ["Section 7. Delivery."]}, timeout=60)
        assert fine.status_code == 200 and len(fine.json()["data"]) == 1
