"""Embedding through llama.cpp: the `Embedder` protocol (docqa.core.protocols) for any GGUF (`embedding=True`).

Vectors are L2-normalised so that FAISS inner product is cosine similarity. Texts are embedded in
batches of up to `batch_tokens` tokens; the caller gets progress after every batch.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from docqa.core.errors import ConfigError
from docqa.core.settings import EmbedSettings
from docqa.llama.context import context_params, load_model, new_context
from docqa.llama.model_files import cpu_threads, model_label, offloaded, unreadable_model, use_flash_attention
from docqa.llama.model_uses import ModelUses
from docqa.llama.token_batch import TokenBatch

logger = logging.getLogger(__name__)

# Qwen3-Embedding's model card: queries carry an instruction, documents are embedded as they are.
QWEN3_EMBEDDING_INSTRUCTION = (
    "Instruct: Given a question about a document, retrieve the passages that answer it\nQuery:"
)


def _model_name(metadata: dict[str, str]) -> str:
    return (metadata.get("general.name", "") + " " + metadata.get("general.basename", "")).lower()


def _is_qwen3_embedding(metadata: dict[str, str]) -> bool:
    name = _model_name(metadata)
    return "qwen3" in name and "embedding" in name


def declared_pooling(metadata: dict[str, str]) -> int | None:
    """The pooling type the GGUF declares: embedding models declare one, generative models none."""
    arch = metadata.get("general.architecture", "")
    declared = metadata.get(f"{arch}.pooling_type")
    return int(declared) if declared is not None and int(declared) > 0 else None


def gguf_metadata(model_path: Path) -> dict[str, str]:
    """A GGUF's key-value metadata, read without loading its weights."""
    import llama_cpp

    try:
        return dict(llama_cpp.Llama(str(model_path), vocab_only=True, verbose=False).metadata)
    except ValueError as exc:
        raise unreadable_model(model_path) from exc


def _pooling_from_metadata(metadata: dict[str, str], choice: str) -> int:
    import llama_cpp

    by_name = {
        "mean": llama_cpp.LLAMA_POOLING_TYPE_MEAN,
        "last": llama_cpp.LLAMA_POOLING_TYPE_LAST,
        "cls": llama_cpp.LLAMA_POOLING_TYPE_CLS,
    }
    if choice != "auto":
        return by_name[choice]
    declared = declared_pooling(metadata)
    if declared is not None:
        return declared
    if _is_qwen3_embedding(metadata):  # Qwen's documented pooling, for a GGUF that does not declare it
        return llama_cpp.LLAMA_POOLING_TYPE_LAST
    # A causal LM without a declared pooling (like the demo model): average its token states.
    return llama_cpp.LLAMA_POOLING_TYPE_MEAN


def is_causal(metadata: dict[str, str]) -> bool:
    """Whether the GGUF's model attends only to earlier tokens (a decoder; BERT-style encoders say false)."""
    arch = metadata.get("general.architecture", "")
    return metadata.get(f"{arch}.attention.causal", "true").lower() not in ("false", "0")


def pools_last_token_causally(metadata: dict[str, str], pooling: int) -> bool:
    """Causal attention (a token sees only earlier ones, which the KV cache holds between decodes) and
    last-token pooling (Qwen3-Embedding's): the vector is the final token's state, so a text may be
    run in pieces and only its last token needs to be an output."""
    import llama_cpp

    return is_causal(metadata) and pooling == llama_cpp.LLAMA_POOLING_TYPE_LAST


def micro_batch(metadata: dict[str, str], pooling: int, settings: EmbedSettings) -> int:
    """llama.cpp's n_ubatch for the embedder: the whole context unless configured. A text may span
    several micro-batches only where the pooled vector comes out right (pools_last_token_causally).
    Mean or CLS pooling of a text cut in pieces would pool one piece only, and llama.cpp aborts on a
    non-causal one. On an H200, 512-token pieces embedded at 84% of llama-bench's rate against 95%
    for whole texts (docs/benchmarks/gpu-engine.md), so pieces are only an option, for a smaller compute buffer
    where GPU memory is short."""
    if settings.micro_batch is None:
        return settings.n_ctx
    if settings.micro_batch < settings.n_ctx and not pools_last_token_causally(metadata, pooling):
        raise ConfigError(
            f"embed.micro_batch {settings.micro_batch} is below embed.n_ctx {settings.n_ctx}, but this embedding "
            "model needs each text in one micro-batch (it pools by mean or CLS, or attends both ways): "
            "unset embed.micro_batch or set embed.pooling=last for a last-token model"
        )
    return min(settings.micro_batch, settings.n_ctx)


# Texts embedded in one llama_decode at most, where only their last tokens are outputs: llama.cpp sizes
# its compute buffer for this many rows of logits instead of one per token of the batch. Measured with
# a Qwen3-Embedding-0.6B-shaped model, 8,192-token context, flash attention (as on a GPU), CPU backend:
# 4,908 -> 548 MiB of compute buffer.
MAX_OUTPUTS = 64


def _open_context(model_path: Path, settings: EmbedSettings, pooling: int, n_ubatch: int, max_outputs: int) -> Any:
    """llama.cpp's model and an embedding context, through llama-cpp-python's low-level wrappers:
    its high-level Llama cannot bound the outputs a batch may have (n_outputs_max)."""
    import llama_cpp

    model = load_model(model_path, settings.n_gpu_layers)
    params = context_params(
        n_ctx=settings.n_ctx,
        n_batch=settings.n_ctx,
        n_ubatch=n_ubatch,
        n_threads=cpu_threads(settings.n_threads),
        flash_attn=use_flash_attention(settings.flash_attn, settings.n_gpu_layers),
    )
    params.n_seq_max = min(settings.n_ctx, int(llama_cpp.llama_max_parallel_sequences()))
    if max_outputs:  # each sequence has an output (llama.cpp requires n_seq_max <= n_outputs_max)
        params.n_seq_max = params.n_outputs_max = min(params.n_seq_max, max_outputs)
    params.kv_unified = True
    params.embeddings = True
    params.pooling_type = pooling
    return model, new_context(model, params, model_path, "DOCQA_EMBED_N_CTX"), params


def default_query_instruction(metadata: dict[str, str]) -> str:
    return QWEN3_EMBEDDING_INSTRUCTION if _is_qwen3_embedding(metadata) else ""


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


class LlamaEmbedder:
    """Embeds with llama-cpp-python. One llama.cpp context is not thread-safe, hence the lock."""

    def __init__(self, model_path: Path, settings: EmbedSettings, metadata: dict[str, str] | None = None) -> None:
        """metadata: the GGUF's, when the caller has read it already (gguf_metadata)."""
        self._settings = settings
        metadata = metadata if metadata is not None else gguf_metadata(model_path)
        pooling = _pooling_from_metadata(metadata, settings.pooling)
        self.micro_batch = micro_batch(metadata, pooling, settings)
        # llama.cpp's embedding mode makes every token an output: it runs the output layer over all of
        # them and copies vocabulary x tokens logits to the host (2.5 GB for a 4k-token text with
        # Qwen's vocabulary), none of which pooling reads. Where only the last token matters, the
        # rest of each text runs first as a plain prefill without outputs (docs/benchmarks/gpu-engine.md).
        self.prefill_without_outputs = settings.last_token_only and pools_last_token_causally(metadata, pooling)
        self._model, self._ctx, params = _open_context(
            model_path, settings, pooling, self.micro_batch, MAX_OUTPUTS + 1 if self.prefill_without_outputs else 0
        )
        self._uses = ModelUses("embedding model")
        self._max_texts = max(1, int(params.n_seq_max) - 1)  # texts in one llama_decode, besides the padding
        # The longest piece embedded at once: a BERT-style model (all-MiniLM, bge-small) has 512 learned
        # positions, and llama.cpp aborts the process past them, so longer texts go in pieces (_windows).
        self.window = min(settings.n_ctx, int(self._model.n_ctx_train()) or settings.n_ctx)
        # Every token an output, llama.cpp keeps outputs x (vocabulary + width) floats on the host, and keeps that
        # buffer at its largest: a 262k-word vocabulary made one 8,000-character text cost 2.9 GB for the process's
        # life. Outputs per decode are bounded by embed.max_output_mb, so texts go in pieces of at most that many.
        self.max_outputs = self._outputs_within(settings.max_output_mb)
        if not self.prefill_without_outputs:
            self.window = min(self.window, self.max_outputs)
        self._wrap = self._special_wrap()
        self.model_id = model_label(model_path)
        self.dim = int(self._model.n_embd())
        self.query_instruction = (
            settings.query_instruction
            if settings.query_instruction is not None
            else default_query_instruction(metadata)
        )
        self._lock = threading.Lock()  # one decode at a time
        # On a GPU, llama.cpp pays ~120 ms (an H200, 0.6B model) the first time it meets a batch of a
        # new size, as much as the forward pass of a 3k-token text; chunk lengths all differ. Padding
        # each batch to a multiple of 256 tokens with a throw-away sequence makes sizes repeat.
        # (On a CPU the padding would cost more than it saves.) Measured again without padding on an
        # H200: 72% of llama-bench's embedding throughput instead of 90% (docs/benchmarks/gpu-engine.md).
        on_gpu = offloaded(settings.n_gpu_layers)
        self.pad_multiple = 256 if on_gpu else 1
        self._batch = TokenBatch(settings.n_ctx)
        if on_gpu:
            # As llama.cpp's own tools do at load: the first decode on a GPU pays one-off set-up
            # (kernels, cuBLAS, buffers); pay it while loading, not inside the first ingest or query.
            self._embed_tokens([self._tokenize("warm-up")])
        logger.info("embedder %s loaded (%d dims, %d-token micro-batches)", self.model_id, self.dim, self.micro_batch)

    def _outputs_within(self, megabytes: int) -> int:
        # float32 logits and vector, twice: in the compute buffer, then in the output buffer they are copied to
        per_output = 2 * 4 * (int(self._model.n_vocab()) + int(self._model.n_embd()))
        return max(32, megabytes * 2**20 // per_output)

    def _tokenize(self, text: str, *, bos: bool = True) -> list[int]:
        with self._uses.use():
            return list(self._model.tokenize(text.encode("utf-8"), add_bos=bos, special=False))

    def count_tokens(self, text: str) -> int:
        return len(self._tokenize(text))

    def _windows(self, text: str) -> list[list[int]]:
        """What is embedded of a text: its tokens in one piece, or, when they do not fit the window
        (the context, or the model's training context if shorter: a BERT-style model has 512 position
        embeddings), consecutive pieces, each wrapped in the model's special tokens ([CLS] ... [SEP]).
        Their vectors are averaged by length (embed_documents): the tail of a long text counts
        instead of being cut off. The text is tokenised once, without its special tokens, which are
        added here (tokenising a 4k-token chunk costs about as much as its forward pass on a GPU)."""
        if self._wrap is None:  # special tokens the tokeniser does not put around a text in one block
            tokens = self._tokenize(text)
            if len(tokens) <= self.window:
                return [tokens]
            head: list[int] = []
            tail: list[int] = []
        else:
            head, tail = self._wrap
        body = self._tokenize(text, bos=False)
        if len(head) + len(body) + len(tail) <= self.window:
            return [[*head, *body, *tail]]
        width = self.window - len(head) - len(tail)
        return [[*head, *body[i : i + width], *tail] for i in range(0, len(body), width)]

    def close(self) -> None:
        """Free llama.cpp's context and model, after the tokenising and embedding in progress; a later
        call is ModelClosedError, never a call into freed memory (docqa.llama.model_uses)."""
        self._uses.close()
        self._ctx.close()
        self._model.close()

    def _special_wrap(self) -> tuple[list[int], list[int]] | None:
        """The special tokens the tokenizer puts before and after a text (BOS; BERT's [CLS] and [SEP]),
        or None when a text's plain tokens are not found whole inside its tokens with them."""
        marker = "x"
        plain = self._tokenize(marker, bos=False)
        wrapped = self._tokenize(marker)
        at = next((i for i in range(len(wrapped)) if wrapped[i : i + len(plain)] == plain), None)
        return None if at is None else (wrapped[:at], wrapped[at + len(plain) :])

    def _embed_tokens(self, token_lists: Sequence[list[int]]) -> np.ndarray:
        """Pooled vectors of already tokenised texts, in one or two llama_decode calls for all of them.

        Llama.embed() would tokenise every text again (as long as a 4k-token text's GPU forward pass
        on an H200), hence this direct path over llama-cpp-python's context and a numpy-filled batch."""
        import llama_cpp

        ctx = self._ctx
        ctx.kv_cache_clear()
        if self.prefill_without_outputs:
            # All but each text's last token, no outputs; then the last tokens, each its text's vector.
            # (Only the prefill is padded: the last tokens' batch has few sizes, one per text count.)
            self._decode([tokens[:-1] for tokens in token_lists], False, self.pad_multiple)
            self._decode([tokens[-1:] for tokens in token_lists], True, 1, [len(t) - 1 for t in token_lists])
        else:  # embeddings need every token marked as an output
            self._decode(token_lists, True, self.pad_multiple)
        vectors = np.empty((len(token_lists), self.dim), dtype=np.float32)
        for seq in range(len(token_lists)):
            pointer = llama_cpp.llama_get_embeddings_seq(ctx.ctx, seq)
            if not pointer:
                raise RuntimeError("llama.cpp returned no pooled embedding (pooling type none?)")
            vectors[seq] = np.ctypeslib.as_array(pointer, shape=(self.dim,))
        return vectors

    def _decode(
        self, token_lists: Sequence[list[int]], outputs: bool, pad_multiple: int, starts: Sequence[int] | None = None
    ) -> None:
        """One llama_decode, each list its own sequence from position starts[i] (else 0): embeddings
        (outputs=True) or a prefill without outputs, padded to a multiple of pad_multiple tokens."""
        import llama_cpp

        batch, ctx = self._batch, self._ctx
        total = sum(len(tokens) for tokens in token_lists)
        if total == 0:
            return
        pad = -total % pad_multiple
        if total + pad > batch.capacity or len(token_lists) > self._max_texts:
            pad = 0
        batch.clear()
        try:
            for seq, tokens in enumerate(token_lists):
                batch.add(tokens, starts[seq] if starts is not None else 0, seq, outputs)
            if pad:  # its own sequence: attention and pooling never mix it with the real texts
                batch.add([next(t[0] for t in token_lists if t)] * pad, 0, len(token_lists), outputs)
            llama_cpp.llama_set_embeddings(ctx.ctx, outputs)
            rc = llama_cpp.llama_decode(ctx.ctx, batch.struct)
            if rc != 0:
                raise RuntimeError(f"llama_decode returned {rc}")
        finally:
            batch.clear()

    def embed_documents(self, texts: Sequence[str], on_batch: Callable[[int, int], None] | None = None) -> np.ndarray:
        """Embed texts in token-bounded batches; on_batch(texts_done, tokens_in_batch) after each.

        A background thread tokenises ahead while llama.cpp embeds (both release the GIL), so on a GPU
        the tokeniser's CPU time hides behind the forward passes. A text longer than the window is
        embedded in pieces (_windows), its vector their mean weighted by their lengths."""
        sums = np.zeros((len(texts), self.dim), dtype=np.float64)
        lengths = np.zeros(len(texts), dtype=np.float64)
        max_seqs = self._max_texts
        batch_limit = (
            self._settings.batch_tokens
            if self.prefill_without_outputs
            else min(self._settings.batch_tokens, self.max_outputs)
        )
        batch: list[tuple[int, list[int]]] = []
        batch_tokens = 0
        done = 0  # texts whose every piece is embedded

        def flush(texts_done: int) -> None:
            nonlocal batch, batch_tokens, done
            if not batch:
                return
            with self._uses.use(), self._lock:
                vectors = self._embed_tokens([tokens for _, tokens in batch])
            for (i, tokens), vector in zip(batch, vectors, strict=True):
                sums[i] += len(tokens) * vector.astype(np.float64)
                lengths[i] += len(tokens)
            done = texts_done
            if on_batch is not None:
                on_batch(done, batch_tokens)
            batch, batch_tokens = [], 0

        with ThreadPoolExecutor(1, thread_name_prefix="docqa-tokenise") as tokeniser:
            for i, windows in enumerate(tokeniser.map(self._windows, texts)):
                for tokens in windows:
                    if batch and (batch_tokens + len(tokens) > batch_limit or len(batch) >= max_seqs):
                        flush(i)  # the texts before this one are complete
                    batch.append((i, tokens))
                    batch_tokens += len(tokens)
            flush(len(texts))
        return l2_normalise(sums / np.maximum(lengths, 1.0)[:, None])

    def embed_query(self, text: str) -> np.ndarray:
        windows = self._windows(self.query_instruction + text)
        with self._uses.use(), self._lock:  # one decode a piece: a question is nearly always one
            vectors = np.vstack([self._embed_tokens([tokens]) for tokens in windows]).astype(np.float64)
        weights = np.array([len(tokens) for tokens in windows], dtype=np.float64)
        return l2_normalise((weights @ vectors)[None, :] / weights.sum())[0]
