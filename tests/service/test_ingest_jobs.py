"""Ingestion as jobs on a real Postgres: two API servers (separate DocQA instances, as two processes share
only the database) and `docqa worker` processes. An upload to one answers 202, the worker ingests it, the
other lists it and answers from it; asks during a 20-file ingest never cite a half-written document; a
worker killed with kill -9 mid-job has its job run again, once, and the document ends ready exactly once."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from sqlalchemy import create_engine, make_url, text

from docqa.service import DocQA
from docqa.service.jobs import JOB_FOLDERS, JOB_PREFIX
from tests.support.fake_generator import FakeGenerator
from tests.support.live_server import free_port, serve_app
from tests.support.paths import ROOT, make_settings, small_chunk_ingest_env
from tests.support.postgres import TestPostgres

WORDS = [
    "supplier",
    "customer",
    "invoice",
    "notice",
    "termination",
    "warranty",
    "liability",
    "payment",
    "delivery",
    "audit",
]


worker_lines: list[str] = []  # what each worker process said on stderr, last one last


@contextmanager
def worker(env: dict[str, str], *args: str) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([sys.executable, "-m", "docqa", "worker", *args], env=env, cwd=ROOT, stderr=subprocess.PIPE)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        said = proc.stderr.read() if proc.stderr else b""
        assert b"Traceback" not in said
        worker_lines.append(said.decode(errors="replace"))


def _wait_for(base: str, url: str, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job: dict[str, Any] = httpx.get(base + url, timeout=10).json()
        if job["status"] in ("ready", "failed"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {url} not done in {timeout} s: {job}")


def _contract(n: int, rng: random.Random) -> bytes:
    body = " ".join(rng.choice(WORDS) for _ in range(400))
    return f"Contract {n} between Party{n} and Vendor{n}. The vault code is K{n:03d}. {body}".encode()


@pytest.fixture
def api_pair(tmp_path: Path, postgres_url: str) -> Iterator[tuple[str, str, dict[str, str]]]:
    """Two API servers on one Postgres, and the environment of a worker process for it."""
    env = {**os.environ, "DOCQA_DATABASE_URL": postgres_url, "DOCQA_DATA_DIR": str(tmp_path / "worker")}
    with ExitStack() as stack:
        bases = []
        for name in ("one", "two"):
            generator = FakeGenerator("The code is in [1].", max_queue=16)
            qa = DocQA(make_settings(tmp_path / name, database_url=postgres_url), None, generator)
            stack.callback(generator.close)
            stack.callback(qa.close)
            bases.append(stack.enter_context(serve_app(qa.settings, qa, free_port())))
        yield bases[0], bases[1], env


def test_an_upload_queued_on_one_api_is_ingested_by_the_worker_and_answered_by_the_other(
    api_pair: tuple[str, str, dict[str, str]], postgres_url: str
) -> None:
    one, two, env = api_pair
    files = [("files", ("vault.txt", _contract(7, random.Random(7)), "text/plain"))]
    r = httpx.post(f"{one}/v1/collections/deals/documents", files=files, timeout=60)
    assert r.status_code == 202, r.text
    job = r.json()["jobs"][0]
    assert job["status"] == "queued" and job["status_url"] == f"/v1/collections/deals/jobs/{job['job_id']}"
    listed = httpx.get(f"{two}/v1/collections/deals/documents").json()
    assert listed["documents"] == [] and [j["status"] for j in listed["jobs"]] == ["queued"]  # no worker yet
    with worker(env):
        done = _wait_for(two, job["status_url"])
    assert done["status"] == "ready" and done["attempts"] == 1 and done["document_id"]
    assert done["progress"]["done"] == done["progress"]["total"]  # issue 40, item 6: read 0 of N without embeddings
    assert f"ingest job {job['job_id']} (vault.txt): added, 1 page" in worker_lines[-1]  # a line per job
    listed_jobs = httpx.get(f"{two}/v1/collections/deals/jobs").json()["jobs"]  # finished jobs stay listed a while
    assert [(j["job_id"], j["status"]) for j in listed_jobs] == [(job["job_id"], "ready")]
    docs = httpx.get(f"{two}/v1/collections/deals/documents").json()
    assert [d["name"] for d in docs["documents"]] == ["vault.txt"] and docs["jobs"] == []
    answer = httpx.post(f"{two}/v1/ask", json={"question": "What is the vault code?", "collection": "deals"}).json()
    assert [c["document"] for c in answer["citations"]] == ["vault.txt"]
    assert httpx.get(f"{two}/v1/collections/other/jobs/{job['job_id']}").status_code == 404
    # the original, for the page's viewer: served by an API process whose data home never saw the file
    file_url = f"/v1/collections/deals/documents/{done['document_id']}/file"
    for base in (two, one):
        served = httpx.get(base + file_url)
        assert served.status_code == 200 and served.content == _contract(7, random.Random(7))
    assert httpx.delete(f"{one}/v1/collections/deals/documents/{done['document_id']}").status_code == 204
    with create_engine(postgres_url).connect() as conn:  # its last document gone, so is the database's copy
        assert conn.execute(text("SELECT count(*) FROM document_originals")).scalar() == 0
    assert httpx.get(two + file_url).status_code == 404


def test_asks_during_a_twenty_file_ingest_never_cite_a_half_written_document(
    api_pair: tuple[str, str, dict[str, str]], postgres_url: str
) -> None:
    one, two, env = api_pair
    rng = random.Random(20)
    first = [("files", ("c00.txt", _contract(0, rng), "text/plain"))]
    assert httpx.post(f"{one}/v1/collections/deals/documents", files=first, timeout=60).status_code == 202
    with worker(env, "--concurrency", "2"):
        _wait_for(one, "/v1/collections/deals/jobs/1")
        question = {"question": "Which contract has the vault code K000?", "collection": "deals"}
        assert not httpx.post(f"{two}/v1/ask", json=question, timeout=60).json().get("cached")
        assert httpx.post(f"{two}/v1/ask", json=question, timeout=60).json()["cached"]
        files = [("files", (f"c{n:02d}.txt", _contract(n, rng), "text/plain")) for n in range(1, 21)]
        jobs = httpx.post(f"{one}/v1/collections/deals/documents", files=files, timeout=60).json()["jobs"]
        cited: list[tuple[int, int]] = []
        refused: list[str] = []  # anything but an answer or the queue's deliberate 429
        stop = threading.Event()

        def ask() -> None:
            while not stop.is_set():
                body = {"question": f"What is the vault code of Party{rng.randrange(21)}?", "collection": "deals"}
                r = httpx.post(f"{two}/v1/ask", json=body, timeout=60)
                if r.status_code == 200:
                    cited.extend((c["document_id"], c["chunk_id"]) for c in r.json()["citations"])
                elif r.status_code != 429:
                    refused.append(f"{r.status_code} {r.text[:300]}")

        askers = [threading.Thread(target=ask) for _ in range(3)]
        for thread in askers:
            thread.start()
        try:
            finished = [_wait_for(one, job["status_url"]) for job in jobs]
        finally:
            stop.set()
            for thread in askers:
                thread.join()
    assert all(job["status"] == "ready" for job in finished)
    assert refused == [] and len(cited) > 10
    with DocQA(make_settings(Path(env["DOCQA_DATA_DIR"]), database_url=postgres_url)) as qa:
        documents = {d.id: d for d in qa.documents("deals")}
        assert len(documents) == 21 and all(d.status == "ready" for d in documents.values())
        for document_id, chunk_id in set(cited):  # each cited document was whole when it was cited
            assert qa.chunk(chunk_id, "deals").document_id == document_id
            assert documents[document_id].n_chunks == len(qa.store.chunk_ids_of_document(document_id))
    # the collection changed after the first answer: the repeated question is generated again
    assert not httpx.post(f"{two}/v1/ask", json=question, timeout=60).json().get("cached")


def _slow_worker_env(tmp_path: Path, tiny_qwen3: Path, postgres_url: str, stalled_s: str) -> dict[str, str]:
    """A worker that embeds with the tiny Qwen3 in small chunks, so that one long file takes it seconds."""
    return small_chunk_ingest_env(
        tmp_path / "worker",
        tiny_qwen3,
        DOCQA_DATABASE_URL=postgres_url,
        DOCQA_INGEST_WORKER_STALLED_S=stalled_s,
        DOCQA_CHUNKING_MAX_TOKENS="48",
        DOCQA_CHUNKING_OVERLAP_TOKENS="8",
    )


def _queue_long_file(base: str, seed: int) -> dict[str, Any]:
    """Upload one long file (~300 chunks to embed) as a queued job; the job as the API returned it."""
    rng = random.Random(seed)
    long_file = b"\n\n".join(_contract(n, rng) for n in range(30))
    files = [("files", ("long.txt", long_file, "text/plain"))]
    return dict(httpx.post(f"{base}/v1/collections/default/documents", files=files, timeout=60).json()["jobs"][0])


def _wait_until_embedding(base: str, job: dict[str, Any], running: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while httpx.get(base + job["status_url"]).json()["status"] != "embedding":
        assert time.monotonic() < deadline and running.poll() is None
        time.sleep(0.05)


def test_a_worker_killed_mid_job_leaves_the_job_to_another_and_one_ready_document(
    tmp_path: Path, postgres_url: str, tiny_qwen3: Path, fake_generator: FakeGenerator
) -> None:
    env = _slow_worker_env(tmp_path, tiny_qwen3, postgres_url, stalled_s="2")
    qa = DocQA(make_settings(tmp_path / "api", database_url=postgres_url), None, fake_generator)
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            job = _queue_long_file(base, seed=9)
            with worker(env) as first:
                _wait_until_embedding(base, job, first)
                first.kill()  # kill -9, mid-embedding
                first.wait()
            assert httpx.get(base + job["status_url"]).json()["status"] == "embedding"  # left as it was
            left = list(JOB_FOLDERS.glob(f"{JOB_PREFIX}{first.pid}-*"))  # its copy of the file, no cleanup ran
            assert left and all(folder.exists() for folder in left)
            with worker(env):
                done = _wait_for(base, job["status_url"], timeout=180)
            assert not any(folder.exists() for folder in left)  # the next worker cleared it (issue 41, 11)
        assert done["status"] == "ready" and done["attempts"] == 2, done
        documents = qa.documents()
        assert [d.name for d in documents] == ["long.txt"] and documents[0].status == "ready"
        assert all(report.ok for report in qa.check())
    finally:
        qa.close()


def _database_outage(server: TestPostgres, database_url: str, seconds: float) -> None:
    """What a Postgres restart does to a database's clients: every connection cut, and none taken for a while."""
    name = make_url(database_url).database
    with psycopg.connect(server.uri, autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
        time.sleep(seconds)
        admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')


def test_a_database_outage_mid_job_does_not_leave_the_job_running_for_good(
    tmp_path: Path, postgres_server: TestPostgres, postgres_url: str, tiny_qwen3: Path, fake_generator: FakeGenerator
) -> None:
    """Issue 41, item 3: Postgres killed and restarted during a queued job's embedding left the job
    "embedding" for good (its queue row `doing`, the live worker's heartbeats keeping the stalled check away).
    The outage outlasts Procrastinate's 30 s wait for a connection, so the job's end cannot be recorded; the
    stalled-worker check is kept out of it (600 s), so only the worker's look for its own lost jobs can
    bring it back. And the worker says the outage in lines, without a traceback (`worker` checks)."""
    env = _slow_worker_env(tmp_path, tiny_qwen3, postgres_url, stalled_s="600")
    qa = DocQA(make_settings(tmp_path / "api", database_url=postgres_url), None, fake_generator)
    try:
        with serve_app(qa.settings, qa, free_port()) as base:
            job = _queue_long_file(base, seed=11)
            # two at a time: with a slot free, the worker keeps fetching jobs through the outage, which ended
            # Procrastinate's worker run (the CI run at 15910bc: the process died with the fetch's error)
            with worker(env, "--concurrency", "2") as running:
                _wait_until_embedding(base, job, running)
                _database_outage(postgres_server, postgres_url, seconds=40)
                done = _wait_for(base, job["status_url"], timeout=180)
                assert running.poll() is None  # the same worker went on
        assert done["status"] == "ready", done
        documents = qa.documents()
        assert [d.name for d in documents] == ["long.txt"] and documents[0].status == "ready"
    finally:
        qa.close()


def test_a_queued_table_names_its_pages_as_it_was_uploaded(
    tmp_path: Path, postgres_url: str, fake_generator: FakeGenerator
) -> None:
    """Issue 60 (weak): a queued CSV's pages were headed by the staging file's name ("Table: 0.csv")."""
    qa = DocQA(make_settings(tmp_path / "api", database_url=postgres_url), None, fake_generator)
    try:
        queue = qa.ingest_queue()
        job = queue.enqueue("tables", "renewals 2024.csv", "upload:renewals 2024.csv", b"Customer,Fee\nAcme,100\n")
        queue.run(job.id)
        (document,) = qa.documents("tables")
        assert document.name == "renewals 2024.csv" and document.status == "ready"
        (hit,) = qa.retrieve("Acme fee", 1, collection="tables")
        assert "Table: renewals 2024.csv (rows 2-2 of 2)" in hit.text
    finally:
        qa.close()
