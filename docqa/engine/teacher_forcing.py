"""Logits of whole token sequences, evaluated together in one batch: what the tests compare to check
that batching does not change what a sequence computes (BatchingGenerator.teacher_forced_logits)."""

from __future__ import annotations

import numpy as np

from docqa.engine.sampling import SlotSamplers
from docqa.llama.context import LlamaContext


def teacher_forced_logits(
    llama: LlamaContext, samplers: SlotSamplers, sequences: list[list[int]], free_slots: int
) -> list[np.ndarray]:
    """Feed each token list as one sequence (slots 0, 1, ...), all in one batch, and return every
    position's logits. The engine must be idle, with at least len(sequences) free slots."""
    if len(sequences) > free_slots:
        raise ValueError(f"at most {free_slots} sequences (n_parallel) at once")
    samplers.release_all()  # a backend sampler would take the logits this call returns
    for slot, tokens in enumerate(sequences):
        llama.batch.add(tokens, 0, slot, True)
    if llama.decode() != 0:
        raise RuntimeError("decode failed")
    out, k = [], 0
    for tokens in sequences:
        out.append(np.stack([llama.logits(k + i) for i in range(len(tokens))]))
        k += len(tokens)
    for slot in range(len(sequences)):
        llama.seq_remove(slot)
    return out
