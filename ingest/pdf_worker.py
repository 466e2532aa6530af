"""The PDF parsing worker: `python -m ingest.pdf_worker`, driven by ingest.isolation over stdin/stdout.

It is a small, single-threaded process with PDFium loaded, so forking it per PDF is cheap and safe
(forking the docqa server itself would copy model weights, CUDA state and threads). Each PDF is
parsed in a fresh child with an address-space limit; the worker kills a child that runs past its
wall-clock limit and reports a child that dies. Frames are an 8-byte length and a pickle, exchanged
only with the docqa process that started this worker.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import resource
import select
import signal
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

from docqa.core.errors import ReadError
from docqa.core.files import EMAIL_SUFFIXES, HTML_SUFFIXES, PACKAGE_KINDS, PDF_SUFFIXES, RTF_SUFFIXES
from docqa.core.process_folders import clear_stale
from ingest.bounds import BYTES_PER_CHAR, text_size, too_much_text
from ingest.formats.eml_reader import ATTACHMENT_PREFIX
from ingest.ocr import TIME_SHARE, OcrOptions
from ingest.readers import read_document, read_pdf

_FRAME = struct.Struct(">Q")


def reply_bytes(max_chars: int) -> int:
    """The most bytes a reply of a text within max_chars can take: 4 UTF-8 bytes a character, with room for
    its pages' numbers and warnings."""
    return BYTES_PER_CHAR * max_chars + (1 << 20)


def read_frame(stream: IO[bytes], max_bytes: int | None = None) -> bytes | None:
    """A frame's payload; None where the stream ends first, or the frame says it is longer than max_bytes."""
    header = stream.read(_FRAME.size)
    if len(header) < _FRAME.size:
        return None
    (length,) = _FRAME.unpack(header)
    if max_bytes is not None and length > max_bytes:
        return None
    payload = stream.read(length)
    return payload if len(payload) == length else None


def write_frame(stream: IO[bytes], payload: bytes) -> None:
    stream.write(_FRAME.pack(len(payload)) + payload)
    stream.flush()


def crash_message(wait_status: int) -> str:
    if os.WIFSIGNALED(wait_status):
        number = os.WTERMSIG(wait_status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"PDF parser crashed ({name})"
    return f"PDF parser exited unexpectedly (exit code {os.waitstatus_to_exitcode(wait_status)})"


# A C++ parser that cannot allocate aborts (SIGABRT) instead of raising MemoryError. Such a child dies
# with its memory near the limit: PDFium on a text bomb peaked at 95, 286 and 586 MiB resident under
# limits of 120, 300 and 600 MiB, and its address space (what the limit counts, polled every _POLL_S
# while it runs) nearer still; a crash well below the limit is reported as the crash it is.
_NEAR_THE_LIMIT = 0.75
_POLL_S = 0.05


def reader_name(path: str) -> str:
    """What errors call the reader of this file."""
    suffix = Path(path).suffix.lower()
    if suffix in PDF_SUFFIXES:
        return "PDF parser"
    if suffix in PACKAGE_KINDS:
        return f"{PACKAGE_KINDS[suffix]} reader"
    if suffix in EMAIL_SUFFIXES:
        return "email reader"
    if suffix in RTF_SUFFIXES:
        return "RTF reader"
    return "HTML reader" if suffix in HTML_SUFFIXES else "text reader"


def failure_message(wait_status: int, peak_mib: float, memory_mb: int, reader: str = "PDF parser") -> str:
    """Why a child that sent no result died: its memory limit where it crashed near it, else the crash."""
    if os.WIFSIGNALED(wait_status) and peak_mib >= _NEAR_THE_LIMIT * memory_mb:
        return f"{reader} went over its memory limit of {memory_mb} MiB"
    return crash_message(wait_status)


def _parse(
    path: str, password: str | None, memory_mb: int, ocr: OcrOptions, ocr_budget_s: float, max_chars: int
) -> tuple[str, object]:
    reader = reader_name(path)
    try:
        parsed = (
            read_pdf(Path(path), password, ocr, ocr_budget_s) if reader == "PDF parser" else read_document(Path(path))
        )
        # checked here, before the text crosses to the server: a 6 MB CSV whose 6-million-character header heads
        # each of its pages came back as 600 million characters, which the server unpickled before refusing them
        if (chars := text_size(parsed)) > max_chars:
            raise too_much_text(chars, max_chars)
        return ("ok", parsed)
    except ReadError as exc:
        return ("error", str(exc))
    except MemoryError:
        return ("error", f"{reader} went over its memory limit of {memory_mb} MiB")
    except BaseException as exc:  # anything else still becomes that file's recorded error
        return ("error", f"{reader} failed: {type(exc).__name__}: {exc}")


def _child(
    write_fd: int, path: str, password: str | None, memory_mb: int, ocr: OcrOptions, ocr_budget_s: float, max_chars: int
) -> None:
    code = 0
    try:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        result = _parse(path, password, memory_mb, ocr, ocr_budget_s, max_chars)
        try:
            payload = pickle.dumps(result)
        except MemoryError:
            payload = pickle.dumps(("error", f"{reader_name(path)} went over its memory limit of {memory_mb} MiB"))
        with os.fdopen(write_fd, "wb") as out:
            out.write(payload)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def parse_in_child(
    path: str, password: str | None, timeout_s: float, memory_mb: int, ocr: OcrOptions, max_chars: int
) -> bytes:
    """Fork, parse in the child, and return its pickled result or a pickled error. OCR gets the share of
    the time limit that ingest.ocr.TIME_SHARE leaves it; a text past max_chars is refused in the child, and a
    reply larger than such a text could be is never read whole."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(write_fd, path, password, memory_mb, ocr, TIME_SHARE * timeout_s, max_chars)
    os.close(write_fd)
    deadline = time.monotonic() + timeout_s
    blocks: list[bytes] = []
    received = 0
    # the child's address space at its largest, as last seen (what its limit counts); it starts as this one's
    peak_mib = _address_space_mib(os.getpid(), "VmSize")
    with os.fdopen(read_fd, "rb", buffering=0) as pipe:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                clear_stale(Path(tempfile.gettempdir()), ATTACHMENT_PREFIX)
                return pickle.dumps(("error", f"{reader_name(path)} timed out after {timeout_s:g} s"))
            ready = select.select([pipe], [], [], min(remaining, _POLL_S))[0]
            peak_mib = max(peak_mib, _address_space_mib(pid, "VmPeak"))
            if not ready:
                continue
            block = pipe.read(1 << 20)
            if not block:
                break
            blocks.append(block)
            received += len(block)
            if received > reply_bytes(max_chars):  # what no text within the bound pickles to
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return pickle.dumps(("error", str(too_much_text(received // BYTES_PER_CHAR, max_chars, "at least "))))
    _, status, usage = os.wait4(pid, 0)
    clear_stale(Path(tempfile.gettempdir()), ATTACHMENT_PREFIX)  # what a child killed reading an email left
    if blocks and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return b"".join(blocks)
    peak = max(peak_mib, usage.ru_maxrss / 1024)
    return pickle.dumps(("error", failure_message(status, peak, memory_mb, reader_name(path))))


def _address_space_mib(pid: int, field: str) -> float:
    """A running process's virtual size (VmSize) or its peak so far (VmPeak), from /proc, in MiB; 0 once
    it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def main() -> None:
    # loaded once here, so each forked child starts parsing at once; a reader's library missing fails its format
    # alone, when a file of it comes (the GPU benches carry no Office or HTML readers)
    for module in ("docx", "lxml.html", "openpyxl", "pptx", "pypdfium2"):
        with contextlib.suppress(ImportError):
            importlib.import_module(module)

    # Ctrl+C in a terminal goes to the whole process group: docqa (the parent) says it and stops; here it would
    # only print a KeyboardInterrupt traceback above that line. The parent's closing the pipe ends this loop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing a library prints may corrupt the reply stream
    while (frame := read_frame(requests)) is not None:
        path, password, timeout_s, memory_mb, ocr, max_chars = pickle.loads(frame)
        try:
            write_frame(replies, parse_in_child(path, password, timeout_s, memory_mb, ocr, max_chars))
        except BrokenPipeError:  # the docqa process that asked is gone (killed mid-ingest): nothing to answer
            os._exit(0)


if __name__ == "__main__":
    main()
