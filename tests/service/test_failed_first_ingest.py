"""A first ingest into a new collection whose every file fails does not leave that collection behind, empty but
for failed records (issue 62 item 10), on SQLite and on Postgres; a collection that existed, or that got one file
in, is kept with its failed records."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from docqa.cli.main import main
from docqa.service import DocQA
from tests.support.paths import SAMPLE_DOCS, make_settings


def _broken(tmp_path: Path) -> Path:
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4 not really")
    return path


@pytest.fixture(params=["sqlite", "postgres"])
def qa(request: pytest.FixtureRequest, tmp_path: Path) -> DocQA:
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else None
    opened = DocQA(make_settings(tmp_path / "data", database_url=url))
    request.addfinalizer(opened.close)
    return opened


def test_a_new_collection_whose_every_file_failed_is_not_kept(qa: DocQA, tmp_path: Path) -> None:
    name = f"fresh-{uuid.uuid4().hex[:8]}"
    report = qa.ingest([_broken(tmp_path), tmp_path / "missing.txt"], collection=name)
    assert report.count("failed") == 2 and report.dropped == name
    assert name not in [c.name for c in qa.collections()]
    assert report.as_dict()["collection_dropped"] == name


def test_a_collection_that_existed_or_got_a_file_in_keeps_its_failed_records(qa: DocQA, tmp_path: Path) -> None:
    kept = f"kept-{uuid.uuid4().hex[:8]}"
    report = qa.ingest([_broken(tmp_path), SAMPLE_DOCS / "services_agreement_en.txt"], collection=kept)
    assert report.count("added") == 1 and report.dropped is None
    again = qa.ingest([_broken(tmp_path)], collection=kept)  # an existing collection: not dropped
    assert again.dropped is None
    statuses = sorted(d.status for d in qa.documents(kept))
    assert statuses == ["failed", "ready"]
    made = f"made-{uuid.uuid4().hex[:8]}"
    qa.collection(made, create=True)  # created on purpose (the API's POST /v1/collections): kept
    assert qa.ingest([_broken(tmp_path)], collection=made).dropped is None
    assert made in [c.name for c in qa.collections()]


def test_the_cli_says_the_collection_was_not_kept(tmp_path: Path) -> None:
    env = {"DOCQA_DATA_DIR": str(tmp_path / "home")}
    result = CliRunner().invoke(main, ["ingest", str(_broken(tmp_path)), "--collection", "typo"], env=env)
    assert result.exit_code == 1
    assert "collection 'typo' not kept: none of its files could be read" in result.output
    listed = CliRunner().invoke(main, ["docs", "list", "--collection", "typo"], env=env)
    assert listed.exit_code != 0 and "typo" in listed.output
