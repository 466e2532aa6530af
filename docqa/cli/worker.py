"""`docqa worker`: run queued ingest jobs (registered in docqa.cli.main)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from docqa.cli.options import common_options, make_settings, open_docqa
from docqa.core.errors import QueueNotConfiguredError


def _say_each_job() -> None:
    """One line on stderr per job the worker ends ("ingest job 7 (a.pdf): added, 12 pages"), without -v."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    jobs = logging.getLogger("docqa.service.jobs")
    jobs.addHandler(handler)
    jobs.setLevel(min(jobs.getEffectiveLevel(), logging.INFO))
    jobs.propagate = False  # the root's handler (make_settings) printed each line a second time


@click.command()
@click.option(
    "--concurrency",
    "-j",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Jobs run at once by this process (files of one collection are still written one at a time).",
)
@common_options
def worker(concurrency: int, data_dir: Path | None, verbose: bool) -> None:
    """Ingest the files queued by uploads and `docqa ingest --queue` (needs DOCQA_DATABASE_URL), until
    Ctrl+C or SIGTERM. Run as many as you like, on any machine that reaches the database."""
    settings = make_settings(data_dir, verbose)
    if not settings.database_url:
        raise QueueNotConfiguredError()
    qa = open_docqa(settings, verbose, embedder=True, generator=False)
    _say_each_job()
    try:
        click.echo(f"docqa worker: {concurrency} job(s) at a time from {qa.store.location}", err=True)
        qa.ingest_queue().run_worker(concurrency, settings.ingest.worker_stalled_s)
    finally:
        qa.close()
