"""The composition root: which generator, embedder and reranker the settings name, built and loaded.

The only module that knows every backend; the service asks it for models and talks to them through
docqa.core.protocols. A remote generator or another vector store is added here, not in its callers.
"""

from __future__ import annotations

import logging

from docqa.core.errors import ConfigError
from docqa.core.protocols import Embedder, Generator, Reranker
from docqa.core.settings import Settings
from docqa.engine.batching import BatchingGenerator
from docqa.llama.embedder import LlamaEmbedder
from docqa.llama.model_files import resolve_model
from docqa.llama.reranker import LlamaReranker
from docqa.llama.serial_generator import LlamaGenerator
from docqa.llama.vocab import VocabCounter
from docqa.remote.openai_generator import OpenAIGenerator
from docqa.retrieval.retriever import Retriever

logger = logging.getLogger(__name__)


def load_generator(settings: Settings) -> Generator:
    """The generator the settings name (the batching engine by default), its model loaded now; with an
    endpoint, the remote server, tokens counted by the configured GGUF's vocabulary."""
    if settings.llm.endpoint and settings.llm.model is None:
        raise ConfigError(
            "DOCQA_LLM_ENDPOINT needs DOCQA_LLM_MODEL: the served model's GGUF, or a vocabulary-only GGUF of it "
            "(only its tokenizer is read, to fit prompts to the context)"
        )
    path = resolve_model(settings.llm.model, "generator", "DOCQA_LLM_MODEL", settings.models_path)
    if settings.llm.endpoint:
        counter = VocabCounter(path, settings.llm.prompt_format)
        return OpenAIGenerator(
            settings.llm.endpoint,
            model=settings.llm.endpoint_model,
            api_key=settings.llm.endpoint_api_key,
            timeout_s=settings.llm.endpoint_timeout_s,
            max_in_flight=settings.llm.endpoint_max_in_flight,
            n_ctx=settings.llm.n_ctx,
            prompt_format=counter.prompt_format,
            count_tokens=counter,
            tokenizer_label=counter.label,
        )
    if settings.llm.engine == "batching":
        return BatchingGenerator(path, settings.llm)
    return LlamaGenerator(path, settings.llm)


def load_embedder(settings: Settings) -> Embedder | None:
    """The embedding model, where the retriever searches by vectors; None for keyword search alone."""
    if Retriever.resolve(settings.retrieval.retriever) != "bm25":
        path = resolve_model(settings.embed.model, "embedding", "DOCQA_EMBED_MODEL", settings.models_path)
        return LlamaEmbedder(path, settings.embed)
    if settings.embed.model is not None:
        # `auto` searches by keyword alone (the best on the dev set with every embedder measured), so
        # nothing is embedded: a configured model would only cost ingest time. It is still checked
        # (a wrong path is an error now, not when hybrid is switched on), and the choice said once.
        path = resolve_model(settings.embed.model, "embedding", "DOCQA_EMBED_MODEL", settings.models_path)
        logger.info(
            "retriever %s: keyword search only, %s is not loaded (DOCQA_RETRIEVAL_RETRIEVER=hybrid uses it)",
            settings.retrieval.retriever,
            path.name,
        )
    return None


def load_reranker(settings: Settings) -> Reranker | None:
    if settings.rerank.model is None:
        return None
    path = resolve_model(settings.rerank.model, "reranker", "DOCQA_RERANK_MODEL", settings.models_path)
    return LlamaReranker(path, settings.rerank)
