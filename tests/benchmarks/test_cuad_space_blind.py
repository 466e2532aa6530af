"""The white-space-blind hit test of bench/cuad_space_blind.py: pure logic."""

from __future__ import annotations

from bench.cuad_space_blind import blind_hit
from docqa.eval.scoring import is_hit


def test_a_split_word_in_the_answer_is_found_blind_only() -> None:
    chunk = 'made as of the 18th day of August 2014 (the "Effective Date")'
    assert not is_hit(chunk, "18t h day of August 2014")
    assert blind_hit(chunk, "18t h day of August 2014")


def test_a_glued_answer_and_a_zero_width_space() -> None:
    assert blind_hit("assigned without the written consent", "without thewritten consent")
    assert blind_hit("under Section 8.5 with respect", "under Section \u200b8.5 with")


def test_other_text_is_still_a_miss() -> None:
    assert not blind_hit("the 19th day of August 2014", "18th day of August 2014")


def test_a_long_answer_needs_its_first_or_last_twenty_words() -> None:
    words = [f"w{i}" for i in range(50)]
    assert blind_hit("x " + "".join(words[:20]) + " y", " ".join(words))
    assert not blind_hit(" ".join(words[5:45]), " ".join(words))
