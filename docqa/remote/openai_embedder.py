"""Embeddings from another server's `POST /embeddings` (OpenAI's form), behind docqa's Embedder protocol:
chosen by DOCQA_EMBED_ENDPOINT, for API processes on machines without a GPU.

docqa's own node (`docqa serve --generator-only` with DOCQA_EMBED_MODEL) embeds as in-process search would:
this client says whether texts are a query or documents (`input_type`, a docqa field other servers
ignore), and the node adds its model's query instruction (Qwen3-Embedding's) to queries. Another server
(vLLM, llama.cpp's server) embeds the text as sent, without that instruction. Texts go in batches of
BATCH_TEXTS; the vectors come back L2-normalised, as the FAISS index wants them. A server that cannot be
reached, times out or answers an error is an EndpointError naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import httpx
import numpy as np

from docqa.core.errors import EndpointError, EndpointTimeoutError

# Texts in one request: chunks of up to 4k tokens each, so a request stays well under servers' body limits.
BATCH_TEXTS = 16


class OpenAIEmbedder:
    def __init__(self, endpoint: str, *, model: str | None, api_key: str | None, timeout_s: float) -> None:
        self.endpoint = endpoint.rstrip("/")
        self._model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout_s, headers=headers)
        probe, name = self._post(["dimension probe"], "document")
        self.dim = int(probe.shape[1])
        self.model_id = f"{name} via {self.endpoint}"

    def embed_documents(self, texts: Sequence[str], on_batch: Callable[[int, int], None] | None = None) -> np.ndarray:
        vectors = [np.zeros((0, self.dim), dtype=np.float32)]
        for start in range(0, len(texts), BATCH_TEXTS):
            batch = list(texts[start : start + BATCH_TEXTS])
            vectors.append(self._post(batch, "document")[0])
            if on_batch is not None:
                on_batch(start + len(batch), 0)
        return np.vstack(vectors)

    def embed_query(self, text: str) -> np.ndarray:
        return self._post([text], "query")[0][0]

    def close(self) -> None:
        self._client.close()

    def _post(self, texts: list[str], input_type: str) -> tuple[np.ndarray, str]:
        body: dict[str, Any] = {"input": texts, "input_type": input_type}
        if self._model:
            body["model"] = self._model
        url = f"{self.endpoint}/embeddings"
        try:
            response = self._client.post(url, json=body)
        except httpx.TimeoutException:
            raise EndpointTimeoutError(f"the embedding endpoint {self.endpoint} did not answer in time") from None
        except httpx.HTTPError as exc:
            raise EndpointError(f"the embedding endpoint {self.endpoint} cannot be reached: {exc}") from None
        if response.status_code != 200:
            raise EndpointError(
                f"the embedding endpoint {self.endpoint} answered {response.status_code}: {response.text[:200]}"
            )
        data = response.json()
        rows = sorted(data["data"], key=lambda row: row["index"])
        vectors = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0), str(data.get("model") or self._model or "embedder")
