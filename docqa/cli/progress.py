"""Progress on a terminal: a bar for long commands (ingest, eval), a line while an ask reads its prompt."""

from __future__ import annotations

import sys
import time

import click

from docqa.core.documents import Progress
from docqa.core.events import AskEvent, ProgressEvent, ReadingEvent

BAR_WIDTH = 24


class ProgressLine:
    """A self-overwriting progress bar on a terminal; silent when stderr is not a terminal."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self._last = 0.0

    def __call__(self, p: Progress) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if p.stage == "embedding" and now - self._last < 0.2:
            return
        self._last = now
        done = p.file_index + (1 if p.stage == "done" else p.chunks_embedded / p.chunks if p.chunks else 0)
        filled = int(BAR_WIDTH * done / max(p.file_count, 1))
        bar = "█" * filled + "░" * (BAR_WIDTH - filled)
        parts = [f"{bar} {p.file_index + 1}/{p.file_count} files", p.path[:40]]
        if p.pages:
            parts.append(f"{p.pages} pages")
        if p.chunks:
            parts.append(
                f"{p.chunks_embedded or 0}/{p.chunks} chunks embedded"
                if p.stage == "embedding"
                else f"{p.chunks} chunks"
            )
        if p.tokens_per_s:
            parts.append(f"{p.tokens_per_s:,.0f} tok/s")
        click.echo("\r\033[K" + " · ".join(parts), nl=False, err=True)

    def close(self) -> None:
        if self.enabled:
            click.echo("\r\033[K", nl=False, err=True)


class ReadingLine:
    """'reading 12,480 tokens: 40%' on the terminal while a long prompt is read, erased when the answer
    starts (on a CPU that wait is the longest part of an ask); silent when stderr is not a terminal."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self._shown = False

    def show(self, event: AskEvent) -> None:
        if not self.enabled:
            return
        if isinstance(event, ProgressEvent | ReadingEvent):
            click.echo("\r\033[K" + event.line(), nl=False, err=True)
            self._shown = True
        elif self._shown:
            click.echo("\r\033[K", nl=False, err=True)
            self._shown = False
