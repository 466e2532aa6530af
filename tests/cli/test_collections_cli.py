"""`docqa collections list | rm`: a collection deleted from the CLI, after asking, with all it holds."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from docqa.cli.main import main
from tests.support.paths import SAMPLE_DOCS


def test_a_collection_is_listed_and_deleted_after_asking(tmp_path: Path) -> None:
    env = {"DOCQA_DATA_DIR": str(tmp_path / "home")}
    run = CliRunner().invoke
    for name, doc in (("gone", "services_agreement_en.txt"), ("kept", "operations_handbook.md")):
        assert run(main, ["ingest", str(SAMPLE_DOCS / doc), "--collection", name], env=env).exit_code == 0
    listed = json.loads(run(main, ["collections", "list", "--json"], env=env).output)
    assert {c["name"]: c["documents"] for c in listed} == {"gone": 1, "kept": 1}
    declined = run(main, ["collections", "rm", "gone"], env=env, input="n\n")
    assert declined.exit_code == 1 and "delete collection 'gone' and its 1 document?" in declined.output
    assert "gone" in run(main, ["collections", "list"], env=env).output
    deleted = run(main, ["collections", "rm", "gone", "--yes"], env=env)
    assert deleted.exit_code == 0 and "deleted collection 'gone' (1 document)" in deleted.output
    assert [c["name"] for c in json.loads(run(main, ["collections", "list", "--json"], env=env).output)] == ["kept"]
    again = run(main, ["collections", "rm", "gone", "--yes"], env=env)
    assert again.exit_code != 0 and "collection 'gone' does not exist" in again.output
