"""What the attack round found in conversations (issue 60, items 4 and weak ones), over real HTTP on SQLite
and Postgres: a NUL in any text a conversation keeps is a 400 before any work (Postgres' text refuses it,
after the answer was generated); `%` and `_` in a search are letters; a conversation is read in pages; the
done event names the message kept (the page rates by ID, not by position); feedback on a missing message
says so; and, on SQLite, a database locked by another writer holds neither /health nor the answer."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from docqa.service import DocQA
from tests.support.fake_generator import FakeGenerator
from tests.support.live_server import free_port, serve_app
from tests.support.paths import SAMPLE_DOCS, make_settings


@pytest.fixture(params=["sqlite", "postgres"])
def served(
    request: pytest.FixtureRequest, tmp_path: Path, fake_generator: FakeGenerator
) -> Iterator[tuple[str, DocQA]]:
    database = {"database_url": request.getfixturevalue("postgres_url")} if request.param == "postgres" else {}
    settings = make_settings(tmp_path / "data", **database)
    qa = DocQA(settings, None, fake_generator)
    qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt"], collection="legal")
    try:
        with serve_app(settings, qa, free_port()) as base:
            yield base, qa
    finally:
        qa.close()


def _call(method: str, url: str, **kw: Any) -> httpx.Response:
    return httpx.request(method, url, timeout=60, **kw)


def _refused_for_nul(response: httpx.Response) -> bool:
    return response.status_code == 400 and "NUL character" in response.json()["error"]["message"]


def test_a_nul_in_any_kept_text_is_refused_before_any_work(
    served: tuple[str, DocQA], fake_generator: FakeGenerator
) -> None:
    base, _ = served
    url = f"{base}/v1/collections/legal/conversations"
    cid = _call("POST", url, json={}).json()["id"]
    asked = _call("POST", f"{url}/{cid}/messages", json={"question": "Which law governs?"}).json()
    prompts = len(fake_generator.prompts)
    assert _refused_for_nul(_call("POST", url, json={"title": "a\x00b"}))
    assert _refused_for_nul(_call("PATCH", f"{url}/{cid}", json={"title": "a\x00b"}))
    assert _refused_for_nul(_call("GET", url, params={"q": "law\x00"}))
    note = {"rating": 1, "note": "good\x00"}
    assert _refused_for_nul(_call("POST", f"{url}/{cid}/messages/{asked['message_id']}/feedback", json=note))
    for streamed in (False, True):
        body = {"question": "Which\x00 law governs?", "stream": streamed, "cache": False}
        assert _refused_for_nul(_call("POST", f"{url}/{cid}/messages", json=body))
        assert _refused_for_nul(_call("POST", f"{base}/v1/ask", json={**body, "collection": "legal"}))
    where = {"question": "Which law governs?", "collection": "legal", "where": {"company": "a\x00"}}
    assert _refused_for_nul(_call("POST", f"{base}/v1/ask", json=where))
    assert len(fake_generator.prompts) == prompts  # nothing was generated for any of them
    assert _call("GET", f"{url}/{cid}").json()["messages"][0]["question"] == "Which law governs?"


def test_search_wildcards_are_letters_and_missing_messages_are_named(served: tuple[str, DocQA]) -> None:
    base, _ = served
    url = f"{base}/v1/collections/legal/conversations"
    percent = _call("POST", url, json={"title": "50% off"}).json()["id"]
    under = _call("POST", url, json={"title": "net_terms"}).json()["id"]
    _call("POST", url, json={"title": "plain words"})
    assert [c["id"] for c in _call("GET", url, params={"q": "%"}).json()["conversations"]] == [percent]
    assert [c["id"] for c in _call("GET", url, params={"q": "_"}).json()["conversations"]] == [under]
    missing = _call("POST", f"{url}/{percent}/messages/999999/feedback", json={"rating": 1})
    assert missing.status_code == 404
    assert missing.json()["error"]["message"] == f"message 999999 not found in conversation {percent}"


def test_a_long_conversation_is_read_in_pages_and_each_answer_names_its_message(served: tuple[str, DocQA]) -> None:
    base, _ = served
    url = f"{base}/v1/collections/legal/conversations"
    cid = _call("POST", url, json={}).json()["id"]
    ids = []
    for n in range(5):
        body = {"question": f"Question {n} about the governing law?", "stream": True}
        with httpx.stream("POST", f"{url}/{cid}/messages", json=body, timeout=60) as response:
            text = response.read().decode()
        done = [line for line in text.splitlines() if line.startswith("data:") and '"finish_reason"' in line]
        ids.append(httpx.Response(200, content=done[-1][5:]).json()["message_id"])
    page = _call("GET", f"{url}/{cid}", params={"limit": 2}).json()
    assert [m["id"] for m in page["messages"]] == ids[3:] and page["earlier"] and page["messages_total"] == 5
    before = _call("GET", f"{url}/{cid}", params={"limit": 2, "before": ids[3]}).json()
    assert [m["id"] for m in before["messages"]] == ids[1:3] and before["earlier"]
    first = _call("GET", f"{url}/{cid}", params={"limit": 2, "before": ids[1]}).json()
    assert [m["id"] for m in first["messages"]] == ids[:1] and not first["earlier"]
    assert _call("GET", f"{url}/{cid}", params={"limit": 501}).status_code == 422
    assert len(_call("GET", f"{url}/{cid}/export").json()["messages"]) == 5  # an export is all of it


def test_a_locked_database_holds_neither_health_nor_the_answer(tmp_path: Path, fake_generator: FakeGenerator) -> None:
    """Another process holds SQLite's write lock while an answer is kept: /health still answers at once (the
    write waits off the event loop), and the answer is kept once the lock goes."""
    settings = make_settings(tmp_path / "data")
    qa = DocQA(settings, None, fake_generator)
    qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt"], collection="legal")
    try:
        with serve_app(settings, qa, free_port()) as base:
            url = f"{base}/v1/collections/legal/conversations"
            cid = _call("POST", url, json={}).json()["id"]
            locker = sqlite3.connect(settings.database_path, isolation_level=None)
            locker.execute("BEGIN IMMEDIATE")  # the write lock, held as a long ingest would hold it
            answers: list[httpx.Response] = []
            asking = threading.Thread(
                target=lambda: answers.append(
                    _call("POST", f"{url}/{cid}/messages", json={"question": "Which law governs?", "cache": False})
                )
            )
            asking.start()
            time.sleep(1.0)  # the answer is generated and waits on the lock to be kept
            health = httpx.get(f"{base}/health", timeout=5)  # the lock is held until this returns
            assert health.status_code == 200
            assert not answers
            time.sleep(0.5)
            locker.execute("ROLLBACK")
            locker.close()
            asking.join(60)
            assert answers[0].status_code == 200 and answers[0].json()["message_id"]
            assert len(_call("GET", f"{url}/{cid}").json()["messages"]) == 1
    finally:
        qa.close()
