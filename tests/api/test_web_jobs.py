"""The web page with a shared database: a dropped file is queued (202), its line follows the job through
the worker to `ready`, and the documents list shows the job while it runs, then the document."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from docqa.service import DocQA
from tests.api.test_web_ui import CHROMIUM, CHROMIUM_ARGS
from tests.service.test_ingest_jobs import worker
from tests.support.fake_generator import FakeGenerator
from tests.support.live_server import free_port, serve_app
from tests.support.paths import SAMPLE_DOCS, make_settings

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (.ci/run installs it)")


def test_a_queued_upload_is_followed_to_ready_in_the_page(
    tmp_path: Path, postgres_url: str, fake_generator: FakeGenerator
) -> None:
    from playwright.sync_api import expect, sync_playwright

    qa = DocQA(make_settings(tmp_path / "api", database_url=postgres_url), None, fake_generator)
    env = {**os.environ, "DOCQA_DATABASE_URL": postgres_url, "DOCQA_DATA_DIR": str(tmp_path / "worker")}
    try:
        with serve_app(qa.settings, qa, free_port()) as base, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.goto(base)
            page.set_input_files("#file-input", [str(SAMPLE_DOCS / "services_agreement_en.txt")])
            expect(page.locator("#uploads li div")).to_have_text("services_agreement_en.txt: queued")
            expect(page.locator("#documents li.pending")).to_contain_text("services_agreement_en.txt · queued")
            with worker(env):
                expect(page.locator("#uploads li .ok")).to_have_text("services_agreement_en.txt: ready", timeout=60_000)
            expect(page.locator("#documents li .doc-name")).to_contain_text(["services_agreement_en.txt · 1 page"])
            expect(page.locator("#documents li.pending")).to_have_count(0)
            browser.close()
    finally:
        qa.close()
