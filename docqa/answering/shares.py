"""Each document's share of the prompt tokens of one question over many documents.

A collection question spends `each` tokens a document in all (each x documents: its cost on the GPU). A
document that needs less (a short one, one whose few paragraphs hold the question's words, one with none of
them) leaves the rest to those that need more, in equal parts, none past `most` (the prompt's room). On 100
CUAD contracts, 14 of 99 had none of the question's words and the others used 1,743 of 2,048 tokens on
average: a quarter of the budget went unused while the long contracts lost their clause for want of room
(docs/benchmarks/reading.md)."""

from __future__ import annotations

from collections.abc import Sequence


def shares(needs: Sequence[int], each: int, most: int) -> list[int]:
    """The budget of each document: min(need, each) first, then what is left of each x len(needs) poured
    into the documents that need more, equally, each up to min(its need, most) (water-filling); a document
    needing no more than `each` is bounded by `each`."""
    most = max(most, each)
    given = [min(need, each) for need in needs]
    left = each * len(needs) - sum(given)
    wanting = [i for i, need in enumerate(needs) if need > given[i]]
    while left > 0 and wanting:
        part = max(left // len(wanting), 1)
        still = []
        for i in wanting:
            room = min(needs[i], most) - given[i]
            add = min(part, room, left)
            given[i] += add
            left -= add
            if given[i] < min(needs[i], most):
                still.append(i)
            if left <= 0:
                break
        if len(still) == len(wanting) and part == 0:
            break
        wanting = still
    # a document that needs no more than `each` keeps `each` as its bound: it takes no more than it needs (only
    # paragraphs holding the question's words), and a bound of exactly its need would cut its last run short
    return [each if need <= each else budget for need, budget in zip(needs, given, strict=True)]


def documents_share(documents: int, each: int, few_documents_tokens: int, most: int) -> int:
    """What one document gets before the sharing: `each`, or for a question over few documents (a comparison
    of two) its part of `few_documents_tokens`; never past `most`, what one prompt holds beside its instructions
    (a share past it made prompts that dropped whole passages to fit)."""
    return min(max(each, few_documents_tokens // max(documents, 1)), most)
