"""The native libraries llama.cpp itself loaded, opened again through ctypes for what
llama-cpp-python does not bind (ggml's operations and its device registry)."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Any

from docqa.llama.native_gate import installed_version, native_fast_paths


def library_beside_llama(lib: Any, name: str) -> Any:
    """The library `name` (e.g. "ggml-base") from the folder llama-cpp-python loads llama.cpp from: the
    same file llama.cpp loaded, so its tensors, contexts and devices are llama.cpp's. lib: the
    llama_cpp package. OSError when it is not there, or when the installed llama-cpp-python is not one
    these paths were tested with (docqa.llama.native_gate)."""
    if not native_fast_paths():
        raise OSError(f"llama-cpp-python {installed_version()} is untested with docqa's native fast paths")
    # where llama-cpp-python looks (its LLAMA_CPP_LIB_PATH, else the lib folder of its package)
    folder = Path(os.environ.get("LLAMA_CPP_LIB_PATH") or Path(lib.__file__).parent / "lib")
    for candidate in (f"lib{name}.so", f"lib{name}.dylib", f"{name}.dll"):
        if (folder / candidate).exists():
            return ctypes.CDLL(str(folder / candidate))
    raise OSError(f"no {name} library in {folder}")
