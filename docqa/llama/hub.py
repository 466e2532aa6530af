"""The models docqa knows by name, and downloading them from Hugging Face with a checksum check.

`DOCQA_LLM_MODEL=qwen3-14b` (a name instead of a path) means "the file `docqa models pull
qwen3-14b` put in the models folder". Only `docqa models pull` touches the network; nothing at run
time or in tests downloads anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from docqa.core.errors import ConfigError
from docqa.core.files import sha256_file

Role = Literal["generator", "embedding"]


@dataclass(frozen=True)
class KnownModel:
    name: str
    repo: str
    filename: str
    role: Role
    about: str


KNOWN_MODELS = {
    m.name: m
    for m in (
        KnownModel(
            "qwen3-14b", "Qwen/Qwen3-14B-GGUF", "Qwen3-14B-Q4_K_M.gguf", "generator",
            "Qwen3-14B Q4_K_M, about 9 GB: the default answer model (a 24 GB GPU holds it with a 16k context)",
        ),
        KnownModel(
            "qwen3-14b-q8", "Qwen/Qwen3-14B-GGUF", "Qwen3-14B-Q8_0.gguf", "generator",
            "Qwen3-14B Q8_0, about 16 GB: closer to full precision, for 40 GB+ GPUs",
        ),
        KnownModel(
            "qwen3-embedding-0.6b", "Qwen/Qwen3-Embedding-0.6B-GGUF", "Qwen3-Embedding-0.6B-Q8_0.gguf", "embedding",
            "Qwen3-Embedding-0.6B Q8_0, about 0.6 GB: the embedding model",
        ),
    )
}  # fmt: skip

_SHA256 = re.compile(r"[0-9a-f]{64}")


def known_path(name: str, models_dir: Path) -> Path | None:
    """Where a known model's file lives once pulled (None if `name` is not a known model)."""
    model = KNOWN_MODELS.get(name)
    return models_dir / model.filename if model else None


def pull(name: str, models_dir: Path) -> Path:
    """Download a known model into models_dir (progress bars on the terminal) and verify its SHA-256
    against the one Hugging Face publishes for the file. A file that fails the check is deleted."""
    model = KNOWN_MODELS.get(name)
    if model is None:
        raise ConfigError(f"unknown model '{name}': docqa knows {', '.join(KNOWN_MODELS)}")
    try:
        from huggingface_hub import get_hf_file_metadata, hf_hub_download, hf_hub_url
    except ImportError as exc:
        raise ConfigError("downloading models needs huggingface_hub: pip install 'docqa[hub]'") from exc
    models_dir.mkdir(parents=True, exist_ok=True)
    try:
        metadata = get_hf_file_metadata(hf_hub_url(model.repo, model.filename))
        path = Path(hf_hub_download(model.repo, model.filename, local_dir=models_dir))
    except Exception as exc:  # network, authentication, missing file: one clear line
        raise ConfigError(f"could not download {model.repo}/{model.filename}: {type(exc).__name__}: {exc}") from exc
    expected = (metadata.etag or "").strip('"').lower()
    if _SHA256.fullmatch(expected):
        actual = sha256_file(path)
        if actual != expected:
            path.unlink(missing_ok=True)
            raise ConfigError(
                f"checksum mismatch for {model.filename}: expected sha256 {expected}, got {actual}; "
                "the file was deleted, run the pull again"
            )
    return path
