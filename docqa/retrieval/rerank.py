"""Reranking: a cross-encoder reads the question with each candidate and reorders the first ranking.

BM25 and dense search score a chunk without reading it against the question; a reranker (Qwen3-Reranker
through llama.cpp, docqa.llama.reranker) reads both together and scores the pair. A chunk is up to 4k
tokens, so the reranker reads the chunk's windows that share the most words with the question
(`windows_per_chunk` of `window_tokens` each), and a chunk scores as its best window: a tenth of the
tokens of reading every chunk whole, with the clause the question names still read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from docqa.core.protocols import Reranker
from docqa.core.settings import RerankSettings
from docqa.core.types import RetrievedChunk
from docqa.store.keyword import lexical

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def best_windows(question: str, text: str, count: int, window_tokens: int) -> list[str]:
    """The `count` windows of about window_tokens tokens (25% overlap) that hold the most distinct
    question terms, ties to the earlier; windows are cut by characters at the text's own density (a CJK
    character is about a token, four other characters are), so the chunk need not be tokenised."""
    if not text:
        return [text]
    cjk = len(_CJK.findall(text))
    tokens_per_char = (cjk + (len(text) - cjk) / 4) / len(text)
    width = max(64, int(0.9 * window_tokens / tokens_per_char))
    if len(text) <= width:
        return [text]
    step = max(1, width * 3 // 4)
    windows = [text[i : i + width] for i in range(0, len(text) - width + step, step)]
    terms = set(lexical.query_terms(question))
    overlap = [len(terms & lexical.words(lexical.index_text(w))) for w in windows]
    best = sorted(range(len(windows)), key=lambda i: (-overlap[i], i))[:count]
    return [windows[i] for i in sorted(best)]


def rerank(
    reranker: Reranker, question: str, chunks: Sequence[RetrievedChunk], settings: RerankSettings
) -> list[RetrievedChunk]:
    """The chunks reordered by the reranker's score of their best window (ties keep the first order);
    each chunk's score becomes that reranker score."""
    windows = [best_windows(question, c.text, settings.windows_per_chunk, settings.window_tokens) for c in chunks]
    scores = reranker.score(question, [w for ws in windows for w in ws])
    best: list[float] = []
    at = 0
    for ws in windows:
        best.append(max(scores[at : at + len(ws)]))
        at += len(ws)
    order = sorted(range(len(chunks)), key=lambda i: (-best[i], i))
    return [replace(chunks[i], score=best[i]) for i in order]
