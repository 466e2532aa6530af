"""`docqa feedback export`: the answers people rated in the web page or through the API, as JSON Lines,
to read what went wrong or to keep as an evaluation set of real questions."""

from __future__ import annotations

import json
from pathlib import Path

import click

from docqa.cli.options import common_options, make_settings, open_docqa


@click.group()
def feedback() -> None:
    """Feedback given on answers (Good / Bad in the web page, or the API's feedback route)."""


@feedback.command("export")
@click.option("--collection", "-c", default=None, help="Collection (default: 'default').")
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None, help="File (default: stdout)."
)
@common_options
def export(collection: str | None, output: Path | None, data_dir: Path | None, verbose: bool) -> None:
    """Every rated answer of a collection, one JSON object a line: question, answer, rating (1 or -1), note,
    citations (document, pages, quote), conversation and message IDs. Every API key's conversations."""
    settings = make_settings(data_dir, verbose)
    qa = open_docqa(settings, verbose, embedder=False, generator=False, read_only=True)
    try:
        rows = qa.conversations.rated(collection)
    finally:
        qa.close()
    lines = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    if output is None:
        click.echo(lines, nl=False)
    else:
        output.write_text(lines, encoding="utf-8")
        click.echo(f"{len(rows)} rated answer{'s' if len(rows) != 1 else ''} written to {output}", err=True)
