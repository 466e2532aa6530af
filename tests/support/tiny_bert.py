"""A tiny BERT sentence embedder in Hugging Face's layout (config.json, tokenizer.json,
model.safetensors, random weights), for tests of bench/bert_gguf.py and of embedders whose
position embeddings end early (all-MiniLM and bge-small have 512).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

WORDS = [
    *("the", "agreement", "shall", "be", "governed", "by", "laws", "of", "new", "york"),
    *("party", "terminate", "notice", "days", "supplier", "goods"),
]


def write_tiny_bert(folder: Path, max_positions: int = 32, hidden: int = 32, layers: int = 1) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces = [*specials, *WORDS, *"abcdefghijklmnopqrstuvwxyz.,", *(f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz")]
    vocab = {piece: i for i, piece in enumerate(pieces)}
    (folder / "tokenizer.json").write_text(
        json.dumps(
            {
                "added_tokens": [{"id": vocab[s], "content": s, "special": True} for s in specials],
                "model": {"type": "WordPiece", "vocab": vocab},
            }
        )
    )
    config = {
        "hidden_size": hidden,
        "intermediate_size": 2 * hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": 2,
        "max_position_embeddings": max_positions,
        "layer_norm_eps": 1e-12,
        "type_vocab_size": 2,
        "vocab_size": len(vocab),
    }
    (folder / "config.json").write_text(json.dumps(config))
    rng = np.random.default_rng(0)
    tensors: dict[str, np.ndarray] = {
        "embeddings.word_embeddings.weight": rng.normal(0, 0.5, (len(vocab), hidden)),
        "embeddings.position_embeddings.weight": rng.normal(0, 0.5, (max_positions, hidden)),
        "embeddings.token_type_embeddings.weight": rng.normal(0, 0.5, (2, hidden)),
        "embeddings.LayerNorm.weight": np.ones(hidden),
        "embeddings.LayerNorm.bias": np.zeros(hidden),
    }
    shapes = {
        "attention.self.query": (hidden, hidden),
        "attention.self.key": (hidden, hidden),
        "attention.self.value": (hidden, hidden),
        "attention.output.dense": (hidden, hidden),
        "intermediate.dense": (2 * hidden, hidden),
        "output.dense": (hidden, 2 * hidden),
    }
    for layer in range(layers):
        prefix = f"encoder.layer.{layer}."
        for name, shape in shapes.items():
            tensors[prefix + name + ".weight"] = rng.normal(0, 0.2, shape)
            tensors[prefix + name + ".bias"] = np.zeros(shape[0])
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            tensors[prefix + norm + ".weight"] = np.ones(hidden)
            tensors[prefix + norm + ".bias"] = np.zeros(hidden)
    _write_safetensors(folder / "model.safetensors", {k: v.astype(np.float32) for k, v in tensors.items()})
    return folder


def _write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    header, offset, blobs = {}, 0, []
    for name, array in tensors.items():
        blob = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape), "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    encoded = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + b"".join(blobs))
