"""The web page in headless Chromium (Debian's chromium, driven by Playwright): create a collection,
upload a sample PDF and a bad file, ask, watch the answer stream in, open the cited text, ask a follow-up.
Screenshots are kept in tests/artifacts/."""

from __future__ import annotations

import shutil
from pathlib import Path

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


def test_upload_ask_stream_and_open_a_citation(live_server: str, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    fake = tmp_path / "scan.pdf"
    fake.write_bytes(b"PK\x03\x04 a zip, not a PDF")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(live_server)
        expect(page.locator("#collection option")).to_have_text(["default"])

        page.fill("#new-collection-name", "webtest")
        page.click("#new-collection button")
        expect(page.locator("#collection")).to_have_value("webtest")

        page.set_input_files("#file-input", [str(SAMPLE_DOCS / "annual_report_2025.pdf"), str(fake)])
        expect(page.locator("#uploads li .ok")).to_contain_text(
            "annual_report_2025.pdf: added, 4 pages", timeout=120_000
        )
        expect(page.locator("#uploads li .failed")).to_contain_text("scan.pdf: failed: scan.pdf: not a PDF")
        expect(page.locator("#documents li")).to_contain_text(["annual_report_2025.pdf · 4 pages"])

        # Drag and drop: a file dropped on the zone uploads like a chosen one.
        page.evaluate(
            """() => {
                const data = new DataTransfer();
                data.items.add(new File(["Dropped memo: the cafeteria opens at 8."], "memo.txt", {type: "text/plain"}));
                document.getElementById('dropzone').dispatchEvent(new DragEvent('drop', {dataTransfer: data}));
            }"""
        )
        expect(page.locator("#uploads li .ok").filter(has_text="memo.txt")).to_contain_text("memo.txt: added")

        # Record every change of the answer text, to see it arrive in pieces rather than at once.
        page.evaluate(
            """() => {
                const answer = document.getElementById('answer');
                window.answerLengths = [];
                new MutationObserver(() => window.answerLengths.push(answer.textContent.length))
                  .observe(answer, {childList: true, characterData: true, subtree: true});
            }"""
        )
        page.fill("#question", "What was Northwind's revenue in 2025?")
        page.click("#ask-button")
        expect(page.locator("#status")).to_have_attribute("data-done", "1", timeout=240_000)
        lengths = page.evaluate("window.answerLengths")
        assert lengths == sorted(lengths), lengths  # the answer only grows while it streams
        answer = page.locator("#answer").text_content() or ""
        # Streamed: several growing versions, unless the (demo) model stopped within a token or two.
        assert len({n for n in lengths if n > 0}) >= 2 or len(answer.strip()) <= 4, (lengths, answer)
        expect(page.locator("#status")).to_contain_text("tokens in")

        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "web_ui_answer.png"), full_page=True)
        citation = page.locator("#citations a").filter(has_text="annual_report_2025.pdf")
        expect(citation.first).to_contain_text("p.")
        citation.first.click()
        expect(page.locator("#source-dialog")).to_be_visible()
        expect(page.locator("#source-text")).to_contain_text("Northwind")
        expect(page.locator("#source-text .page-marker").first).to_have_text("— page 1 —")
        page.screenshot(path=str(ARTIFACTS / "web_ui_source.png"), full_page=True)

        # A follow-up: the question before it goes with it, once the box says which question that is.
        page.click("#source-dialog button")
        expect(page.locator("#last-question")).to_have_text("What was Northwind's revenue in 2025?")
        page.check("#follow-up")
        page.fill("#question", "And the operating profit?")
        with page.expect_request(lambda r: r.url.endswith("/v1/ask") and r.method == "POST") as sent:
            page.click("#ask-button")
        assert (sent.value.post_data_json or {})["earlier_question"] == "What was Northwind's revenue in 2025?"
        expect(page.locator("#status")).to_have_attribute("data-done", "1", timeout=240_000)
        expect(page.locator("#citations a").filter(has_text="annual_report_2025.pdf").first).to_be_visible()
        browser.close()
