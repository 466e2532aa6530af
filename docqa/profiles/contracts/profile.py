"""The contracts profile: commercial contracts (licences, supply, distribution, services agreements, ...).

What it knows, and where from: the words a kind of clause is drafted in, by the Contract Understanding Atticus
Dataset's taxonomy of clauses (clauses), added to each contract's search of a question over a whole
collection. A contract's identity is its title and parties, which the generic keyword search already reads
from its head (docqa.store.keyword.titles): this profile recognises no document by itself, and reads nothing
else in a question (the generic profile's answers).
"""

from __future__ import annotations

from docqa.profiles.contracts.clauses import clause_words
from docqa.profiles.generic import GenericProfile


class ContractsProfile(GenericProfile):
    """Commercial contracts (docqa.profiles.contracts)."""

    name = "contracts"
    version = 1
    description = "commercial contracts: the words each kind of clause (CUAD's taxonomy) is drafted in"

    def drafting_words(self, question: str) -> tuple[str, ...]:
        return clause_words(question)
