"""The native libraries llama.cpp itself loaded, opened again through ctypes for what
llama-cpp-python does not bind (ggml's operations and its device registry)."""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any


def library_beside_llama(lib: Any, name: str) -> Any:
    """The library `name` (e.g. "ggml-base") from the folder of llama-cpp-python's llama library: the
    same file llama.cpp loaded, so its tensors, contexts and devices are llama.cpp's. lib: the
    llama_cpp package. OSError when it is not there."""
    folder = Path(lib.llama_cpp._lib._name).parent
    for candidate in (f"lib{name}.so", f"lib{name}.dylib", f"{name}.dll"):
        if (folder / candidate).exists():
            return ctypes.CDLL(str(folder / candidate))
    raise OSError(f"no {name} library beside {folder / Path(lib.llama_cpp._lib._name).name}")
