"""Keys that are tenants (issue 60, item 1), over real HTTP on SQLite and on Postgres: named keys made by
`docqa keys create`, stored hashed, each granted some collections. A key granted `legal` gets the same 404 on
`finance` as on a collection that does not exist, for every route that names one; a read-only key asks but
does not upload or delete; the answer cache tells no key what another asked; a revoked key is refused at once;
one key cannot hold every generation slot; DOCQA_API_KEYS stay admin keys."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
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

ADMIN = "environment-admin-key"


@dataclass
class Served:
    base: str
    qa: DocQA
    legal: str  # a writer key granted `legal`
    reader: str  # a read-only key granted `legal`
    colleague: str  # another writer key granted `legal`
    finance_doc: int
    legal_doc: int


@pytest.fixture(params=["sqlite", "postgres"])
def served(request: pytest.FixtureRequest, tmp_path: Path, fake_generator: FakeGenerator) -> Iterator[Served]:
    database = {"database_url": request.getfixturevalue("postgres_url")} if request.param == "postgres" else {}
    settings = make_settings(tmp_path / "data", api={"keys": ADMIN, "generations_per_key": 2}, **database)
    qa = DocQA(settings, None, fake_generator)
    qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt"], collection="legal")
    qa.ingest([SAMPLE_DOCS / "operations_handbook.md"], collection="finance")
    _, legal = qa.api_keys.create("legal-team", ["legal"])
    _, reader = qa.api_keys.create("auditor", ["legal"], role="reader")
    _, colleague = qa.api_keys.create("legal-colleague", ["legal"])
    ids = {c: qa.documents(c)[0].id for c in ("legal", "finance")}
    try:
        with serve_app(settings, qa, free_port()) as base:
            yield Served(base, qa, legal, reader, colleague, ids["finance"], ids["legal"])
    finally:
        qa.close()


def _call(method: str, url: str, key: str | None, **kw: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.request(method, url, headers=headers, timeout=60, **kw)


def _not_found(response: httpx.Response, collection: str = "finance") -> bool:
    """The 404 a collection that does not exist gets, word for word."""
    return response.status_code == 404 and response.json()["error"]["message"] == (
        f"collection '{collection}' does not exist; ingest documents into it first"
    )


def test_a_key_reaches_only_its_collections(served: Served) -> None:
    s, key = served, served.legal
    v1 = f"{s.base}/v1"
    listed = _call("GET", f"{v1}/collections", key).json()["collections"]
    assert [c["name"] for c in listed] == ["legal"]
    assert [m["id"] for m in _call("GET", f"{v1}/models", key).json()["data"]] == ["docqa/legal"]
    finance = f"{v1}/collections/finance"
    assert _not_found(_call("GET", f"{finance}/documents", key))
    assert _not_found(_call("GET", f"{finance}/documents/{s.finance_doc}/file", key))
    assert _not_found(_call("DELETE", f"{finance}/documents/{s.finance_doc}", key))
    assert _not_found(_call("GET", f"{finance}/jobs", key))
    assert _not_found(_call("GET", f"{finance}/conversations", key))
    assert _not_found(_call("POST", f"{finance}/conversations", key, json={}))
    assert _not_found(_call("GET", f"{finance}/chunks/1", key))
    assert _not_found(_call("DELETE", finance, key))
    upload = {"files": ("x.txt", b"planted text", "text/plain")}
    assert _not_found(_call("POST", f"{finance}/documents", key, files=upload))
    assert _not_found(
        _call("POST", f"{v1}/ask", key, json={"question": "What response time?", "collection": "finance"})
    )
    chat = {"model": "docqa/finance", "messages": [{"role": "user", "content": "What response time?"}]}
    assert _not_found(_call("POST", f"{v1}/chat/completions", key, json=chat))
    assert _call("GET", f"{s.base}/metrics", key).status_code == 403
    assert [d.id for d in s.qa.documents("finance")] == [s.finance_doc]  # nothing deleted, nothing added
    # its own collection works on every one of those routes, and the admin key reaches both
    legal = f"{v1}/collections/legal"
    assert _call("GET", f"{legal}/documents/{s.legal_doc}/file", key).status_code == 200
    assert _call("POST", f"{v1}/ask", key, json={"question": "Which law governs?", "collection": "legal"}).is_success
    chat["model"] = "docqa/legal"
    assert _call("POST", f"{v1}/chat/completions", key, json=chat).status_code == 200
    assert {c["name"] for c in _call("GET", f"{v1}/collections", ADMIN).json()["collections"]} == {"legal", "finance"}
    assert _call("GET", f"{finance}/documents", ADMIN).status_code == 200
    assert _call("GET", f"{s.base}/metrics", ADMIN).status_code == 200


def test_a_read_only_key_asks_but_changes_nothing(served: Served) -> None:
    s = served
    legal = f"{s.base}/v1/collections/legal"
    upload = {"files": ("x.txt", b"planted text", "text/plain")}
    refused = _call("POST", f"{legal}/documents", s.reader, files=upload)
    assert refused.status_code == 403 and "read-only" in refused.json()["error"]["message"]
    assert _call("DELETE", f"{legal}/documents/{s.legal_doc}", s.reader).status_code == 403
    assert _call("POST", f"{s.base}/v1/collections", s.reader, json={"name": "legal"}).status_code == 403
    assert _call("DELETE", legal, s.reader).status_code == 403
    assert [d.id for d in s.qa.documents("legal")] == [s.legal_doc]
    asked = _call("POST", f"{s.base}/v1/ask", s.reader, json={"question": "Which law governs?", "collection": "legal"})
    assert asked.status_code == 200 and asked.json()["citations"]
    made = _call("POST", f"{legal}/conversations", s.reader, json={})
    assert made.status_code == 201  # its own conversations, kept apart from the writer's
    assert _call("GET", f"{legal}/conversations/{made.json()['id']}", s.legal).status_code == 404


def test_the_answer_cache_tells_no_key_what_another_asked(served: Served, fake_generator: FakeGenerator) -> None:
    s = served
    body = {"question": "Which law governs the agreement?", "collection": "legal"}
    first = _call("POST", f"{s.base}/v1/ask", s.legal, json=body).json()
    again = _call("POST", f"{s.base}/v1/ask", s.legal, json=body).json()
    assert not first["cached"] and again["cached"]  # the cache still serves the key that asked
    prompts = len(fake_generator.prompts)
    other = _call("POST", f"{s.base}/v1/ask", s.colleague, json=body).json()
    assert not other["cached"] and len(fake_generator.prompts) == prompts + 1  # generated afresh
    assert not _call("POST", f"{s.base}/v1/ask", ADMIN, json=body).json()["cached"]


def test_a_revoked_key_is_refused_and_an_unkeyed_request_too(served: Served) -> None:
    s = served
    url = f"{s.base}/v1/collections/legal/documents"
    assert _call("GET", url, s.legal).status_code == 200
    assert _call("GET", url, None).status_code == 401  # named keys exist: no key, no entry
    assert _call("GET", url, s.legal + "x").status_code == 401
    s.qa.api_keys.revoke("legal-team")
    assert _call("GET", url, s.legal).status_code == 401
    assert _call("GET", url, s.colleague).status_code == 200


def test_one_key_cannot_hold_every_generation_slot(served: Served, fake_generator: FakeGenerator) -> None:
    """generations_per_key is 2: the key's third answer at once is 429 at once, while another key's question
    goes ahead; a stream whose client left gives its slot back."""
    s = served
    url = f"{s.base}/v1/ask"
    body = {"question": "Which law governs the agreement?", "collection": "legal", "stream": True, "cache": False}
    fake_generator.paused.set()  # the first two answers wait in the queue, holding their slots
    with httpx.Client(timeout=60) as c1, httpx.Client(timeout=60) as c2:
        headers = {"Authorization": f"Bearer {s.legal}"}
        with (
            c1.stream("POST", url, json=body, headers=headers) as r1,
            c2.stream("POST", url, json=body, headers=headers) as r2,
        ):
            assert r1.status_code == r2.status_code == 200
            third = _call("POST", url, s.legal, json={**body, "stream": False})
            assert third.status_code == 429 and "limit" in third.json()["error"]["message"]
            results: list[httpx.Response] = []
            other = threading.Thread(target=lambda: results.append(_call("POST", url, s.colleague, json=body)))
            other.start()
            # the clients leave without reading their answers
    fake_generator.paused.clear()
    other.join(60)
    assert results and results[0].status_code == 200
    deadline = time.monotonic() + 20
    while (again := _call("POST", url, s.legal, json={**body, "stream": False})).status_code == 429:
        assert time.monotonic() < deadline, "the slots of the streams left were never given back"
        time.sleep(0.2)
    assert again.status_code == 200


def test_keys_are_made_listed_and_revoked_from_the_cli(tmp_path: Path, fake_generator: FakeGenerator) -> None:
    data = tmp_path / "data"
    env = {"DOCQA_DATA_DIR": str(data)}
    runner = CliRunner()
    made = runner.invoke(main, ["keys", "create", "analyst", "--collections", "legal", "--read-only"], env=env)
    assert made.exit_code == 0, made.output
    secret = made.stdout.strip()
    assert secret.startswith("dq_") and len(secret) > 40
    taken = runner.invoke(main, ["keys", "create", "analyst", "--collections", "legal"], env=env)
    assert taken.exit_code != 0 and "exists already" in taken.output
    none = runner.invoke(main, ["keys", "create", "nobody"], env=env)
    assert none.exit_code != 0 and "grants no collection" in none.output
    listed = runner.invoke(main, ["keys", "list"], env=env)
    assert listed.exit_code == 0 and "analyst\treader\tlegal" in listed.stdout and secret not in listed.stdout
    qa = DocQA(make_settings(data), None, fake_generator)
    qa.ingest([SAMPLE_DOCS / "services_agreement_en.txt"], collection="legal")
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            url = f"{base}/v1/collections/legal/documents"
            assert _call("GET", url, secret).status_code == 200
            assert _call("GET", url, None).status_code == 401
            revoked = runner.invoke(main, ["keys", "revoke", "analyst"], env=env)
            assert revoked.exit_code == 0, revoked.output
            assert _call("GET", url, secret).status_code == 401
    finally:
        qa.close()
    assert "revoked" in runner.invoke(main, ["keys", "list"], env=env).stdout


def test_a_collection_is_deleted_with_all_it_holds_and_its_name_starts_afresh(served: Served) -> None:
    """DELETE /v1/collections/{name}: its documents, conversations and cached answers go; another collection keeps
    its own; a new collection of that name holds only what is put in it (SQLite reuses a deleted last ID)."""
    s, v1 = served, f"{served.base}/v1"
    legal = f"{v1}/collections/legal"
    ask = {"question": "Which law governs this agreement?", "collection": "legal"}
    assert _call("POST", f"{v1}/ask", s.legal, json=ask).status_code == 200  # a cached answer
    assert _call("POST", f"{legal}/conversations", s.legal, json={}).status_code == 201
    deleted = _call("DELETE", legal, s.legal)
    assert deleted.status_code == 200 and deleted.json() == {"name": "legal", "documents_deleted": 1}
    assert _not_found(_call("DELETE", legal, ADMIN), "legal")
    assert _not_found(_call("GET", f"{legal}/documents", ADMIN), "legal")
    assert [c["name"] for c in _call("GET", f"{v1}/collections", ADMIN).json()["collections"]] == ["finance"]
    assert [d.id for d in s.qa.documents("finance")] == [s.finance_doc]
    s.qa.ingest([SAMPLE_DOCS / "supply_contract_zh.txt"], collection="legal")  # (Postgres queues an upload)
    assert [d.name for d in s.qa.documents("legal")] == ["supply_contract_zh.txt"]
    assert _call("GET", f"{legal}/conversations", s.legal).json()["conversations"] == []
    again = _call("POST", f"{v1}/ask", s.legal, json=ask).json()
    assert not again.get("cached") and {c["document"] for c in again["citations"]} <= {"supply_contract_zh.txt"}
