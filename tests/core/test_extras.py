"""Postgres and S3 are extras (issue 45, item 4): a SQLite install runs without psycopg, procrastinate and
minio, and a setting that needs one that is missing is an error naming the extra."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from docqa.core.extras import MissingExtraError, require
from tests.support.paths import SAMPLE_DOCS

# Run before docqa in a child: the three modules cannot be imported there, as in an install without the extras.
BLOCK = "import sys; sys.modules.update(dict.fromkeys(['psycopg', 'procrastinate', 'minio']))\n"


def _docqa(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    code = BLOCK + "import sys; from docqa.cli.main import main; sys.argv = ['docqa', *sys.argv[1:]]; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env={**os.environ, **env}, timeout=120
    )


def test_sqlite_ingests_and_lists_without_the_extras(tmp_path: Path) -> None:
    env = {"DOCQA_DATA_DIR": str(tmp_path / "data"), "DOCQA_INGEST_OCR": "off"}
    ingested = _docqa("ingest", "--no-embeddings", str(SAMPLE_DOCS / "services_agreement_en.txt"), env=env)
    assert ingested.returncode == 0, ingested.stderr
    listed = _docqa("docs", "list", "--json", env=env)
    assert listed.returncode == 0 and "services_agreement_en.txt" in listed.stdout, listed.stderr


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"DOCQA_DATABASE_URL": "postgresql+psycopg://u:p@127.0.0.1:1/db"}, "DOCQA_DATABASE_URL (a Postgres store) "
         "needs docqa's 'postgres' extra (psycopg is not installed): pip install 'docqa[postgres]'"),
    ],
)  # fmt: skip
def test_a_database_url_without_the_postgres_extra_names_it(tmp_path: Path, env: dict[str, str], said: str) -> None:
    for command in (["docs", "list"], ["db", "upgrade"]):
        proc = _docqa(*command, env={"DOCQA_DATA_DIR": str(tmp_path / "data"), **env})
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert said in proc.stderr, proc.stderr


def test_require_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "minio", None)
    with pytest.raises(MissingExtraError, match=r"needs docqa's 's3' extra \(minio is not installed\)"):
        require("minio", "DOCQA_INGEST_UPLOAD_STORE (an S3 object store)")
    require("psycopg", "a Postgres store")  # installed here (make setup installs every extra): no error
