"""`docqa serve` (the web page, REST and OpenAI API) and `docqa completion`."""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
from pathlib import Path

import click

from docqa.cli.options import common_options, make_settings
from docqa.core.settings import Settings


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option(
    "--generator-only",
    is_flag=True,
    help="A generation node: load the models only (no data home) and serve /v1/completions, /v1/embeddings "
    "and /v1/tokenize to other docqa processes (their DOCQA_LLM_ENDPOINT / DOCQA_EMBED_ENDPOINT).",
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="API processes on the one port, each with its own models (needs DOCQA_DATABASE_URL: they share the "
    "database; on a GPU, point them at one generation node with DOCQA_LLM_ENDPOINT).",
)
@common_options
def serve(host: str, port: int, generator_only: bool, workers: int, data_dir: Path | None, verbose: bool) -> None:
    """Serve the REST API (models load in the background; /health says when ready)."""
    # Imported here: FastAPI and uvicorn load only for the one command that serves.
    from docqa.api.server import serve as serve_app
    from docqa.api.server import serve_processes
    from docqa.api.state import AppState

    settings = make_settings(data_dir, verbose)
    if workers > 1 and not settings.database_url and not generator_only:
        raise click.UsageError(
            "--workers needs DOCQA_DATABASE_URL: API processes share a Postgres database, not one SQLite file"
        )
    shown = f"[{host}]" if ":" in host else host
    if (taken := port_taken(host, port)) is not None:  # before a model loads for nothing
        raise click.ClickException(
            f"cannot serve on {shown}:{port}: {taken}; pass another --port, or stop what holds it"
        )
    home = "generator only: no data home" if generator_only else f"data: {settings.data_dir.resolve()}"
    click.echo(f"docqa serving on http://{shown}:{port}  ({home})")
    click.echo("models load in the background: GET /health says when they are ready; Ctrl+C stops")
    if (warning := open_bind_warning(host, settings.api.keys, generator_only)) is not None:
        click.secho(warning, fg="red", err=True)
    log_level = "info" if verbose else "warning"
    if workers > 1:
        if generator_only:
            raise click.UsageError("--workers with --generator-only: run one node per GPU instead")
        os.environ["DOCQA_DATA_DIR"] = str(settings.data_dir)  # what each API process reads its settings from
        threads = _share_cores(settings, workers)
        click.echo(
            f"{workers} API processes, {threads} CPU thread{'s' if threads != 1 else ''} each for llama.cpp; "
            "/metrics sums them, /health "
            "answers for the one it reaches"
        )
        serve_processes(workers, host, port, log_level)
        return
    serve_app(AppState(settings, generator_only=generator_only), host, port, log_level)


def _share_cores(settings: Settings, workers: int) -> int:
    """Each API process gets its share of the cores for llama.cpp, where no thread count is set: N processes
    each using every core spin against each other (2 processes on 2 cores: 0.59 asks/s against 2.31 for one)."""
    share = max(1, (os.cpu_count() or 1) // workers)
    for variable, value in (
        ("DOCQA_LLM_N_THREADS", settings.llm.n_threads),
        ("DOCQA_EMBED_N_THREADS", settings.embed.n_threads),
        ("DOCQA_RERANK_N_THREADS", settings.rerank.n_threads),
    ):
        if value is None:
            os.environ[variable] = str(share)
    return settings.llm.n_threads or share


@click.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script: eval "$(docqa completion bash)"."""
    from click.shell_completion import get_completion_class

    completer = get_completion_class(shell)
    assert completer is not None
    ctx = click.get_current_context()
    click.echo(completer(ctx.find_root().command, {}, "docqa", "_DOCQA_COMPLETE").source())
    ctx.exit(0)


def port_taken(host: str, port: int) -> str | None:
    """Why the address cannot be listened on (another server holds it, a host not of this machine), or None."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        return f"no such host ({exc.strerror})"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: a closing socket is no bar
        try:
            probe.bind(address)
        except OSError as exc:
            return "the address is already in use" if exc.errno == errno.EADDRINUSE else str(exc.strerror or exc)
    return None


def open_bind_warning(host: str, keys: str, generator_only: bool) -> str | None:
    """What to say when the server listens beyond this machine without API keys: anyone who reaches it
    may ask, upload and delete (a node: generate, tokenize and embed)."""
    try:
        loopback = ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if loopback or keys.strip():
        return None
    what = "generate, tokenize and embed" if generator_only else "ask, upload and delete documents"
    return (
        f"WARNING: listening on {host} without API keys: anyone who reaches this port may {what}. "
        "Set DOCQA_API_KEYS or make keys with `docqa keys create` (then this does not apply), or listen on "
        "127.0.0.1 behind a proxy that authenticates."
    )
