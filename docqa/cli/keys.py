"""`docqa keys create | list | revoke`: named API keys, each granted some collections (registered in
docqa.cli.main). A key is printed once, when it is made; the store keeps only its hash."""

from __future__ import annotations

from pathlib import Path

import click

from docqa.cli.options import common_options, emit_json, make_settings, open_docqa
from docqa.core.tenants import Role
from docqa.service import DocQA


@click.group("keys")
def keys() -> None:
    """API keys that are tenants: each sees only the collections it is granted (DOCQA_API_KEYS stay admin keys).

    \b
      docqa keys create legal --collections contracts,ndas      read and write two collections
      docqa keys create auditor --collections filings --read-only
      docqa keys create ops --admin                             every collection, metrics
      docqa keys list
      docqa keys revoke legal                                   refused from the next request
    """


def _open(data_dir: Path | None, verbose: bool) -> DocQA:
    return open_docqa(make_settings(data_dir, verbose), verbose, embedder=False, generator=False)


@keys.command("create")
@click.argument("name")
@click.option("--collections", "-c", default="", help="Comma-separated collections the key may read (and write).")
@click.option("--read-only", is_flag=True, help="May read and ask, not upload or delete.")
@click.option("--admin", is_flag=True, help="Every collection, present and future, and /metrics.")
@click.option("--max-generations", type=click.IntRange(min=1), default=None, help="Answers generating at once.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
def create(
    name: str,
    collections: str,
    read_only: bool,
    admin: bool,
    max_generations: int | None,
    as_json: bool,
    data_dir: Path | None,
    verbose: bool,
) -> None:
    """Make a key NAME and print it (once: keep it; the store keeps only its hash)."""
    if read_only and admin:
        raise click.UsageError("--read-only and --admin exclude each other")
    role: Role = "admin" if admin else "reader" if read_only else "writer"
    granted = [c.strip() for c in collections.split(",") if c.strip()]
    qa = _open(data_dir, verbose)
    try:
        info, secret = qa.api_keys.create(name, granted, role, max_generations)
    finally:
        qa.close()
    if as_json:
        emit_json({**info.as_dict(), "key": secret})
        return
    click.echo(secret)
    where = "every collection" if role == "admin" else ", ".join(info.collections)
    click.echo(f"key {info.name!r} ({role}: {where}); shown only now", err=True)


@keys.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
def list_(as_json: bool, data_dir: Path | None, verbose: bool) -> None:
    """The keys made, revoked ones included (never the keys themselves)."""
    qa = _open(data_dir, verbose)
    try:
        found = qa.api_keys.list()
    finally:
        qa.close()
    if as_json:
        emit_json([info.as_dict() for info in found])
        return
    for info in found:
        where = "*" if info.role == "admin" else ",".join(info.collections)
        revoked = f"  revoked {info.revoked_at[:19]}" if info.revoked_at else ""
        limit = f"  max {info.max_generations} at once" if info.max_generations else ""
        click.echo(f"{info.name}\t{info.role}\t{where}{limit}{revoked}")


@keys.command("revoke")
@click.argument("name")
@common_options
def revoke(name: str, data_dir: Path | None, verbose: bool) -> None:
    """Refuse key NAME from the next request on (its conversations stay, readable by no one but an admin's export)."""
    qa = _open(data_dir, verbose)
    try:
        info = qa.api_keys.revoke(name)
    finally:
        qa.close()
    click.echo(f"key {info.name!r} revoked")
