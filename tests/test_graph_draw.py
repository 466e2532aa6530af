"""Top-p, temperature and the draw for all rows in llama.cpp's graph (docqa.engine.graph_draw), on
the CPU backend: the tokens drawn follow llama.cpp's chain's distribution, row by row."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from docqa.engine.batched_sampling import chain_probabilities
from docqa.engine.graph_draw import MASKED, RowDraw
from tests.test_block_top_k import PROMPTS, _context, _decode_prompts

# (k, top-p, temperature) per prompt: two k (the rows of the smaller one masked beyond it),
# top-p off for one row, and temperatures far apart
CHAINS = [(20, 0.8, 0.7), (40, 0.95, 0.6), (20, 1.0, 1.5), (20, 0.9, 0.05), (40, 0.5, 1.0)]


def test_a_rows_input_carries_its_noise_its_top_p_and_its_own_k() -> None:
    line = np.full(2 * 40 + 1, 7.0, dtype=np.float32)
    draw = RowDraw(20, 0.8, 0.5, seed=1)
    draw.fill(line, 40, masked_columns=True)
    assert np.all(line[20:40] == MASKED) and line[40] == pytest.approx(0.8)
    assert np.all(line[41:61] == 0.0) and np.all(line[61:] == MASKED)
    again = RowDraw(20, 0.8, 0.5, seed=1)
    other = np.zeros_like(line)
    again.fill(other, 40, masked_columns=True)
    assert np.array_equal(line, other)  # a fixed seed repeats its noise
    draw.fill(other, 40, masked_columns=True)
    assert not np.array_equal(line[:20], other[:20])  # and each step draws new noise
    RowDraw(20, 1.0, 0.5, seed=1).fill(other, 40, masked_columns=False)
    assert other[40] > 1.0  # no top-p: the threshold is above any cumulative probability


def test_graph_draws_follow_each_rows_chain(tiny_qwen3: Path) -> None:
    """Each row, decoded again and again with its own k, top-p, temperature and seed, draws only
    tokens its chain keeps, as often as llama.cpp's chain would: over 300 draws a row, Pearson's
    chi-square stays within 6 standard deviations of its mean (a row given another's logits or
    parameters would draw other tokens, or with other frequencies)."""
    from docqa.engine.block_top_k import BlockTopK

    plain = _context(tiny_qwen3, backend_sampling=False)
    graph = _context(tiny_qwen3, backend_sampling=True)
    draws = 300
    try:
        rows = [plain.logits(i) for i in _decode_prompts(plain)]
        group = BlockTopK(graph.lib, graph.n_vocab, draws=True)
        chains = [group.chain(k, RowDraw(k, p, t, seed=n)) for n, (k, p, t) in enumerate(CHAINS)]
        for seq, chain in enumerate(chains):
            assert graph.attach_sampler(seq, chain)
        drawn: list[list[int]] = [[] for _ in PROMPTS]
        for _ in range(draws):
            graph.clear()
            for n, index in enumerate(_decode_prompts(graph)):
                drawn[n].append(int(graph.lib.llama_sampler_sample(chains[n], graph.ctx.ctx, index)))
        assert group.errors == 0 and group.graphs_built >= 1
        for n, (k, p, t) in enumerate(CHAINS):
            order = np.argsort(-rows[n], kind="stable")[:40]
            expected = chain_probabilities(
                rows[n][order][None, :], np.array([k]), np.array([p]), np.array([0.0]), np.array([t])
            )[0]
            seen = np.array([np.count_nonzero(np.array(drawn[n]) == token) for token in order]) / draws
            assert set(drawn[n]) <= set(order[expected > 0].tolist()), f"row {n} drew a token its chain leaves out"
            # Pearson's chi-square; the tokens expected fewer than 5 times pooled into one bin, or
            # into the least likely common token's when they are fewer than 5 together as well
            common = draws * expected >= 5
            observed = np.append(seen[common], seen[~common].sum()) * draws
            wanted = np.append(expected[common], expected[~common].sum()) * draws
            if wanted[-1] < 5:
                observed, wanted = observed[:-1], wanted[:-1]
                observed[-1] += seen[~common].sum() * draws
                wanted[-1] += expected[~common].sum() * draws
            chi_square = float(((observed - wanted) ** 2 / wanted).sum())
            freedom = len(wanted) - 1
            assert chi_square <= freedom + 6 * (2 * freedom) ** 0.5, f"row {n}: {seen} against {expected}"
        for seq, chain in enumerate(chains):
            graph.attach_sampler(seq, None)
            graph.lib.llama_sampler_free(chain)
        assert group._k == {} and group._draws == {}
    finally:
        plain.close()
        graph.close()


def test_the_engine_draws_in_the_graph_beside_greedy_rows(tiny_qwen3: Path) -> None:
    """Through the engine: top-1 chains drawn in the graph give the text llama.cpp's samplers give
    (the drawn column maps back to the right token of the right row), also beside greedy rows
    in the same steps; seeded top-20 draws repeat themselves."""
    from docqa.generation import NON_THINKING_SAMPLING
    from tests.test_engine import PROMPTS as TEXT_PROMPTS
    from tests.test_engine import four_sequences

    top_1 = replace(NON_THINKING_SAMPLING, top_k=1, max_tokens=16, ignore_eos=True, seed=3)
    greedy = replace(top_1, temperature=0.0)
    sampled = replace(NON_THINKING_SAMPLING, max_tokens=16, ignore_eos=True, seed=5)
    texts: dict[bool, list[str]] = {}
    seeded: list[list[str]] = []
    for draws in (True, False, True):
        eng = four_sequences(tiny_qwen3, backend_sampling=True, batched_sampling_from=0, graph_draws=draws)
        try:
            with eng._step_lock:
                streams = [eng.submit(p, greedy if n % 2 else top_1) for n, p in enumerate(TEXT_PROMPTS[:4])]
            texts[draws] = ["".join(e.text for e in s if e.kind == "text") for s in streams]
            if draws:
                with eng._step_lock:
                    streams = [eng.submit(p, sampled) for p in TEXT_PROMPTS[:4]]
                seeded.append(["".join(e.text for e in s if e.kind == "text") for s in streams])
                group = eng.samplers.block_top_k
                assert group is not None and group.errors == 0 and group.graphs_built > 0
        finally:
            eng.close()
    assert len(set(texts[True])) == 4
    assert texts[True] == texts[False]
    assert seeded[0] == seeded[1] and len(set(seeded[0])) == 4
