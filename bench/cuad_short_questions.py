"""CUAD's questions in a user's short words, to check constants that CUAD's fixed template cannot test.

Every CUAD question follows one template ("In the <TITLE> between <A> and <B>: <the category's question>"),
so a constant chosen on them never meets a short question such as "Which law governs this agreement?",
which names no document and leaves two or three words to rank by. This writes the rows of twelve
categories with the question replaced by one short question per category (written from the category's
name, the same for every contract), for scoring within each row's own contract:

    python -m bench.cuad_short_questions --qa ../shared/data/cuad_dev/qa.jsonl --out /tmp/cuad_short.jsonl
    python -m bench.crossval --qa /tmp/cuad_short.jsonl --docs ../shared/data/cuad_dev --doc-field doc \\
        --data-dir /tmp/cv/cuad_short --scopes document --k 1 --grid head_first_terms=1,2

With --name-party the question also names the contract the way a user might, by its first party only
("Which law governs the agreement with I-ESCROW, INC.?"), for scoring over the whole collection
(`docqa eval /tmp/cuad_party.jsonl --docs ../shared/data/cuad_dev --no-embeddings --json`).
"""

from __future__ import annotations

import argparse
import json
import re
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


# CUAD's template: "In the <TITLE> between <A> and <B>: <question>"
_TEMPLATE = re.compile(r"In the .+? between (.+?) and .+?: ")


def with_party(short: str, question: str) -> str | None:
    """The short question naming the contract by its first party; None where the template is not there."""
    found = _TEMPLATE.match(question)
    return f"{short.rstrip('?').replace('this agreement', 'the agreement')} with {found.group(1)}?" if found else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--qa", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--name-party", action="store_true", help="name the contract by its first party")
    args = ap.parse_args()
    kept: Counter[str] = Counter()
    with args.out.open("w") as out:
        for line in args.qa.read_text().splitlines():
            row = json.loads(line)
            if row["category"] not in SHORT:
                continue
            question: str | None = SHORT[row["category"]]
            if args.name_party:
                question = with_party(SHORT[row["category"]], row["question"])
            if question is not None:
                out.write(json.dumps({**row, "question": question}, ensure_ascii=False) + "\n")
                kept[row["category"]] += 1
    print(json.dumps({"rows": sum(kept.values()), "by_category": dict(kept)}))


if __name__ == "__main__":
    main()
