"""Build a tiny GGUF with the Qwen3 architecture and the real Qwen tokenizer, for template tests.

The weights are random (its text is noise); what matters is that llama.cpp loads it as `qwen3` and
tokenizes with Qwen's real vocabulary, so <|im_start|>, <think>, ... land on their real IDs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

QWEN3_SPECIAL = {151665: "<tool_response>", 151666: "</tool_response>", 151667: "<think>", 151668: "</think>"}


def build_tiny_qwen3(
    vocab_gguf: Path,
    out: Path,
    n_layer: int = 2,
    n_embd: int = 64,
    pooling_type: int | None = None,
    name: str = "tiny-qwen3-test",
    rank_head: bool = False,
) -> Path:
    """rank_head: as llama.cpp's converter writes Qwen3-Reranker, rank pooling and a classifier of the
    output layer's "yes" and "no" rows (the output layer is the token embeddings here, tied)."""
    import gguf

    reader = gguf.GGUFReader(str(vocab_gguf))

    def strings(key: str) -> list[str]:
        field = reader.fields[key]
        return [bytes(field.parts[i]).decode("utf-8") for i in field.data]

    tokens = strings("tokenizer.ggml.tokens")
    merges = strings("tokenizer.ggml.merges")
    types_field = reader.fields["tokenizer.ggml.token_type"]
    token_types = [int(types_field.parts[i][0]) for i in types_field.data]
    for token_id, text in QWEN3_SPECIAL.items():  # Qwen3's added tokens sit in Qwen2's padding
        tokens[token_id] = text
        token_types[token_id] = gguf.TokenType.USER_DEFINED

    n_head, n_kv, head_dim, n_ff = 4, 2, 16, 128
    rng = np.random.default_rng(0)
    writer = gguf.GGUFWriter(str(out), "qwen3")
    writer.add_name(name)
    writer.add_context_length(4096)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(n_layer)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_kv)
    writer.add_key_length(head_dim)
    writer.add_value_length(head_dim)
    writer.add_rope_freq_base(1e6)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(token_types)
    writer.add_token_merges(merges)
    writer.add_eos_token_id(151645)  # <|im_end|>
    if pooling_type is not None:  # what an embedding model's GGUF declares (Qwen3-Embedding: 3, last)
        writer.add_uint32("qwen3.pooling_type", pooling_type)
    if rank_head:
        writer.add_pooling_type(gguf.PoolingType.RANK)
        writer.add_classifier_output_labels(["yes", "no"])
    writer.add_pad_token_id(151643)
    writer.add_bos_token_id(151643)
    writer.add_add_bos_token(False)

    def weight(rows: int, cols: int) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) * 0.02).astype(np.float16)

    ones = lambda n: np.ones(n, dtype=np.float32)  # noqa: E731
    embeddings = weight(len(tokens), n_embd)
    writer.add_tensor("token_embd.weight", embeddings)
    for i in range(n_layer):
        p = f"blk.{i}."
        writer.add_tensor(p + "attn_norm.weight", ones(n_embd))
        writer.add_tensor(p + "attn_q.weight", weight(n_head * head_dim, n_embd))
        writer.add_tensor(p + "attn_k.weight", weight(n_kv * head_dim, n_embd))
        writer.add_tensor(p + "attn_v.weight", weight(n_kv * head_dim, n_embd))
        writer.add_tensor(p + "attn_output.weight", weight(n_embd, n_head * head_dim))
        writer.add_tensor(p + "attn_q_norm.weight", ones(head_dim))
        writer.add_tensor(p + "attn_k_norm.weight", ones(head_dim))
        writer.add_tensor(p + "ffn_norm.weight", ones(n_embd))
        writer.add_tensor(p + "ffn_gate.weight", weight(n_ff, n_embd))
        writer.add_tensor(p + "ffn_up.weight", weight(n_ff, n_embd))
        writer.add_tensor(p + "ffn_down.weight", weight(n_embd, n_ff))
    writer.add_tensor("output_norm.weight", ones(n_embd))
    if rank_head:
        writer.add_tensor("cls.output.weight", embeddings[[tokens.index("yes"), tokens.index("no")]])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out
