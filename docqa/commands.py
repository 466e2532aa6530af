"""The subcommands of `docqa` (registered on docqa.cli.main)."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path
from typing import Any

import click

from docqa.citing import format_pages
from docqa.cli import common_options, emit_json, main, make_settings, open_docqa
from docqa.service import AskRequest
from ingest.pipeline import Progress

BAR_WIDTH = 24


class ProgressLine:
    """A self-overwriting progress bar on a terminal; silent when stderr is not a terminal."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self._last = 0.0

    def __call__(self, p: Progress) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if p.stage == "embedding" and now - self._last < 0.2:
            return
        self._last = now
        done = p.file_index + (1 if p.stage == "done" else p.chunks_embedded / p.chunks if p.chunks else 0)
        filled = int(BAR_WIDTH * done / max(p.file_count, 1))
        bar = "█" * filled + "░" * (BAR_WIDTH - filled)
        parts = [f"{bar} {p.file_index + 1}/{p.file_count} files", p.path[:40]]
        if p.pages:
            parts.append(f"{p.pages} pages")
        if p.chunks:
            parts.append(
                f"{p.chunks_embedded or 0}/{p.chunks} chunks embedded"
                if p.stage == "embedding"
                else f"{p.chunks} chunks"
            )
        if p.tokens_per_s:
            parts.append(f"{p.tokens_per_s:,.0f} tok/s")
        click.echo("\r\033[K" + " · ".join(parts), nl=False, err=True)

    def close(self) -> None:
        if self.enabled:
            click.echo("\r\033[K", nl=False, err=True)


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--collection", "-c", default=None, help="Collection to add to (default: 'default').")
@click.option("--no-embeddings", is_flag=True, help="Skip dense embeddings: BM25 keyword search only (fast on CPU).")
@click.option("--password", default=None, help="Password for encrypted PDFs.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@common_options
def ingest(
    paths: tuple[Path, ...],
    collection: str | None,
    no_embeddings: bool,
    password: str | None,
    as_json: bool,
    data_dir: Path | None,
    verbose: bool,
) -> None:
    """Index PDF, text and Markdown files (folders are searched recursively)."""
    settings = make_settings(data_dir, verbose)
    qa = open_docqa(settings, verbose, embedder=not no_embeddings, generator=False)
    progress = ProgressLine()
    # SIGTERM ends the run like Ctrl+C: the document being written rolls back, FAISS is saved.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        report = qa.ingest(list(paths), collection, progress=progress, password=password)
    except KeyboardInterrupt:
        progress.close()
        click.secho(
            "interrupted: the files finished so far are saved; run the same command to ingest the rest", err=True
        )
        sys.exit(130)
    finally:
        progress.close()
        qa.close()
    if as_json:
        emit_json(report.as_dict())
    else:
        for f in report.files:
            if f.status == "failed":
                click.secho(f"failed   {f.path}: {f.error}", fg="red", err=True)
            for w in f.warnings:
                click.secho(f"warning  {f.path}: {w}", fg="yellow", err=True)
        pages = sum(f.pages for f in report.files if f.status in ("added", "updated"))
        tokens = sum(f.tokens for f in report.files if f.status in ("added", "updated"))
        d = report.as_dict()
        click.echo(
            f"{d['added']} added, {d['updated']} updated, {d['unchanged']} unchanged, "
            f"{len(d['failed'])} failed; {d['chunks']} chunks from {pages} pages in {report.seconds:.1f} s"
            + (
                f" ({pages / report.seconds:.1f} pages/s, {tokens / report.seconds:,.0f} tokens/s)"
                if report.seconds > 0 and pages
                else ""
            )
        )
        if not report.embeddings:
            why = "--no-embeddings" if no_embeddings else "retriever auto: DOCQA_RETRIEVAL_RETRIEVER=hybrid embeds"
            click.echo(f"embeddings skipped ({why}): these files are found by BM25 keyword search only")
    if report.count("failed") and not (report.count("added") or report.count("updated") or report.count("unchanged")):
        sys.exit(1)


@main.command()
@click.argument("question")
@click.option("--collection", "-c", default=None, help="Collection to ask (default: 'default').")
@click.option("--think/--no-think", default=False, help="Let Qwen3 reason before answering (default: off).")
@click.option("--top-k", type=click.IntRange(1, 50), default=None, help="Chunks to put in the prompt (default 3).")
@click.option("--max-tokens", type=click.IntRange(1, 32768), default=None, help="Cap on generated tokens.")
@click.option("--document", "document_id", type=int, default=None, help="Only search this document ID.")
@click.option("--seed", type=int, default=None, help="Sampling seed, for repeatable answers.")
@click.option(
    "--temperature", type=click.FloatRange(0, 2), default=None, help="Override the mode's temperature (0: greedy)."
)
@click.option("--no-cache", is_flag=True, help="Generate anew even if this question was answered before.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of streaming.")
@common_options
def ask(
    question: str,
    collection: str | None,
    think: bool,
    top_k: int | None,
    max_tokens: int | None,
    document_id: int | None,
    seed: int | None,
    temperature: float | None,
    no_cache: bool,
    as_json: bool,
    data_dir: Path | None,
    verbose: bool,
) -> None:
    """Answer a question from the indexed documents, with citations."""
    settings = make_settings(data_dir, verbose)
    # One question per process: KV cells for one sequence, not for the server's parallel requests and
    # cached prompts (with the defaults 10 times as many: 25 GiB for Qwen3-14B, 3 GB for the demo model).
    one_request = settings.llm.model_copy(update={"n_parallel": 1, "prefix_cache_slots": 0})
    settings = settings.model_copy(update={"llm": one_request})
    qa = open_docqa(settings, verbose, embedder=True, generator=True)
    request = AskRequest(
        question, collection, think, top_k, max_tokens, document_id, seed, temperature, use_cache=not no_cache
    )
    try:
        if as_json:
            emit_json(qa.ask(request).as_dict())
            return
        citations: Any = []
        channel = None
        for event in qa.stream(request):
            if event.kind in ("citations", "done"):  # done carries them refined by the answer
                citations = event.data["citations"]
            elif event.kind in ("reasoning", "answer"):
                if channel == "reasoning" and event.kind == "answer":
                    click.echo("\n", nl=False)
                channel = event.kind
                click.secho(str(event.data["text"]), nl=False, dim=event.kind == "reasoning")
            elif event.kind == "error":
                raise click.ClickException(str(event.data["message"]))
        click.echo("\n")
        if citations:
            click.echo("Sources:")
            for c in citations:
                click.echo(f"  [{c['number']}] {c['document']}, {format_pages(c)} (document {c['document_id']})")
    finally:
        qa.close()


@main.group()
def docs() -> None:
    """List and delete indexed documents."""


@docs.command("list")
@click.option("--collection", "-c", default=None, help="Collection to list (default: 'default').")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
def docs_list(collection: str | None, as_json: bool, data_dir: Path | None, verbose: bool) -> None:
    """List the documents of a collection."""
    qa = open_docqa(make_settings(data_dir, verbose), verbose, embedder=False, generator=False)
    try:
        rows = [d.as_dict() for d in qa.documents(collection)]
    finally:
        qa.close()
    if as_json:
        emit_json(rows)
        return
    click.echo(f"{'ID':>5}  {'STATUS':7} {'PAGES':>5} {'CHUNKS':>6}  NAME")
    for d in rows:
        click.echo(f"{d['id']:>5}  {d['status']:7} {d['pages']:>5} {d['chunks']:>6}  {d['name']}")
        if d["error"]:
            click.secho(f"       {d['error']}", fg="red")


@docs.command("rm")
@click.argument("document_ids", nargs=-1, type=int, required=True)
@click.option("--collection", "-c", default=None, help="Collection (default: 'default').")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
def docs_rm(
    document_ids: tuple[int, ...], collection: str | None, as_json: bool, data_dir: Path | None, verbose: bool
) -> None:
    """Delete documents (and their chunks and vectors) by ID."""
    qa = open_docqa(make_settings(data_dir, verbose), verbose, embedder=False, generator=False)
    deleted = []
    try:
        for doc_id in document_ids:
            qa.delete_document(doc_id, collection)
            deleted.append(doc_id)
            if not as_json:
                click.echo(f"deleted document {doc_id}")
    finally:
        qa.close()
    if as_json:
        emit_json({"deleted": deleted})


@main.command()
@click.option("--collection", "-c", default=None, help="Only this collection (default: all).")
@click.option(
    "--repair",
    is_flag=True,
    help="Fix what can be fixed: mark incomplete documents for re-ingest, drop orphan rows, "
    "rebuild FAISS from the embeddings stored in SQLite.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
def check(collection: str | None, repair: bool, as_json: bool, data_dir: Path | None, verbose: bool) -> None:
    """Verify the data directory: SQLite integrity, complete documents, FAISS against SQLite."""
    qa = open_docqa(make_settings(data_dir, verbose), verbose, embedder=False, generator=False)
    try:
        problems = [] if qa.store.integrity_ok() else ["SQLite integrity_check failed"]
        for report in qa.check(collection, repair=repair):
            problems += [f"{report.collection}: {p}" for p in report.problems]
    finally:
        qa.close()
    ok = not problems
    if as_json:
        emit_json({"ok": ok, "problems": problems, "repaired": repair and not ok})
    else:
        click.echo("ok" if ok else "\n".join(problems) + ("\nrepaired" if repair else ""))
    if not ok and not repair:
        sys.exit(1)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=int, help="Port to listen on.")
@common_options
def serve(host: str, port: int, data_dir: Path | None, verbose: bool) -> None:
    """Serve the REST API (models load in the background; /health says when ready)."""
    from docqa.api.draining import serve as serve_app
    from docqa.api.state import AppState

    settings = make_settings(data_dir, verbose)
    serve_app(AppState(settings), host, port, "info" if verbose else "warning")


@main.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script: eval "$(docqa completion bash)"."""
    from click.shell_completion import get_completion_class

    completer = get_completion_class(shell)
    assert completer is not None
    ctx = click.get_current_context()
    click.echo(completer(main, {}, "docqa", "_DOCQA_COMPLETE").source())
    ctx.exit(0)
