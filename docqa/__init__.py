"""docqa: long-document question answering with page citations, on one GPU box.

The public names below load on first use, so `import docqa.errors` (as the `ingest` package does)
stays light and free of import cycles.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docqa.errors import DocqaError
    from docqa.service import AskRequest, DocQA
    from docqa.settings import Settings
    from docqa.types import Answer, AskEvent, Citation

__version__ = "0.1.0"
_EXPORTS = {
    "Answer": "docqa.types",
    "AskEvent": "docqa.types",
    "Citation": "docqa.types",
    "AskRequest": "docqa.service",
    "DocQA": "docqa.service",
    "DocqaError": "docqa.errors",
    "Settings": "docqa.settings",
}
__all__ = ["Answer", "AskEvent", "AskRequest", "Citation", "DocQA", "DocqaError", "Settings"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'docqa' has no attribute {name!r}")
