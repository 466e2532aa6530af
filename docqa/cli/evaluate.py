"""`docqa eval QA.jsonl --docs DIR ...` (registered in docqa.cli.main)."""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from docqa.cli.options import common_options, emit_json, make_settings, open_docqa
from docqa.cli.progress import ProgressLine


def _ks(value: str) -> tuple[int, ...]:
    try:
        ks = tuple(sorted({int(k) for k in value.split(",") if k.strip()}))
    except ValueError:
        raise click.BadParameter("use comma-separated integers, like 1,3,5") from None
    if not ks or ks[0] < 1:
        raise click.BadParameter("use comma-separated integers >= 1, like 1,3,5")
    return ks


@click.command("eval")
@click.argument("qa_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--docs",
    "docs_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Folder the rows' document paths are relative to (default: the QA file's folder).",
)
@click.option("--collection", "-c", default=None, help="Collection to build or reuse (default: eval-<set>-<field>).")
@click.option(
    "--retriever", type=click.Choice(["auto", "bm25", "dense", "hybrid"]), default=None, help="Default: settings."
)
@click.option("--k", "ks", default="1,3,5", show_default=True, help="Cut-offs for recall@k.")
@click.option(
    "--scope",
    type=click.Choice(["corpus", "document"]),
    default="corpus",
    show_default=True,
    help="Search the whole collection, or only the row's own document.",
)
@click.option("--doc-field", type=click.Choice(["doc", "doc_pdf"]), default="doc", show_default=True)
@click.option("--extra", multiple=True, type=click.Path(exists=True, path_type=Path), help="Distractor files/folders.")
@click.option("--no-embeddings", is_flag=True, help="BM25 only: ingest without dense embeddings (fast on a CPU).")
@click.option("--answers", is_flag=True, help="Also generate answers: token F1, and declines on impossible rows.")
@click.option("--limit", type=click.IntRange(1), default=None, help="Score only the first N answerable rows.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--details",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Write every scored question's rank and retrieved chunks to this file (JSON Lines), to read the misses.",
)
@common_options
def eval_(
    qa_file: Path,
    docs_dir: Path | None,
    collection: str | None,
    retriever: str | None,
    ks: str,
    scope: str,
    doc_field: str,
    extra: tuple[Path, ...],
    no_embeddings: bool,
    answers: bool,
    limit: int | None,
    as_json: bool,
    details: Path | None,
    data_dir: Path | None,
    verbose: bool,
) -> None:
    """Measure retrieval on a QA set: recall@k, MRR, recall@3 per category, latency."""
    # Imported here to keep start-up light: the other commands need not load the whole service stack.
    from docqa.eval.evaluation import EvalOptions, document_ids_for, evaluate, load_rows

    cutoffs = _ks(ks)
    settings = make_settings(data_dir, verbose)
    docs_dir = docs_dir or qa_file.parent
    rows = load_rows(qa_file, doc_field)
    name = collection or re.sub(r"[^A-Za-z0-9_.-]", "-", f"eval-{docs_dir.resolve().name}-{doc_field}")[:64]
    if no_embeddings:
        name = f"{name[:59]}-bm25"
    if retriever:  # asked for by name: dense and hybrid load the embedder whatever it is
        settings.retrieval = settings.retrieval.model_copy(update={"retriever": retriever})
    qa = open_docqa(settings, verbose, embedder=not no_embeddings, generator=answers)
    try:
        files = sorted({docs_dir / r.doc for r in rows if r.doc})
        progress = ProgressLine()
        try:
            report = qa.ingest([*files, *extra], name, progress=progress)
        finally:
            progress.close()
        for f in report.files:
            if f.status == "failed":
                click.secho(f"failed   {f.path}: {f.error}", fg="red", err=True)
        with contextlib.ExitStack() as stack:
            write_details: Callable[[dict[str, Any]], None] | None = None
            if details is not None:
                details_file = stack.enter_context(details.open("w", encoding="utf-8"))

                def write_details(row: dict[str, Any]) -> None:
                    details_file.write(json.dumps(row, ensure_ascii=False) + "\n")

            options = EvalOptions(
                retriever="bm25" if no_embeddings else qa.retriever_kind,
                ks=cutoffs,
                scope=scope,  # type: ignore[arg-type]
                answers=answers,
                limit=limit,
                details=write_details,
            )
            result = evaluate(qa, rows, document_ids_for(qa, name, docs_dir, rows), name, options)
        result["collection"] = name
        result["ingest"] = {
            k: v for k, v in report.as_dict().items() if k in ("added", "updated", "unchanged", "seconds")
        }
    finally:
        qa.close()
    if as_json:
        emit_json(result)
        return
    click.echo(f"{result['questions']} answerable questions, {result['retriever']}, scope {result['scope']}")
    click.echo("  ".join(f"recall@{k} {result[f'recall@{k}']:.3f}" for k in cutoffs) + f"  MRR {result['mrr']:.3f}")
    click.echo(f"retrieval p50 {result['retrieval_ms_p50']} ms, p95 {result['retrieval_ms_p95']} ms")
    if "by_page" in result:
        click.echo("counting page hits too: " + "  ".join(f"{k} {v:.3f}" for k, v in result["by_page"].items()))
    width = max((len(c) for c in result["by_category"]), default=10)
    for category, figures in result["by_category"].items():
        click.echo(f"  {category:{width}}  {figures['questions']:5d}  recall@3 {figures['recall@3']:.3f}")
    if "answers" in result:
        click.echo(answers_line(result["answers"]))
    sys.stdout.flush()


def answers_line(quality: dict[str, Any]) -> str:
    """`--answers`'s figures as a person reads them (the JSON keeps the dict)."""

    def share(value: float | None) -> str:
        return "-" if value is None else f"{value:.1%}"

    f1 = "-" if quality.get("f1") is None else f"{quality['f1']:.3f}"
    return (
        f"answers: token F1 {f1} over {quality['answered']} answerable questions, declined "
        f"{share(quality['declined_when_answerable'])} of them; declined {share(quality['declined_when_impossible'])} "
        f"of {quality['impossible']} questions the documents do not answer"
    )
