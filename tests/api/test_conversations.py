"""Conversations kept on the server (issue 44, item 1), over real HTTP, on SQLite and on Postgres, with API
keys on: a key sees only its own; a follow-up carries the questions before it; rename, search, export,
feedback and delete; an answer stays readable when the document it cites is deleted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from docqa.cli.main import main
from docqa.service import DocQA
from tests.support.fake_generator import FakeGenerator
from tests.support.live_server import free_port, serve_app
from tests.support.paths import SAMPLE_DOCS, make_settings

KEYS = ("alice-key", "bob-key")


@pytest.fixture(params=["sqlite", "postgres"])
def served(
    request: pytest.FixtureRequest, tmp_path: Path, fake_generator: FakeGenerator
) -> Iterator[tuple[str, DocQA]]:
    database = {"database_url": request.getfixturevalue("postgres_url")} if request.param == "postgres" else {}
    settings = make_settings(tmp_path / "data", api={"keys": ",".join(KEYS)}, **database)
    qa = DocQA(settings, None, fake_generator)
    qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt"], collection="legal")
    try:
        with serve_app(settings, qa, free_port()) as base:
            yield f"{base}/v1/collections/legal/conversations", qa
    finally:
        qa.close()


def _as(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _call(method: str, url: str, key: str, **kw: Any) -> httpx.Response:
    return httpx.request(method, url, headers=_as(key), timeout=60, **kw)


def test_a_conversation_is_kept_carried_and_seen_only_by_its_key(
    served: tuple[str, DocQA], fake_generator: FakeGenerator
) -> None:
    url, qa = served
    alice, bob = KEYS
    made = _call("POST", url, alice, json={})
    assert made.status_code == 201 and made.json()["title"] == "" and made.json()["messages"] == 0
    cid = made.json()["id"]
    first = _call("POST", f"{url}/{cid}/messages", alice, json={"question": "Which law governs the agreement?"})
    assert first.status_code == 200, first.text
    assert first.json()["answer"] and first.json()["message_id"] and first.json()["citations"]
    second = _call("POST", f"{url}/{cid}/messages", alice, json={"question": "And the notice period?"})
    assert second.status_code == 200
    # the follow-up carried the question before it, into the prompt
    assert "Earlier question: Which law governs the agreement?" in fake_generator.prompts[-1]
    # streamed, and kept when done
    with httpx.stream(
        "POST", f"{url}/{cid}/messages", headers=_as(alice), json={"question": "Who are the parties?", "stream": True}
    ) as streamed:
        assert streamed.status_code == 200 and "event: done" in streamed.read().decode()

    listed = _call("GET", url, alice).json()["conversations"]
    assert [(c["id"], c["title"], c["messages"]) for c in listed] == [(cid, "Which law governs the agreement?", 3)]
    read = _call("GET", f"{url}/{cid}", alice).json()
    assert [m["question"] for m in read["messages"]] == [
        "Which law governs the agreement?",
        "And the notice period?",
        "Who are the parties?",
    ]
    assert all(m["answer"] and m["citations"] and m["timings"] for m in read["messages"])
    assert read["messages"][0]["reasoning"]  # the scripted generator thinks first

    # another key sees nothing of it, and cannot read, rename, ask in or delete it
    assert _call("GET", url, bob).json()["conversations"] == []
    for method, path, body in [
        ("GET", f"{url}/{cid}", None),
        ("PATCH", f"{url}/{cid}", {"title": "mine"}),
        ("POST", f"{url}/{cid}/messages", {"question": "anything?"}),
        ("DELETE", f"{url}/{cid}", None),
        ("GET", f"{url}/{cid}/export", None),
    ]:
        refused = _call(method, path, bob, json=body)
        assert refused.status_code == 404, (method, path, refused.text)
        assert refused.json()["error"]["type"] == "ConversationNotFoundError"
    assert httpx.get(url, timeout=30).status_code == 401  # no key at all

    # rename, search, feedback, export
    assert _call("PATCH", f"{url}/{cid}", alice, json={"title": "Governing law"}).json()["title"] == "Governing law"
    assert [c["id"] for c in _call("GET", url, alice, params={"q": "NOTICE period"}).json()["conversations"]] == [cid]
    assert _call("GET", url, alice, params={"q": "indemnity"}).json()["conversations"] == []
    message_id = read["messages"][0]["id"]
    rated = _call("POST", f"{url}/{cid}/messages/{message_id}/feedback", alice, json={"rating": -1, "note": "wrong"})
    assert rated.status_code == 204
    assert _call("GET", f"{url}/{cid}", alice).json()["messages"][0]["feedback"] == {"rating": -1, "note": "wrong"}
    # `docqa feedback export`: the rated answers as JSON Lines, from its own process's view of the store
    env = {"DOCQA_DATABASE_URL": qa.settings.database_url or ""}
    exported = CliRunner().invoke(
        main, ["feedback", "export", "-c", "legal", "--data-dir", str(qa.settings.data_dir)], env=env
    )
    assert exported.exit_code == 0, exported.output
    rows = [json.loads(line) for line in exported.output.splitlines()]
    assert [(r["question"], r["rating"], r["note"]) for r in rows] == [
        ("Which law governs the agreement?", -1, "wrong")
    ]
    assert rows[0]["answer"] == read["messages"][0]["answer"] and rows[0]["citations"][0]["document"]
    markdown = _call("GET", f"{url}/{cid}/export", alice, params={"format": "markdown"})
    assert markdown.headers["content-type"].startswith("text/markdown")
    assert markdown.text.startswith("# Governing law\n") and "## And the notice period?" in markdown.text
    assert "services_agreement_en.txt" in markdown.text
    assert _call("GET", f"{url}/{cid}/export", alice).json()["messages"][1]["question"] == "And the notice period?"

    # the cited document deleted: the answers stay, their sources marked deleted
    document_id = read["messages"][0]["citations"][0]["document_id"]
    qa.delete_document(document_id, "legal")
    after = _call("GET", f"{url}/{cid}", alice).json()
    assert after["messages"][0]["answer"] == read["messages"][0]["answer"]
    assert all(c["deleted"] for m in after["messages"] for c in m["citations"])
    assert "(document deleted)" in _call("GET", f"{url}/{cid}/export", alice, params={"format": "markdown"}).text

    assert _call("DELETE", f"{url}/{cid}", alice).status_code == 204
    assert _call("GET", f"{url}/{cid}", alice).status_code == 404
    assert _call("GET", url, alice).json()["conversations"] == []


def test_ids_past_a_32_bit_column_are_not_found_not_a_server_error(served: tuple[str, DocQA]) -> None:
    """The fuzzer's find on Postgres (INTEGER IDs): conversation 2**40 was a 500 (integer out of range)."""
    url, _ = served
    alice = KEYS[0]
    huge = 2**40
    for path in (f"{url}/{huge}", f"{url}/{huge}/export"):
        assert _call("GET", path, alice).status_code == 404, path
    cid = _call("POST", url, alice, json={}).json()["id"]
    assert _call("GET", f"{url}/{cid}", alice, params={"before": huge}).status_code == 200
    rated = _call("POST", f"{url}/{cid}/messages/{huge}/feedback", alice, json={"rating": 1})
    assert rated.status_code == 404
