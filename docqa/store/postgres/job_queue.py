"""The ingestion queue: Procrastinate on the store's own Postgres (no broker to run), one task whose
argument is an ingest_jobs row (docqa.store.postgres.ingest_jobs).

API processes defer jobs; `docqa worker` processes, on any machine that reaches the database, run them.
A worker killed mid-job (kill -9, a lost machine) stops sending heartbeats: every worker looks for jobs
left `doing` by a worker silent for `stalled_s` and puts them back in the queue. A worker that lives on
can lose a job too: when the database goes away as a job ends (a Postgres restart), Procrastinate cannot
record the end, its task dies with the error, and the job stays `doing` under a worker whose heartbeats
say it is alive. So each worker also looks for jobs `doing` under its own ID that it is not running, and
queues them again. A document's write is one transaction that replaces any earlier version by its
source, so a job run twice leaves one document.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlalchemy import make_url

from docqa.core.extras import require

if TYPE_CHECKING:
    import procrastinate
    import procrastinate.worker

# Procrastinate is imported where a queue is made: it costs ~0.08 s, which every `docqa` command would pay.

logger = logging.getLogger(__name__)

TASK = "docqa.ingest"
QUEUE = "ingest"
# A job that raised (the database went away mid-job) runs again after 5, 10, ... seconds, 3 times at most.
# A file that fails to ingest does not raise: its job ends `failed` with the reason, once.
RETRY_ATTEMPTS = 3
RETRY_LINEAR_WAIT_S = 5
LOST_JOBS_EVERY_S = 5.0  # how often a worker looks for jobs it lost (at most; stalled_s / 2 when shorter)
RESTART_S = 5.0  # how long a worker whose database went away waits before it starts again


def conninfo(database_url: str) -> str:
    """libpq's form of a SQLAlchemy URL (postgresql+psycopg://... -> postgresql://...)."""
    return make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)


class DatabaseErrorsInOneLine(logging.Filter):
    """A database that goes away (a Postgres restart) makes Procrastinate's loops and asyncio log a traceback
    a second; the worker says each in one line with the database's own reason and goes on."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is not None and is_database_error(error):
            record.msg = f"{record.getMessage().splitlines()[0]} (the database is unavailable: {one_line(error)})"
            record.args = ()
            record.exc_info = None
            record.exc_text = None
        return True


_DATABASE_ERRORS = ("ConnectorException", "PoolTimeout", "OperationalError")


def _causes(error: BaseException | None) -> list[BaseException]:
    chain: list[BaseException] = []
    while error is not None and len(chain) < 10:
        chain.append(error)
        error = error.__cause__ or error.__context__
    return chain


def is_database_error(error: BaseException) -> bool:
    return any(type(e).__name__ in _DATABASE_ERRORS for e in _causes(error))


def one_line(error: BaseException) -> str:
    """The error's innermost cause, in one line: the database's own reason."""
    root = _causes(error)[-1]
    return f"{type(root).__name__}: {' '.join(str(root).split())}"


async def _note_id(worker: procrastinate.worker.Worker, ids: list[int]) -> None:
    """Add the worker's ID to `ids` once it has registered (its first act in run())."""
    while worker.worker_id is None:
        await asyncio.sleep(0.1)
    ids.append(worker.worker_id)


class JobQueue:
    def __init__(self, database_url: str) -> None:
        require("procrastinate", "Ingestion jobs (a queued upload, `docqa worker`, `docqa ingest --queue`)")
        import procrastinate

        self.app: procrastinate.App = procrastinate.App(
            connector=procrastinate.PsycopgConnector(conninfo=conninfo(database_url))
        )
        self._handler: Callable[[int], None] | None = None
        self._opened = False
        self._running: set[int] = set()  # the queue's IDs of the jobs this worker's threads run now

        retry = procrastinate.RetryStrategy(max_attempts=RETRY_ATTEMPTS, linear_wait=RETRY_LINEAR_WAIT_S)

        @self.app.task(name=TASK, queue=QUEUE, retry=retry, pass_context=True)
        def ingest(context: procrastinate.JobContext, job_id: int) -> None:
            assert self._handler is not None, "a worker runs jobs (JobQueue.run_worker)"
            queue_id = context.job.id or 0
            self._running.add(queue_id)
            try:
                self._handler(job_id)
            finally:
                self._running.discard(queue_id)

        self._task = ingest

    def enqueue(self, job_id: int) -> int:
        """Defer the job (from a synchronous caller); returns the queue's own job ID."""
        if not self._opened:
            self.app.open()
            self._opened = True
        return int(self._task.defer(job_id=job_id))

    def close(self) -> None:
        if self._opened:
            self.app.close()
            self._opened = False

    def run_worker(self, handler: Callable[[int], None], concurrency: int, stalled_s: float) -> None:
        """Run jobs until SIGINT/SIGTERM; `handler(job_id)` ingests one (in a thread of its own)."""
        self._handler = handler
        quiet = DatabaseErrorsInOneLine()
        for handler_ in logging.getLogger().handlers:
            handler_.addFilter(quiet)
        try:
            asyncio.run(self._work(concurrency, stalled_s))
        finally:
            for handler_ in logging.getLogger().handlers:
                handler_.removeFilter(quiet)

    async def _work(self, concurrency: int, stalled_s: float) -> None:
        """Procrastinate's worker, started again when the database takes it down (its job fetch fails while
        the database is away, and its run ends with the error): the process lives on, and the jobs its
        earlier runs left `doing` are queued again (_requeue_lost)."""
        from procrastinate.worker import Worker

        ids: list[int] = []  # this process's worker IDs in the database, the current one last
        async with self.app.open_async():
            requeue = asyncio.create_task(self._requeue_stalled(stalled_s))
            lost = asyncio.create_task(self._requeue_lost(ids, stalled_s))
            try:
                while True:
                    worker = Worker(
                        self.app,
                        queues=[QUEUE],
                        concurrency=concurrency,
                        update_heartbeat_interval=max(stalled_s / 4, 0.5),
                        stalled_worker_timeout=stalled_s,
                        fetch_job_polling_interval=1.0,
                        delete_jobs="successful",
                    )
                    registered = asyncio.create_task(_note_id(worker, ids))
                    try:
                        await worker.run()
                        return  # stopped by SIGINT / SIGTERM
                    except Exception as exc:
                        if not is_database_error(exc):
                            raise
                        logger.warning(
                            "the worker lost the database (%s): starting again in %g s", one_line(exc), RESTART_S
                        )
                        await asyncio.sleep(RESTART_S)
                    finally:
                        registered.cancel()
            finally:
                requeue.cancel()
                lost.cancel()

    async def _requeue_lost(self, ids: list[int], stalled_s: float) -> None:
        """Jobs `doing` under one of this process's worker IDs (or under none: their worker was removed) that
        it does not run: their end was never recorded (see the module's docstring). One seen so twice in a
        row is queued again (once only, a job that has just ended while its end is being written)."""
        manager = self.app.job_manager
        seen: set[int] = set()
        while True:
            await asyncio.sleep(min(max(stalled_s / 2, 0.5), LOST_JOBS_EVERY_S))
            try:
                doing = await manager.list_jobs_async(queue=QUEUE, status="doing")
                lost = {
                    job.id
                    for job in doing
                    if job.id is not None
                    and job.id not in self._running
                    and (job.worker_id in ids or not job.worker_id)
                }
                for job in doing:
                    if job.id in lost and job.id in seen:
                        logger.warning("ingest job %s lost its end (the database went away): queued again", job.id)
                        await manager.retry_job(job)
                seen = lost
            except Exception as exc:  # the database is away for a moment: look again next round
                logger.warning("looking for lost ingest jobs failed: %s", one_line(exc))

    async def _requeue_stalled(self, stalled_s: float) -> None:
        manager = self.app.job_manager
        while True:
            try:
                for job in await manager.get_stalled_jobs(queue=QUEUE, seconds_since_heartbeat=stalled_s):
                    logger.warning("ingest job %s was left running by a worker that stopped: queued again", job.id)
                    await manager.retry_job(job)
            except Exception as exc:  # the database is away for a moment: look again next round
                logger.warning("looking for stalled ingest jobs failed: %s", exc)
            await asyncio.sleep(max(stalled_s / 2, 0.5))
