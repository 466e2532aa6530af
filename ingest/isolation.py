"""Read files outside the docqa process, with a wall-clock and a memory limit.

A hostile PDF can make a parser loop for minutes, allocate gigabytes, or crash: PDFium is C++, and
the pypdf fallback for encrypted files sits on C extensions (zlib, cryptography). A text file is
simpler, but a 50 MiB one-line file took a server from 3.7 to 6.2 GB while it was decoded and split.
Each file is read in a child forked by a worker process (ingest.pdf_worker), so any of those fails
that one file with a clear error, and the server or the rest of the folder goes on.
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import subprocess
import sys
import threading
from pathlib import Path

from docqa.core.errors import ReadError
from docqa.core.files import SUPPORTED_SUFFIXES
from docqa.core.settings import IngestSettings
from docqa.core.types import ParsedDocument
from ingest.ocr import OcrOptions
from ingest.pdf_worker import read_frame, reply_bytes, write_frame
from ingest.readers import read_document

DEFAULT_MAX_CHARS = IngestSettings().max_document_chars
# The worker enforces the per-PDF limit itself; this slack only covers a worker that stops answering.
_WORKER_SLACK_S = 30.0


class _Worker:
    def __init__(self) -> None:
        project_root = str(Path(__file__).resolve().parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (project_root, env.get("PYTHONPATH")) if p)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "ingest.pdf_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def parse(
        self, path: Path, password: str | None, timeout_s: float, memory_mb: int, ocr: OcrOptions, max_chars: int
    ) -> tuple[str, object]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        try:
            write_frame(self._proc.stdin, pickle.dumps((str(path), password, timeout_s, memory_mb, ocr, max_chars)))
        except OSError:
            self.close()
            return ("error", "PDF parser worker is not running")
        ready = select.select([self._proc.stdout], [], [], timeout_s + _WORKER_SLACK_S)[0]
        reply = read_frame(self._proc.stdout, reply_bytes(max_chars)) if ready else None
        if reply is None:
            self.close()
            return ("error", "PDF parser worker stopped answering" if not ready else "PDF parser worker died")
        result: tuple[str, object] = pickle.loads(reply)
        return result

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream is not None:
                stream.close()


class _WorkerPool:
    """Idle workers are reused; concurrent ingests each get their own."""

    def __init__(self) -> None:
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()

    def parse(
        self, path: Path, password: str | None, timeout_s: float, memory_mb: int, ocr: OcrOptions, max_chars: int
    ) -> tuple[str, object]:
        with self._lock:
            worker = self._idle.pop() if self._idle else None
        if worker is None:
            worker = _Worker()
        result = worker.parse(path, password, timeout_s, memory_mb, ocr, max_chars)
        if worker.alive:
            with self._lock:
                self._idle.append(worker)
        return result

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.close()


_pool = _WorkerPool()
atexit.register(_pool.close)


def read_pdf_isolated(
    path: Path,
    password: str | None,
    timeout_s: float,
    memory_mb: int,
    ocr: OcrOptions | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> ParsedDocument:
    """ingest.readers.read_pdf (read_text for a text file) in a child process; every way the child can fail
    becomes a ReadError, and so does a text past max_chars, refused in the child."""
    kind, value = _pool.parse(path.resolve(), password, timeout_s, memory_mb, ocr or OcrOptions("off"), max_chars)
    if kind != "ok":
        raise ReadError(str(value))
    assert isinstance(value, ParsedDocument)
    return value


def read_document_safely(path: Path, password: str | None, limits: IngestSettings) -> ParsedDocument:
    """A PDF or text file read in the child process (DOCQA_INGEST_ISOLATE_PDF), under the same limits."""
    ocr = OcrOptions(limits.ocr, limits.ocr_languages)
    if limits.isolate_pdf and path.suffix.lower() in SUPPORTED_SUFFIXES:
        return read_pdf_isolated(
            path, password, limits.pdf_timeout_s, limits.pdf_memory_mb, ocr, limits.max_document_chars
        )
    return read_document(path, password, ocr)
