"""Where the tests find the project's files and the shared data (../shared, or DOCQA_SHARED_DIR)."""

from __future__ import annotations

import os
from pathlib import Path

from docqa.core.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DOCS = ROOT / "sample_docs"
SHARED = Path(os.environ.get("DOCQA_SHARED_DIR", ROOT.parent / "shared"))
QWEN_VOCAB = Path(os.environ.get("DOCQA_QWEN_VOCAB", SHARED / "tools" / "ggml-vocab-qwen2.gguf"))


def make_settings(data_dir: Path, **overrides: object) -> Settings:
    return Settings(data_dir=data_dir, **overrides)  # type: ignore[arg-type]
