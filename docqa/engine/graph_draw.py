"""Top-p, temperature and the draw for every row of a step at once, inside llama.cpp's graph.

After the block top-k (docqa.engine.block_top_k) each row holds its k best logits, sorted, and their
token IDs. llama.cpp's own top-p, temperature and draw samplers would then add about 24 operations
per row, and hand back four tensors per row (the token, and the candidates' logits, probabilities
and IDs), each one more copy from the GPU every step. Here one set of operations serves all rows:

  1. top-p, on the softmax at temperature 1 (llama.cpp's order): a column stays while the
     probability before it is below p; the others get -1e30;
  2. the draw by the Gumbel-max trick: argmax(logit + T * g) over the columns left, where g is
     standard Gumbel noise, is a draw from softmax(logit / T) over them. The host draws g from the
     request's own generator and hands it in with p, so temperature and seed stay per row;
  3. the winning column's token ID, as int32: the only tensor copied back.

The noise, p and (when k differs between rows) a mask of the columns beyond a row's own k are one
input tensor, [row width x rows], written once per step by each drawing sampler llama.cpp calls
(it calls only the samplers with an output in the step: the buffer holds every row, so the last
write carries them all). A fixed seed repeats its tokens, but not the tokens llama.cpp's own draw
gives for it.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from docqa.engine.chain_key import RANDOM_SEED

_TYPE_F32, _TYPE_I32 = 0, 26  # enum ggml_type
MASKED = -1e30  # finite, so that no row is ever all -inf (CUDA's argmax returns -1 for such a row)
_KEEP_ALL = 2.0  # a top-p above any cumulative probability: no top-p


@dataclass
class RowDraw:
    """One drawing sampler: its chain's parameters, its random stream and its row in this graph."""

    k: int
    top_p: float
    temperature: float
    seed: int
    row: int = 0
    rng: np.random.Generator = field(init=False)

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(None if self.seed == RANDOM_SEED else self.seed)

    def fill(self, line: np.ndarray, width: int, masked_columns: bool) -> None:
        """This step's input for the row: T x Gumbel noise over its own k columns (MASKED beyond),
        its top-p, and the mask of its columns beyond k when rows' k differ."""
        line[: self.k] = self.temperature * self.rng.gumbel(size=self.k)
        line[self.k : width] = MASKED
        line[width] = self.top_p if self.top_p < 1.0 else _KEEP_ALL
        if masked_columns:
            line[width + 1 : width + 1 + self.k] = 0.0
            line[width + 1 + self.k :] = MASKED


def ggml_draw_functions(ggml: Any) -> None:
    """Declare the ggml functions the draw builds with (ggml: the ggml-base library llama.cpp loaded)."""
    vp, c_int, c_float = ctypes.c_void_p, ctypes.c_int, ctypes.c_float
    signatures: dict[str, tuple[list[Any], Any]] = {
        "ggml_new_tensor_2d": ([vp, c_int, ctypes.c_int64, ctypes.c_int64], vp),
        "ggml_set_input": ([vp], None),
        "ggml_soft_max": ([vp, vp], vp),
        "ggml_cumsum": ([vp, vp], vp),
        "ggml_sub": ([vp, vp, vp], vp),
        "ggml_add": ([vp, vp, vp], vp),
        "ggml_step": ([vp, vp], vp),
        "ggml_scale": ([vp, vp, c_float], vp),
        "ggml_clamp": ([vp, vp, c_float, c_float], vp),
        "ggml_argmax": ([vp, vp], vp),
        "ggml_backend_tensor_set": ([vp, vp, ctypes.c_size_t, ctypes.c_size_t], None),
    }
    for name, (argtypes, restype) in signatures.items():
        getattr(ggml, name).argtypes = argtypes
        getattr(ggml, name).restype = restype


class GraphDraw:
    """The draw computation of one graph, over the block top-k's sorted [k, rows] logits and IDs."""

    def __init__(self, ggml: Any, ctx: int, logits: int, ids: int, k: int, rows: int, masked_columns: bool) -> None:
        """logits, ids: [1, k, rows] float32 tensors (the IDs as float32, exact below 2^24);
        masked_columns: some drawing row's own k is below k (its columns beyond are masked)."""
        g = ggml
        self._ggml = ggml
        self.k, self.rows, self.masked_columns = k, rows, masked_columns
        width = k + 1 + (k if masked_columns else 0)
        self.input = g.ggml_new_tensor_2d(ctx, _TYPE_F32, width, rows)
        g.ggml_set_input(self.input)
        self.host = np.zeros((rows, width), dtype=np.float32)  # rows without a drawing sampler: p = 0
        row_bytes = width * 4

        def columns(n: int, first: int) -> int:
            return int(g.ggml_view_2d(ctx, self.input, n, rows, row_bytes, first * 4))

        values = g.ggml_reshape_2d(ctx, logits, k, rows)
        if masked_columns:
            values = g.ggml_add(ctx, values, columns(k, k + 1))
        probabilities = g.ggml_soft_max(ctx, values)
        before = g.ggml_sub(ctx, g.ggml_cumsum(ctx, probabilities), probabilities)  # probability before each column
        beyond_p = g.ggml_step(ctx, g.ggml_sub(ctx, before, columns(1, k)))  # 1 where it reached p already
        kept = g.ggml_add(ctx, values, g.ggml_scale(ctx, beyond_p, MASKED))
        # clamped: rows no sampler wrote this step hold whatever the buffer held; no NaN reaches argmax
        noise = g.ggml_clamp(ctx, columns(k, 0), MASKED, -MASKED)
        column = g.ggml_argmax(ctx, g.ggml_add(ctx, kept, noise))  # [rows] int32
        token = g.ggml_get_rows(ctx, ids, g.ggml_reshape_2d(ctx, column, 1, rows))  # [1, 1, rows]
        self.tokens = g.ggml_cast(ctx, g.ggml_reshape_1d(ctx, token, rows), _TYPE_I32)

    def token_of(self, ctx: int, row: int) -> int:
        """A view of one row's drawn token: what llama.cpp copies back for that sampler."""
        return int(self._ggml.ggml_view_1d(ctx, self.tokens, 1, row * 4))

    def set_input(self, draw: RowDraw) -> None:
        """Fresh noise for this sampler's row, then the whole buffer to the graph's input."""
        draw.fill(self.host[draw.row], self.k, self.masked_columns)
        self._ggml.ggml_backend_tensor_set(self.input, self.host.ctypes.data, 0, self.host.nbytes)
