"""A GGUF's tokenizer without its weights: how a remote generator counts a prompt's tokens as the model
will (llama.cpp reads only the vocabulary: a 9 GB Qwen3 GGUF opens in about a second, using no GPU)."""

from __future__ import annotations

from pathlib import Path

from docqa.llama.model_files import detect_prompt_format, unreadable_model


class VocabCounter:
    """Counts tokens as the in-process generators do (BOS added, the template's control tokens whole)."""

    def __init__(self, path: Path, prompt_format: str) -> None:
        import llama_cpp

        try:
            self._vocab = llama_cpp.Llama(str(path), vocab_only=True, verbose=False)
        except ValueError as exc:
            raise unreadable_model(path) from exc
        self.label = f"the vocabulary of {path.name}"
        self.prompt_format = detect_prompt_format(dict(self._vocab.metadata), prompt_format)

    def __call__(self, text: str) -> int:
        return len(self._vocab.tokenize(text.encode("utf-8"), add_bos=True, special=True))
