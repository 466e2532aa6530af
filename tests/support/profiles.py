"""The built-in document profiles, as a deployment's default (DOCQA_RETRIEVAL_PROFILES=auto) switches them on, for tests
that read questions or store documents without a DocQA."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from docqa.core.identity import DocumentIdentity
from docqa.core.query import Query
from docqa.profiles.registry import ProfileSet
from docqa.profiles.sec.identity import FilingIdentity
from docqa.retrieval import understanding
from docqa.store import catalog
from docqa.store.protocol import Store

PROFILES = ProfileSet.named("auto")


def read_identity(file_name: str, head: str) -> DocumentIdentity | None:
    """What the built-in profiles read a document as from its file name and head alone."""
    return PROFILES.identity(file_name, head, lambda phrases: [])


def read_catalog(
    file_name: str, head: str, texts: Sequence[str] = (), declared_title: str | None = None
) -> dict[str, Any]:
    """The catalog entry the store writes at ingest, with every built-in profile on."""
    return catalog.read_catalog(file_name, head, PROFILES, texts, declared_title)


def filing_identities(store: Store, collection_id: int) -> dict[int, FilingIdentity]:
    """The filings' identities the store keeps for a collection (each read by the SEC or Chinese profile)."""
    found = store.document_identities(collection_id)
    return {doc: identity for doc, identity in found.items() if isinstance(identity, FilingIdentity)}


def understand(question: str, identities: Mapping[int, DocumentIdentity] | None = None) -> Query:
    """The Query a question asks with every built-in profile on."""
    return understanding.understand(question, PROFILES, identities)
