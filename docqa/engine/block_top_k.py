"""One top-k for all rows of a decode step, inside llama.cpp's graph.

With many sequences generating, the sampling step keeps each row's top-k in the decode graph and the
host draws from them (SlotSamplers). llama.cpp's own top-k sampler is one per sequence, and its
CUDA top-k runs row by row: 64 of them added 8 ms to a 24 ms step on an H200.

Here the samplers of one context share one computation over the whole [vocabulary x rows] logits,
from operations that each run once for all rows (pooling, argsort, gathers):
  1. the maximum of each block of consecutive logits, per row;
  2. the k blocks with the largest maxima (an argsort of the maxima): the top-k tokens lie in them,
     since a token in any other block has k larger block maxima above it;
  3. the same again inside those k blocks, with blocks of 16 (Qwen: 594 blocks of 256, the row padded
     with -inf, then 20 of their 320 blocks of 16), so that no argsort is longer than 1,024: ggml's
     CUDA backend sorts such a row in one kernel, a longer one with a radix sort of several kernels;
  4. the last blocks' logits and token IDs (k x 16 candidates), and their top k (an argsort).
Where two levels cannot keep every sort short (a large k), one level of blocks (block_size).
Each sequence's sampler then hands llama.cpp views of its own row: k logits and k token IDs. The IDs
come out of the graph as float32 (exact below 2^24), because ggml computes no integer arithmetic;
LlamaContext.sampled_top_k reads them as such. A sampler that leads a whole chain in the graph (top-p,
temperature and the draw after it, llama.cpp's own) hands on its own k IDs cast to int32, as llama.cpp's
top-k sampler does, so that the draw maps back to vocabulary IDs.

The samplers are llama.cpp custom samplers (llama_sampler_i) whose callbacks are Python functions,
building ggml operations through ctypes; llama.cpp calls them while it builds a graph, not per step.
"""

from __future__ import annotations

import ctypes
import logging
import math
from typing import Any

from docqa.llama.native_libraries import library_beside_llama

logger = logging.getLogger(__name__)

_POOL_MAX = 0  # enum ggml_op_pool
_TYPE_I32 = 26  # enum ggml_type
_SORT_DESC = 1  # enum ggml_sort_order
_NAME = b"docqa-block-top-k"


class GgmlTensor(ctypes.Structure):
    """The head of ggml.h's struct ggml_tensor, as far as docqa reads it."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("buffer", ctypes.c_void_p),
        ("ne", ctypes.c_int64 * 4),
        ("nb", ctypes.c_size_t * 4),
        ("op", ctypes.c_int),
        ("op_params", ctypes.c_int32 * 16),
        ("flags", ctypes.c_int32),
        ("src", ctypes.c_void_p * 10),
        ("view_src", ctypes.c_void_p),
        ("view_offs", ctypes.c_size_t),
        ("data", ctypes.c_void_p),
        ("name", ctypes.c_char * 64),
    ]


def block_size(n_vocab: int, k: int) -> int | None:
    """The block width for a top-k over n_vocab logits: the largest divisor of n_vocab from 32 to 256
    (the blocks must tile the row; Qwen's 151,936 = 1,187 x 128), provided the k x block candidates
    stay a small part of the row. None: no such block; llama.cpp's own top-k instead."""
    for block in range(256, 31, -1):
        if n_vocab % block == 0 and k * block * 8 <= n_vocab:
            return block
    return None


BITONIC_MAX = 1024  # ggml's CUDA argsort sorts a row of up to 1024 in one kernel, longer ones with CUB's radix sort


def short_sort_plan(n_vocab: int, k: int) -> tuple[int, int, int] | None:
    """Blocks for a top-k whose every sort has at most BITONIC_MAX columns: (coarse block, fine block,
    vocabulary padded to a whole number of coarse blocks). The coarse block is the smallest power of two
    that leaves at most BITONIC_MAX coarse maxima; the fine block the power of two nearest its square
    root. None when no such pair fits k (then the one-level blocks of block_size)."""
    coarse = 1
    while -(-n_vocab // coarse) > BITONIC_MAX:
        coarse *= 2
    fine = 1 << round(coarse.bit_length() / 2 - 0.5)
    if k * (coarse // fine) > BITONIC_MAX or k * fine > BITONIC_MAX or k > BITONIC_MAX:
        return None
    return coarse, fine, -(-n_vocab // coarse) * coarse


def _ggml_library(lib: Any) -> Any:
    """The ggml library that llama.cpp itself loaded (the same file: its tensors and contexts);
    lib: llama-cpp-python's llama_cpp package."""
    ggml = library_beside_llama(lib, "ggml-base")
    vp, i64, c_int = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
    signatures: dict[str, list[Any]] = {
        "ggml_pool_1d": [vp, vp, c_int, c_int, c_int, c_int],
        "ggml_argsort": [vp, vp, c_int],
        "ggml_cont": [vp, vp],
        "ggml_get_rows": [vp, vp, vp],
        "ggml_cast": [vp, vp, c_int],
        "ggml_arange": [vp, ctypes.c_float, ctypes.c_float, ctypes.c_float],
        "ggml_reshape_1d": [vp, vp, i64],
        "ggml_reshape_2d": [vp, vp, i64, i64],
        "ggml_reshape_3d": [vp, vp, i64, i64, i64],
        "ggml_view_1d": [vp, vp, i64, ctypes.c_size_t],
        "ggml_view_2d": [vp, vp, i64, i64, ctypes.c_size_t, ctypes.c_size_t],
        "ggml_fill": [vp, vp, ctypes.c_float],
        "ggml_concat": [vp, vp, vp, c_int],
    }
    missing = [function for function in signatures if not hasattr(ggml, function)]
    if missing:  # an older ggml: llama.cpp's own top-k instead (the caller falls back on OSError)
        raise OSError(f"{ggml._name} lacks {', '.join(missing)}")
    for function, argtypes in signatures.items():
        getattr(ggml, function).argtypes = argtypes
        getattr(ggml, function).restype = vp
    _check_layout(ggml)
    return ggml


class _InitParams(ctypes.Structure):
    _fields_ = [("mem_size", ctypes.c_size_t), ("mem_buffer", ctypes.c_void_p), ("no_alloc", ctypes.c_bool)]


def _check_layout(lib: Any) -> None:
    """GgmlTensor mirrors ggml.h by hand: check it on a real tensor and view before trusting it, so a
    llama.cpp whose struct has moved falls back to its own top-k instead of reading garbage."""
    lib.ggml_init.argtypes, lib.ggml_init.restype = [_InitParams], ctypes.c_void_p
    lib.ggml_new_tensor_2d.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    lib.ggml_new_tensor_2d.restype = ctypes.c_void_p
    lib.ggml_free.argtypes, lib.ggml_free.restype = [ctypes.c_void_p], None
    ctx = lib.ggml_init(_InitParams(1 << 16, None, True))
    try:
        tensor = lib.ggml_new_tensor_2d(ctx, 0, 7, 3)  # GGML_TYPE_F32
        row = lib.ggml_view_1d(ctx, tensor, 7, 28)
        t, v = GgmlTensor.from_address(tensor), GgmlTensor.from_address(row)
        if (t.ne[0], t.ne[1], t.nb[1], v.view_src, v.view_offs) != (7, 3, 28, tensor, 28):
            raise OSError("ggml's tensor layout is not the one docqa.engine.block_top_k reads")
        lib.ggml_type_name.argtypes, lib.ggml_type_name.restype = [ctypes.c_int], ctypes.c_char_p
        if (lib.ggml_type_name(0), lib.ggml_type_name(_TYPE_I32)) != (b"f32", b"i32"):
            raise OSError("ggml's type numbers are not the ones docqa.engine.block_top_k uses")
    finally:
        lib.ggml_free(ctx)


class BlockTopK:
    """The block top-k samplers of one llama.cpp context, and the computation they share per graph."""

    def __init__(self, lib: Any, n_vocab: int, short_sorts: bool = True) -> None:
        """lib: llama-cpp-python's llama_cpp package (LlamaContext.lib); short_sorts: two levels of
        blocks where they keep every sort within BITONIC_MAX (short_sort_plan), else one level."""
        self._lib = lib
        self._ggml = _ggml_library(lib)
        self.n_vocab = n_vocab
        self.short_sorts = short_sorts
        self._k: dict[int, tuple[int, bool]] = {}  # sampler address -> its k, and whether a chain follows it
        self._built: tuple[int, int, int, int, int] | None = None  # full logits, K, out logits, out IDs, row bytes
        self.graphs_built = 0
        self.errors = 0
        i = lib.llama_sampler_i
        # llama.cpp keeps the name's pointer: a buffer this object owns, not a Python bytes
        self._name = ctypes.create_string_buffer(_NAME)
        name_address = ctypes.addressof(self._name)
        # ctypes callbacks must outlive every sampler: kept on this object, which SlotSamplers keeps
        self._name_callback = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(lambda _s: name_address)
        kind = dict(i._fields_)  # each callback's ctypes type, by the field's name in llama_sampler_i
        self._callbacks = [
            ctypes.cast(self._name_callback, kind["name"]),
            kind["apply"](lambda _s, _cur: None),  # never drawn on the host (see SlotSamplers)
            kind["free"](self._free),
            kind["backend_init"](lambda _s, _buft, _n: True),
            kind["backend_apply"](self._backend_apply),
            kind["backend_reset"](self._backend_reset),
        ]
        name, apply, free, init, backend_apply, reset = self._callbacks
        self._iface = i(
            name=name, apply=apply, free=free, backend_init=init, backend_apply=backend_apply, backend_reset=reset
        )

    def chain(self, k: int) -> Any:
        """A sampler chain holding one block top-k sampler (llama.cpp offloads chains only): the graph
        keeps the largest k of all the samplers, IDs as float32, for the host to draw from."""
        lib = self._lib
        chain = lib.llama_sampler_chain_init(lib.llama_sampler_chain_default_params())
        lib.llama_sampler_chain_add(chain, self.sampler(k, chain_follows=False))
        return chain

    def sampler(self, k: int, chain_follows: bool = True) -> Any:
        """A block top-k sampler; chain_follows: llama.cpp's samplers take its own k candidates on in
        the graph (int32 IDs). It never runs on the host: a chain holding it must stay in a graph."""
        sampler = self._lib.llama_sampler_init(ctypes.byref(self._iface), None)
        self._k[ctypes.cast(sampler, ctypes.c_void_p).value or 0] = (k, chain_follows)
        return sampler

    def _free(self, sampler: Any) -> None:
        self._k.pop(ctypes.cast(sampler, ctypes.c_void_p).value or 0, None)

    def _backend_reset(self, _sampler: Any) -> None:
        self._built = None  # llama.cpp resets every sampler before it builds a new graph

    def _backend_apply(self, sampler: Any, ctx: int, _graph: int, data_pointer: Any) -> None:
        try:
            data = data_pointer.contents
            row_view = GgmlTensor.from_address(data.logits)
            # In a decode graph each sampler gets a view of its row of all the logits; when llama.cpp
            # probes a chain (to count its graph nodes) it gets a lone row.
            full = row_view.view_src or data.logits
            if self._built is None or self._built[0] != full:
                self._built = self._build(ctx, full)
            _, k, out_logits, out_ids, row_bytes = self._built
            own_k, chain_follows = self._k[ctypes.cast(sampler, ctypes.c_void_p).value or 0]
            row = row_view.view_offs // GgmlTensor.from_address(full).nb[1] if row_view.view_src else 0
            # each row's candidates are sorted, best first: its own top-k are the first own_k
            width = own_k if chain_follows else k
            data.logits = self._ggml.ggml_view_1d(ctx, out_logits, width, row * row_bytes)
            data.candidates = self._ggml.ggml_view_1d(ctx, out_ids, width, row * row_bytes)
            if chain_follows:
                data.candidates = self._ggml.ggml_cast(ctx, data.candidates, _TYPE_I32)
        except Exception:  # an exception must not cross into llama.cpp: the row keeps its full logits
            self.errors += 1
            logger.exception("block top-k could not be built into llama.cpp's graph")

    def _build(self, ctx: int, full: int) -> tuple[int, int, int, int, int]:
        shape = GgmlTensor.from_address(full)
        vocab, rows = int(shape.ne[0]), int(shape.ne[1])
        k = max(own_k for own_k, _ in self._k.values())
        if self.short_sorts and (plan := short_sort_plan(vocab, k)) is not None:
            coarse, fine, padded_vocab = plan
            return self._build_levels(ctx, full, vocab, rows, k, [coarse, fine], padded_vocab)
        block = block_size(vocab, k)
        if block is None:
            raise ValueError(f"no block top-k for a vocabulary of {vocab} and k={k}")
        return self._build_levels(ctx, full, vocab, rows, k, [block], vocab)

    def _build_levels(
        self, ctx: int, full: int, vocab: int, rows: int, k: int, blocks: list[int], padded_vocab: int
    ) -> tuple[int, int, int, int, int]:
        """The top-k through levels of blocks, each block a whole number of the next level's: the row
        (padded with -inf to whole first-level blocks); the k blocks with the largest maxima; in them,
        the k next-level blocks with the largest maxima, and so on; in the last ones, the top k."""
        g = self._ggml
        values = full
        if padded_vocab > vocab:
            pad = g.ggml_fill(ctx, g.ggml_view_1d(ctx, full, (padded_vocab - vocab) * rows, 0), -math.inf)
            values = g.ggml_concat(ctx, full, g.ggml_reshape_2d(ctx, pad, padded_vocab - vocab, rows), 0)
        width, n_blocks = blocks[0], padded_vocab // blocks[0]
        top = self._top_columns(ctx, g.ggml_pool_1d(ctx, values, _POOL_MAX, width, width, 0), k, rows)
        values = g.ggml_get_rows(ctx, g.ggml_reshape_3d(ctx, values, width, n_blocks, rows), top)  # [width, k, rows]
        # the IDs of the first level's blocks are the same in every row: one table, gathered per row
        table = g.ggml_reshape_2d(ctx, g.ggml_arange(ctx, 0.0, float(padded_vocab), 1.0), width, n_blocks)
        ids = g.ggml_get_rows(ctx, table, g.ggml_reshape_1d(ctx, top, k * rows))  # [width, k * rows]
        for block in blocks[1:]:
            n_blocks = width // block * k  # the next level's blocks among the candidates
            maxima = g.ggml_pool_1d(ctx, g.ggml_reshape_2d(ctx, values, width * k, rows), _POOL_MAX, block, block, 0)
            top = self._top_columns(ctx, maxima, k, rows)
            values = g.ggml_get_rows(ctx, g.ggml_reshape_3d(ctx, values, block, n_blocks, rows), top)
            ids = g.ggml_get_rows(ctx, g.ggml_reshape_3d(ctx, ids, block, n_blocks, rows), top)
            width = block
        candidates = g.ggml_reshape_3d(ctx, values, 1, width * k, rows)
        best = self._top_columns(ctx, g.ggml_reshape_2d(ctx, candidates, width * k, rows), k, rows)  # [k, rows]
        out_logits = g.ggml_get_rows(ctx, candidates, best)
        out_ids = g.ggml_get_rows(ctx, g.ggml_reshape_3d(ctx, ids, 1, width * k, rows), best)
        self.graphs_built += 1
        return full, k, out_logits, out_ids, k * 4  # [1, k, rows] float32 each: a row is k x 4 bytes

    def _top_columns(self, ctx: int, tensor: int, k: int, rows: int) -> int:
        """[k, rows]: each row's k largest columns, largest first (the first k of a descending argsort)."""
        order = self._ggml.ggml_argsort(ctx, tensor, _SORT_DESC)
        row_bytes = GgmlTensor.from_address(order).nb[1]
        return int(self._ggml.ggml_cont(ctx, self._ggml.ggml_view_2d(ctx, order, k, rows, row_bytes, 0)))
