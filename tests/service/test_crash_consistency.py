"""`kill -9` in the middle of `docqa ingest`, at random moments, 20 times: after each restart SQLite
is intact, every document is complete in SQLite and FAISS or failed/absent, nothing is orphaned, and
a last run finishes the job. Embeddings come from the tiny Qwen3-architecture GGUF, so each run
spends its time ingesting rather than loading a model."""

from __future__ import annotations

import hashlib
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from docqa.service import DocQA
from docqa.store.audit import document_problems, orphan_problems
from tests.support.paths import ROOT, make_settings, small_chunk_ingest_env

WORDS = [
    "contract",
    "party",
    "supplier",
    "buyer",
    "term",
    "notice",
    "law",
    "court",
    "payment",
    "invoice",
    "delivery",
    "warranty",
    "liability",
    "clause",
    "agreement",
    "schedule",
    "annex",
    "price",
    "currency",
    "audit",
    "renewal",
    "termination",
]
N_DOCS, REWRITES_PER_RUN, KILLS = 20, 8, 20


def _write_doc(path: Path, rng: random.Random) -> None:
    paragraphs = ["\n".join(" ".join(rng.choice(WORDS) for _ in range(12)) + "." for _ in range(5)) for _ in range(8)]
    path.write_text(f"{path.stem}\n\n" + "\n\n".join(paragraphs), encoding="utf-8")


def _verify_after_restart(data: Path, folder: Path) -> int:
    """Restart (open the data dir as `docqa` does) and check everything; returns how many files on
    disk differ from what the index holds (work a kill left undone)."""
    settings = make_settings(data)
    if not settings.database_path.exists():
        return N_DOCS  # killed before it wrote anything
    with sqlite3.connect(settings.database_path) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    qa = DocQA(settings)
    try:
        assert orphan_problems(qa.store) == []
        stale = 0
        for coll in qa.store.collections():
            assert document_problems(qa.store, coll.id) == []
            index = qa.indexes.get(coll)  # verifies on open; rebuilds if the last save was cut off
            if index is not None:
                assert np.array_equal(np.sort(index.ids()), np.sort(qa.store.chunk_ids(coll.id)))
            for doc in qa.store.documents(coll.id):
                assert doc.status in ("ready", "failed"), doc.status
                current = hashlib.sha256(Path(doc.source).read_bytes()).hexdigest()
                stale += doc.status != "ready" or doc.sha256 != current
            stale += N_DOCS - len(qa.store.documents(coll.id))
        assert all(report.ok for report in qa.check())
        return stale
    finally:
        qa.close()


def test_kill_9_mid_ingest_twenty_times_leaves_a_consistent_index(tiny_qwen3: Path, tmp_path: Path) -> None:
    rng = random.Random(20261130)
    folder, data = tmp_path / "docs", tmp_path / "data"
    folder.mkdir()
    for i in range(N_DOCS):
        _write_doc(folder / f"doc{i:02d}.txt", rng)
    # save FAISS often, so kills also land mid-save
    env = small_chunk_ingest_env(data, tiny_qwen3, DOCQA_INGEST_CHECKPOINT_SECONDS="0.5")
    command = [sys.executable, "-m", "docqa", "ingest", str(folder), "--json"]

    killed_while_running = 0
    left_work = []
    for _ in range(KILLS):
        for i in rng.sample(range(N_DOCS), REWRITES_PER_RUN):
            _write_doc(folder / f"doc{i:02d}.txt", rng)
        proc = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(1.0, 5.0))  # a run of 8 changed files takes ~6 s here
        killed_while_running += proc.poll() is None
        proc.kill()
        _, stderr = proc.communicate()
        assert b"Traceback" not in stderr, stderr.decode()
        left_work.append(_verify_after_restart(data, folder))

    # The kills must have hit ingests at work, not only idle processes or finished ones.
    assert killed_while_running >= KILLS * 3 // 4, killed_while_running
    assert sum(1 for stale in left_work if stale > 0) >= 5, left_work

    final = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert final.returncode == 0, final.stderr
    assert _verify_after_restart(data, folder) == 0
