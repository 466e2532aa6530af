"""What each document profile buys: the dev sets' retrieval with the profiles as shipped (DOCQA_RETRIEVAL_PROFILES
=auto) and with none (the generic core alone), by `docqa eval` (BM25, no embeddings), in one data home per set.

    python -m bench.profile_ablation --data ../shared/data [--profiles "auto;none"] [--sets financebench,cuad]

Writes bench/results/profile_ablation_<date>_<commit>.json: per set, scope and profile setting, recall@1/@3
(page recall where the set gives pages) and the command that ran it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.result_files import commit, new_result_path

_ZH_PDF = "prospectus_zh/pdf"  # the other five prospectuses, as distractors
# set -> (QA file, docqa eval arguments beside it, scopes); the Chinese prospectus with its 5 distractors
SETS: dict[str, tuple[str, list[str], tuple[str, ...]]] = {
    "financebench": ("financebench_dev/qa.jsonl", ["--doc-field", "doc_pdf"], ("corpus", "document")),
    "cuad": ("cuad_dev/qa.jsonl", [], ("corpus", "document")),
    "prospectus_zh": (
        "prospectus_zh/qa.jsonl",
        ["--doc-field", "doc_pdf", "--extra", "prospectus_zh/pdf"],
        ("corpus",),
    ),
    "cjrc": ("cjrc_dev/qa.jsonl", [], ("corpus",)),
}


def run(data: Path, name: str, scope: str, profiles: str, home: Path) -> dict[str, Any]:
    qa, extra, _ = SETS[name]
    extra = [str(data / a) if a.endswith("/pdf") else a for a in extra]
    command = [sys.executable, "-m", "docqa", "eval", str(data / qa), *extra, "--no-embeddings", "--json",
               "--scope", scope, "--data-dir", str(home)]  # fmt: skip
    env = {**os.environ, "DOCQA_RETRIEVAL_PROFILES": profiles}
    result = json.loads(subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout)
    page = result.get("by_page", {})
    return {
        "set": name,
        "scope": scope,
        "profiles": profiles,
        "questions": result["questions"],
        "recall@1": result["recall@1"],
        "recall@3": result["recall@3"],
        "page_recall@1": page.get("recall@1"),
        "page_recall@3": page.get("recall@3"),
        "command": f"DOCQA_RETRIEVAL_PROFILES={profiles} docqa eval {' '.join(command[4:])}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="../shared/data")
    parser.add_argument("--profiles", default="auto;none", help="DOCQA_RETRIEVAL_PROFILES values, ';' between")
    parser.add_argument("--sets", default=",".join(SETS), help=f"of {', '.join(SETS)}")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="docqa-ablation-") as tmp:
        for name in args.sets.split(","):
            for scope in SETS[name][2]:
                for profiles in args.profiles.split(";"):
                    rows.append(run(args.data, name, scope, profiles, Path(tmp) / name))
                    print(json.dumps(rows[-1]), flush=True)
    out = new_result_path("profile_ablation")
    out.write_text(json.dumps({"commit": commit(), "rows": rows}, indent=2, ensure_ascii=False) + "\n")
    print(f"written {out}")


if __name__ == "__main__":
    main()
