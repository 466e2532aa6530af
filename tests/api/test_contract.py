"""The HTTP contract of every answer route, through real HTTP (uvicorn on loopback) over a scripted
generator: what a client sees of the service's typed events, with no model to pay for."""

from __future__ import annotations

import json
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import httpx
import pytest

from docqa.core.sampling_params import NON_THINKING_SAMPLING
from docqa.core.settings import IngestSettings
from docqa.service import DocQA
from tests.support import odf_factory
from tests.support.fake_generator import SCRIPT, FakeGenerator
from tests.support.live_server import free_port, serve_app, sse_events
from tests.support.paths import SAMPLE_DOCS, make_settings

QUESTION = "Which law governs the services agreement?"
ANSWER = "The agreement is governed by the laws of England [1]."


@pytest.fixture(params=["sqlite", "postgres"])
def fake_server(fake_generator: FakeGenerator, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """The API on either store: SQLite + FAISS files, or Postgres (DOCQA_DATABASE_URL)."""
    database = request.getfixturevalue("postgres_url") if request.param == "postgres" else None
    inline = IngestSettings(uploads="inline")  # uploads answered when ingested, as on SQLite (queued: test_jobs)
    qa = DocQA(make_settings(tmp_path / "data", database_url=database, ingest=inline), None, fake_generator)
    qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt", SAMPLE_DOCS / "operations_handbook.md"])
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            yield base
    finally:
        qa.close()


def test_a_plain_ask_returns_the_answer_its_reasoning_and_cited_sources(fake_server: str) -> None:
    body = httpx.post(f"{fake_server}/v1/ask", json={"question": QUESTION, "thinking": True}, timeout=30).json()
    assert (body["answer"], body["reasoning"], body["mode"]) == (ANSWER, "The agreement names its law.", "thinking")
    assert body["citations"][0]["document"] == "services_agreement_en.txt" and body["citations"][0]["cited"]
    assert body["timings"]["completion_tokens"] == len(SCRIPT.split())


def test_a_streamed_ask_sends_citations_then_deltas_then_done(fake_server: str) -> None:
    with httpx.stream(
        "POST", f"{fake_server}/v1/ask", json={"question": QUESTION, "thinking": True, "stream": True}, timeout=30
    ) as r:
        events = list(sse_events(r))
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "citations" and kinds[-1] == "done"
    assert set(kinds[1:-1]) == {"reasoning", "answer"}
    assert "".join(data["text"] for kind, data in events if kind == "answer").strip() == ANSWER
    assert events[0][1]["citations"][0]["page"] is None  # the best page comes with done
    assert events[-1][1]["citations"][0]["page"] == 1 and events[-1][1]["finish_reason"] == "stop"


def test_openai_chat_streams_reasoning_content_then_content_then_citations(fake_server: str) -> None:
    request = {
        "model": "docqa/default",
        "messages": [{"role": "user", "content": QUESTION + " /think"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    with httpx.stream("POST", f"{fake_server}/v1/chat/completions", json=request, timeout=30) as r:
        lines = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    chunks = [json.loads(line) for line in lines[:-1]]
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    reasoning = "".join(d.get("reasoning_content", "") for d in deltas).strip()
    content = "".join(d.get("content", "") for d in deltas)
    assert reasoning == "The agreement names its law."
    assert content.strip().startswith(ANSWER) and "Sources:" in content
    final = next(c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"])
    assert final["citations"][0]["document"] == "services_agreement_en.txt"
    assert chunks[-1]["usage"]["completion_tokens"] == len(SCRIPT.split())


def test_an_upload_with_one_unsupported_file_ingests_the_others(fake_server: str) -> None:
    url = f"{fake_server}/v1/collections/mixed/documents"
    files = [
        ("files", ("rent.txt", b"The monthly rent is 1,200 EUR, due on the first day.", "text/plain")),
        ("files", ("memo.pages", b"PK\x03\x04 an Apple Pages file", "application/octet-stream")),
        ("files", ("fake.pdf", b"just text", "application/pdf")),
    ]
    r = httpx.post(url, files=files, timeout=30)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["added"] == 1 and [f["path"] for f in body["files"]] == ["memo.pages", "fake.pdf", "rent.txt"]
    assert body["failed"][0]["error"].startswith("unsupported file type (.pages)")
    assert body["failed"][1]["error"] == "not a PDF (no %PDF- header)"
    listed = httpx.get(url).json()["documents"]
    assert [d["name"] for d in listed] == ["rent.txt"]  # the rejected files left no document behind
    only_bad = httpx.post(url, files=files[1:2], timeout=30)
    assert only_bad.status_code == 415 and "memo.pages: unsupported file type" in only_bad.json()["error"]["message"]


def test_an_upload_of_each_newer_kind_is_ingested_with_its_units(fake_server: str, tmp_path: Path) -> None:
    """CSV, email, OpenDocument and RTF through the REST upload, as the web page's picker offers them."""
    url = f"{fake_server}/v1/collections/kinds/documents"
    mail = EmailMessage()
    mail["From"], mail["Subject"] = "dana@acme.example", "Renewal"
    mail.set_content("The renewal fee is 4,500 EUR.")
    mail.add_attachment(b"Clause,Days\nNotice,90\n", maintype="text", subtype="csv", filename="terms.csv")
    files = [
        ("files", ("fees.csv", b"Item;Fee\nHosting;12,000\n", "text/csv")),
        ("files", ("renewal.eml", bytes(mail), "message/rfc822")),
        ("files", ("msa.odt", odf_factory.odt_file(tmp_path / "msa.odt").read_bytes(), "application/octet-stream")),
        (
            "files",
            ("lease.rtf", rb"{\rtf1\ansi {\pard Rent is due monthly.\par}\page{\pard Schedule.\par}}", "text/rtf"),
        ),
    ]
    r = httpx.post(url, files=files, timeout=60)
    assert r.status_code == 200, r.text
    assert r.json()["added"] == 4 and not r.json()["failed"], r.text
    pages = {d["name"]: d["pages"] for d in httpx.get(url).json()["documents"]}
    assert pages == {"fees.csv": 1, "renewal.eml": 2, "msa.odt": 3, "lease.rtf": 2}


def test_two_files_of_one_name_in_one_upload_are_both_kept(fake_server: str) -> None:
    """Issue 41, item 5: both were 'added' under one key and the first was replaced by the second."""
    url = f"{fake_server}/v1/collections/twins/documents"
    files = [
        ("files", ("same.txt", b"The lessee pays the rent of 900 EUR monthly.", "text/plain")),
        ("files", ("same.txt", b"The supplier ships the goods within ten days.", "text/plain")),
        ("files", ("a/contract.txt", b"Termination needs ninety days of written notice.", "text/plain")),
        ("files", ("b/contract.txt", b"Disputes go to arbitration in Geneva.", "text/plain")),
    ]
    body = httpx.post(url, files=files, timeout=30).json()
    names = ["same.txt", "same (2).txt", "contract.txt", "contract (2).txt"]
    assert body["added"] == 4 and [f["path"] for f in body["files"]] == names
    assert len({f["document_id"] for f in body["files"]}) == 4
    listed = httpx.get(url).json()["documents"]
    assert sorted(d["name"] for d in listed) == sorted(names)
    again = httpx.post(url, files=files[1:2], timeout=30).json()  # a later upload of a name still replaces it
    assert again["files"][0]["path"] == "same.txt" and len(httpx.get(url).json()["documents"]) == 4


def test_catalog_fields_from_an_upload_are_listed_and_filter_every_ask_route(fake_server: str) -> None:
    """Issue 39: a document's catalog (read, and given at upload) is shown and filters retrieval."""
    url = f"{fake_server}/v1/collections/leases/documents"
    rent = b"The monthly rent is 1,200 EUR, due on the first day of each month."
    for name, body, fields in (
        ("berlin.txt", rent, {"company": "Acme GmbH", "year": 2022, "tags": ["lease", "de"]}),
        ("paris.txt", rent.replace(b"1,200", b"2,400"), {"company": "Acme SAS", "year": 2023}),
    ):
        r = httpx.post(url, files=[("files", (name, body, "text/plain"))], data={"metadata": json.dumps(fields)})
        assert r.status_code == 200, r.text
    listed = {d["name"]: d["catalog"] for d in httpx.get(url).json()["documents"]}
    assert listed["berlin.txt"]["company"] == "Acme GmbH" and listed["berlin.txt"]["tags"] == ["lease", "de"]
    assert listed["paris.txt"]["user_fields"] == ["company", "year"] and listed["paris.txt"]["kind"] == "document"
    question = {"question": "What is the monthly rent?", "collection": "leases", "cache": False}
    unfiltered = httpx.post(f"{fake_server}/v1/ask", json=question, timeout=30).json()
    assert {c["document"] for c in unfiltered["citations"]} == {"berlin.txt", "paris.txt"}
    for where, expected in (
        ({"year": 2023}, {"paris.txt"}),
        ({"company": "acme gmbh", "tags": "LEASE"}, {"berlin.txt"}),
    ):
        asked = httpx.post(f"{fake_server}/v1/ask", json={**question, "where": where}, timeout=30).json()
        assert {c["document"] for c in asked["citations"]} == expected, where
    chat = {"model": "docqa/leases", "messages": [{"role": "user", "content": "What is the monthly rent?"}]}
    answered = httpx.post(f"{fake_server}/v1/chat/completions", json={**chat, "where": {"year": "2022"}}, timeout=30)
    assert {c["document"] for c in answered.json()["citations"]} == {"berlin.txt"}
    nothing = httpx.post(f"{fake_server}/v1/ask", json={**question, "where": {"year": 1999}}, timeout=30)
    said = nothing.json()["error"]["message"]  # not "the documents do not answer": the filter matched none
    assert nothing.status_code == 400 and "no document has year=1999; the values of year there are: 2022, 2023" in said
    selected = httpx.get(url, params={"where": ["year=2023"]}).json()["documents"]
    assert [d["name"] for d in selected] == ["paris.txt"]
    assert httpx.get(url, params={"where": "year=1999"}).status_code == 400
    misspelled = httpx.post(f"{fake_server}/v1/ask", json={**question, "where": {"compnay": "Acme"}}, timeout=30)
    assert (
        misspelled.status_code == 400 and "'compnay' (did you mean company?)" in misspelled.json()["error"]["message"]
    )
    bad = httpx.post(f"{fake_server}/v1/ask", json={**question, "where": {"Year": 2022}}, timeout=30)
    assert bad.status_code == 400 and "no catalog field" in bad.json()["error"]["message"]
    refused = httpx.post(url, files=[("files", ("x.txt", rent, "text/plain"))], data={"metadata": "{oops"})
    assert refused.status_code == 400 and "metadata: not JSON" in refused.json()["error"]["message"]
    assert len(httpx.get(url).json()["documents"]) == 2  # nothing stored for the refused upload


def test_a_collection_can_be_created_empty_and_asked(fake_server: str) -> None:
    made = httpx.post(f"{fake_server}/v1/collections", json={"name": "empty"})
    assert made.status_code == 201 and made.json() == {"name": "empty", "documents": 0, "chunks": 0}
    assert httpx.post(f"{fake_server}/v1/collections", json={"name": "empty"}).status_code == 200
    assert httpx.post(f"{fake_server}/v1/collections", json={"name": ""}).status_code == 422
    assert httpx.post(f"{fake_server}/v1/collections", json={"name": "a/b"}).status_code == 400
    answer = httpx.post(f"{fake_server}/v1/ask", json={"question": QUESTION, "collection": "empty"}, timeout=30)
    assert answer.status_code == 200 and answer.json()["finish_reason"] == "no_sources"


def test_a_cached_answer_is_marked_and_keeps_its_usage(fake_server: str) -> None:
    body = {"model": "docqa/default", "messages": [{"role": "user", "content": QUESTION}]}
    first = httpx.post(f"{fake_server}/v1/chat/completions", json=body, timeout=30).json()
    again = httpx.post(f"{fake_server}/v1/chat/completions", json=body, timeout=30).json()
    assert (first["cached"], again["cached"]) == (False, True)
    assert again["usage"] == first["usage"] and first["usage"]["completion_tokens"] > 0
    ask = httpx.post(f"{fake_server}/v1/ask", json={"question": QUESTION}, timeout=30).json()
    assert ask["cached"] is True and ask["timings"]["completion_tokens"] == first["usage"]["completion_tokens"]


def test_the_page_has_its_icon_where_browsers_ask_for_it(fake_server: str) -> None:
    icon = httpx.get(f"{fake_server}/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/svg+xml" and b"<svg" in icon.content
    assert '<link rel="icon" href="/static/favicon.svg"' in httpx.get(f"{fake_server}/").text


def test_health_and_metrics_read_the_generator_through_its_stats(fake_server: str) -> None:
    health = httpx.get(f"{fake_server}/health").json()
    assert health["engine"] == {"kind": "fake", "running": 0, "waiting": 0}
    metrics = httpx.get(f"{fake_server}/metrics").text
    assert "docqa_requests_in_flight 1.0" in metrics  # the scrape itself
    assert "docqa_queue_depth 0.0" in metrics and 'docqa_documents{collection="default",status="ready"} 2.0' in metrics


def test_every_ask_route_answers_429_with_retry_after_while_the_queue_is_full(
    fake_server: str, fake_generator: FakeGenerator
) -> None:
    fake_generator.paused.set()
    held = [fake_generator.submit("filler", NON_THINKING_SAMPLING) for _ in range(4)]  # the queue's bound
    try:
        chat = {"model": "docqa/default", "messages": [{"role": "user", "content": QUESTION}]}
        for path, body in (  # every route that generates: both ask forms, both chat forms, raw completions
            ("/v1/ask", {"question": QUESTION, "cache": False}),
            ("/v1/ask", {"question": QUESTION, "cache": False, "stream": True}),
            ("/v1/chat/completions", chat),
            ("/v1/chat/completions", {**chat, "stream": True}),
            ("/v1/completions", {"prompt": "Answer:", "max_tokens": 4}),
            ("/v1/completions", {"prompt": "Answer:", "max_tokens": 4, "stream": True}),
        ):
            r = httpx.post(f"{fake_server}{path}", json=body, timeout=30)
            assert r.status_code == 429 and int(r.headers["retry-after"]) > 0, (path, r.text)
            assert r.json()["error"]["type"] == "BusyError"
    finally:
        for stream in held:
            stream.cancel()
        fake_generator.paused.clear()
    assert httpx.post(f"{fake_server}/v1/ask", json={"question": QUESTION}, timeout=30).status_code == 200


SURROGATE_BODIES = [
    ("/v1/ask", b'{"question": "hours", "collection": "\\ud800"}'),
    ("/v1/ask", b'{"question": "hours", "where": {"company": "\\ud800"}}'),
    ("/v1/chat/completions", b'{"model": "docqa/\\ud800", "messages": [{"role": "user", "content": "hours"}]}'),
    ("/v1/chat/completions", b'{"model": "gpt\\ud800", "messages": [{"role": "user", "content": "hours"}]}'),
    ("/v1/tokenize", b'{"prompt": "\\ud800"}'),
    ("/v1/completions", b'{"prompt": "a \\ud800"}'),
    ("/v1/embeddings", b'{"input": ["fine", "\\ud800"]}'),
    ("/v1/collections", b'{"name": "\\ud800"}'),
]


@pytest.mark.parametrize(("route", "body"), SURROGATE_BODIES)
def test_a_lone_surrogate_in_any_field_is_a_4xx_in_docqas_shape(fake_server: str, route: str, body: bytes) -> None:
    """Issue 41, item 1: the error message echoed the name and could not be encoded: a 500."""
    r = httpx.post(f"{fake_server}{route}", content=body, headers={"content-type": "application/json"}, timeout=30)
    assert 400 <= r.status_code < 500, (route, r.status_code, r.text)
    assert r.json()["error"]["message"]


def test_invented_http_methods_add_no_metric_series(fake_server: str) -> None:
    """Issue 41, item 10: each invented method ('X1Q /health') added series to /metrics, without bound."""
    for n in range(20):
        httpx.request(f"X{n}Q", f"{fake_server}/health", timeout=10)
    metrics = httpx.get(f"{fake_server}/metrics", timeout=10).text
    assert 'method="X1Q"' not in metrics and 'method="OTHER"' in metrics


def test_an_embeddings_request_is_bounded_before_any_model_sees_it(fake_server: str) -> None:
    """Issue 41, item 6: four texts of 60,000 words grew a node to 16.9 GB; now a 400 that says the bound."""
    huge = ["clause " * 60_000] * 4
    r = httpx.post(f"{fake_server}/v1/embeddings", json={"input": huge}, timeout=30)
    assert r.status_code == 400 and "at most 64,000 characters a text" in r.json()["error"]["message"]


@pytest.mark.parametrize(
    "extra",
    [{"n": 2}, {"logprobs": 5}, {"echo": True}, {"logit_bias": {"50256": -100}}, {"presence_penalty": 0.5},
     {"functions": [{"name": "f"}]}, {"tools": [{"type": "function"}]}, {"temperature": 1e9}, {"top_k": 10**20}],
)  # fmt: skip
def test_completions_refuse_what_they_would_silently_ignore(fake_server: str, extra: dict[str, object]) -> None:
    """Issue 41, item 12: n, logprobs, echo, logit_bias, penalties, functions were ignored; huge values accepted."""
    r = httpx.post(f"{fake_server}/v1/completions", json={"prompt": "Rent is", "max_tokens": 4, **extra}, timeout=30)
    assert r.status_code in (400, 422), (extra, r.status_code, r.text)
    assert r.json()["error"]["message"]
    ok = httpx.post(f"{fake_server}/v1/completions", json={"prompt": "Rent is", "max_tokens": 4, "n": 1, "user": "u"})
    assert ok.status_code == 200, ok.text
