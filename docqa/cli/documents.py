"""`docqa ingest`, `docqa docs list|rm` and `docqa check`: what is in the data home."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any

import click

from docqa.cli.options import common_options, emit_json, make_settings, many, open_docqa
from docqa.cli.progress import ProgressLine
from docqa.core.catalog_fields import where_pairs
from docqa.core.documents import IngestReport
from docqa.core.errors import QueueNotConfiguredError
from docqa.core.files import SUPPORTED_SUFFIXES
from docqa.core.settings import Settings
from docqa.service.reindexing import bring_up_to_date


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--collection", "-c", default=None, help="Collection to add to (default: 'default').")
@click.option("--no-embeddings", is_flag=True, help="Skip dense embeddings: BM25 keyword search only (fast on CPU).")
@click.option("--password", default=None, help="Password for encrypted PDFs.")
@click.option(
    "--queue",
    is_flag=True,
    help="Hand the files to `docqa worker` processes (needs DOCQA_DATABASE_URL) and return at once; "
    "`docqa docs list` shows their progress.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@common_options
def ingest(
    paths: tuple[Path, ...],
    collection: str | None,
    no_embeddings: bool,
    password: str | None,
    queue: bool,
    as_json: bool,
    data_dir: Path | None,
    verbose: bool,
) -> None:
    """Index PDF, text, Markdown, Office, HTML, CSV and email files (folders are searched recursively).

    Exit status: 0 when every file read is in the index, 2 when some failed (the others are saved), 1 when none
    could be ingested."""
    if queue and password:  # the jobs would fail "password required" once a worker took them
        raise click.UsageError(
            "--password cannot go with --queue: a password is never kept in the database, so a worker could not open "
            "the files; ingest encrypted PDFs without --queue (here, where the password is given)"
        )
    settings = make_settings(data_dir, verbose)
    if queue:
        _enqueue(settings, list(paths), collection, as_json, verbose)
        return
    qa = open_docqa(settings, verbose, embedder=not no_embeddings, generator=False)
    bring_up_to_date(qa, lambda line: click.echo(line, err=True))  # documents older rules read: read again
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
        _print_report(report, no_embeddings)
    if not (report.count("added") or report.count("updated") or report.count("unchanged")):
        if not as_json and not report.files:
            click.secho(
                "nothing to ingest: no file of a type docqa reads (PDF, text, Markdown, Word, Excel, PowerPoint, "
                "HTML, CSV, email) in " + ", ".join(map(str, paths)),
                err=True,
            )
        if not as_json and report.dropped:
            click.secho(f"collection '{report.dropped}' not kept: none of its files could be read", err=True)
        sys.exit(1)
    if report.count("failed"):  # some files in, some not: a script must see it (rsync's "partial transfer")
        if not as_json:
            click.secho(
                f"{report.count('failed')} of {len(report.files)} files failed (exit status 2); the others are saved",
                fg="red",
                err=True,
            )
        sys.exit(2)


def _enqueue(settings: Settings, paths: list[Path], collection: str | None, as_json: bool, verbose: bool) -> None:
    if not settings.database_url:
        raise QueueNotConfiguredError()  # before a data home is made for nothing
    qa = open_docqa(settings, verbose, embedder=False, generator=False)
    try:
        jobs, report = qa.ingest_queue().enqueue_paths(paths, collection)
    finally:
        qa.close()
    if as_json:
        emit_json({"jobs": [job.as_dict() for job in jobs], **report.as_dict()})
    else:
        for f in report.files:
            click.secho(f"failed   {f.path}: {f.error}", fg="red", err=True)
        _print_skipped(report)  # as `docqa ingest` says them
        click.echo(f"{len(jobs)} queued for `docqa worker`; `docqa docs list` shows their progress")
    if not jobs:
        sys.exit(1)


def _print_skipped(report: IngestReport) -> None:
    if report.skipped:
        kinds = ", ".join(f"{kind} ({n})" for kind, n in report.skipped_by_type().items())
        click.secho(
            f"skipped  {len(report.skipped)} {'file' if len(report.skipped) == 1 else 'files'} of types docqa does "
            f"not read: {kinds}; it reads " + ", ".join(sorted(SUPPORTED_SUFFIXES)),
            fg="yellow",
            err=True,
        )


def _print_report(report: IngestReport, no_embeddings: bool) -> None:
    for f in report.files:
        if f.status == "failed":
            click.secho(f"failed   {f.path}: {f.error}", fg="red", err=True)
        for w in f.warnings:
            click.secho(f"warning  {f.path}: {w}", fg="yellow", err=True)
    _print_skipped(report)
    changed = [f for f in report.files if f.status in ("added", "updated")]
    pages, tokens = sum(f.pages for f in changed), sum(f.tokens for f in changed)
    d = report.as_dict()
    click.echo(
        f"{d['added']} added, {d['updated']} updated, {d['unchanged']} unchanged, "
        f"{report.count('failed')} failed; {many(d['chunks'], 'chunk')} from {many(pages, 'page')} "
        f"in {report.seconds:.1f} s"
        + (
            f" ({pages / report.seconds:.1f} pages/s, {tokens / report.seconds:,.0f} tokens/s)"
            if report.seconds > 0 and pages
            else ""
        )
    )
    if changed and not report.embeddings:  # said once, when there was something to embed
        if no_embeddings:
            click.echo("embeddings skipped (--no-embeddings): these files are found by BM25 keyword search only")
        else:
            click.echo(
                "no embeddings made: the retriever is BM25 keyword search (the default); to add embeddings, set "
                "DOCQA_RETRIEVAL_RETRIEVER=hybrid with an embedding model (DOCQA_EMBED_MODEL)"
            )


@click.group()
def docs() -> None:
    """List and delete indexed documents."""


@docs.command("list")
@click.option("--collection", "-c", default=None, help="Collection to list (default: 'default').")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option(
    "--where",
    multiple=True,
    metavar="FIELD=VALUE",
    help="Only the documents whose catalog has this value, as `docqa ask --where` selects them: --where company=3M.",
)
@common_options
def docs_list(
    collection: str | None, as_json: bool, where: tuple[str, ...], data_dir: Path | None, verbose: bool
) -> None:
    """List the documents of a collection (or those a catalog filter selects)."""
    conditions = where_pairs(where)
    settings = make_settings(data_dir, verbose)
    qa = open_docqa(settings, verbose, embedder=False, generator=False, read_only=True)
    try:
        rows = [d.as_dict() for d in qa.documents(collection, conditions)]
        active = settings.database_url and not conditions
        jobs = [job.as_dict() for job in qa.ingest_queue().active(collection)] if active else []
    finally:
        qa.close()
    if as_json:
        emit_json(rows + jobs)  # a job still running: {"job_id", "status", "progress", ...}
        return
    click.echo(f"{'ID':>5}  {'STATUS':9} {'PAGES':>5} {'CHUNKS':>6}  NAME")
    for d in rows:
        click.echo(f"{d['id']:>5}  {d['status']:9} {d['pages']:>5} {d['chunks']:>6}  {d['name']}")
        source = str(d["source"])
        shown = f"{source.removeprefix('upload:')} (uploaded)" if source.startswith("upload:") else source
        click.echo(f"       from {shown}")
        if d["catalog"]:
            click.echo(f"       {catalog_line(d['catalog'])}")
        if d["error"]:
            click.secho(f"       {d['error']}", fg="red")
        for warning in d["warnings"]:
            click.secho(f"       warning: {warning}", fg="yellow")
    for job in jobs:
        progress = job["progress"]
        pages = f"{progress['done']}/{progress['total']}" if progress["total"] else "-"
        click.echo(f"{'job ' + str(job['job_id']):>5}  {job['status']:9} {pages:>5} {'-':>6}  {job['name']}")


def catalog_line(entry: dict[str, Any]) -> str:
    """A catalog entry in one line: "10-K, fiscal 2022, Q2, period to 2022-12; 3M COMPANY (MMM); tags: a, b"."""
    what = [str(entry[k]) for k in ("form",) if entry.get(k)]
    what += [f"fiscal {entry['fiscal_year']}"] if entry.get("fiscal_year") else []
    what += [f"Q{entry['quarter']}"] if entry.get("quarter") else []
    what += [f"period to {entry['period_end']}"] if entry.get("period_end") else []
    who = str(entry.get("company") or entry.get("title") or "")
    if entry.get("tickers"):
        who += f" ({', '.join(entry['tickers'])})"
    shown = {"kind", "form", "fiscal_year", "quarter", "period_end", "company", "title", "tickers", "user_fields"}
    rest = [f"{k}: {', '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in entry.items() if k not in shown]
    return "; ".join(part for part in (", ".join(what), who, *rest) if part)


@docs.command("rm")
@click.argument("document_ids", nargs=-1, type=int, required=True)
@click.option("--collection", "-c", default=None, help="Collection (default: 'default').")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
def docs_rm(
    document_ids: tuple[int, ...], collection: str | None, as_json: bool, data_dir: Path | None, verbose: bool
) -> None:
    """Delete documents (and their chunks and vectors) by ID."""
    qa = open_docqa(make_settings(data_dir, verbose), verbose, embedder=False, generator=False, read_only=True)
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


@click.command()
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
    qa = open_docqa(make_settings(data_dir, verbose), verbose, embedder=False, generator=False, read_only=True)
    try:
        problems = [] if qa.integrity_ok() else ["SQLite integrity_check failed"]
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
