"""Does the catalog read a filing's form and fiscal year right? Scored against FinanceBench's file names
(`3M_2018_10K.pdf`, `AMCOR_2023Q2_10Q.pdf`, `PEPSICO_2023Q1_EARNINGS.pdf`: company, fiscal year, form).

With --hide-names the files are copied under names that say nothing (`doc01.pdf`), so the entry must come
from the text alone: what a user's own file names would give.

    python -m bench.catalog_check --docs ../shared/data/financebench_dev/pdf [--hide-names]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
from pathlib import Path

from docqa.core.settings import Settings
from docqa.service import DocQA

_NAME = re.compile(r"([A-Z0-9]+)_(\d{4})(?:Q\d)?_(10K|10Q|8K|EARNINGS)")
_FORMS = {"10K": "10-K", "10Q": "10-Q", "8K": "8-K", "EARNINGS": "earnings"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=Path, required=True)
    parser.add_argument("--hide-names", action="store_true")
    args = parser.parse_args()
    truth = {p.name: m for p in sorted(args.docs.glob("*.pdf")) if (m := _NAME.match(p.name))}
    with tempfile.TemporaryDirectory(prefix="docqa-catalog-") as tmp:
        folder = Path(tmp) / "files"
        folder.mkdir()
        shown: dict[str, str] = {}
        for n, name in enumerate(truth, 1):
            copy = f"doc{n:02d}.pdf" if args.hide_names else name
            shutil.copy(args.docs / name, folder / copy)
            shown[copy] = name
        with DocQA.open(Settings.load(data_dir=Path(tmp) / "home"), embedder=False, generator=False) as qa:
            qa.ingest([folder], "catalog")
            entries = {shown[d.name]: d.as_dict()["catalog"] for d in qa.documents("catalog")}
    wrong = []
    for name, found in sorted(entries.items()):
        expected = {"form": _FORMS[truth[name].group(3)], "fiscal_year": int(truth[name].group(2))}
        got = {k: found.get(k) for k in expected}
        if got != expected:
            wrong.append({"file": name, "expected": expected, "read": got})
    report = {
        "documents": len(entries),
        "form_and_fiscal_year_right": len(entries) - len(wrong),
        "names_hidden": args.hide_names,
        "wrong": wrong,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
