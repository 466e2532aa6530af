"""docqa: long-document question answering with page citations, on one GPU box.

The public names below load on first use, to keep start-up light: `import docqa.core.errors` (as the
PDF reader's child process does) or `docqa --help` then loads neither llama.cpp nor FAISS.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docqa.core.errors import DocqaError
    from docqa.core.events import AskEvent
    from docqa.core.requests import AskRequest
    from docqa.core.settings import Settings
    from docqa.core.types import Answer, Citation
    from docqa.service import DocQA

__version__ = "0.1.0"
_EXPORTS = {
    "Answer": "docqa.core.types",
    "AskEvent": "docqa.core.events",
    "Citation": "docqa.core.types",
    "AskRequest": "docqa.core.requests",
    "DocQA": "docqa.service",
    "DocqaError": "docqa.core.errors",
    "Settings": "docqa.core.settings",
}
__all__ = ["Answer", "AskEvent", "AskRequest", "Citation", "DocQA", "DocqaError", "Settings"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'docqa' has no attribute {name!r}")
