"""The `docqa` command: a thin click layer over the DocQA library.

Domain errors become one-line messages (exit code 1) in one place: `DocqaGroup.invoke`.
"""

from __future__ import annotations

import contextlib

# llama.cpp first: on a CUDA machine, loading its libraries after numpy/pydantic's crashed the first
# model load of the process (seen on the H200 device; importing llama_cpp first avoided it).
with contextlib.suppress(ImportError):  # a missing llama_cpp is reported when a model is loaded
    import llama_cpp  # noqa: F401

import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from docqa.errors import BusyError, DocqaError
from docqa.settings import Settings

F = TypeVar("F", bound=Callable[..., Any])


class DocqaGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BusyError as exc:
            raise click.ClickException(f"busy: {exc}") from None
        except DocqaError as exc:
            raise click.ClickException(str(exc)) from None
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)


def common_options(func: F) -> F:
    func = click.option(
        "--data-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Data home (default: DOCQA_DATA_DIR or ./indexes).",
    )(func)
    func = click.option("--verbose", "-v", is_flag=True, help="Log what docqa does to stderr.")(func)
    return func


def make_settings(data_dir: Path | None, verbose: bool) -> Settings:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    overrides: dict[str, Any] = {}
    if data_dir is not None:
        overrides["data_dir"] = data_dir
    return Settings(**overrides)


@contextmanager
def quiet_native_logs(verbose: bool) -> Iterator[None]:
    """llama.cpp writes model-loading chatter straight to fd 2; hide it unless --verbose."""
    if verbose:
        yield
        return
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        sys.stderr.flush()
        os.dup2(devnull, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def open_docqa(settings: Settings, verbose: bool, *, embedder: bool, generator: bool) -> Any:
    from docqa.service import DocQA

    with quiet_native_logs(verbose):
        return DocQA.open(settings, embedder=embedder, generator=generator)


def emit_json(data: object) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


@click.group(cls=DocqaGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(package_name="docqa")
def main() -> None:
    """docqa: ask questions about long documents and get answers with page citations.

    \b
    Typical use:
      docqa ingest ./contracts                 index PDFs, text and Markdown
      docqa ask "What is the notice period?"   answer with page citations
      docqa ask --think "..."                  let Qwen3 reason first
      docqa serve                              web page, REST and OpenAI API on :8000
      docqa models pull qwen3-14b              download a model (then DOCQA_LLM_MODEL=qwen3-14b)

    \b
    Settings come from DOCQA_* environment variables or docqa.toml (see README).
    Shell completion: eval "$(docqa completion bash)"   (or zsh, fish)
    """


# Subcommands live in docqa.commands; importing them registers them on `main`.
from docqa import commands, eval_command, model_commands  # noqa: E402,F401
