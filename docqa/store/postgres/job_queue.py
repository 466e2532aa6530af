"""The ingestion queue: Procrastinate on the store's own Postgres (no broker to run), one task whose
argument is an ingest_jobs row (docqa.store.postgres.ingest_jobs).

API processes defer jobs; `docqa worker` processes, on any machine that reaches the database, run them.
A worker killed mid-job (kill -9, a lost machine) stops sending heartbeats: every worker looks for jobs
left `doing` by a worker silent for `stalled_s` and puts them back in the queue. A document's write is
one transaction that replaces any earlier version by its source, so a job run twice leaves one document.
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

# Procrastinate is imported where a queue is made: it costs ~0.08 s, which every `docqa` command would pay.

logger = logging.getLogger(__name__)

TASK = "docqa.ingest"
QUEUE = "ingest"
# A job that raised (the database went away mid-job) runs again after 5, 10, ... seconds, 3 times at most.
# A file that fails to ingest does not raise: its job ends `failed` with the reason, once.
RETRY_ATTEMPTS = 3
RETRY_LINEAR_WAIT_S = 5


def conninfo(database_url: str) -> str:
    """libpq's form of a SQLAlchemy URL (postgresql+psycopg://... -> postgresql://...)."""
    return make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)


class JobQueue:
    def __init__(self, database_url: str) -> None:
        require("procrastinate", "Ingestion jobs (a queued upload, `docqa worker`, `docqa ingest --queue`)")
        import procrastinate

        self.app: procrastinate.App = procrastinate.App(
            connector=procrastinate.PsycopgConnector(conninfo=conninfo(database_url))
        )
        self._handler: Callable[[int], None] | None = None
        self._opened = False

        retry = procrastinate.RetryStrategy(max_attempts=RETRY_ATTEMPTS, linear_wait=RETRY_LINEAR_WAIT_S)

        @self.app.task(name=TASK, queue=QUEUE, retry=retry)
        def ingest(job_id: int) -> None:
            assert self._handler is not None, "a worker runs jobs (JobQueue.run_worker)"
            self._handler(job_id)

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
        asyncio.run(self._work(concurrency, stalled_s))

    async def _work(self, concurrency: int, stalled_s: float) -> None:
        async with self.app.open_async():
            requeue = asyncio.create_task(self._requeue_stalled(stalled_s))
            try:
                await self.app.run_worker_async(
                    queues=[QUEUE],
                    concurrency=concurrency,
                    update_heartbeat_interval=max(stalled_s / 4, 0.5),
                    stalled_worker_timeout=stalled_s,
                    fetch_job_polling_interval=1.0,
                    delete_jobs="successful",
                )
            finally:
                requeue.cancel()

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
