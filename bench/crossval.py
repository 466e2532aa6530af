"""Company-grouped cross-validation of the keyword search's ranking constants
(docqa.store.keyword.ranking.RankingConstants) and of the document profiles' weights (`sec.section`,
`sec.statement`, `csrc.section`, `csrc.profile_section`: docqa.profiles).

A constant swept on the questions it is then scored on reports a figure that other companies' filings
will not see. Here the QA set's rows are grouped by company (by default the document file name's first
part, FinanceBench's naming: `3M_2018_10K.pdf` -> 3M), the companies split into two folds, and for each
fold the grid point that scores best on it is chosen and then scored on the other fold. The fold-out
figure pools the two held-out halves: each question is scored by a constant chosen without its company.
The dev figure (every question, the shipped defaults) is reported beside it.

The score is recall@3 (page recall where rows give pages, as `docqa eval` reports it; `--k 1` for constants
that decide what comes first), over the whole collection ("all filings") and within the question's own
document ("own filing"); a grid point is chosen by the sum of the two.

    python -m bench.crossval --qa ../shared/data/financebench_dev/qa.jsonl --data-dir /tmp/fb_cv \\
        --grid sec.section=0,1,2,4,8 [--grid sec.statement=4,8,12] [--grid title_weight=2,4,8]

Writes bench/results/crossval_<set>_<date>_<commit>.json (never over an earlier run's file).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from bench.result_files import new_result_path
from docqa.core.settings import Settings
from docqa.eval.evaluation import EvalOptions, EvalRow, document_ids_for, evaluate, load_rows
from docqa.profiles.registry import ProfileSet
from docqa.service import DocQA
from docqa.store.keyword.ranking import DEFAULT_RANKING, RankingConstants

SCOPES = ("corpus", "document")  # all documents searched; the question's own document only
K = 3  # the default cut-off; --k picks another (recall@1 for constants that decide first place)


def company_of(row: EvalRow, pattern: re.Pattern[str]) -> str:
    name = Path(row.doc or "").name
    found = pattern.match(name)
    return (found.group(1) if found else name).upper()


def folds(companies: Sequence[str]) -> tuple[set[str], set[str]]:
    """Two halves, by alternating over the sorted names: fixed, and blind to the questions."""
    ordered = sorted(set(companies))
    return set(ordered[0::2]), set(ordered[1::2])


def grid_points(grid: Sequence[str]) -> list[dict[str, Any]]:
    axes = []
    for spec in grid:
        name, _, values = spec.partition("=")
        shipped = _shipped(spec, name)  # always tried: the dev figure is the shipped default's
        kind = type(shipped)
        chosen = [kind(v) for v in values.split(",") if v]
        axes.append([(name, v) for v in (chosen if shipped in chosen else [shipped, *chosen])])
    return [dict(point) for point in itertools.product(*axes)]


def _shipped(spec: str, name: str) -> Any:
    """The shipped value of a ranking constant or of a profile's weight ("sec.section")."""
    if name in RankingConstants.names():
        return getattr(DEFAULT_RANKING, name)
    profile, _, field = name.partition(".")
    weights = {p.name: getattr(p, "weights", None) for p in ProfileSet.named("auto").profiles}
    if weights.get(profile) is not None and hasattr(weights[profile], field):
        return getattr(weights[profile], field)
    known = [*RankingConstants.names(), *(f"{n}.{f}" for n, w in weights.items() if w for f in asdict(w))]
    raise SystemExit(f"--grid {spec}: no ranking constant or profile weight {name!r} (known: {', '.join(known)})")


def _apply(qa: DocQA, point: dict[str, Any]) -> None:
    """Sets the point's ranking constants on the store and its profile weights on the retriever."""
    qa.store.ranking = replace(DEFAULT_RANKING, **{k: v for k, v in point.items() if "." not in k})
    profiles = qa.profiles
    for key, value in point.items():
        if "." in key:
            name, _, field = key.partition(".")
            profiles = profiles.with_weights(name, **{field: value})
    qa.retriever.profiles = profiles


def ranks_of(qa: DocQA, rows: list[EvalRow], ids: dict[str, int], collection: str, scope: str) -> dict[str, int | None]:
    """Each scored row's rank of its first hit (its page's where rows give pages)."""
    found: dict[str, int | None] = {}

    def keep(detail: dict[str, Any]) -> None:
        found[detail["id"]] = detail["page_rank"] if detail["page_rank"] is not None or by_page else detail["rank"]

    by_page = any(r.pages for r in rows)
    evaluate(qa, rows, ids, collection, EvalOptions(retriever="bm25", ks=(K,), scope=scope, details=keep))  # type: ignore[arg-type]
    return found


def hits(ranks: dict[str, int | None], ids: set[str], k: int = K) -> int:
    return sum(1 for row_id in ids if (rank := ranks.get(row_id)) is not None and rank <= k)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, required=True, help="A data home; the set is ingested there once.")
    parser.add_argument("--doc-field", default="doc_pdf")
    parser.add_argument("--docs", type=Path, default=None, help="The rows' documents' folder (default: --qa's)")
    parser.add_argument("--grid", action="append", default=[], help="name=v1,v2,... (repeat for a product grid)")
    parser.add_argument("--group-pattern", default=r"([^_]+)_", help="Regex on the file name; group 1 is the company.")
    parser.add_argument("--out", type=Path, default=None, help="Result file (default: bench/results, dated).")
    parser.add_argument("--k", type=int, default=K, help="Score recall@k (default 3; 1 for what decides first place)")
    parser.add_argument(
        "--scopes",
        default=",".join(SCOPES),
        help="corpus, document or both (corpus alone halves the time)",
    )
    args = parser.parse_args()
    scopes = tuple(s for s in args.scopes.split(",") if s in SCOPES) or SCOPES

    rows = load_rows(args.qa, args.doc_field)
    settings = Settings.load(data_dir=args.data_dir)
    qa = DocQA.open(settings, embedder=False, generator=False)
    collection = f"crossval-{args.qa.parent.name}-{args.doc_field}"[:64]
    try:
        docs = args.docs or args.qa.parent
        qa.ingest(sorted({docs / r.doc for r in rows if r.doc}), collection)
        ids = document_ids_for(qa, collection, docs, rows)
        scored = [r for r in rows if r.answerable and r.doc in ids]
        pattern = re.compile(args.group_pattern)
        company = {r.id: company_of(r, pattern) for r in scored}
        first, second = folds(list(company.values()))
        fold_rows = [{r.id for r in scored if company[r.id] in half} for half in (first, second)]
        points = grid_points(args.grid) or [{}]
        results = []
        for point in points:
            _apply(qa, point)
            ranks = {scope: ranks_of(qa, scored, ids, collection, scope) for scope in scopes}
            results.append({"point": point, "ranks": ranks})
            figures = {scope: round(hits(ranks[scope], set(company), args.k) / len(company), 4) for scope in scopes}
            print(json.dumps({"point": point, f"recall@{args.k}": figures}), flush=True)
        _apply(qa, {})
    finally:
        qa.close()
    report = _report(results, fold_rows, scored, scopes, args.k, first, second)
    report.update(qa_file=str(args.qa), doc_field=args.doc_field, defaults=asdict(DEFAULT_RANKING))
    out = args.out or new_result_path(f"crossval_{args.qa.parent.name}")
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k not in ("points", "defaults")}, indent=2))
    print(f"written {out}")


def _score(result: dict[str, Any], ids: set[str], k: int) -> int:
    return sum(hits(ranks, ids, k) for ranks in result["ranks"].values())


def _report(
    results: list[dict[str, Any]],
    fold_rows: list[set[str]],
    scored: list[EvalRow],
    scopes: tuple[str, ...],
    k: int,
    *companies: set[str],
) -> dict[str, Any]:
    everyone = {r.id for r in scored}
    default = next((r for r in results if all(_shipped(name, name) == v for name, v in r["point"].items())), results[0])
    held_out = dict.fromkeys(scopes, 0)
    chosen = []
    for n, rows in enumerate(fold_rows):
        other = fold_rows[1 - n]
        # the best on this fold; ties go to the shipped default, then to the grid's order
        best = max(results, key=lambda r: (_score(r, rows, k), r is default))
        chosen.append({"chosen_on": sorted(companies[n]), "point": best["point"], "scored_on_rows": len(other)})
        for scope in scopes:
            held_out[scope] += hits(best["ranks"][scope], other, k)
    return {
        "questions": len(everyone),
        "folds": chosen,
        f"fold_out_recall@{k}": {scope: round(held_out[scope] / len(everyone), 4) for scope in scopes},
        f"dev_recall@{k}_defaults": {
            scope: round(hits(default["ranks"][scope], everyone, k) / len(everyone), 4) for scope in scopes
        },
        "default_point": default["point"],
        "points": [
            {
                "point": r["point"],
                f"recall@{k}": {
                    scope: round(hits(r["ranks"][scope], everyone, k) / len(everyone), 4) for scope in scopes
                },
                "per_fold_hits": [[hits(r["ranks"][scope], rows, k) for scope in scopes] for rows in fold_rows],
            }
            for r in results
        ],
    }


if __name__ == "__main__":
    main()
