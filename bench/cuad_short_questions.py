"""CUAD's questions in a user's short words, to check constants that CUAD's fixed template cannot test.

Every CUAD question follows one template ("In the <TITLE> between <A> and <B>: <the category's question>"),
so a constant chosen on them never meets a short question such as "Which law governs this agreement?",
which names no document and leaves two or three words to rank by. This writes the rows of twelve
categories with the question replaced by one short question per category (written from the category's
name, the same for every contract), for scoring within each row's own contract:

    python -m bench.cuad_short_questions --qa ../shared/data/cuad_dev/qa.jsonl --out /tmp/cuad_short.jsonl
    python -m bench.crossval --qa /tmp/cuad_short.jsonl --docs ../shared/data/cuad_dev --doc-field doc \\
        --data-dir /tmp/cv/cuad_short --scopes document --k 1 --grid head_first_terms=1,2
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

SHORT = {
    "Agreement Date": "What is the date of the agreement?",
    "Anti-Assignment": "Can the agreement be assigned?",
    "Audit Rights": "Are there audit rights?",
    "Cap On Liability": "Is liability capped?",
    "Expiration Date": "When does the agreement expire?",
    "Governing Law": "Which law governs this agreement?",
    "Insurance": "What insurance is required?",
    "License Grant": "What license is granted?",
    "Non-Compete": "Is there a non-compete?",
    "Parties": "Who are the parties?",
    "Renewal Term": "How does the agreement renew?",
    "Termination For Convenience": "Can a party terminate for convenience?",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--qa", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    kept: Counter[str] = Counter()
    with args.out.open("w") as out:
        for line in args.qa.read_text().splitlines():
            row = json.loads(line)
            if row["category"] in SHORT:
                out.write(json.dumps({**row, "question": SHORT[row["category"]]}, ensure_ascii=False) + "\n")
                kept[row["category"]] += 1
    print(json.dumps({"rows": sum(kept.values()), "by_category": dict(kept)}))


if __name__ == "__main__":
    main()
