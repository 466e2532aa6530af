"""`docqa reindex`: derived data (headings, catalog entries) read again where older rules read it (registered in
docqa.cli.main)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from docqa.cli.options import common_options, emit_json, make_settings, open_docqa
from docqa.service.reindexing import reindex as reindex_documents


@click.command("reindex")
@click.option("--collection", "-c", default=None, help="Only this collection (default: every collection).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
def reindex(collection: str | None, as_json: bool, data_dir: Path | None, verbose: bool) -> None:
    """Read again what docqa's rules derive from stored documents (their headings in the keyword index, their
    catalog entries) where an older docqa or other document profiles read it. Nothing is read from the files:
    the stored text is. Stopped halfway, run it again: it goes on where it stopped. `docqa serve` and
    `docqa ingest` run it themselves when a document is stale."""
    qa = open_docqa(make_settings(data_dir, verbose), verbose, embedder=False, generator=False)
    try:

        def show(done: int, total: int) -> None:
            if not as_json:
                click.echo(f"\r\033[Kreindexed {done}/{total} documents", nl=False, err=True)

        report = reindex_documents(qa, collection, show)
    finally:
        qa.close()
    if as_json:
        emit_json(dataclasses.asdict(report))
        return
    if report.stale:
        click.echo("", err=True)
    click.echo(f"{report.done} of {report.stale} stale documents read again in {report.seconds:.1f} s ({report.rules})")
