"""A reranking model through llama.cpp: Qwen3-Reranker reads a question with a passage and answers yes or no.

The log-odds of "yes" is the score (the algorithm that picks windows and reorders: docqa.retrieval.rerank).

Two GGUF forms of Qwen3-Reranker exist and both are read: llama.cpp's converter writes one with rank
pooling and a two-row classifier (the "yes" and "no" rows of the output layer), which llama.cpp returns
per sequence; other conversions keep the whole causal LM, whose "yes" and "no" logits are read at the
last token. Either way, each pair is one sequence, all of a group in one llama_decode.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from docqa.core.errors import ConfigError
from docqa.core.settings import RerankSettings
from docqa.llama.context import context_params, load_model, new_context
from docqa.llama.embedder import declared_pooling, gguf_metadata, is_causal
from docqa.llama.model_files import cpu_threads, model_label, offloaded, use_flash_attention
from docqa.llama.model_uses import ModelUses
from docqa.llama.token_batch import TokenBatch, common_prefix

logger = logging.getLogger(__name__)

# Qwen3-Reranker's prompt (its model card); {instruction} is docqa's, the card's example is web search.
QWEN3_RERANK_TEMPLATE = (
    "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct "
    'provided. Note that the answer can only be "yes" or "no".<|im_end|>\n'
    "<|im_start|>user\n<Instruct>: {instruction}\n<Query>: {query}\n<Document>: {document}<|im_end|>\n"
    "<|im_start|>assistant\n<think>\n\n</think>\n\n"
)
_INSTRUCT_LINE = re.compile(r"<Instruct>: [^\n]*\n")
MAX_QUERY_TOKENS = 256
_TEMPLATE_ROOM = 128  # tokens of the prompt around the query and the document
_MIN_SHARED_PREFIX = 16  # fewer shared tokens are not worth a separate decode


def prompt_pieces(template: str, instruction: str) -> tuple[str, str, str]:
    """The template around {query} and {document}, with docqa's instruction in its <Instruct> line.
    A space before a placeholder moves to the text that fills it (BPE joins it to the first word)."""
    template = _INSTRUCT_LINE.sub(lambda _: f"<Instruct>: {instruction}\n", template, count=1)
    if template.find("{query}") < 0 or template.find("{document}") < template.find("{query}"):
        raise ConfigError("the reranker's prompt template needs {query} before {document}")
    before, rest = template.split("{query}", 1)
    between, after = rest.split("{document}", 1)
    return before, between, after


class LlamaReranker:
    """A causal-LM reranker (Qwen3-Reranker) through llama-cpp-python's low-level API. Pairs run as
    parallel sequences with their own KV cells (as llama-batched-bench runs them), so one pair's
    attention never spans another's. One llama.cpp context is not thread-safe, hence the lock."""

    def __init__(self, model_path: Path, settings: RerankSettings, metadata: dict[str, str] | None = None) -> None:
        import llama_cpp

        metadata = metadata if metadata is not None else gguf_metadata(model_path)
        arch = metadata.get("general.architecture", "")
        if not is_causal(metadata):
            raise ConfigError(
                f"reranker {model_path.name} attends both ways (a BERT-style cross-encoder); docqa reranks "
                "with a causal model that answers yes or no, such as Qwen3-Reranker"
            )
        self.rank_pooled = declared_pooling(metadata) == llama_cpp.LLAMA_POOLING_TYPE_RANK
        # llama.cpp's rank pooling ends in a softmax for Qwen3 (the two outputs are probabilities); for
        # other architectures the classifier's outputs are logits as they are.
        self._probabilities = self.rank_pooled and arch in ("qwen3", "qwen3vl")
        self._settings = settings
        # Each sequence's KV cells (llama.cpp gives each n_ctx / n_seq_max, in multiples of 256)
        pair_tokens = -(-(settings.window_tokens + MAX_QUERY_TOKENS + _TEMPLATE_ROOM) // 256) * 256
        cells = pair_tokens * settings.n_parallel  # every pair of a decode group, in one batch
        self._model = load_model(model_path, settings.n_gpu_layers)
        params = context_params(
            n_ctx=cells,
            n_batch=cells,
            n_ubatch=cells,
            n_threads=cpu_threads(settings.n_threads),
            flash_attn=use_flash_attention(settings.flash_attn, settings.n_gpu_layers),
        )
        params.n_seq_max = settings.n_parallel
        params.kv_unified = False
        params.embeddings = self.rank_pooled
        if self.rank_pooled:
            params.pooling_type = llama_cpp.LLAMA_POOLING_TYPE_RANK
        self._ctx = new_context(self._model, params, model_path, "DOCQA_RERANK_N_PARALLEL")
        self._batch = TokenBatch(cells)
        self._yes_no = self._rank_rows() if self.rank_pooled else self._answer_tokens()
        template = metadata.get("tokenizer.chat_template.rerank") or QWEN3_RERANK_TEMPLATE
        before, between, after = prompt_pieces(template, settings.instruction)
        self._before, self._between, self._after = (self._special(p.rstrip(" ")) for p in (before, between, after))
        self._space = (" " if before.endswith(" ") else "", " " if between.endswith(" ") else "")
        self.model_id = model_label(model_path)
        self._lock = threading.Lock()
        self._uses = ModelUses("reranker")
        # Tokenising a question's 16 windows took 36 ms on one core of this VM, a quarter of the whole
        # reranking on an H200 (docs/benchmarks.md); llama.cpp's tokenizer releases the GIL, so threads split it.
        self._tokeniser = ThreadPoolExecutor(min(8, os.cpu_count() or 1), thread_name_prefix="docqa-rerank-tokenise")
        logger.info("reranker %s loaded (%s)", self.model_id, "rank pooling" if self.rank_pooled else "yes/no logits")
        if not offloaded(settings.n_gpu_layers):
            # Measured with a 0.6B model on 2 CPU cores: 16 windows (8.6k tokens) took 107 s a question.
            logger.warning(
                "reranker %s runs on the CPU: every question reads up to %d windows of %d tokens, which takes "
                "minutes on a few cores (docs/benchmarks.md); fewer DOCQA_RERANK_CANDIDATES or "
                "DOCQA_RERANK_WINDOWS_PER_CHUNK cut it, a GPU build of llama-cpp-python takes it under a second",
                self.model_id,
                settings.candidates * settings.windows_per_chunk,
                settings.window_tokens,
            )

    def close(self) -> None:
        """Refuse new scores and wait for those running (a score after close is ModelClosedError, never a
        call into freed memory: the question is tokenised before the lock), stop the tokenising threads,
        free llama.cpp's context and model."""
        self._uses.close()
        self._tokeniser.shutdown(wait=True)
        with self._lock:
            self._ctx.close()
            self._model.close()

    def _special(self, text: str) -> list[int]:
        return list(self._model.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def _plain(self, text: str, limit: int) -> list[int]:
        """A user text's tokens, special-token look-alikes read as text (a document cannot close the turn)."""
        return list(self._model.tokenize(text.encode("utf-8"), add_bos=False, special=False))[:limit]

    def _answer_tokens(self) -> tuple[int, int]:
        yes, no = self._special("yes"), self._special("no")
        if len(yes) != 1 or len(no) != 1:
            raise ConfigError("the reranker's vocabulary has no single 'yes' and 'no' tokens to score by")
        return yes[0], no[0]

    def _rank_rows(self) -> tuple[int, int]:
        """Where "yes" and "no" sit in the classifier's output (llama.cpp's converter: yes, no); a
        one-output classifier scores directly (the second index is then -1)."""
        import llama_cpp

        n = int(llama_cpp.llama_model_n_cls_out(self._model.model))
        labels = [(llama_cpp.llama_model_cls_label(self._model.model, i) or b"").decode().lower() for i in range(n)]
        if n == 1:
            return 0, -1
        if "yes" in labels and "no" in labels:
            return labels.index("yes"), labels.index("no")
        return 0, 1

    def pairs(self, query: str, documents: Sequence[str]) -> list[list[int]]:
        """Each (query, document) prompt's tokens; a document is cut at window_tokens."""
        head = [*self._before, *self._plain(self._space[0] + query, MAX_QUERY_TOKENS), *self._between]
        window = self._settings.window_tokens
        bodies = self._tokeniser.map(lambda d: self._plain(self._space[1] + d, window), documents)
        return [[*head, *body, *self._after] for body in bodies]

    def detokenize(self, tokens: Sequence[int]) -> str:
        with self._uses.use():
            return str(self._model.detokenize(list(tokens), special=False).decode("utf-8", errors="ignore"))

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        """The log-odds of "yes" for each (query, document) pair."""
        with self._uses.use():
            pairs = self.pairs(query, documents)
            scores: list[float] = []
            with self._lock:
                for at in range(0, len(pairs), self._settings.n_parallel):
                    scores += self._score_group(pairs[at : at + self._settings.n_parallel])
            return scores

    def _score_group(self, pairs: list[list[int]]) -> list[float]:
        """All but each pair's last token as a prefill without outputs, then the last tokens: only
        they are outputs, so llama.cpp computes no vocabulary-wide logits for the rest."""
        import llama_cpp

        self._ctx.kv_cache_clear()
        shared = _shared_prefix(pairs)
        if len(pairs) > 1 and shared >= _MIN_SHARED_PREFIX:
            # The prompt up to the document (system turn, instruction, query) is the same for every pair:
            # evaluated once in the first sequence, its cells copied to the others (~15% of the tokens).
            self._decode([pairs[0][:shared]], [0], outputs=False)
            for seq in range(1, len(pairs)):
                llama_cpp.llama_memory_seq_cp(self._ctx.memory, 0, seq, -1, -1)
        else:
            shared = 0
        self._decode([p[shared:-1] for p in pairs], [shared] * len(pairs), outputs=False)
        self._decode([p[-1:] for p in pairs], [len(p) - 1 for p in pairs], outputs=True)
        yes, no = self._yes_no
        scores = []
        for seq in range(len(pairs)):
            if self.rank_pooled:
                out = _floats(llama_cpp.llama_get_embeddings_seq(self._ctx.ctx, seq), 2 if no >= 0 else 1)
                if self._probabilities:
                    out = np.log(np.maximum(out, 1e-30))
            else:
                out = _floats(llama_cpp.llama_get_logits_ith(self._ctx.ctx, seq), max(yes, no) + 1)
            scores.append(float(out[yes] - out[no]) if no >= 0 else float(out[yes]))
        return scores

    def _decode(self, token_lists: list[list[int]], starts: list[int], outputs: bool) -> None:
        import llama_cpp

        batch = self._batch
        batch.clear()
        try:
            for seq, tokens in enumerate(token_lists):
                batch.add(tokens, starts[seq], seq, outputs)
            if batch.n_tokens == 0:
                return
            # Pooled scores need llama.cpp's embeddings mode, which makes every token of a decode an
            # output: only the last tokens' decode has it on.
            llama_cpp.llama_set_embeddings(self._ctx.ctx, outputs and self.rank_pooled)
            rc = llama_cpp.llama_decode(self._ctx.ctx, batch.struct)
            if rc != 0:
                raise RuntimeError(f"llama_decode returned {rc}")
        finally:
            batch.clear()


def _shared_prefix(pairs: Sequence[list[int]]) -> int:
    """Tokens every pair starts with, short of each one's last (which must be decoded as an output)."""
    first = np.asarray(pairs[0])
    shared = min(len(p) for p in pairs) - 1
    for pair in pairs[1:]:
        shared = min(shared, common_prefix(first, np.asarray(pair)))
    return max(shared, 0)


def _floats(pointer: Any, n: int) -> np.ndarray:
    if not pointer:
        raise RuntimeError("llama.cpp returned no output for a reranked pair")
    return np.ctypeslib.as_array(pointer, shape=(n,))
