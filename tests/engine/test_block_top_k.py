"""One top-k for all rows inside llama.cpp's graph (docqa.engine.block_top_k), on the CPU backend."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from docqa.core.sampling_params import NON_THINKING_SAMPLING
from docqa.engine import block_top_k
from docqa.engine.block_top_k import BITONIC_MAX, BlockTopK, block_size, short_sort_plan
from docqa.llama.context import LlamaContext
from tests.support.engines import PROMPTS as TEXT_PROMPTS
from tests.support.engines import four_sequences, run_together

PROMPTS = [[1, 2, 3, 4, 5], [100, 200, 300], [5000, 6000, 7000, 8000], [42], [9, 99, 999, 9999, 99999, 7]]


def test_block_size_tiles_the_vocabulary_and_keeps_the_candidates_few() -> None:
    assert block_size(151_936, 20) == 128  # Qwen: 1,187 blocks of 128
    assert block_size(262_144, 20) == 256  # Gemma 3
    assert block_size(151_936, 200) == 64  # 200 x 128 candidates would be a sixth of the row
    assert block_size(151_937, 20) is None  # a prime: no blocks, llama.cpp's own top-k
    assert block_size(151_936, 5_000) is None


def test_two_level_blocks_keep_every_sort_short() -> None:
    for vocab, k in [(151_936, 20), (151_936, 40), (262_144, 64), (32_000, 50)]:
        plan = short_sort_plan(vocab, k)
        assert plan is not None
        coarse, fine, padded = plan
        assert padded % coarse == 0 and vocab <= padded < vocab + coarse and coarse % fine == 0
        # the coarse maxima, the chosen blocks' fine maxima and the last candidates: each one sort
        assert max(padded // coarse, k * (coarse // fine), k * fine) <= BITONIC_MAX
    assert short_sort_plan(151_936, 20) == (256, 16, 152_064)
    assert short_sort_plan(151_936, 100) is None  # 100 x 16 candidates: one level of blocks instead


def _context(model: Path, backend_sampling: bool):  # type: ignore[no-untyped-def]

    return LlamaContext(
        model,
        n_ctx=2048,
        n_batch=512,
        n_seq_max=len(PROMPTS),
        kv_unified=True,
        n_gpu_layers=0,
        flash_attn=False,
        n_threads=2,
        backend_sampling=backend_sampling,
    )


def _decode_prompts(llama) -> list[int]:  # type: ignore[no-untyped-def]
    """Each prompt its own sequence, its last token an output; the outputs' batch indices."""
    indices, at = [], 0
    for seq, tokens in enumerate(PROMPTS):
        llama.batch.add(tokens, 0, seq, "last")
        at += len(tokens)
        indices.append(at - 1)
    assert llama.decode() == 0
    return indices


@pytest.mark.parametrize("short_sorts", [False, True], ids=["one-level", "two-level"])
@pytest.mark.parametrize("k", [1, 20, 40, 100])
def test_graph_keeps_exactly_each_rows_top_k(tiny_qwen3: Path, k: int, short_sorts: bool) -> None:
    """The candidates the graph keeps for each sequence are that row's top-k token IDs with their
    logits, the same as sorting the row's raw logits (a row given another's logits would differ);
    with one level of blocks, and with two (every sort short, the row padded with -inf; for k = 100
    two levels cannot keep the sorts short, and one level stands in)."""

    plain = _context(tiny_qwen3, backend_sampling=False)
    graph = _context(tiny_qwen3, backend_sampling=True)
    try:
        rows = [plain.logits(i) for i in _decode_prompts(plain)]
        group = BlockTopK(graph.lib, graph.n_vocab, short_sorts=short_sorts)
        chains = [group.chain(k) for _ in PROMPTS]
        for seq, chain in enumerate(chains):
            assert graph.attach_sampler(seq, chain)
        indices = _decode_prompts(graph)
        together = graph.sampled_block_top_k(indices)  # all rows in one gather
        assert together is not None
        for n, index in enumerate(indices):
            ids, values = graph.sampled_top_k(index, float_ids=True)
            expected = np.argsort(-rows[n], kind="stable")[:k]
            assert len(ids) == k
            assert set(ids.tolist()) == set(expected.tolist())
            assert np.allclose(values, rows[n][ids], atol=1e-4)
            assert np.array_equal(together[0][n], ids) and np.array_equal(together[1][n], values)
        assert group.errors == 0 and group.graphs_built >= 1
        for seq, chain in enumerate(chains):
            graph.attach_sampler(seq, None)
            graph.lib.llama_sampler_free(chain)
        assert group._k == {}  # llama.cpp's free reached the Python side
    finally:
        plain.close()
        graph.close()


def test_engine_draws_from_the_block_top_k_like_from_llama_cpps(tiny_qwen3: Path) -> None:
    """The engine under load in graph mode, with the block top-k and with llama.cpp's per-row top-k:
    top-1 sampling is deterministic, so both give the same text, and so do seeded top-20 draws mixed
    with greedy requests in the same steps; and the block path really ran."""

    top_1 = replace(NON_THINKING_SAMPLING, top_k=1, max_tokens=16, ignore_eos=True, seed=3)
    sampled = replace(NON_THINKING_SAMPLING, max_tokens=16, ignore_eos=True, seed=5)  # top-k 20, seeded
    greedy = replace(sampled, temperature=0.0)  # a whole chain (argmax) in the graph beside the block top-k
    texts, mixed = {}, {}
    for block in (True, False):
        eng = four_sequences(tiny_qwen3, backend_sampling=True, batched_sampling_from=2, block_top_k=block)
        try:
            texts[block] = run_together(eng, TEXT_PROMPTS[:4], top_1)
            with eng._step_lock:  # requests of different kinds in the same steps
                streams = [eng.submit(p, greedy if n % 2 else sampled) for n, p in enumerate(TEXT_PROMPTS[:4])]
            mixed[block] = ["".join(e.text for e in s if e.kind == "text") for s in streams]
            group = eng.samplers.block_top_k
            assert (group is not None and group.graphs_built > 0) == block
            assert group is None or group.errors == 0
            assert eng.samplers.rows_from_graph_top_k > 0
        finally:
            eng.close()
    assert len(set(texts[True])) == 4
    assert texts[True] == texts[False]
    # the seeded draws see the same top-20 either way (in another order), the greedy rows their argmax
    assert mixed[True] == mixed[False]
    assert len(set(mixed[True])) == 4


def test_whole_chains_in_the_graph_draw_the_same_with_the_block_top_k(tiny_qwen3: Path) -> None:
    """A few sequences, each with its whole chain in the graph (block top-k, then llama.cpp's top-p,
    temperature and draw): seeded top-20 draws give the same text as with llama.cpp's top-k, so the
    int32 candidates map the draw back to the right vocabulary IDs; and the block path really ran."""

    sampled = replace(NON_THINKING_SAMPLING, max_tokens=16, ignore_eos=True, seed=5)  # top-k 20, top-p 0.8
    wide = replace(sampled, top_k=40, top_p=0.95, seed=9)  # another k beside it in the same graph
    texts = {}
    for block in (True, False):
        # never the host's draw: every chain whole in the graph
        eng = four_sequences(tiny_qwen3, backend_sampling=True, batched_sampling_from=0, block_top_k=block)
        try:
            with eng._step_lock:
                streams = [eng.submit(p, wide if n % 2 else sampled) for n, p in enumerate(TEXT_PROMPTS[:4])]
            events = [list(s) for s in streams]
            texts[block] = ["".join(e.text for e in es if e.kind == "text") for es in events]
            assert [es[-1].finish_reason for es in events] == ["length"] * 4
            group = eng.samplers.block_top_k
            assert (group is not None and group.graphs_built > 0) == block
            assert group is None or group.errors == 0
            assert eng.samplers.rows_from_graph_top_k == 0
        finally:
            eng.close()
    assert len(set(texts[True])) == 4
    assert texts[True] == texts[False]


def test_an_older_ggml_without_an_operation_falls_back_instead_of_failing(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A ggml-base library that lacks one of the operations the block top-k builds with is refused
    with OSError (SlotSamplers then keeps llama.cpp's own top-k), not an AttributeError at startup."""
    from types import SimpleNamespace

    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libggml-base.so").write_bytes(b"")

    class OlderGgml:
        def __init__(self, name: str) -> None:
            self._name = name
            for function in ("ggml_pool_1d", "ggml_argsort", "ggml_cont", "ggml_get_rows", "ggml_concat"):
                setattr(self, function, SimpleNamespace())

    monkeypatch.setattr(block_top_k.ctypes, "CDLL", OlderGgml)
    monkeypatch.delenv("LLAMA_CPP_LIB_PATH", raising=False)
    lib = SimpleNamespace(__file__=str(tmp_path / "__init__.py"))  # the llama_cpp package: its libraries in lib/
    with pytest.raises(OSError, match="ggml_fill"):
        block_top_k._ggml_library(lib)


def test_an_untested_llama_cpp_python_turns_the_native_paths_off_and_still_generates(
    tiny_qwen3: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 45, item 5: on a llama-cpp-python version the native fast paths were not tested with, the
    block top-k and the GPU memory probe are off, said once in the log, and the engine draws with
    llama.cpp's own top-k: the same greedy text."""
    from docqa.llama import native_gate
    from docqa.llama.memory_fit import gpu_free_bytes

    top_1 = replace(NON_THINKING_SAMPLING, top_k=1, max_tokens=16, ignore_eos=True, seed=3)
    texts = {}
    for version in ("0.3.36", "0.3.99"):
        monkeypatch.setattr(native_gate, "installed_version", lambda version=version: version)
        native_gate.native_fast_paths.cache_clear()
        eng = four_sequences(tiny_qwen3, backend_sampling=True, batched_sampling_from=2, block_top_k=True)
        try:
            texts[version] = run_together(eng, TEXT_PROMPTS[:4], top_1)
            assert (eng.samplers.block_top_k is not None) == (version == "0.3.36")
            if version == "0.3.99":
                assert gpu_free_bytes(eng.llama.lib) is None  # the registry is not read either
        finally:
            eng.close()
    native_gate.native_fast_paths.cache_clear()
    assert texts["0.3.36"] == texts["0.3.99"]
    said = [r.getMessage() for r in caplog.records if r.name == "docqa.llama.native_gate"]
    assert len(said) == 1 and "llama-cpp-python 0.3.99 is not a version" in said[0], said
