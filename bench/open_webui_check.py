"""Open WebUI in front of docqa, driven in Chromium as a user drives it: docqa's collections in its model
list, a streamed answer with its reasoning folded, the citations as Open WebUI shows them. Screenshots, what was
seen (seen.json) and Open WebUI's log go to --out (default bench/results/open_webui_<date>_<commit>/).

Open WebUI is too heavy for `make test` (its install pulls ~6 GB: torch, transformers, chromadb) and is not
a docqa dependency; install it in a virtualenv of its own and name its `open-webui` command:

    python3.11 -m venv /opt/owui && /opt/owui/bin/pip install open-webui==0.12.4
    python -m bench.open_webui_check --webui /opt/owui/bin/open-webui [--out FOLDER]

docqa serves the sample documents (BM25) with its generator behind an endpoint that plays a thinking model:
a scripted OpenAI-compatible server that streams a <think> block, then an answer citing [1]. So retrieval,
the prompt, citations and docqa's OpenAI API are docqa's own; only the words are scripted (a small real
model does not think, and a random-weight Qwen3 never writes </think>). With --model a GGUF answers
in-process instead. The recipe for real use is in docs/usage.md ("Open WebUI in front of docqa").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from bench.local_server import docqa_server, free_port, wait_healthy
from bench.result_files import new_result_path
from tests.support.paths import QWEN_VOCAB

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "What is the liability cap in the services agreement?"


def webui_env(docqa_base: str, home: Path) -> dict[str, str]:
    """Open WebUI with no login, docqa as its only connection, nothing fetched from the internet, and none
    of its own background calls to the model (titles, tags, follow-ups) that would reach docqa as asks."""
    return {
        **os.environ,
        "DATA_DIR": str(home),
        "WEBUI_AUTH": "False",
        "ENABLE_OLLAMA_API": "False",
        "OPENAI_API_BASE_URL": f"{docqa_base}/v1",
        "OPENAI_API_KEY": "unused-locally",
        "OFFLINE_MODE": "True",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "BYPASS_EMBEDDING_AND_RETRIEVAL": "True",
        "ENABLE_TITLE_GENERATION": "False",
        "ENABLE_TAGS_GENERATION": "False",
        "ENABLE_FOLLOW_UP_GENERATION": "False",
        "ENABLE_AUTOCOMPLETE_GENERATION": "False",
        "ENABLE_VERSION_UPDATE_CHECK": "False",
        "ANONYMIZED_TELEMETRY": "False",
    }


@contextmanager
def open_webui(command: str, docqa_base: str, home: Path, log: Path) -> Iterator[str]:
    """`open-webui serve` on a free port until /health answers; stopped on exit. Its log goes to `log`."""
    port = free_port()
    with log.open("w") as out:
        server = subprocess.Popen(
            [command, "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=webui_env(docqa_base, home),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(base, server, timeout_s=900)
            yield base
        finally:
            server.terminate()
            server.wait(120)


SCRIPT = [
    "<think>\n",
    "The question asks for the cap on liability. ",
    "Source [1] is the services agreement; its liability clause sets the cap.\n",
    "</think>\n\n",
    "The services agreement caps each party's liability ",
    "as its liability clause sets out [1].",
]


class ScriptedModel(BaseHTTPRequestHandler):
    """An OpenAI-compatible completions server that streams SCRIPT whatever the prompt."""

    def do_GET(self) -> None:
        self._json({"object": "list", "data": [{"id": "scripted-qwen3", "object": "model", "prompt_format": "qwen3"}]})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for piece in SCRIPT:
            self._event({"choices": [{"index": 0, "text": piece, "finish_reason": None}]})
        self._event({"choices": [{"index": 0, "text": "", "finish_reason": "stop"}]})
        self.wfile.write(b"data: [DONE]\n\n")

    def _event(self, payload: dict[str, Any]) -> None:
        self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
        self.wfile.flush()

    def _json(self, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: Any) -> None:
        pass


@contextmanager
def scripted_model() -> Iterator[str]:
    """The scripted server's /v1 base URL, on a free loopback port, until exit."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedModel)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()


def drive(ui: str, out: Path) -> dict[str, Any]:
    """The user's steps in Chromium (Open WebUI 0.12's page); what each showed, a screenshot after each. A
    step whose element is missing fails with Playwright's timeout, naming it."""
    from playwright.sync_api import expect, sync_playwright

    seen: dict[str, Any] = {}
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(ui)
        page.wait_for_selector("#chat-input", timeout=180_000)
        page.wait_for_timeout(2000)
        release_notes = page.get_by_text("Okay, Let's Go!")
        if release_notes.count():
            release_notes.first.click()

        page.click("#model-selector-model-button")  # the model list: docqa's collections
        page.wait_for_timeout(1000)
        seen["model_list"] = page.locator("[role='menu'], [role='listbox'], [role='dialog']").first.inner_text()
        page.screenshot(path=str(out / "1_model_list.png"))
        page.keyboard.press("Escape")

        page.locator("#chat-input").click()
        page.keyboard.type(QUESTION)
        page.keyboard.press("Enter")
        answer = page.locator("#response-content-container").last
        expect(answer).to_contain_text("Sources:", timeout=300_000)
        expect(page.get_by_text("1 Source")).to_be_visible(timeout=30_000)
        seen["answer_text"] = answer.inner_text()
        seen["reasoning_fold"] = page.get_by_text("Thought for").count() > 0
        seen["reasoning_shown_unfolded"] = "The question asks for the cap" in seen["answer_text"]
        page.screenshot(path=str(out / "2_answer.png"))

        page.get_by_text("Thought for").first.click()  # the fold opens on the reasoning
        page.wait_for_timeout(1000)
        seen["reasoning_opened"] = "The question asks for the cap" in answer.inner_text()
        page.screenshot(path=str(out / "3_reasoning_open.png"))

        page.get_by_text("1 Source").first.click()
        page.wait_for_timeout(1000)
        page.locator("button:has-text('[1]')").last.click()  # the source's chip: its quote in a dialog
        page.wait_for_timeout(1500)
        seen["source_dialog"] = page.locator("[role='dialog']").last.inner_text()
        page.screenshot(path=str(out / "4_source.png"))
        browser.close()
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--webui", required=True, help="the `open-webui` command of its own virtualenv")
    parser.add_argument("--model", type=Path, default=None, help="a GGUF to answer in-process (default: scripted)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or new_result_path("open_webui").with_suffix("")  # a folder: seen.json, screenshots, log
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as temp, scripted_model() as upstream:
        home = Path(temp)
        env = {**os.environ, "DOCQA_DATA_DIR": str(home / "docqa")}
        # behind an endpoint, a vocabulary-only GGUF of the model counts prompt tokens (Qwen's, as tests use)
        env |= {"DOCQA_LLM_MODEL": str(args.model or QWEN_VOCAB)} | (
            {} if args.model else {"DOCQA_LLM_ENDPOINT": upstream}
        )
        docs = [str(p) for p in sorted((ROOT / "sample_docs").iterdir()) if p.suffix in (".pdf", ".md", ".txt")]
        subprocess.run([sys.executable, "-m", "docqa", "ingest", *docs, "--no-embeddings"], env=env, check=True)
        with docqa_server(env) as (base, _), open_webui(args.webui, base, home / "webui", out / "webui.log") as ui:
            models = httpx.get(f"{base}/v1/models").json()
            seen = {"docqa_models": [m["id"] for m in models["data"]], **drive(ui, out)}
    (out / "seen.json").write_text(json.dumps(seen, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(seen, indent=1, ensure_ascii=False))
    missing = [what for what, ok in checks(seen).items() if not ok]
    if missing:
        sys.exit(f"Open WebUI did not show: {', '.join(missing)} (screenshots in {out})")


def checks(seen: dict[str, Any]) -> dict[str, bool]:
    """What a user must see, each by name."""
    return {
        "docqa's collections as models": "docqa/default" in seen["model_list"],
        "the reasoning folded": seen["reasoning_fold"] and not seen["reasoning_shown_unfolded"],
        "the reasoning inside the fold": seen["reasoning_opened"],
        "the answer citing [1]": "[1]" in seen["answer_text"],
        "the source's quote and page": "services_agreement_en.txt" in seen["source_dialog"]
        and "(page 1)" in seen["source_dialog"],
    }


if __name__ == "__main__":
    main()
