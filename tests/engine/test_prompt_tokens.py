"""Prompts tokenized once (docqa.engine.prompt_tokens), as pure logic: a counting tokenizer stands in."""

from __future__ import annotations

import threading

from docqa.engine.prompt_tokens import TokenizedPrompts


class CountingTokenizer:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str) -> list[int]:
        self.calls += 1
        return [ord(c) for c in text]


def test_a_counted_text_is_taken_once_without_tokenizing_again() -> None:
    tokenizer = CountingTokenizer()
    memo = TokenizedPrompts(tokenizer)
    assert memo.count("abc") == 3
    taken = memo.take("abc")
    assert taken is not None and taken.tolist() == [97, 98, 99]
    assert tokenizer.calls == 1
    assert memo.take("abc") is None  # taken: a second submit of the text tokenizes it at admission
    assert memo.held_tokens == 0


def test_a_text_never_counted_is_not_found() -> None:
    assert TokenizedPrompts(CountingTokenizer()).take("never counted") is None


def test_the_oldest_texts_go_when_the_bound_is_passed() -> None:
    memo = TokenizedPrompts(CountingTokenizer(), max_held_tokens=10)
    memo.count("aaaa")
    memo.count("bbbb")
    memo.count("cccc")  # 12 tokens held > 10: "aaaa" goes
    assert memo.take("aaaa") is None
    assert memo.held_tokens == 8
    assert memo.take("cccc") is not None and memo.take("bbbb") is not None


def test_one_text_longer_than_the_bound_is_still_kept_for_its_submit() -> None:
    memo = TokenizedPrompts(CountingTokenizer(), max_held_tokens=4)
    memo.count("a long prompt")
    assert memo.take("a long prompt") is not None


def test_counting_the_same_text_twice_holds_it_once_and_tokenizes_it_once() -> None:
    tokenizer = CountingTokenizer()
    memo = TokenizedPrompts(tokenizer)
    assert memo.count("same") == memo.count("same") == 4
    assert memo.held_tokens == 4 and tokenizer.calls == 1


def test_many_threads_count_and_take_without_losing_track() -> None:
    memo = TokenizedPrompts(CountingTokenizer(), max_held_tokens=10_000)

    def work(n: int) -> None:
        for i in range(200):
            text = f"{n}-{i}"
            memo.count(text)
            assert memo.take(text) is not None

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert memo.held_tokens == 0


def test_a_text_submitted_uncounted_is_tokenized_by_the_submitter() -> None:
    tokenizer = CountingTokenizer()
    memo = TokenizedPrompts(tokenizer)
    made = memo.take_or_make("never counted")
    assert made is not None and len(made) == memo.count("never counted") and tokenizer.calls == 2
    assert memo.take_or_make("never counted") is not None and tokenizer.calls == 2  # that count's tokens, taken


def test_a_tokenizer_fault_at_submit_leaves_the_request_to_admission() -> None:
    def broken(text: str) -> list[int]:
        raise RuntimeError("a tokenizer bug")

    assert TokenizedPrompts(broken).take_or_make("any prompt") is None
