"""Where the tests find the project's files, the Qwen vocabulary set-up fetched, and the shared data (../shared, or
DOCQA_SHARED_DIR: only tests marked `data` read it)."""

from __future__ import annotations

import os
from pathlib import Path

from docqa.core.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DOCS = ROOT / "sample_docs"
SHARED = Path(os.environ.get("DOCQA_SHARED_DIR", ROOT.parent / "shared"))
# llama.cpp's vocabulary-only Qwen GGUF, which `make setup` extracts from llama-cpp-python's sdist on PyPI
# (tools/qwen_vocab.py): it comes with the set-up, not from ../shared
QWEN_VOCAB = Path(os.environ.get("DOCQA_QWEN_VOCAB", ROOT / ".venv" / "share" / "docqa" / "ggml-vocab-qwen2.gguf"))


def make_settings(data_dir: Path, **overrides: object) -> Settings:
    return Settings(data_dir=data_dir, **overrides)  # type: ignore[arg-type]


def small_chunk_ingest_env(data_dir: Path, embedding_model: Path, **extra: str) -> dict[str, str]:
    """The environment of a `docqa ingest` subprocess that embeds every chunk with `embedding_model` (any
    GGUF: hybrid retrieval loads it), in chunks of 128 tokens, so that a small folder makes many writes."""
    return {
        **os.environ,
        "DOCQA_DATA_DIR": str(data_dir),
        "DOCQA_EMBED_MODEL": str(embedding_model),
        "DOCQA_RETRIEVAL_RETRIEVER": "hybrid",  # embed with it although it is no embedding model
        "DOCQA_CHUNKING_MAX_TOKENS": "128",
        "DOCQA_CHUNKING_OVERLAP_TOKENS": "16",
        **extra,
    }
