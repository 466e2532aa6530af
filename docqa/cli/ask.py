"""`docqa ask`: one question, its answer streamed to the terminal with its sources."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from docqa.answering.citing import format_pages
from docqa.answering.scope_choice import may_read_many
from docqa.cli.options import common_options, emit_json, make_settings, open_docqa
from docqa.cli.progress import ReadingLine
from docqa.core.catalog_fields import where_pairs
from docqa.core.events import AnswerDelta, CitationsEvent, DoneEvent, ErrorEvent, ReasoningDelta
from docqa.core.requests import AskRequest
from docqa.core.scopes import ASKED_SCOPES
from docqa.core.types import Citation


@click.command()
@click.argument("question")
@click.option("--collection", "-c", default=None, help="Collection to ask (default: 'default').")
@click.option("--think/--no-think", default=False, help="Let Qwen3 reason before answering (default: off).")
@click.option("--top-k", type=click.IntRange(1, 50), default=None, help="Chunks to put in the prompt (default 3).")
@click.option("--max-tokens", type=click.IntRange(1, 32768), default=None, help="Cap on generated tokens.")
@click.option("--document", "document_id", type=int, default=None, help="Only search this document ID.")
@click.option(
    "--where",
    multiple=True,
    metavar="FIELD=VALUE",
    help="Only documents whose catalog has this value (docqa docs shows it): --where company=3M --where year=2022.",
)
@click.option(
    "--scope",
    type=click.Choice(ASKED_SCOPES),
    default="auto",
    show_default=True,
    help="lookup: the best passages; document: one whole document (summaries); compare: named documents side "
    "by side; collection: every document, a table of findings. auto chooses from the question.",
)
@click.option(
    "--compare",
    "document_ids",
    type=int,
    multiple=True,
    metavar="ID",
    help="A document to compare (repeat it: --compare 3 --compare 7), where the question does not name them.",
)
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
    where: tuple[str, ...],
    scope: str,
    document_ids: tuple[int, ...],
    seed: int | None,
    temperature: float | None,
    no_cache: bool,
    as_json: bool,
    data_dir: Path | None,
    verbose: bool,
) -> None:
    """Answer a question from the indexed documents, with citations."""
    conditions = where_pairs(where)  # a malformed filter is said before any model loads
    settings = make_settings(data_dir, verbose)
    # One question per process: KV cells for one sequence, not for the server's parallel requests and
    # cached prompts (with the defaults 10 times as many: 25 GiB for Qwen3-14B, 3 GB for the demo model).
    # A question over many documents keeps the configured sequences: its documents are read side by side.
    many = scope in ("collection", "compare") or (scope == "auto" and may_read_many(question))
    one_request = settings.llm.model_copy(update={"n_parallel": settings.llm.n_parallel if many else 1})
    settings = settings.model_copy(update={"llm": one_request.model_copy(update={"prefix_cache_slots": 0})})
    qa = open_docqa(settings, verbose, embedder=True, generator=True, read_only=True)
    request = AskRequest(
        question,
        collection,
        think,
        top_k,
        max_tokens,
        document_id,
        seed,
        temperature,
        use_cache=not no_cache,
        where=conditions,
        scope=scope,
        document_ids=document_ids,
    )
    try:
        if as_json:
            emit_json(qa.ask(request).as_dict())
            return
        citations: list[Citation] = []
        ending: DoneEvent | None = None
        channel = None
        reading = ReadingLine()
        for event in qa.stream(request):
            reading.show(event)
            if isinstance(event, CitationsEvent | DoneEvent):  # done carries them refined by the answer
                citations = event.citations
                ending = event if isinstance(event, DoneEvent) else ending
                for warning in event.warnings if isinstance(event, CitationsEvent) else ():
                    click.secho(f"warning: {warning}", fg="yellow", err=True)
                if isinstance(event, CitationsEvent) and event.scope != "lookup":
                    click.secho(f"({event.scope} question: {_reading_what(event)})", dim=True, err=True)
            elif isinstance(event, ReasoningDelta | AnswerDelta):
                if channel == "reasoning" and event.kind == "answer":
                    click.echo("\n", nl=False)
                channel = event.kind
                click.secho(event.text, nl=False, dim=event.kind == "reasoning")
            elif isinstance(event, ErrorEvent):
                raise click.ClickException(event.message)
        click.echo("\n")
        if ending is not None and (note := ending_note(ending)):
            click.secho(note, fg="yellow")
        if citations:
            click.echo("Sources:")
            for c in _shown(citations):
                click.echo(f"  [{c.number}] {c.document}, {format_pages(c.as_dict())} (document {c.document_id})")
    except KeyboardInterrupt:
        # Out at once: closing would wait for llama.cpp's current pass over the prompt (12 s on 2 cores),
        # and an ask has nothing to save (its answer is cached only when finished; SQLite survives this).
        click.echo("\ninterrupted", err=True)
        sys.stdout.flush()
        os._exit(130)
    finally:
        qa.close()


def _reading_what(event: CitationsEvent) -> str:
    documents = len({c.document_id for c in event.citations})
    return (
        f"reading {documents} document(s) with passages that match" if event.scope != "document" else "reading it whole"
    )


def _shown(citations: list[Citation]) -> list[Citation]:
    """The sources to list: all of a lookup's; of a reading of many documents, the ones its answer cites."""
    cited = [c for c in citations if c.cited]
    return cited if len(citations) > 10 and cited else citations


_ENDINGS = {
    "length": "(cut: the answer reached its token limit; --max-tokens N allows more)",
    "repetition": "(stopped: the model began repeating itself)",
}


def ending_note(done: DoneEvent) -> str | None:
    """One line on why the answer ended, where a reader could not tell from the text: a replay from the
    answer cache, a cut at the token limit, a stop at a repetition."""
    notes = [_ENDINGS[done.finish_reason]] if done.finish_reason in _ENDINGS else []
    if done.cached:
        notes.append("(from the answer cache: asked before; --no-cache asks again)")
    return " ".join(notes) or None
