"""Put Qwen's tokenizer (llama.cpp's `ggml-vocab-qwen2.gguf`) where the tests look for it, from PyPI.

The tests build tiny Qwen3-architecture models with Qwen's real vocabulary (template, reranker and
token-count tests). llama.cpp ships that vocabulary-only GGUF in its `models/` folder, and llama-cpp-python's
source distribution on PyPI carries llama.cpp whole, so a registry is enough: no model hub, no `../shared`.
`make setup` runs this once (a 77 MB download, one file of 5.9 MB kept).

    python -m tools.qwen_vocab [--out PATH]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import tempfile
from importlib.metadata import version
from pathlib import Path

from docqa.core.files import sha256_file

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / ".venv" / "share" / "docqa" / "ggml-vocab-qwen2.gguf"
MEMBER = "vendor/llama.cpp/models/ggml-vocab-qwen2.gguf"


def fetch(out: Path) -> Path:
    """Download llama-cpp-python's sdist of the installed version and extract the vocabulary from it."""
    release = version("llama-cpp-python")
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
        subprocess.run([*command, f"llama-cpp-python=={release}", "-d", tmp], check=True)
        [sdist] = Path(tmp).glob("llama_cpp_python-*.tar.gz")
        with tarfile.open(sdist) as archive:
            member = archive.getmember(f"llama_cpp_python-{release}/{MEMBER}")
            source = archive.extractfile(member)
            if source is None:
                raise SystemExit(f"{MEMBER} is not a file in {sdist.name}")
            out.parent.mkdir(parents=True, exist_ok=True)
            partial = out.with_suffix(".part")
            partial.write_bytes(source.read())
    partial.replace(out)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    if not args.out.is_file():
        fetch(args.out)
    sys.stdout.write(f"Qwen vocabulary: {args.out} (sha256 {sha256_file(args.out)[:16]}...)\n")


if __name__ == "__main__":
    main()
