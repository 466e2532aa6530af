"""`docqa collections list | rm | profiles`: the collections of the data home, deleting one with all it holds,
and the document profiles each reads its questions with."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from docqa.cli.options import common_options, emit_json, make_settings, many, open_docqa
from docqa.core.errors import CollectionNotFoundError
from docqa.service.profiles import choose_profiles, collection_profiles


@click.group()
def collections() -> None:
    """List collections, or delete one with its documents."""


@collections.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
def collections_list(as_json: bool, data_dir: Path | None, verbose: bool) -> None:
    """The collections with their documents and chunks."""
    qa = open_docqa(make_settings(data_dir, verbose), verbose, embedder=False, generator=False, read_only=True)
    try:
        found = [{"name": c.name, "documents": c.ready, "chunks": c.chunks} for c in qa.collections()]
    finally:
        qa.close()
    if as_json:
        emit_json(found)
        return
    click.echo(f"{'DOCUMENTS':>9} {'CHUNKS':>7}  NAME")
    for c in found:
        click.echo(f"{c['documents']:>9} {c['chunks']:>7}  {c['name']}")


@collections.command("rm")
@click.argument("name")
@click.option("--yes", "-y", is_flag=True, help="Do not ask before deleting.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
def collections_rm(name: str, yes: bool, as_json: bool, data_dir: Path | None, verbose: bool) -> None:
    """Delete a collection: its documents (chunks, vectors, kept uploads), conversations and cached answers."""
    qa = open_docqa(make_settings(data_dir, verbose), verbose, embedder=False, generator=False, read_only=True)
    try:
        row = next((c for c in qa.collections() if c.name == name), None)
        if row is None:
            raise CollectionNotFoundError(name)
        if not yes:
            click.confirm(f"delete collection '{name}' and its {many(row.ready, 'document')}?", abort=True)
        deleted = qa.delete_collection(name)
    finally:
        qa.close()
    if as_json:
        emit_json({"collection": name, "documents_deleted": deleted})
    else:
        click.echo(f"deleted collection '{name}' ({many(deleted, 'document')})")


@collections.command("profiles")
@click.argument("name")
@click.argument("choice", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
def collections_profiles(name: str, choice: str | None, as_json: bool, data_dir: Path | None, verbose: bool) -> None:
    """Show or choose the document profiles a collection's questions are read with (docs/profiles.md).

    \b
      docqa collections profiles contracts                  which are on, and what the collection chose
      docqa collections profiles contracts contracts        only the contracts profile for this collection
      docqa collections profiles filings sec,csrc
      docqa collections profiles notes none                 the generic core alone
      docqa collections profiles contracts auto             the deployment's (DOCQA_RETRIEVAL_PROFILES)
    """
    qa = open_docqa(make_settings(data_dir, verbose), verbose, embedder=False, generator=False, read_only=True)
    try:
        found = collection_profiles(qa, name) if choice is None else choose_profiles(qa, name, choice)
    finally:
        qa.close()
    if as_json:
        emit_json(dataclasses.asdict(found))
        return
    chosen = found.chosen or "auto (the deployment's)"
    click.echo(f"{found.collection}: {', '.join(found.on) or 'none'} on; chosen: {chosen}")
