"""The docs check of `make lint` (tools/docs_check.py) fails on what it is there to catch."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import docs_check


def test_a_stale_settings_doc_and_a_dead_path_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = tmp_path / "README.md"
    doc.write_text("See `docqa/core/settings.py` and `docqa/no_such_module.py`, not `docqa/*.py`.\n")
    monkeypatch.setattr(docs_check, "DOCS", [doc])
    assert docs_check.dead_paths() == [f"{doc}:1: docqa/no_such_module.py"]
    stale = tmp_path / "settings.md"
    stale.write_text(docs_check.render().replace("DOCQA_DATA_DIR", "DOCQA_DATA_DIRECTORY"))
    monkeypatch.setattr(docs_check, "SETTINGS_DOC", stale)
    monkeypatch.setattr("sys.argv", ["docs_check"])
    assert docs_check.main() == 1
    stale.write_text(docs_check.render())
    monkeypatch.setattr(docs_check, "DOCS", [])
    assert docs_check.main() == 0
