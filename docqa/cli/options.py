"""What every `docqa` command shares: the options, settings, the error mapping and JSON output.

Domain errors become one-line messages (exit code 1) in one place: `DocqaGroup.invoke`.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from docqa.core.errors import (
    CHOOSE_DATA_HOME,
    BusyError,
    CollectionNotFoundError,
    DataHomeNotFoundError,
    DocqaError,
)
from docqa.core.settings import Settings

if TYPE_CHECKING:
    from docqa.service import DocQA

F = TypeVar("F", bound=Callable[..., Any])
_DATA_HOME = "docqa.data_home"


class DocqaGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BusyError as exc:
            raise click.ClickException(f"busy: {exc}") from None
        except CollectionNotFoundError as exc:  # which data home was searched, and how to choose another
            home = ctx.meta.get(_DATA_HOME, "?")
            raise click.ClickException(f"{exc}; data home in use: {home} ({CHOOSE_DATA_HOME})") from None
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
    settings = Settings.load(**overrides)
    ctx = click.get_current_context(silent=True)
    if ctx is not None:  # for the error messages that name the data home (DocqaGroup.invoke)
        ctx.meta[_DATA_HOME] = settings.data_dir.resolve()
    return settings


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


def open_docqa(settings: Settings, verbose: bool, *, embedder: bool, generator: bool, read_only: bool = False) -> DocQA:
    """read_only: a command that only reads (ask, docs, check) never creates a data home: where there is
    none, it says so before loading any model."""
    if read_only and settings.database_url is None and not settings.database_path.is_file():
        raise DataHomeNotFoundError(str(settings.data_dir.resolve()))
    # Imported here to keep start-up light: `docqa --help` and `docqa completion` load no model backend.
    from docqa.service import DocQA

    with quiet_native_logs(verbose):
        return DocQA.open(settings, embedder=embedder, generator=generator)


def many(n: object, noun: str) -> str:
    """'1 chunk', '35 chunks'."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def emit_json(data: object) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))
