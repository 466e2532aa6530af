"""`docqa models list` and `docqa models pull NAME` (registered in docqa.cli.main)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from docqa.cli.options import common_options, emit_json, make_settings
from docqa.llama.hub import KNOWN_MODELS, known_path, pull


@click.group()
def models() -> None:
    """Show the configured models, and download known ones from Hugging Face."""


DEMO_NOTE = "offline demo model (Gemma 3 270M)"


def _configured(value: Path | None, models_dir: Path, unset: str = DEMO_NOTE) -> dict[str, Any]:
    if value is None:
        return {"setting": None, "path": None, "present": True, "note": unset}
    path = known_path(str(value), models_dir) or value.expanduser()
    return {"setting": str(value), "path": str(path), "present": path.is_file()}


@models.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
def list_models(as_json: bool, data_dir: Path | None, verbose: bool) -> None:
    """What is configured (DOCQA_LLM_MODEL, DOCQA_EMBED_MODEL, DOCQA_RERANK_MODEL) and which known models
    are downloaded."""
    settings = make_settings(data_dir, verbose)
    folder = settings.models_path
    report: dict[str, Any] = {
        "generator": _configured(settings.llm.model, folder),
        "embedding": _configured(settings.embed.model, folder),
        "reranker": _configured(settings.rerank.model, folder, "none (no reranking)"),
        "models_dir": str(folder),
        "known": [
            {
                "name": m.name,
                "role": m.role,
                "file": m.filename,
                "repo": m.repo,
                "present": (folder / m.filename).is_file(),
                "about": m.about,
            }
            for m in KNOWN_MODELS.values()
        ],
    }
    if as_json:
        emit_json(report)
        return
    for role in ("generator", "embedding", "reranker"):
        entry = report[role]
        shown = entry.get("note") or f"{entry['setting']} -> {entry['path']}"
        status = "" if entry["present"] else click.style("  (missing)", fg="red")
        click.echo(f"{role:10} {shown}{status}")
    click.echo(f"\nknown models (pulled into {folder}):")
    for m in report["known"]:
        mark = click.style("present", fg="green") if m["present"] else "not pulled"
        click.echo(f"  {m['name']:22} {m['role']:10} {mark:>10}  {m['about']}")


@models.command("pull")
@click.argument("name", type=click.Choice(list(KNOWN_MODELS)))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
def pull_model(name: str, as_json: bool, data_dir: Path | None, verbose: bool) -> None:
    """Download a known model (with progress) and check its SHA-256."""
    settings = make_settings(data_dir, verbose)
    path = pull(name, settings.models_path)
    variable = "DOCQA_LLM_MODEL" if KNOWN_MODELS[name].role == "generator" else "DOCQA_EMBED_MODEL"
    if as_json:
        emit_json({"name": name, "path": str(path), "sha256_verified": True, "setting": f"{variable}={name}"})
    else:
        click.echo(f"{path} (sha256 verified)\nuse it with: export {variable}={name}")
