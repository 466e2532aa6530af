"""Sampling many sequences at once on the host: llama.cpp's chain, vectorised over all rows.

With many sequences, llama.cpp's own chains are the slow part of a decode step: in the decode graph
each chain is its own set of nodes (a full-vocabulary top-k each; 64 chains added 8 ms to a 24 ms
step on an H200), and on the host each chain sorts its whole row, one after another.

`draw` runs the chain after top-k (top-p on the softmax at temperature 1, min-p on the logits, then
the temperature and the draw, llama.cpp's order) once over a [rows x k] matrix of candidates. On a
GPU the candidates are the top-k that a top-k-only chain kept in llama.cpp's graph (SlotSamplers).
Without one, `BatchedSampler` cuts each full row first, in worker threads (numpy releases the GIL
while it scans a row): to its top-k, found from the maxima of groups of the row (one pass); without
top-k, to every token within a margin of the best one beyond which a token weighs less than exp(-25)
of the whole (nothing, in float32).

The draws use numpy's generator, seeded per request: a fixed seed repeats its tokens, but they are
not the tokens llama.cpp's own chain draws for that seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from docqa.engine.chain_key import RANDOM_SEED, ChainKey

NEGLIGIBLE = 25.0  # a token weighing exp(-25) ~ 1.4e-11 of the top one changes nothing in float32
GROUP = 64  # the top-k search first takes the maximum of each group of 64 logits
UNIFORM_BLOCK = 64  # uniforms a row's generator draws at a time
_STRIDES = np.arange(GROUP)


class RowSampler:
    """One sequence's chain parameters and random generator."""

    def __init__(self, key: ChainKey) -> None:
        self.key = key
        self.chain_row = (key.top_k, key.top_p, key.min_p, key.temperature)  # a row of draw's parameter matrix
        self.reset()

    def reset(self) -> None:
        self._rng = np.random.default_rng(None if self.key.seed == RANDOM_SEED else self.key.seed)
        self._uniforms: list[float] = []

    def uniform(self) -> float:
        # Drawn UNIFORM_BLOCK at a time: the generator gives the same numbers in blocks as one by one,
        # at a fraction of the cost of a call per token (64 calls took 78 us of a step here).
        if not self._uniforms:
            self._uniforms = self._rng.random(UNIFORM_BLOCK).tolist()[::-1]
        return self._uniforms.pop()

    def candidates(self, row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(token IDs, logits) of the tokens that count for this row's chain, in no particular order:
        with top-k, exactly the top-k; without, every token that is not negligible."""
        k = self.key.top_k
        if 0 < k < row.shape[0] // GROUP:
            ids, values = _top_k_rows(row[None, :], k)
            return ids[0], values[0]
        negligible = NEGLIGIBLE + math.log(row.shape[0])
        ids = np.flatnonzero(row >= row.max() - negligible * max(1.0, self.key.temperature))
        if 0 < k < len(ids):
            ids = ids[np.argpartition(-row[ids], k - 1)[:k]]
        return ids, row[ids]


def chain_probabilities(
    logits: np.ndarray, top_k: np.ndarray, top_p: np.ndarray, min_p: np.ndarray, temperature: np.ndarray
) -> np.ndarray:
    """llama.cpp's chain over rows of candidate logits sorted best first (-inf pads a short row):
    the probability of drawing each column, 0 where the chain leaves a token out."""
    width = logits.shape[1]
    column = np.arange(width)
    lead = logits[:, :1]
    with np.errstate(invalid="ignore", divide="ignore"):  # -inf pads; log(0) of min-p 0: -inf, every token
        shifted = logits - lead
        kept = column < np.where(top_k > 0, top_k, width)[:, None]
        weights = np.where(kept, np.exp(shifted), 0.0)  # pads weigh exp(-inf) = 0 wherever they are kept
        # top-p: the shortest prefix whose softmax (temperature 1) reaches p, at least one token
        cumulative = np.cumsum(weights, axis=1) / weights.sum(axis=1, keepdims=True)
        reach = np.where(top_p < 1.0, (cumulative < top_p[:, None]).sum(axis=1) + 1, width)
        # min-p: logits within log(min_p) of the best one, on the logits left
        kept &= (column < reach[:, None]) & ((shifted >= np.log(min_p)[:, None]) | (column == 0))
        scaled = np.where(kept, np.exp(shifted / temperature[:, None]), 0.0)
    return scaled / scaled.sum(axis=1, keepdims=True)


def _top_k_rows(block: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The top-k (IDs, logits) of each row of block, unordered. Each row is split into GROUP groups
    (group j: logits j, j + n, j + 2n, ..., a strided view, so their maxima take one pass of
    elementwise maximum); the top-k lie in the k groups with the largest maxima, since a token in any
    other group has k larger maxima above it."""
    rows, vocab = block.shape
    whole = vocab - vocab % GROUP
    n = whole // GROUP
    maxima = block[:, :whole].reshape(rows, GROUP, n).max(axis=1)
    groups = np.argpartition(maxima, -k, axis=1)[:, -k:]
    ids = (groups[:, :, None] + _STRIDES[None, None, :] * n).reshape(rows, -1)
    if whole < vocab:
        ids = np.concatenate([ids, np.broadcast_to(np.arange(whole, vocab), (rows, vocab - whole))], axis=1)
    values = np.take_along_axis(block, ids, axis=1)
    best = np.argpartition(-values, k - 1, axis=1)[:, :k]
    return np.take_along_axis(ids, best, axis=1), np.take_along_axis(values, best, axis=1)


def padded(cuts: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Rows of (IDs, logits) of different lengths as two matrices, short rows padded with -inf."""
    width = max(len(ids) for ids, _ in cuts)
    ids = np.zeros((len(cuts), width), dtype=np.int64)
    values = np.full((len(cuts), width), -np.inf, dtype=np.float32)
    for n, (row_ids, row_values) in enumerate(cuts):
        ids[n, : len(row_ids)], values[n, : len(row_values)] = row_ids, row_values
    return ids, values


def draw(ids: np.ndarray, values: np.ndarray, samplers: Sequence[RowSampler]) -> list[int]:
    """One token per row from each row's candidates ([rows, n] IDs and logits, any order, -inf pads),
    by the row's chain after top-k: top-p, min-p, temperature, the draw. (On a GPU this runs between a
    step's end and the next one's start, with the GPU idle: vector operations over all rows, few calls.)"""
    rows = np.arange(len(samplers))[:, None]
    order = np.argsort(-values, axis=1, kind="stable")
    ids, values = ids[rows, order], values[rows, order]
    top_k, top_p, min_p, temperature = np.array([sampler.chain_row for sampler in samplers]).T
    probabilities = chain_probabilities(values.astype(np.float64), top_k, top_p, min_p, temperature)
    uniforms = np.fromiter((sampler.uniform() for sampler in samplers), dtype=np.float64, count=len(samplers))
    picks = (np.cumsum(probabilities, axis=1) <= uniforms[:, None]).sum(axis=1)
    last = np.count_nonzero(probabilities, axis=1) - 1  # rounding can leave u above the last sum
    return ids[rows[:, 0], np.minimum(picks, last)].tolist()


class BatchedSampler:
    """Samples the rows of one decode step's logits: the cut spread over the owner's pool of
    `threads` workers (None: on this thread), the chain at once."""

    def __init__(self, pool: ThreadPoolExecutor | None, threads: int) -> None:
        self._pool = pool
        self.threads = max(1, threads)

    def sample(self, logits: np.ndarray, samplers: Sequence[RowSampler]) -> list[int]:
        """The next token of each row of logits ([rows, vocabulary], float32), row i by samplers[i]."""
        tokens = [0] * len(samplers)
        by_top_k: dict[int, list[int]] = {}
        for i, sampler in enumerate(samplers):
            if sampler.key.temperature <= 0:
                tokens[i] = int(np.argmax(logits[i]))
            else:
                by_top_k.setdefault(sampler.key.top_k, []).append(i)
        for k, members in by_top_k.items():
            if 0 < k < logits.shape[1] // GROUP:
                ids, values = self._top_k(logits, members, k)
            else:  # no top-k: row by row, over every token that is not negligible
                ids, values = padded([samplers[i].candidates(logits[i]) for i in members])
            for i, token in zip(members, draw(ids, values, [samplers[i] for i in members]), strict=True):
                tokens[i] = token
        return tokens

    def _top_k(self, logits: np.ndarray, members: list[int], k: int) -> tuple[np.ndarray, np.ndarray]:
        """(IDs, logits) of the top-k of the member rows, [rows, k]; contiguous runs of rows are
        split over the threads, each reading its rows in place."""
        contiguous = members == list(range(members[0], members[0] + len(members)))
        block = logits[members[0] : members[0] + len(members)] if contiguous else logits[members]
        if self._pool is None or len(members) < 2 * self.threads:
            return _top_k_rows(block, k)
        parts = min(self.threads, len(members))
        bounds = [len(members) * g // parts for g in range(parts + 1)]
        results = list(self._pool.map(lambda g: _top_k_rows(block[bounds[g] : bounds[g + 1]], k), range(parts)))
        return np.concatenate([ids for ids, _ in results]), np.concatenate([values for _, values in results])
