"""Embedding: the `Embedder` protocol and its llama.cpp implementation (any GGUF, `embedding=True`).

Vectors are L2-normalised so that FAISS inner product is cosine similarity. Texts are embedded in
batches of up to `batch_tokens` tokens; the caller gets progress after every batch.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from docqa.models import cpu_threads, model_label
from docqa.settings import EmbedSettings

logger = logging.getLogger(__name__)

# Qwen3-Embedding's model card: queries carry an instruction, documents are embedded as they are.
QWEN3_EMBEDDING_INSTRUCTION = (
    "Instruct: Given a question about a document, retrieve the passages that answer it\nQuery:"
)


class Embedder(Protocol):
    model_id: str
    dim: int

    def embed_documents(
        self, texts: Sequence[str], on_batch: Callable[[int, int], None] | None = None
    ) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def _pooling_from_metadata(metadata: dict[str, str], choice: str) -> int:
    import llama_cpp

    by_name = {
        "mean": llama_cpp.LLAMA_POOLING_TYPE_MEAN,
        "last": llama_cpp.LLAMA_POOLING_TYPE_LAST,
        "cls": llama_cpp.LLAMA_POOLING_TYPE_CLS,
    }
    if choice != "auto":
        return by_name[choice]
    arch = metadata.get("general.architecture", "")
    declared = metadata.get(f"{arch}.pooling_type")
    if declared is not None and int(declared) > 0:
        return int(declared)
    # A causal LM without a declared pooling (like the demo model): average its token states.
    return llama_cpp.LLAMA_POOLING_TYPE_MEAN


def default_query_instruction(metadata: dict[str, str]) -> str:
    name = (metadata.get("general.name", "") + " " + metadata.get("general.basename", "")).lower()
    if "qwen3" in name and "embedding" in name:
        return QWEN3_EMBEDDING_INSTRUCTION
    return ""


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


class LlamaEmbedder:
    """Embeds with llama-cpp-python. One llama.cpp context is not thread-safe, hence the lock."""

    def __init__(self, model_path: Path, settings: EmbedSettings) -> None:
        import llama_cpp

        self._settings = settings
        metadata = llama_cpp.Llama(str(model_path), vocab_only=True, verbose=False).metadata
        self._llm = llama_cpp.Llama(
            str(model_path),
            embedding=True,
            n_ctx=settings.n_ctx,
            n_batch=settings.n_ctx,
            n_ubatch=settings.n_ctx,  # pooled embeddings need each text inside one micro-batch
            n_gpu_layers=settings.n_gpu_layers,
            n_threads=cpu_threads(settings.n_threads),
            n_threads_batch=cpu_threads(settings.n_threads),
            pooling_type=_pooling_from_metadata(metadata, settings.pooling),
            verbose=False,
        )
        self.model_id = model_label(model_path)
        self.dim = int(self._llm.n_embd())
        self.query_instruction = (
            settings.query_instruction
            if settings.query_instruction is not None
            else default_query_instruction(metadata)
        )
        self._lock = threading.Lock()
        logger.info("embedder %s loaded (%d dims)", self.model_id, self.dim)

    def count_tokens(self, text: str) -> int:
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=True, special=False))

    def embed_documents(self, texts: Sequence[str], on_batch: Callable[[int, int], None] | None = None) -> np.ndarray:
        """Embed texts in token-bounded batches; on_batch(texts_done, tokens_in_batch) after each."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        limit = self._settings.n_ctx
        batch: list[int] = []
        batch_tokens = 0
        done = 0

        def flush() -> None:
            nonlocal batch, batch_tokens, done
            if not batch:
                return
            with self._lock:
                vectors = self._llm.embed([texts[i] for i in batch], normalize=False, truncate=True)
            out[batch] = l2_normalise(np.asarray(vectors, dtype=np.float32))
            done += len(batch)
            if on_batch is not None:
                on_batch(done, batch_tokens)
            batch, batch_tokens = [], 0

        for i, text in enumerate(texts):
            n = min(self.count_tokens(text), limit)
            if batch and batch_tokens + n > self._settings.batch_tokens:
                flush()
            batch.append(i)
            batch_tokens += n
        flush()
        return out

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            vector = self._llm.embed(self.query_instruction + text, normalize=False, truncate=True)
        return l2_normalise(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]
