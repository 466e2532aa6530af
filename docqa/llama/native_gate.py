"""Which llama-cpp-python versions docqa's native fast paths were tested with.

Beyond llama-cpp-python's bindings, docqa reaches into llama.cpp's C structures: the block top-k
(docqa.engine.block_top_k) mirrors ggml.h's tensor head and builds ggml operations in llama.cpp's graph
through custom samplers, and the memory fit (docqa.llama.memory_fit) reads ggml's device registry. A
llama.cpp whose structures moved would read garbage there, so on a version not listed here those paths
stay off (llama.cpp's own top-k; the memory fit's estimate from the model's size), with a log line,
never a crash. pyproject.toml pins llama-cpp-python to the versions listed; a new one is added here
once the test suite and the GPU bench (docs/benchmarks.md) pass on it.
"""

from __future__ import annotations

import logging
from functools import cache
from importlib.metadata import PackageNotFoundError, version

logger = logging.getLogger(__name__)

TESTED_VERSIONS = ("0.3.36",)


def installed_version() -> str | None:
    """llama-cpp-python's version as the imported package says it (also where it runs from a source tree,
    as on the GPU bench machine), else as pip recorded it; None when it is not there."""
    try:
        import llama_cpp

        return str(llama_cpp.__version__)
    except (ImportError, AttributeError):
        pass
    try:
        return version("llama-cpp-python")
    except PackageNotFoundError:
        return None


@cache
def native_fast_paths() -> bool:
    """True when the installed llama-cpp-python is one the native fast paths were tested with; said once
    in the log when it is not."""
    found = installed_version()
    if found in TESTED_VERSIONS:
        return True
    logger.warning(
        "llama-cpp-python %s is not a version docqa's native fast paths were tested with (%s): block top-k "
        "and the GPU memory probe are off, llama.cpp's own paths used instead",
        found or "(not installed)",
        ", ".join(TESTED_VERSIONS),
    )
    return False
