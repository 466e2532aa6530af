"""The contracts profile: commercial contracts (licences, supply, distribution, services agreements, ...).

What it knows, and where from: the words a kind of clause is drafted in, by the Contract Understanding Atticus
Dataset's taxonomy of clauses (clauses), added to each contract's search of a question over a whole
collection. A contract's identity is its title and parties, which the generic keyword search already reads
from its head (docqa.store.keyword.titles): this profile recognises no document by itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from docqa.core.identity import ChunksSaying, DocumentIdentity
from docqa.profiles.contracts.clauses import clause_words
from docqa.profiles.protocol import NO_HINTS, Hints


class ContractsProfile:
    """Commercial contracts (docqa.profiles.contracts)."""

    name = "contracts"
    version = 1
    description = "commercial contracts: the words each kind of clause (CUAD's taxonomy) is drafted in"
    head_chars = 0

    def identity(self, file_name: str, head: str, chunks_saying: ChunksSaying) -> DocumentIdentity | None:
        return None

    def catalog(self, file_name: str, head: str, texts: Sequence[str]) -> dict[str, Any] | None:
        return None

    def understand(self, question: str, identities: Mapping[int, DocumentIdentity] | None) -> Hints:
        return NO_HINTS

    def drafting_words(self, question: str) -> tuple[str, ...]:
        return clause_words(question)
