"""A docqa GPU node's models without a data home: what `docqa serve --generator-only` holds.

Other docqa processes (API processes on machines without a GPU, several of them behind a load balancer)
send it rendered prompts (`POST /v1/completions`, their DOCQA_LLM_ENDPOINT) and texts to embed
(`POST /v1/embeddings`, their DOCQA_EMBED_ENDPOINT); it never reads or writes documents. DocQA offers
the same three calls over its own models, so the node routes serve either.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Literal, Protocol

import numpy as np

from docqa import components
from docqa.core.errors import ConfigError, InvalidRequestError, ModelNotLoadedError
from docqa.core.protocols import Embedder, Generator, Reranker
from docqa.core.sampling_params import SamplingParams
from docqa.core.settings import Settings
from docqa.core.streams import GenerationStream
from docqa.service.status import ServiceStatus

InputType = Literal["query", "document"]


class ModelServer(Protocol):
    """What the node routes need: DocQA and ModelNode both are one."""

    def complete(
        self, prompt: str, params: SamplingParams, loop: asyncio.AbstractEventLoop | None = None
    ) -> GenerationStream: ...

    def count_tokens(self, prompt: str) -> int: ...

    def embed(self, texts: Sequence[str], input_type: InputType) -> tuple[np.ndarray, str]: ...

    def status(self) -> ServiceStatus: ...


def complete(
    generator: Generator | None, prompt: str, params: SamplingParams, loop: asyncio.AbstractEventLoop | None
) -> GenerationStream:
    """A raw prompt on the generator, no retrieval. BusyError when its queue is full."""
    if generator is None:
        raise ConfigError("no generator loaded: this docqa process cannot complete prompts")
    return generator.submit(prompt, params, loop)


def count_tokens(generator: Generator | None, prompt: str) -> int:
    if generator is None:
        raise ConfigError("no generator loaded: this docqa process has no tokenizer")
    return generator.count_tokens(prompt)


def status_of(generator: Generator | None, embedder: Embedder | None, reranker: Reranker | None) -> ServiceStatus:
    """The loaded models by name, and the generator's live state."""
    return ServiceStatus(
        generator=generator.info.model_id if generator else None,
        embedder=embedder.model_id if embedder else None,
        reranker=reranker.model_id if reranker else None,
        engine=generator.stats() if generator else None,
    )


# Tokens of one embeddings request, in the embedder's own tokens: docqa's client sends 16 chunks of at most
# 4,096 generator tokens, so twice that leaves room for another tokenizer. Characters bound nothing: 64,000 of
# them are 8,000 to 64,000 tokens, and each token costs the node a forward pass (and, for a model whose every
# token is an output, ~1 MB of logits a token: docqa.llama.embedder bounds that memory per decode).
MAX_EMBED_REQUEST_TOKENS = 131_072


def _within_tokens(embedder: Embedder, texts: Sequence[str]) -> None:
    """InvalidRequestError, before any embedding, when the texts are more tokens than one request may bring
    (an embedder that cannot count, one behind another endpoint, bounds its own)."""
    count = getattr(embedder, "count_tokens", None)
    if count is None:
        return
    total = 0
    for text in texts:
        total += count(text)
        if total > MAX_EMBED_REQUEST_TOKENS:
            raise InvalidRequestError(
                f"input: more than {MAX_EMBED_REQUEST_TOKENS:,} tokens of this embedder in one request; send the "
                "texts in several requests"
            )


def embed(embedder: Embedder | None, texts: Sequence[str], input_type: InputType) -> tuple[np.ndarray, str]:
    """Vectors of texts, as search would embed them: a query with the model's query instruction (Qwen3-
    Embedding's), documents as they are. With the model's name."""
    if embedder is None:
        raise ModelNotLoadedError("no embedding model loaded here: start the node with DOCQA_EMBED_MODEL set")
    _within_tokens(embedder, texts)
    if input_type == "query":
        return np.vstack([embedder.embed_query(text) for text in texts]), embedder.model_id
    return embedder.embed_documents(texts), embedder.model_id


class ModelNode:
    def __init__(self, generator: Generator | None, embedder: Embedder | None) -> None:
        self.generator = generator
        self.embedder = embedder

    @classmethod
    def open(cls, settings: Settings) -> ModelNode:
        """The generator, and the embedding model where DOCQA_EMBED_MODEL names one."""
        embedder = components.load_node_embedder(settings)
        try:
            return cls(components.load_generator(settings), embedder)
        except BaseException:
            if embedder is not None:
                embedder.close()
            raise

    def complete(
        self, prompt: str, params: SamplingParams, loop: asyncio.AbstractEventLoop | None = None
    ) -> GenerationStream:
        return complete(self.generator, prompt, params, loop)

    def count_tokens(self, prompt: str) -> int:
        return count_tokens(self.generator, prompt)

    def embed(self, texts: Sequence[str], input_type: InputType) -> tuple[np.ndarray, str]:
        return embed(self.embedder, texts, input_type)

    def status(self) -> ServiceStatus:
        return status_of(self.generator, self.embedder, None)

    def close(self) -> None:
        for model in (self.generator, self.embedder):
            if model is not None:
                model.close()
