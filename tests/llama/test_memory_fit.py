"""Fitting the KV cache into the GPU memory the model leaves (docqa.llama.memory_fit): the plan as pure
logic, then the cut through a real llama.cpp context on the CPU with a pretended GPU budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.core.errors import ConfigError
from docqa.llama.context import LlamaContext
from docqa.llama.memory_fit import (
    CELL_GRANULARITY,
    LARGE_PASS,
    SMALL_PASS,
    KvPlan,
    compute_buffer_bytes,
    gpu_free_bytes,
    pass_shape,
    plan_kv,
)

QWEN3_14B_CELL = 40 * 8 * 128 * 2 * 2  # f16 K and V, 40 layers x 8 KV heads x 128: 160 KiB
GIB = 2**30


def plan(
    cells: int,
    n_seq: int,
    budget_gib: float | None,
    shared: bool = False,
    explicit: bool = False,
    n_cache: int = 2,
) -> KvPlan:
    budget = None if budget_gib is None else int(budget_gib * GIB)
    return plan_kv(
        cells_per_sequence=cells,
        n_parallel=n_seq - n_cache,
        n_cache=n_cache,
        shared=shared,
        bytes_per_cell=QWEN3_14B_CELL,
        budget_bytes=budget,
        explicit=explicit,
    )


def test_a_cache_that_fits_is_asked_as_configured() -> None:
    assert plan(16384, 10, budget_gib=120.0) == plan(16384, 10, budget_gib=None)
    fitted = plan(16384, 10, 120.0)
    assert (fitted.cells, fitted.shrunk, fitted.n_parallel, fitted.n_cache) == (163840, False, 8, 2)


def test_the_defaults_on_a_24_gb_card_get_fewer_cells_per_sequence() -> None:
    """Qwen3-14B Q4_K_M (9 GB) on an RTX 4090 leaves ~12.5 GiB for the cache after the margins: the
    default 8 sequences + 2 cached prompts of 16,384 tokens (25 GiB) become 10 of 8,192."""
    fitted = plan(16384, 10, budget_gib=12.6)
    assert fitted.shrunk
    assert fitted.cells_per_sequence % CELL_GRANULARITY == 0
    assert fitted.cells == 10 * fitted.cells_per_sequence
    assert fitted.cells * QWEN3_14B_CELL <= 12.6 * GIB < (fitted.cells + 10 * CELL_GRANULARITY) * QWEN3_14B_CELL
    assert (fitted.cells_per_sequence, fitted.n_parallel, fitted.n_cache) == (8192, 8, 2)


def test_short_of_a_useful_context_fewer_sequences_run() -> None:
    """Where each of the 10 sequences would get less than 8,192 tokens, cached prompts go first (one is
    kept), then parallel requests: Qwen3-14B Q8_0 (15.7 GB) on a 24 GB card leaves ~5.9 GiB."""
    slightly_short = plan(16384, 10, budget_gib=12.0)  # 7,680 each for 10
    assert (slightly_short.n_parallel, slightly_short.n_cache, slightly_short.cells_per_sequence) == (8, 1, 8704)
    q8 = plan(16384, 10, budget_gib=5.9)
    assert (q8.n_parallel, q8.n_cache) == (3, 1)
    assert q8.cells_per_sequence >= 8192 and q8.cells == 4 * q8.cells_per_sequence
    assert q8.cells * QWEN3_14B_CELL <= 5.9 * GIB
    alone = plan(16384, 10, budget_gib=0.9)  # 5,898 cells: one request, no cached prompt
    assert (alone.n_parallel, alone.n_cache, alone.cells_per_sequence) == (1, 0, 5888)
    small_asked = plan(4096, 10, budget_gib=5.0)  # 4,096 a sequence asked: as many sequences as get that
    assert (small_asked.n_parallel, small_asked.n_cache, small_asked.cells_per_sequence) == (7, 1, 4096)


def test_a_shared_pool_is_cut_as_one() -> None:
    fitted = plan(65536, 10, budget_gib=4.0, shared=True)
    assert fitted.shrunk and fitted.cells == fitted.cells_per_sequence == 4 * GIB // QWEN3_14B_CELL // 256 * 256
    assert (fitted.n_parallel, fitted.n_cache) == (8, 2)


def test_no_room_for_a_useful_context_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="not even 4096 tokens for one sequence") as caught:
        plan(16384, 10, budget_gib=0.5)  # 3,276 cells: under 4,096 for a request alone
    assert "25.0 GiB" in str(caught.value) and "0.5 GiB" in str(caught.value)


def test_a_size_the_user_set_is_checked_never_cut() -> None:
    with pytest.raises(ConfigError, match="DOCQA_LLM_KV_CELLS"):
        plan(16384, 10, budget_gib=12.0, explicit=True)
    assert not plan(4096, 10, budget_gib=12.0, explicit=True).shrunk


def test_the_compute_estimate_covers_what_a_full_load_used_on_a_gpu() -> None:
    """Qwen3-14B's shape on an H200: llama.cpp's compute buffer plus the growth of the CUDA pool under
    a full load, at passes of 512, 1,024 and 2,048 tokens (bench/results/h200_memory_fit_*.json);
    the safety margin covers up to 0.1 GiB of a shortfall, not more, and the estimate is no more than
    0.25 GiB above, so that a 24 GB card keeps its KV cache."""
    for n_ubatch, used_gib in ((512, 0.31 + 0.70), (1024, 0.62 + 1.31), (2048, 1.24 + 2.52)):
        estimate = compute_buffer_bytes(n_ubatch, 151936, 5120, 17408) / GIB
        assert used_gib - 0.1 <= estimate <= used_gib + 0.25, n_ubatch


def test_without_a_gpu_there_is_no_budget() -> None:
    import llama_cpp

    assert gpu_free_bytes(llama_cpp, 2**30) is None  # this build of llama.cpp sees the CPU only


def test_the_larger_pass_is_taken_only_where_the_cache_fits_whole_beside_it() -> None:
    asked: list[int] = []

    def fits(size: int) -> bool:
        asked.append(size)
        return size <= roomy

    roomy = 4096
    assert pass_shape(None, None, fits) == LARGE_PASS == (4096, 2048)
    roomy = 1024
    assert pass_shape(None, None, fits) == SMALL_PASS == (2048, 1024)
    assert asked == [2048, 2048]  # the small pass is the fallback, never itself tested


def test_a_pass_the_user_set_is_kept_and_never_larger_than_its_step() -> None:
    def never(_size: int) -> bool:
        raise AssertionError("a set shape asks nothing of the GPU")

    assert pass_shape(4096, None, never) == (4096, 1024)
    assert pass_shape(None, 512, never) == (2048, 512)
    assert pass_shape(256, None, never) == (256, 256)
    assert pass_shape(1024, 4096, never) == (1024, 1024)


@pytest.mark.slow
def test_a_context_is_cut_to_the_budget_and_fails_clearly_below_it(demo_model: Path) -> None:
    def context(budget: int | None, layers: int = -1) -> LlamaContext:
        return LlamaContext(
            demo_model,
            n_ctx=2 * 16384,
            n_batch=256,
            n_seq_max=2,
            n_cache=1,
            kv_unified=False,
            n_gpu_layers=layers,  # a CPU build keeps every layer on the CPU whatever this says
            flash_attn=None,
            n_threads=1,
            fit_to_gpu=True,
            gpu_budget=lambda _lib, reserve: None if budget is None else budget - reserve,
        )

    probe = context(None)  # no GPU seen: as asked
    assert (probe.n_ctx, probe.n_ctx_seq, probe.kv_cells_asked) == (32768, 16384, 32768)
    assert (probe.n_parallel, probe.n_cache) == (1, 1)
    md, arch = probe.metadata, probe.metadata["general.architecture"]
    compute = compute_buffer_bytes(
        256, probe.n_vocab, int(md[f"{arch}.embedding_length"]), int(md[f"{arch}.feed_forward_length"])
    )
    cell = probe.kv_bytes_per_token()
    probe.close()
    roomy = context(compute + 32768 * cell)
    assert roomy.n_ctx == 32768
    roomy.close()
    cut = context(compute + 20000 * cell)  # 10,000 a sequence: 9,984 in whole 256s
    try:
        assert (cut.n_ctx, cut.n_ctx_seq, cut.kv_cells_asked, cut.n_cache) == (19968, 9984, 32768, 1)
    finally:
        cut.close()
    alone = context(compute + 10000 * cell)  # under 8,192 each for two: the request alone, no cached prompt
    try:
        assert (alone.n_ctx, alone.n_ctx_seq, alone.n_parallel, alone.n_cache) == (9984, 9984, 1, 0)
    finally:
        alone.close()
    with pytest.raises(ConfigError, match="not even 4096 tokens for one sequence"):
        context(compute + 3000 * cell)
    # half the layers on the GPU: half of each cell's bytes count against its memory
    n_layer = int(md[f"{arch}.block_count"])
    half = context(compute + 20000 * cell, layers=n_layer // 2)
    try:
        assert half.n_ctx == 32768
    finally:
        half.close()


@pytest.mark.slow
def test_a_context_llama_cpp_cannot_allocate_is_a_clear_error(demo_model: Path) -> None:
    """A KV cache of 20 million cells (hundreds of GB, while its per-cell bookkeeping stays under 1 GB, so
    the test holds little memory itself): llama.cpp fails to make the context and says only
    that; docqa names the settings that size it."""
    overcommit = Path("/proc/sys/vm/overcommit_memory")
    if not overcommit.is_file() or overcommit.read_text().strip() != "0":
        pytest.skip("only where the kernel refuses an allocation beyond memory (overcommit_memory 0)")
    with pytest.raises(ConfigError, match="could not create a context of 20000000 tokens") as caught:
        LlamaContext(
            demo_model,
            n_ctx=20_000_000,
            n_batch=256,
            n_seq_max=1,
            kv_unified=False,
            n_gpu_layers=0,
            flash_attn=None,
            n_threads=1,
        )
    assert "DOCQA_LLM_N_CTX" in str(caught.value)


@pytest.mark.slow
def test_a_context_takes_the_larger_pass_only_with_room_for_the_whole_cache(demo_model: Path) -> None:
    def context(budget: int) -> LlamaContext:
        return LlamaContext(
            demo_model,
            n_ctx=2 * 4096,
            n_batch=None,
            n_seq_max=2,
            n_cache=1,
            kv_unified=False,
            n_gpu_layers=-1,
            flash_attn=None,
            n_threads=1,
            fit_to_gpu=True,
            gpu_budget=lambda _lib, reserve: budget - reserve,
        )

    probe = context(2**50)
    try:
        assert (probe.n_batch, probe.n_ubatch, probe.n_ctx) == (4096, 2048, 8192)
        md, arch = probe.metadata, probe.metadata["general.architecture"]
        shape = (probe.n_vocab, int(md[f"{arch}.embedding_length"]), int(md[f"{arch}.feed_forward_length"]))
        cell = probe.kv_bytes_per_token()
    finally:
        probe.close()
    between = context(compute_buffer_bytes(1024, *shape) + 8192 * cell)  # whole beside 1,024, not beside 2,048
    try:
        assert (between.n_batch, between.n_ubatch, between.n_ctx) == (2048, 1024, 8192)
    finally:
        between.close()
