"""`docqa serve`: the app under uvicorn, with graceful shutdown.

On SIGTERM or Ctrl+C, stop taking work at once and let in-flight work finish: the first signal turns
/health to 503 (load balancers stop sending) and refuses new requests with 503 (docqa.api.draining),
while the answers being streamed and the uploads being ingested run on for up to
`api.shutdown_grace_s`; then uvicorn stops. A second signal stops at once. Whatever is cut off at
that point is safe: every document is written in one transaction, and FAISS heals from SQLite.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import multiprocessing.process
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
from pathlib import Path
from types import FrameType

import uvicorn

from docqa.api import access_log
from docqa.api.main import create_app
from docqa.api.state import AppState
from docqa.core.process_folders import clear_stale, process_folder

logger = logging.getLogger(__name__)
STARTUP_S = 10.0  # an API process that ends sooner after its start is taken for one that cannot start
METRICS_PREFIX = "docqa-metrics-"  # serve_processes' shared Prometheus folder, named by the supervisor's pid
_PR_SET_PDEATHSIG = 1
CUT_OFF_WAIT_S = 5.0  # after the grace period, how long the answers cut off have to send their last event


class DrainingServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, state: AppState, grace_s: float) -> None:
        super().__init__(config)
        self._state = state
        self._grace_s = grace_s

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self._state.draining.is_set():  # asked twice: stop now
            logger.warning("second signal: stopping without waiting for %d request(s)", self._state.in_flight)
            self.force_exit = True
            self.should_exit = True
            return
        self._state.draining.set()
        logger.warning(
            "shutting down: waiting up to %g s for %d request(s) (%s again to stop at once)",
            self._grace_s,
            self._state.in_flight,
            "Ctrl+C" if sig == signal.SIGINT else "the signal",
        )
        threading.Thread(target=self._stop_when_drained, name="docqa-drain", daemon=True).start()

    def _stop_when_drained(self) -> None:
        deadline = time.monotonic() + self._grace_s
        while self._state.in_flight > 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        if self._state.in_flight:
            logger.warning("grace period over: %d request(s) cut off", self._state.in_flight)
            self._state.cut_off.set()  # answers streaming end with an error event at their next token
            deadline = time.monotonic() + CUT_OFF_WAIT_S
            while self._state.in_flight > 0 and time.monotonic() < deadline:
                time.sleep(0.05)
        self.should_exit = True


def serve(app_state: AppState, host: str, port: int, log_level: str) -> None:
    """Run the app under uvicorn with graceful draining."""
    config = uvicorn.Config(
        create_app(state=app_state, owns_state=True),
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,  # docqa writes its own line per request (access_log.install)
        timeout_graceful_shutdown=2,  # after our own grace period, only stragglers remain
    )
    access_log.install()  # after uvicorn.Config, which configures its loggers
    DrainingServer(config, app_state, app_state.settings.api.shutdown_grace_s).run()


def serve_processes(workers: int, host: str, port: int, log_level: str) -> None:
    """Run `workers` API processes on one listening socket (the kernel spreads connections over them).

    Each process is a whole docqa API with its own models, stateless beside the shared database; they
    count requests into one Prometheus directory, so /metrics from any of them reports all of them. A
    child that dies is started again (one that dies within STARTUP_S of its start stops them all: it
    would die again). SIGTERM is passed on to every child, which drains as `serve` drains; Ctrl+C in a
    terminal reaches the children itself."""
    clear_stale(Path(tempfile.gettempdir()), METRICS_PREFIX)  # the folders of a supervisor killed with kill -9
    metrics_dir = process_folder(Path(tempfile.gettempdir()), METRICS_PREFIX)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(metrics_dir)  # read by prometheus_client in each child
    sock = uvicorn.Config(create_app, host=host, port=port).bind_socket()
    spawn = multiprocessing.get_context("spawn")  # fresh interpreters: no inherited threads or model handles
    children: list[tuple[multiprocessing.process.BaseProcess, float]] = []

    def start() -> tuple[multiprocessing.process.BaseProcess, float]:
        child = spawn.Process(target=_serve_child, args=(sock, log_level, os.getpid()), name="docqa-api")
        child.start()
        return child, time.monotonic()

    stopping = threading.Event()

    def on_signal(number: int, _frame: FrameType | None) -> None:
        stopping.set()
        if number == signal.SIGTERM:
            for child, _ in children:
                if child.pid is not None and child.is_alive():
                    os.kill(child.pid, signal.SIGTERM)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    children.extend(start() for _ in range(workers))
    try:
        while any(child.is_alive() for child, _ in children):
            time.sleep(0.2)
            for n, (child, started) in enumerate(children):
                if stopping.is_set() or child.is_alive():
                    continue
                if time.monotonic() - started < STARTUP_S:
                    logger.error("API process %s failed at start (exit code %s): stopping", child.pid, child.exitcode)
                    on_signal(signal.SIGTERM, None)
                    continue
                logger.warning("API process %s ended (exit code %s): starting another", child.pid, child.exitcode)
                children[n] = start()
    finally:
        sock.close()
        shutil.rmtree(metrics_dir, ignore_errors=True)


def _serve_child(sock: socket.socket, log_level: str, parent: int) -> None:
    """One API process of serve_processes: the settings from the environment, the models its own."""
    from docqa.core.settings import Settings

    _stop_with(parent)
    logging.basicConfig(level=logging.INFO if log_level == "info" else logging.WARNING)
    state = AppState(Settings.load())
    config = uvicorn.Config(
        create_app(state=state, owns_state=True),
        log_level=log_level,
        access_log=False,
        timeout_graceful_shutdown=2,
    )
    access_log.install()
    DrainingServer(config, state, state.settings.api.shutdown_grace_s).run(sockets=[sock])


def _stop_with(parent: int) -> None:
    """This API process gets SIGTERM (and drains as `serve` drains) when its supervisor dies: killed with
    kill -9, the supervisor runs no cleanup, and its children went on serving as orphans, holding the port
    (a new `serve` failed "address in use"). Linux's parent-death signal; elsewhere nothing changes."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it died before the signal was asked for
        os.kill(os.getpid(), signal.SIGTERM)
