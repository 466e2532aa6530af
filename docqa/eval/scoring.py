"""The scoring rule of ../shared/data/README.md: normalisation and the HIT test, used by `docqa eval`."""

from __future__ import annotations

import re
import unicodedata

_FOLD = str.maketrans(
    {
        "‘": "'",
        "’": "'",
        "‚": "'",
        "‛": "'",
        "′": "'",
        "“": '"',
        "”": '"',
        "„": '"',
        "‟": '"',
        "″": '"',
        "‐": "-",
        "‑": "-",
        "‒": "-",
        "–": "-",
        "—": "-",
        "―": "-",
        "\u00ad": None,
    }
)
_CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower().translate(_FOLD)
    text = re.sub(r"\s+", " ", text)
    return re.sub(rf"(?<=[{_CJK}]) (?=[{_CJK}])", "", text).strip()


def is_hit(chunk_text: str, answer_text: str) -> bool:
    chunk, answer = normalise(chunk_text), normalise(answer_text)
    words = answer.split(" ")
    if len(words) > 40:
        return " ".join(words[:20]) in chunk or " ".join(words[-20:]) in chunk
    return bool(answer) and answer in chunk
