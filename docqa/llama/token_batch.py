"""A llama.cpp batch whose arrays are numpy arrays, filled with vector operations.

llama-cpp-python's `llama_batch_init` batch is filled one ctypes field write at a time: six writes,
about 2 microseconds, per token. A 4k-token text costs ~8 ms of Python before a GPU forward pass that
takes ~130 ms on an H200, serially. Here the struct points into arrays that docqa owns (one
sequence ID per token), so filling is a handful of numpy slice assignments.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np


class TokenBatch:
    def __init__(self, capacity: int) -> None:
        import llama_cpp

        self.capacity = capacity
        self.token = np.zeros(capacity, dtype=np.int32)
        self.pos = np.zeros(capacity, dtype=np.int32)
        self.n_seq_id = np.ones(capacity, dtype=np.int32)
        self.seq = np.zeros(capacity, dtype=np.int32)
        self.logits = np.zeros(capacity, dtype=np.int8)
        # llama.cpp reads each token's sequence IDs through a pointer: token i's points at seq[i]
        seq_type = ctypes.POINTER(ctypes.c_int32)
        self._seq_pointers = (seq_type * capacity)(
            *(ctypes.cast(self.seq.ctypes.data + 4 * i, seq_type) for i in range(capacity))
        )
        self.struct: Any = llama_cpp.llama_batch(
            n_tokens=0,
            token=self.token.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)),
            embd=None,
            pos=self.pos.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)),
            n_seq_id=self.n_seq_id.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)),
            seq_id=ctypes.cast(self._seq_pointers, ctypes.POINTER(seq_type)),
            logits=self.logits.ctypes.data_as(ctypes.POINTER(ctypes.c_int8)),
        )
        self.n_tokens = 0

    def clear(self) -> None:
        self.n_tokens = 0
        self.struct.n_tokens = 0

    def add_singles(self, tokens: list[int], positions: list[int], seq_ids: list[int]) -> None:
        """Append one token, with its output, of each of several sequences (a decode step's inputs):
        one slice assignment per array for all of them, where `add` takes five per sequence."""
        self._append(tokens, positions, seq_ids, 1)

    def add(self, tokens: Any, start_pos: int, seq_id: int, outputs: bool | str) -> None:
        """Append consecutive tokens of one sequence from position start_pos. outputs: True marks every
        token, False none, "last" only the last one."""
        n = len(tokens)
        end = self._append(tokens, np.arange(start_pos, start_pos + n, dtype=np.int32), seq_id, outputs is True)
        if outputs == "last" and n:
            self.logits[end - 1] = 1

    def _append(self, tokens: Any, positions: Any, seq_ids: Any, outputs: Any) -> int:
        """Write tokens with their positions, sequence IDs and output flags (each an array of their
        length, or one value for all) after those in the batch; the new end."""
        a, b = self.n_tokens, self.n_tokens + len(tokens)
        if b > self.capacity:
            raise ValueError(f"batch of {b} tokens is over its capacity of {self.capacity}")
        self.token[a:b] = tokens
        self.pos[a:b] = positions
        self.seq[a:b] = seq_ids
        self.logits[a:b] = outputs
        self.n_tokens = b
        self.struct.n_tokens = b
        return b


def common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    n = min(len(a), len(b))
    if n == 0:
        return 0
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if len(diff) else n
