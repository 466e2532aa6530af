"""The composition root: which generator, embedder and reranker the settings name, built and loaded.

The only module that knows every backend; the service asks it for models and talks to them through
docqa.core.protocols. A remote generator or another vector store is added here, not in its callers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from docqa.core.extras import require
from docqa.core.protocols import Embedder, Generator, Reranker
from docqa.core.settings import Settings
from docqa.engine.batching import BatchingGenerator
from docqa.llama.context import show_llama_log
from docqa.llama.embedder import LlamaEmbedder
from docqa.llama.model_files import resolve_model
from docqa.llama.reranker import LlamaReranker
from docqa.llama.serial_generator import LlamaGenerator
from docqa.llama.vocab import VocabCounter
from docqa.profiles.registry import ProfileSet
from docqa.remote.openai_embedder import OpenAIEmbedder
from docqa.remote.openai_generator import OpenAIGenerator
from docqa.remote.tokenize import ServerTokenCounter
from docqa.retrieval.retriever import Retriever
from docqa.store.consistency import VectorIndexes
from docqa.store.db import SqliteStore
from docqa.store.index_protocols import VectorIndexSet
from docqa.store.postgres.originals import PostgresOriginals
from docqa.store.postgres.store import PostgresStore
from docqa.store.postgres.vectors import PgVectorIndexes
from docqa.store.protocol import Store
from docqa.store.uploads import S3Originals, S3Uploads

logger = logging.getLogger(__name__)


def open_store(settings: Settings, profiles: ProfileSet) -> tuple[Store, VectorIndexSet]:
    """The store and its vector indexes: Postgres with pgvector when DOCQA_DATABASE_URL names one, else
    SQLite with FAISS files in the data home; `profiles` read each document's identity and catalog."""
    if settings.database_url:
        require("psycopg", "DOCQA_DATABASE_URL (a Postgres store)")
        require("procrastinate", "DOCQA_DATABASE_URL (its schema holds the ingestion queue's)")
        store = PostgresStore(settings.database_url, reader=profiles)
        return store, PgVectorIndexes(store)
    sqlite = SqliteStore(settings.database_path, reader=profiles)
    return sqlite, VectorIndexes(sqlite, settings.vectors_dir, settings.auto_repair)


def shared_originals(settings: Settings, store: Store) -> PostgresOriginals | S3Originals | None:
    """Where every process of a deployment reads uploaded originals: the object store that queued uploads
    wait in, where one is configured, else the database when it is shared (Postgres); on one box, none."""
    if not isinstance(store, PostgresStore):
        return None
    if settings.ingest.upload_store:
        return S3Originals(S3Uploads(settings.ingest.upload_store))
    return PostgresOriginals(store)


def load_generator(settings: Settings) -> Generator:
    """The generator the settings name (the batching engine by default), its model loaded now; with an
    endpoint, the remote server (_endpoint_generator)."""
    if settings.llm.endpoint:
        return _endpoint_generator(settings)
    path = resolve_model(settings.llm.model, "generator", "DOCQA_LLM_MODEL", settings.models_path)
    show_llama_log(settings.llama_log)
    if settings.llm.engine == "batching":
        return BatchingGenerator(path, settings.llm)
    return LlamaGenerator(path, settings.llm)


def _endpoint_generator(settings: Settings) -> Generator:
    """The remote server; prompt tokens counted by the served model's GGUF vocabulary when DOCQA_LLM_MODEL
    names one (no weights read), else by the server's tokenize route (the prompt format then as configured,
    Qwen3's by default)."""
    llm = settings.llm
    assert llm.endpoint is not None
    count: Callable[[str], int]
    if llm.model is not None:
        vocab = VocabCounter(
            resolve_model(llm.model, "generator", "DOCQA_LLM_MODEL", settings.models_path), llm.prompt_format
        )
        count, label, prompt_format = vocab, vocab.label, vocab.prompt_format
    else:
        server = ServerTokenCounter(llm.endpoint, llm.endpoint_model, llm.endpoint_api_key, llm.endpoint_timeout_s)
        count, label = server, server.label
        prompt_format = llm.prompt_format  # auto: the node says its model's; another server, Qwen3's
    return OpenAIGenerator(
        llm.endpoint,
        model=llm.endpoint_model,
        api_key=llm.endpoint_api_key,
        timeout_s=llm.endpoint_timeout_s,
        max_in_flight=llm.endpoint_max_in_flight,
        status_wait_s=llm.endpoint_status_wait_s,
        n_ctx=llm.n_ctx,
        prompt_format=prompt_format,
        count_tokens=count,
        tokenizer_label=label,
        api=llm.endpoint_api,
    )


def load_embedder(settings: Settings) -> Embedder | None:
    """The embedding model, where the retriever searches by vectors; None for keyword search alone."""
    if Retriever.resolve(settings.retrieval.retriever) != "bm25":
        if settings.embed.endpoint:
            return _endpoint_embedder(settings)
        return _local_embedder(settings)
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


def _endpoint_embedder(settings: Settings) -> Embedder:
    embed = settings.embed
    assert embed.endpoint is not None
    return OpenAIEmbedder(
        embed.endpoint,
        model=embed.endpoint_model,
        api_key=embed.endpoint_api_key,
        timeout_s=settings.llm.endpoint_timeout_s,
    )


def load_node_embedder(settings: Settings) -> Embedder | None:
    """A generation node's embedder: the model DOCQA_EMBED_MODEL names, whatever the retriever (the node
    searches nothing; its clients' retrievers decide); None when none is named."""
    return None if settings.embed.model is None else _local_embedder(settings)


def _local_embedder(settings: Settings) -> Embedder:
    """In-process llama.cpp on the GGUF DOCQA_EMBED_MODEL names (unset: the demo model)."""
    path = resolve_model(settings.embed.model, "embedding", "DOCQA_EMBED_MODEL", settings.models_path)
    show_llama_log(settings.llama_log)
    return LlamaEmbedder(path, settings.embed)


def load_reranker(settings: Settings) -> Reranker | None:
    if settings.rerank.model is None:
        return None
    path = resolve_model(settings.rerank.model, "reranker", "DOCQA_RERANK_MODEL", settings.models_path)
    show_llama_log(settings.llama_log)
    return LlamaReranker(path, settings.rerank)
