"""Over 40 CUAD dev contracts (BM25), Postgres ranks as SQLite does: the top-3 chunks (document and
position) are the same for at least 99% of the questions, and recall@3 is within 0.005."""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.eval.evaluation import document_ids_for, first_hit, load_rows
from docqa.service import DocQA
from tests.support.paths import SHARED, make_settings

CUAD = SHARED / "data" / "cuad_dev"
CONTRACTS = 40
pytestmark = [pytest.mark.data, pytest.mark.skipif(not CUAD.is_dir(), reason=f"{CUAD} not present")]


def test_forty_contracts_rank_the_same_on_both_stores(tmp_path: Path, postgres_url: str) -> None:
    files = sorted((CUAD / "txt").glob("*.txt"))[:CONTRACTS]
    chosen = {f"txt/{f.name}" for f in files}
    rows = [r for r in load_rows(CUAD / "qa.jsonl", "doc") if r.doc in chosen and r.answerable]
    tops: list[list[list[tuple[str, int]]]] = []
    recalls: list[float] = []
    for settings in (
        make_settings(tmp_path / "sqlite"),
        make_settings(tmp_path / "pg", database_url=postgres_url),
    ):
        with DocQA(settings) as qa:
            report = qa.ingest(files)
            # CUAD holds byte-identical contracts under two names: the second is the first's document
            assert all(f.status == "added" or "same content as" in " ".join(f.warnings) for f in report.files)
            ids = document_ids_for(qa, settings.collection, CUAD, rows)
            top, hits = [], 0
            for row in rows:
                chunks = qa.retrieve(row.question, 3)
                top.append([(c.document_name, c.ordinal) for c in chunks])
                hits += first_hit(chunks, ids.get(row.doc or ""), row, by_page=False) is not None
            tops.append(top)
            recalls.append(hits / len(rows))
    same = sum(a == b for a, b in zip(*tops, strict=True)) / len(rows)
    print(f"{len(rows)} questions: same top-3 {same:.4f}; recall@3 SQLite {recalls[0]:.4f}, Postgres {recalls[1]:.4f}")
    assert len(rows) > 300 and same >= 0.99, same
    assert abs(recalls[0] - recalls[1]) <= 0.005 and recalls[0] > 0.85, recalls
