"""Without API keys, other web sites cannot change documents or, by DNS rebinding, read them; the page cannot
be framed (issue 32, item 9)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from docqa.service import DocQA
from tests.support.fake_generator import FakeGenerator
from tests.support.live_server import free_port, serve_app
from tests.support.paths import make_settings

FILES = {"files": ("notes.txt", b"The notice period is sixty days.", "text/plain")}


@pytest.fixture
def base(fake_generator: FakeGenerator, tmp_path: Path) -> Iterator[str]:
    qa = DocQA(make_settings(tmp_path / "data"), None, fake_generator)
    try:
        with serve_app(qa.settings, qa, free_port()) as url:
            yield url
    finally:
        qa.close()


def test_a_cross_site_write_is_refused_and_others_are_not(base: str) -> None:
    upload = f"{base}/v1/collections/default/documents"
    evil = httpx.post(upload, files=FILES, headers={"Origin": "https://evil.example"}, timeout=30)
    assert evil.status_code == 403 and evil.json()["error"]["type"] == "CrossSiteRequest"
    fetched = httpx.post(upload, files=FILES, headers={"Sec-Fetch-Site": "cross-site"}, timeout=30)
    assert fetched.status_code == 403
    assert httpx.post(upload, files=FILES, headers={"Origin": base}, timeout=30).status_code == 200  # the page
    assert httpx.post(upload, files=FILES, timeout=30).status_code == 200  # curl, SDKs: no Origin
    assert httpx.get(f"{base}/v1/collections", headers={"Origin": "https://evil.example"}).status_code == 200


def test_a_rebound_host_name_is_refused_and_known_names_are_served(
    base: str, fake_generator: FakeGenerator, tmp_path: Path
) -> None:
    listed = f"{base}/v1/collections"
    rebound = httpx.get(listed, headers={"Host": "attacker.example:8000"})
    assert rebound.status_code == 421 and rebound.json()["error"]["type"] == "UnknownHost"
    assert "'attacker.example'" in rebound.json()["error"]["message"]
    assert "DOCQA_API_ALLOWED_HOSTS" in rebound.json()["error"]["message"]
    assert httpx.get(f"{base}/", headers={"Host": "attacker.example"}).status_code == 421  # the page too
    for known in ("127.0.0.1:9", "localhost", "docqa.localhost:8000", "[::1]:8000", "10.1.2.3"):
        assert httpx.get(listed, headers={"Host": known}).status_code == 200, known
    assert httpx.get(listed).status_code == 200

    settings = make_settings(tmp_path / "named", api={"allowed_hosts": "docs.corp.example, gpu-box"})
    qa = DocQA(settings, None, fake_generator)
    try:
        with serve_app(settings, qa, free_port()) as url:
            assert httpx.get(f"{url}/v1/collections", headers={"Host": "docs.corp.example"}).status_code == 200
            assert httpx.get(f"{url}/v1/collections", headers={"Host": "gpu-box:8000"}).status_code == 200
            assert httpx.get(f"{url}/v1/collections", headers={"Host": "other.example"}).status_code == 421
    finally:
        qa.close()


def test_the_page_says_nosniff_and_may_not_be_framed(base: str) -> None:
    page = httpx.get(f"{base}/")
    assert page.headers["x-frame-options"] == "DENY" and page.headers["x-content-type-options"] == "nosniff"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert "content-security-policy" not in httpx.get(f"{base}/health").headers


def test_with_api_keys_the_key_guards_instead(fake_generator: FakeGenerator, tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data", api={"keys": "k"})
    qa = DocQA(settings, None, fake_generator)
    try:
        with serve_app(settings, qa, free_port()) as url:
            headers = {"Origin": "https://app.example", "Authorization": "Bearer k"}
            response = httpx.post(f"{url}/v1/collections/default/documents", files=FILES, headers=headers, timeout=30)
            assert response.status_code == 200  # a site the key was given to
            named = {"Host": "docqa.corp.example", "Authorization": "Bearer k"}
            assert httpx.get(f"{url}/v1/collections", headers=named).status_code == 200  # any name, with a key
    finally:
        qa.close()
