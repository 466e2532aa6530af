"""The batched host sampler must compute llama.cpp's chain (top-k, top-p, min-p, temperature) exactly,
though it first cuts each row to the tokens near its top; checked against llama.cpp's own samplers."""

from __future__ import annotations

import ctypes
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from docqa.engine.batched_sampling import BatchedSampler, RowSampler, chain_probabilities
from docqa.engine.chain_key import ChainKey
from docqa.engine.sampling import Sampler


def llama_cpp_probabilities(row: np.ndarray, key: ChainKey) -> dict[int, float]:
    """Run llama.cpp's chain as the engine builds it (without the draw) over a row; the softmax of
    what it keeps."""
    import llama_cpp as lib

    data = (lib.llama_token_data * len(row))()
    for i, logit in enumerate(row):
        data[i].id, data[i].logit, data[i].p = i, float(logit), 0.0  # type: ignore[assignment]
    array = lib.llama_token_data_array(data, len(row), -1, False)
    chain = Sampler(lib, key, with_draw=False)  # the engine's own chain, without its draw
    try:
        lib.llama_sampler_apply(chain.chain, ctypes.byref(array))
    finally:
        chain.free()
    kept = [(int(array.data[i].id), array.data[i].logit) for i in range(array.size) if np.isfinite(array.data[i].logit)]
    logits = np.array([logit for _, logit in kept], dtype=np.float64)
    weights = np.exp(logits - logits.max())
    return {token: float(w) for (token, _), w in zip(kept, weights / weights.sum(), strict=True)}


def ours(row: np.ndarray, key: ChainKey) -> dict[int, float]:
    ids, logits = RowSampler(key).candidates(row)
    order = np.argsort(-logits, kind="stable")
    ids, logits = ids[order], logits[order].astype(np.float64)
    probabilities = chain_probabilities(
        logits[None, :],
        np.array([key.top_k]),
        np.array([key.top_p]),
        np.array([key.min_p]),
        np.array([key.temperature]),
    )[0]
    return {int(t): float(p) for t, p in zip(ids, probabilities, strict=True) if p > 0}


KEYS = [
    ChainKey(0.6, 20, 0.95, 0.0, 1),  # Qwen3 thinking
    ChainKey(0.7, 20, 0.8, 0.0, 1),  # Qwen3 non-thinking
    ChainKey(1.0, 40, 1.0, 0.05, 1),  # min-p, no top-p
    ChainKey(1.3, 0, 0.9, 0.0, 1),  # no top-k: the cut must widen with the vocabulary
    ChainKey(0.8, 5, 1.0, 0.0, 1),
]


@pytest.mark.parametrize("key", KEYS, ids=str)
@pytest.mark.parametrize("shape", ["peaked", "flat", "llm-like"])
def test_cut_vocabulary_gives_llama_cpp_chain_probabilities(key: ChainKey, shape: str) -> None:
    rng = np.random.default_rng(7)
    vocab = 20_000
    row = rng.normal(size=vocab).astype(np.float32)
    if shape == "peaked":
        row[123] += 12.0
    elif shape == "flat":
        row *= 0.05
    else:
        row = (rng.gumbel(size=vocab) * 2.5).astype(np.float32)
    expected, got = llama_cpp_probabilities(row, key), ours(row, key)
    # llama.cpp sums top-p's probabilities in float32, here in float64: over thousands of near-equal
    # tokens the last one kept may differ, and only that one.
    assert len(set(got) ^ set(expected)) <= (1 if len(expected) > 1000 else 0)
    assert max(abs(got.get(t, 0.0) - expected.get(t, 0.0)) for t in set(expected) | set(got)) < 1e-4


def test_the_cut_keeps_exactly_the_top_k() -> None:
    """Without the cut the test above would pass trivially: check it keeps the top-k and no more,
    however the top-k is spread over the row (the subsample may miss all of them)."""
    rng = np.random.default_rng(5)
    for spread in (0.01, 1.0, 30.0):
        row = rng.normal(size=50_000).astype(np.float32)
        best = rng.choice(50_000, 25, replace=False)
        row[best] = 100.0 + rng.uniform(0, spread, 25).astype(np.float32)
        ids, logits = RowSampler(ChainKey(0.7, 20, 0.8, 0.0, 1)).candidates(row)
        assert set(ids.tolist()) == set(np.argsort(-row)[:20].tolist())
        assert np.array_equal(logits, row[ids])


def test_draws_follow_the_probabilities_and_a_seed_repeats_them() -> None:
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(8, 5_000)).astype(np.float32) * 2
    key = ChainKey(0.7, 20, 0.8, 0.0, 42)
    with ThreadPoolExecutor(4) as pool:
        sampler = BatchedSampler(pool, 4)
        first = sampler.sample(logits, [RowSampler(key) for _ in range(8)])
        again = sampler.sample(logits, [RowSampler(key) for _ in range(8)])
        assert first == again  # same seed, same tokens, whichever thread ran a row
        row_sampler = RowSampler(ChainKey(0.7, 20, 0.8, 0.0, 5))
        counts: dict[int, int] = {}
        for _ in range(1_000):
            for token in sampler.sample(np.repeat(logits[:1], 4, axis=0), [row_sampler] * 4):
                counts[token] = counts.get(token, 0) + 1
        expected = ours(logits[0], key)
        assert set(counts) <= set(expected)
        for token, p in expected.items():
            assert abs(counts.get(token, 0) / 4_000 - p) < 0.03
        greedy = RowSampler(ChainKey(0.0, 0, 1.0, 0.0, 0))
        mixed = sampler.sample(logits[1:3], [greedy, row_sampler])
        assert mixed[0] == int(np.argmax(logits[1]))
