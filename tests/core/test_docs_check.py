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
    monkeypatch.setattr(docs_check, "RESULTS", tmp_path / "no-results")
    assert docs_check.main() == 0


def test_a_result_file_no_doc_cites_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = tmp_path / "results"
    results.mkdir()
    for name in (
        "eval_cuad_2026-12-07_abc1234.json",  # cited by name
        "crossval_cuad_dev_2026-12-04_44e1d48-2.json",  # cited shortened, with a brace
        "h200_engine_session6_run3.json",  # cited by a glob
        "eval_old_corpus_bm25.json",  # cited by nothing
    ):
        (results / name).write_text("{}")
    doc = tmp_path / "retrieval.md"
    doc.write_text(
        "`eval_cuad_2026-12-07_abc1234.json`, `crossval_cuad_dev_2026-12-04_44e1d48{,-2}.json` and "
        "`h200_engine_session6_run*.json`; eval_old_document_bm25 is another file\n"
    )
    monkeypatch.setattr(docs_check, "DOCS", [doc])
    monkeypatch.setattr(docs_check, "RESULTS", results)
    monkeypatch.setattr(docs_check, "ROOT", tmp_path)  # no bench modules here
    assert docs_check.uncited_results() == ["bench/results/eval_old_corpus_bm25.json"]


def test_a_measured_figure_in_a_description_fails_and_tuning_switches_are_listed_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 45 item 3: no measured figures in setting descriptions; experimental switches in their own table."""
    from pydantic import BaseModel, Field

    from docqa.core.llm_settings import EXPERIMENTAL

    class Group(BaseModel):
        plain: int = Field(default=1, description="At most 10 s, 4,096 tokens on a CPU.")
        stale: int = Field(default=2, description="Faster (95% of llama-bench on an H200).")
        switch: bool = Field(default=True, description="A tuning switch.", json_schema_extra=EXPERIMENTAL)

    class Fake(BaseModel):
        top: int = Field(default=0, description="1.5x the throughput.")
        group: Group = Field(default_factory=Group, description="a group")

    monkeypatch.setattr(docs_check, "Settings", Fake)
    assert docs_check.measured_figures() == [
        "DOCQA_TOP: '1.5x' in its description",
        "DOCQA_GROUP_STALE: '95%' in its description",
    ]
    text = docs_check.render()
    assert text.index("`DOCQA_GROUP_PLAIN`") < text.index("## Experimental") < text.index("`DOCQA_GROUP_SWITCH`")


def test_a_link_to_a_moved_file_or_heading_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "topic").mkdir()
    target = tmp_path / "topic" / "gpu.md"
    target.write_text("# GPU\n\n## The whole path: 16 asks (issue 43), 2026-12-04\n\n## Runs\n\n## Runs\n")
    doc = tmp_path / "index.md"
    doc.write_text(
        "[ok](topic/gpu.md#the-whole-path-16-asks-issue-43-2026-12-04), [second](topic/gpu.md#runs-1), "
        "[web](https://example.com/x), [here](#index)\n"
        "# Index\n[gone](topic/cpu.md) [moved](topic/gpu.md#the-whole-path)\n"
    )
    monkeypatch.setattr(docs_check, "DOCS", [doc])
    assert docs_check.dead_links() == [
        f"{doc}:3: topic/cpu.md: no such file",
        f"{doc}:3: topic/gpu.md#the-whole-path: no such heading",
    ]
