"""The service closing its models in the middle of a multi-file ingest (a server's shutdown grace ran out
while an upload was being embedded; issue 41, item 15): the files already written stay, and the files not
reached are left as they were, not recorded as failed documents ("model closed" is no reason of theirs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.core.documents import Progress
from docqa.core.errors import ModelClosedError
from docqa.core.settings import EmbedSettings, RetrievalSettings
from docqa.llama.embedder import LlamaEmbedder
from docqa.service import DocQA
from tests.support.paths import make_settings


def test_files_not_reached_when_the_models_close_are_not_failures(tmp_path: Path, tiny_qwen3: Path) -> None:
    folder = tmp_path / "upload"
    folder.mkdir()
    for n in range(3):
        (folder / f"contract{n}.txt").write_text(f"Contract {n}. The notice period is {30 + n} days. " * 40)
    embedder = LlamaEmbedder(tiny_qwen3, EmbedSettings(model=tiny_qwen3))
    settings = make_settings(tmp_path / "data", retrieval=RetrievalSettings(retriever="hybrid"))
    qa = DocQA(settings, embedder, None)

    def close_at_the_second_file(progress: Progress) -> None:
        if progress.file_index == 1 and progress.stage == "embedding":
            embedder.close()  # what the server's shutdown does once its grace has run out

    try:
        with pytest.raises(ModelClosedError):
            qa.ingest([folder], progress=close_at_the_second_file)
        documents = {d.name: d.status for d in qa.documents()}
        assert documents == {"contract0.txt": "ready"}, documents
        assert all(report.ok for report in qa.check())
    finally:
        qa.close()
