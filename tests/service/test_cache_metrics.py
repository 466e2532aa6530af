"""The answer cache (real SQLite, real generation) and Prometheus metrics through the live app."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from docqa.answering.cache import normalise_question
from docqa.core.events import AnswerDelta, DoneEvent
from docqa.core.requests import AskRequest

QUESTION = "What was Northwind's revenue in 2025?"


def test_questions_are_normalised_for_the_cache() -> None:
    assert normalise_question("  What was   Northwind's REVENUE in 2025 ?? ") == "what was northwind's revenue in 2025"
    assert normalise_question("合同的通知期是多久？") == normalise_question("合同的通知期是多久?")
    assert normalise_question("ＡＢＣ") == "abc"  # full-width letters


def test_a_repeated_question_is_answered_from_the_cache_until_the_collection_changes(sample_qa, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cache = sample_qa.answer_cache
    first = sample_qa.ask(AskRequest(QUESTION, max_tokens=12))
    assert first.timings.completion_tokens > 0 and cache.misses == 1 and cache.hits == 0

    events = list(sample_qa.stream(AskRequest("what was northwind's revenue in 2025", max_tokens=12)))
    assert cache.hits == 1
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.cached is True and done.as_dict()["cached"] is True
    assert "".join(e.text for e in events if isinstance(e, AnswerDelta)) == first.answer
    assert [c.document for c in done.citations] == [c.document for c in first.citations]

    sample_qa.ask(AskRequest(QUESTION, max_tokens=12, thinking=True))  # another mode: another entry
    sample_qa.ask(AskRequest(QUESTION, max_tokens=12, use_cache=False))  # bypass: no lookup at all
    assert (cache.hits, cache.misses) == (1, 2)

    note = tmp_path / "note.txt"
    note.write_text("Northwind's revenue forecast for 2026 is EUR 210 million.", encoding="utf-8")
    sample_qa.ingest([note])  # the collection changed: its cached answers are gone
    sample_qa.ask(AskRequest(QUESTION, max_tokens=12))
    assert (cache.hits, cache.misses) == (1, 3)
    sample_qa.ask(AskRequest(QUESTION, max_tokens=12))
    assert cache.hits == 2
    doc_id = next(d.id for d in sample_qa.documents() if d.name == "note.txt")
    sample_qa.delete_document(doc_id)
    sample_qa.ask(AskRequest(QUESTION, max_tokens=12))
    assert (cache.hits, cache.misses) == (2, 4)


def _metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample in Prometheus text format, whatever order its labels come in."""
    for line in text.splitlines():
        match = re.fullmatch(r"([a-z_]+)(?:\{(.*)\})? ([0-9.e+-]+)", line)
        if match and match.group(1) == name and dict(re.findall(r'(\w+)="([^"]*)"', match.group(2) or "")) == labels:
            return float(match.group(3))
    raise AssertionError(f"{name} {labels} not in metrics")


def test_metrics_count_requests_answers_cache_and_collections(live_server: str) -> None:
    body = {"question": QUESTION, "max_tokens": 8}
    for _ in range(2):
        assert httpx.post(f"{live_server}/v1/ask", json=body, timeout=300).status_code == 200
    assert httpx.post(f"{live_server}/v1/ask", json={"question": ""}).status_code == 422
    r = httpx.get(f"{live_server}/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    text = r.text
    assert _metric(text, "docqa_http_requests_total", method="POST", route="/v1/ask", status="200") == 2
    assert _metric(text, "docqa_http_requests_total", method="POST", route="/v1/ask", status="422") == 1
    assert _metric(text, "docqa_answer_cache_lookups_total", result="hit") == 1
    assert _metric(text, "docqa_answer_cache_lookups_total", result="miss") == 1
    assert _metric(text, "docqa_answer_seconds_count", mode="non-thinking", cached="no") == 1
    assert _metric(text, "docqa_answer_seconds_count", mode="non-thinking", cached="yes") == 1
    assert _metric(text, "docqa_time_to_first_token_seconds_count", mode="non-thinking", cached="yes") == 1
    assert _metric(text, "docqa_generated_tokens_total", mode="non-thinking") >= 1
    assert _metric(text, "docqa_documents", collection="default", status="ready") == 4
    assert _metric(text, "docqa_chunks", collection="default") >= 4
    assert _metric(text, "docqa_kv_cells") > 0
    assert _metric(text, "docqa_queue_depth") == 0
    assert _metric(text, "docqa_answer_cache_entries") == 1

    upload = httpx.post(
        f"{live_server}/v1/collections/default/documents",
        files=[("files", ("memo.txt", b"A short memo about parking.", "text/plain"))],
        timeout=120,
    )
    assert upload.status_code == 200
    text = httpx.get(f"{live_server}/metrics").text
    assert _metric(text, "docqa_ingest_files_total", status="added") == 1
    assert _metric(text, "docqa_ingest_tokens_total") > 0
    assert _metric(text, "docqa_answer_cache_entries") == 0  # the upload changed the collection
