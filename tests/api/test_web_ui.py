"""The web page in headless Chromium (Debian's chromium, driven by Playwright), as a user works in it:
create a collection and ask it at once, upload a sample PDF and a bad file, ask with Enter and watch the
answer stream in, open the cited text, follow up, copy, regenerate, stop, delete a document, come back to
the conversation; Markdown rendered without running any HTML; dark mode; a 390 px phone screen.
Screenshots (desktop, 390 px, dark) are kept in tests/artifacts/."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest

from tests.support.paths import ROOT, SAMPLE_DOCS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = ROOT / "tests" / "artifacts"
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (.ci/run installs it)")

# Without the background-networking flags Chromium keeps dialing Google on a closed network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


QUESTION = "What was Northwind's revenue in 2025?"
# A turn as a model might have written it, with HTML that must stay text: it is put in the browser's
# storage and the page reloaded, as a conversation comes back.
STORED_TURN = {
    "question": "Which markup?",
    "answer": "**Bold** and *italic* [1]\n\n| Year | Revenue |\n|---|---|\n| 2025 | 184.6 |\n\n"
    '- first\n- second\n\n<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>',
    "reasoning": "Step one.",
    "citations": [],
    "status": "stored",
    "done": True,
}


def _turn(page, n: int):  # type: ignore[no-untyped-def]
    return page.locator(".turn").nth(n)


def _wait_done(page, n: int) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    expect(_turn(page, n).locator(".status")).to_have_attribute("data-done", "1", timeout=240_000)


def test_a_conversation_in_the_web_page(live_server: str, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    fake = tmp_path / "scan.pdf"
    fake.write_bytes(b"PK\x03\x04 a zip, not a PDF")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server)
        page = context.new_page()
        page.on("dialog", lambda dialog: dialog.accept())  # the delete confirmation
        page.goto(live_server)
        expect(page.locator("#collection option")).to_have_text(["default"])

        # A new collection exists on the server at once: asking it answers (nothing to cite yet).
        page.fill("#new-collection-name", "webtest")
        page.click("#new-collection button")
        expect(page.locator("#collection")).to_have_value("webtest")
        names = [c["name"] for c in httpx.get(f"{live_server}/v1/collections").json()["collections"]]
        assert "webtest" in names
        page.fill("#question", "Is anything here?")
        page.press("#question", "Enter")
        _wait_done(page, 0)
        expect(_turn(page, 0).locator(".answer")).to_contain_text("nothing relevant was found")
        page.click("#new-thread")
        expect(page.locator(".turn")).to_have_count(0)

        page.set_input_files("#file-input", [str(SAMPLE_DOCS / "annual_report_2025.pdf"), str(fake)])
        expect(page.locator("#uploads li .ok")).to_contain_text(
            "annual_report_2025.pdf: added, 4 pages", timeout=120_000
        )
        expect(page.locator("#uploads li .failed")).to_contain_text("not a PDF (no %PDF- header)")
        expect(page.locator("#documents li .doc-name")).to_contain_text(["annual_report_2025.pdf · 4 pages"])
        uploaded = page.locator("#documents li .doc-name").filter(has_text="annual_report_2025.pdf")
        expect(uploaded).to_have_attribute("title", "from uploaded as annual_report_2025.pdf")  # where it came from
        page.evaluate(
            """() => {
                const data = new DataTransfer();
                data.items.add(new File(["Dropped memo: the cafeteria opens at 8."], "memo.txt", {type: "text/plain"}));
                document.getElementById('dropzone').dispatchEvent(new DragEvent('drop', {dataTransfer: data}));
            }"""
        )
        expect(page.locator("#documents li .doc-name").filter(has_text="memo.txt")).to_have_count(1, timeout=60_000)

        # Enter asks (Shift+Enter is a new line); the answer grows while it streams.
        page.fill("#question", "first line")
        page.press("#question", "Shift+Enter")
        assert page.input_value("#question") == "first line\n"
        page.fill("#question", QUESTION)
        page.evaluate(
            """() => {
                window.answerLengths = [];
                new MutationObserver(() => {
                    const answers = document.querySelectorAll('.turn .answer');
                    if (answers.length) window.answerLengths.push(answers[answers.length - 1].textContent.length);
                }).observe(document.getElementById('thread'), {childList: true, characterData: true, subtree: true});
            }"""
        )
        page.press("#question", "Enter")
        _wait_done(page, 0)
        lengths = page.evaluate("window.answerLengths")
        assert lengths == sorted(lengths), lengths
        answer = _turn(page, 0).locator(".answer").text_content() or ""
        assert len({n for n in lengths if n > 0}) >= 2 or len(answer.strip()) <= 4, (lengths, answer)
        expect(_turn(page, 0).locator(".status")).to_contain_text("tokens in")
        expect(_turn(page, 0).locator(".reasoning")).to_be_hidden()  # the demo model does not think
        page.screenshot(path=str(ARTIFACTS / "web_ui_answer.png"), full_page=True)

        citation = _turn(page, 0).locator(".citations a").filter(has_text="annual_report_2025.pdf")
        expect(citation.first).to_contain_text("p.")
        citation.first.click()
        expect(page.locator("#source-dialog")).to_be_visible()
        expect(page.locator("#source-text")).to_contain_text("Northwind")
        expect(page.locator("#source-text .page-marker").first).to_have_text("— page 1 —")
        # the passage the answer used is highlighted (the demo model repeats the report's lines)
        expect(page.locator("#source-text mark.quote")).to_have_count(1)
        expect(page.locator("#source-text mark.quote")).to_contain_text("2025")
        page.screenshot(path=str(ARTIFACTS / "web_ui_source.png"), full_page=True)
        page.click("#source-dialog button")

        # Copy puts the answer on the clipboard.
        _turn(page, 0).locator(".copy").click()
        expect(_turn(page, 0).locator(".copy")).to_have_text("Copied")
        assert page.evaluate("navigator.clipboard.readText()") == page.evaluate(
            "JSON.parse(localStorage.getItem('docqa-thread:webtest'))[0].answer"
        )

        # A follow-up carries the question before it; regenerate asks again past the cache.
        page.fill("#question", "And the operating profit?")
        with page.expect_request(lambda r: r.url.endswith("/v1/ask") and r.method == "POST") as sent:
            page.press("#question", "Enter")
        assert (sent.value.post_data_json or {})["earlier_question"] == QUESTION
        _wait_done(page, 1)
        with page.expect_request(lambda r: r.url.endswith("/v1/ask") and r.method == "POST") as again:
            _turn(page, 1).locator(".regenerate").click()
        sent_again = again.value.post_data_json or {}
        assert sent_again["cache"] is False and sent_again["question"] == "And the operating profit?"
        _wait_done(page, 1)
        expect(page.locator(".turn")).to_have_count(2)

        # Stop cancels the stream, and the server's sequence with it.
        page.fill("#question", "Describe every section of the annual report in detail.")
        page.press("#question", "Enter")
        expect(page.locator("#stop-button")).to_be_visible()
        page.click("#stop-button")
        expect(_turn(page, 2).locator(".status")).to_have_text("stopped")
        expect(page.locator("#stop-button")).to_be_hidden()
        for _ in range(100):
            if httpx.get(f"{live_server}/health").json()["engine"]["running"] == 0:
                break
            page.wait_for_timeout(100)
        assert httpx.get(f"{live_server}/health").json()["engine"]["running"] == 0

        # Delete a document from the list.
        page.locator("#documents li").filter(has_text="memo.txt").locator(".delete").click()
        expect(page.locator("#documents li .doc-name").filter(has_text="memo.txt")).to_have_count(0)
        listed = httpx.get(f"{live_server}/v1/collections/webtest/documents").json()["documents"]
        assert [d["name"] for d in listed] == ["annual_report_2025.pdf"]

        # The conversation is the collection's: another collection has its own; it comes back on reload.
        page.select_option("#collection", "default")
        expect(page.locator(".turn")).to_have_count(0)
        page.select_option("#collection", "webtest")
        expect(page.locator(".turn")).to_have_count(3)
        page.evaluate("(turn) => localStorage.setItem('docqa-thread:default', JSON.stringify([turn]))", STORED_TURN)
        page.reload()
        page.select_option("#collection", "default")
        stored = _turn(page, 0)
        expect(stored.locator(".answer strong")).to_have_text("Bold")
        expect(stored.locator(".answer table td").first).to_have_text("2025")
        expect(stored.locator(".answer li")).to_have_count(2)
        expect(stored.locator(".answer")).to_contain_text("<img src=x")  # shown as text, never as markup
        assert stored.locator(".answer img, .answer script").count() == 0
        assert page.evaluate("window.pwned") is None
        expect(stored.locator(".reasoning")).to_be_visible()
        assert stored.locator(".reasoning").get_attribute("open") is None  # reasoning collapsed by default
        context.close()

        # A phone, in dark mode: no sideways scroll, the conversation still there.
        phone = browser.new_context(viewport={"width": 390, "height": 844}, color_scheme="dark")
        small = phone.new_page()
        small.goto(live_server)
        small.evaluate("(turn) => localStorage.setItem('docqa-thread:default', JSON.stringify([turn]))", STORED_TURN)
        small.reload()
        expect(small.locator(".turn")).to_have_count(1)
        assert small.evaluate("document.documentElement.scrollWidth") <= 390
        background = small.evaluate("getComputedStyle(document.body).backgroundColor")
        assert int(background.split("(")[1].split(",")[0]) < 60, background  # rgb(15, 20, 25): dark
        small.screenshot(path=str(ARTIFACTS / "web_ui_390px_dark.png"), full_page=True)
        dark = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark").new_page()
        dark.goto(live_server)
        dark.screenshot(path=str(ARTIFACTS / "web_ui_dark.png"), full_page=True)
        browser.close()


def test_the_api_page_renders_in_chromium(live_server: str) -> None:
    """/docs said "Unable to render this definition": its Swagger UI (4.15.5) could not read the OpenAPI 3.1
    document FastAPI writes (issue 40, 4). Rendered here, offline, from docqa's own files."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            outside: list[str] = []
            page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(live_server) else None)
            page.goto(f"{live_server}/docs")
            expect(page.locator(".opblock-summary-path", has_text="/v1/ask").first).to_be_visible(timeout=30_000)
            assert "Unable to render" not in page.content()
            assert page.locator(".opblock").count() >= 10  # every route listed
            assert outside == []  # nothing fetched from outside docqa
            page.screenshot(path=str(ARTIFACTS / "api_docs.png"))
        finally:
            browser.close()
