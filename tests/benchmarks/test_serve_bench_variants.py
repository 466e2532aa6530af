"""The whole-path bench's --variant specs (bench/gpu_serve_bench.py): what each sets, read without a server."""

from __future__ import annotations

import pytest

from bench.gpu_serve_bench import parse_variant


def test_a_variant_sets_its_environment_and_its_client() -> None:
    spec = "before:client=per_ask,DOCQA_RETRIEVAL_WORKERS=32,DOCQA_LLM_PROMPT_STEP_ENDS_WITH_PROMPT=false"
    assert parse_variant(spec) == (
        "before",
        {"DOCQA_RETRIEVAL_WORKERS": "32", "DOCQA_LLM_PROMPT_STEP_ENDS_WITH_PROMPT": "false"},
        True,
    )
    assert parse_variant("plain:DOCQA_X=a=b") == ("plain", {"DOCQA_X": "a=b"}, False)  # a value may hold "="


@pytest.mark.parametrize("spec", ["", ":DOCQA_X=1", "name:DOCQA_X", "name:client=sometimes"])
def test_a_malformed_variant_is_refused_saying_so(spec: str) -> None:
    with pytest.raises(ValueError, match="--variant"):
        parse_variant(spec)
