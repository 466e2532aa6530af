"""Questions over a whole collection in the web page (headless Chromium): the scope chosen in the page's
settings reaches the server and the answer's table is drawn with its citations; and an uploaded HTML file
opened through its originals link runs nothing on docqa's origin (issue 60)."""

from __future__ import annotations

import httpx
import pytest

from tests.api.test_web_ui import CHROMIUM, CHROMIUM_ARGS, _turn, _wait_done

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (.ci/run installs it)")


def test_a_collection_question_in_the_page_draws_its_table(live_server: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    asked_in = lambda r: r.url.endswith("/messages") and r.method == "POST"  # noqa: E731
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.goto(live_server)
        page.click("#ask-settings summary")
        page.select_option("#set-scope", "collection")
        page.fill("#set-max-tokens", "8")
        page.fill("#question", "Which documents mention 2025?")
        with page.expect_request(asked_in) as sent:
            page.press("#question", "Enter")
        assert (sent.value.post_data_json or {})["scope"] == "collection"
        _wait_done(page, 0)
        answer = _turn(page, 0).locator(".answer")
        expect(answer).to_contain_text("of 4 documents")
        expect(answer).to_contain_text("annual_report_2025.pdf")
        browser.close()


def test_an_uploaded_html_file_opened_from_its_link_runs_nothing(live_server: str) -> None:
    from playwright.sync_api import Dialog, Error, sync_playwright

    page_bytes = b"<html><body><p>Rent is due monthly.</p><script>alert(localStorage.length)</script></body></html>"
    docs = f"{live_server}/v1/collections/default/documents"
    assert httpx.post(docs, files={"files": ("lease.html", page_bytes)}, timeout=60).status_code == 200
    lease = next(d for d in httpx.get(docs).json()["documents"] if d["name"] == "lease.html")
    dialogs: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(accept_downloads=True)
        page = context.new_page()

        def seen(dialog: Dialog) -> None:
            dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", seen)
        page.goto(live_server)
        page.evaluate("localStorage.setItem('docqa-api-key', 'secret')")
        with page.expect_download() as download, pytest.raises(Error, match="Download is starting"):
            page.goto(f"{docs}/{lease['id']}/file")
        assert download.value.suggested_filename == "lease.html"
        page.wait_for_timeout(500)
        browser.close()
    assert dialogs == []  # the script never ran
