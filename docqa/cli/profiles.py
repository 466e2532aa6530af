"""`docqa profiles`: the document profiles installed and which are on (registered in docqa.cli.main)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from docqa.cli.options import common_options, emit_json, make_settings
from docqa.service.profiles import profile_listing


@click.command("profiles")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
def profiles(as_json: bool, data_dir: Path | None, verbose: bool) -> None:
    """The document profiles installed: what each knows, and whether DOCQA_RETRIEVAL_PROFILES switches it on.

    \b
      docqa profiles
      DOCQA_RETRIEVAL_PROFILES=none docqa ask "..."         the generic core alone
      DOCQA_RETRIEVAL_PROFILES=contracts docqa ask "..."    contracts' knowledge, no filings'
    """
    listed = profile_listing(make_settings(data_dir, verbose))
    if as_json:
        emit_json([dataclasses.asdict(p) for p in listed])
        return
    width = max(len(p.name) for p in listed)
    for p in listed:
        click.echo(f"{'on ' if p.on else 'off'}  {p.name:<{width}}  v{p.version}  {p.description}")
