"""The collection evidence bench's own rules (bench/collection_evidence.py): how a user names a CUAD contract,
the halves the settings are chosen and reported on, and when a contract's prompt holds its clause."""

from __future__ import annotations

from bench.collection_evidence import _company, _half, _hits


def test_a_contract_is_named_by_its_filer_in_words() -> None:
    assert _company("EmmisCommunicationsCorp_20191125_8-K_EX-10.6_11906.txt") == "Emmis Communications"
    assert _company("ACCURAYINC_09_01_2010-EX-10.31-DISTRIBUTOR AGREEMENT.txt") == "ACCURAY"
    assert _company("SightLife Surgical, Inc. - STRATEGIC SALES.txt") == "Sight Life"


def test_the_halves_are_fixed_by_the_name_and_both_are_used() -> None:
    names = [f"contract_{n}.txt" for n in range(40)]
    halves = [_half(n) for n in names]
    assert halves == [_half(n) for n in names] and set(halves) == {"A", "B"}


def test_a_prompt_holds_a_span_of_its_own_contract_only() -> None:
    span = "This Agreement shall be governed by the laws of the State of New York."
    prompts: list[tuple[tuple[int, ...], str]] = [((7,), f"<source>{span.upper()}</source>"), ((8,), "none")]
    assert _hits(prompts, 7, [span]) and not _hits(prompts, 8, [span])
