"""Does the evidence reach the model when a question is asked of a whole collection, or of two contracts?

From cuad_dev's labels (a contract holds a clause where its category's question is answerable), collection
questions over 100 contracts for 20 clause kinds, in the words a user would use ("Which of these contracts
have a non-compete clause?"), and comparison questions over pairs of contracts that both hold the clause,
each naming its two contracts by their company as a user would ("Compare the non-compete clauses of the
Dynamex and the Accuray agreements"). What is scored is the prompt docqa builds for each contract
(`DocQA.prompts`: no model runs): the share of contracts holding the clause whose labelled span (the scoring
rule of ../shared/data/README.md) is in that contract's prompt; for a comparison, both contracts' spans,
and whether both contracts were found by their names. The lookup path (the collection's top 3 chunks) is
scored on the same questions for reference: it can reach 3 contracts at most.

What the collection path tunes (chunks searched per document, the weight of a paragraph's title, whether the
collection's best paragraphs widen the question (docqa.answering.feedback); for comparisons, the tokens a question
over few documents spends) is chosen on half of the contracts (split by a hash of the file
name) and reported on the other half; `--pairs-only` measures the comparisons alone at the default settings. Each
collection question is asked of all the contracts, as a user asks it: a contract's share of the prompt tokens
depends on what the others need (docqa.answering.shares). Tokens are counted
with Qwen's tokenizer (a vocabulary-only GGUF).

    python -m bench.collection_evidence --data ../shared/data/cuad_dev [--contracts 100] [--defaults]

`--defaults` scores both halves and the comparisons at the default settings, without the grid: for a change
that tunes no constant of the grid (its result file is named as the grid's).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import logging
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.result_files import commit, new_result_path
from docqa.answering import packing
from docqa.core.requests import AskRequest
from docqa.core.settings import ReadingSettings, RetrievalSettings, Settings
from docqa.core.streams import GenerationStream
from docqa.core.types import GeneratorInfo, GeneratorStats
from docqa.eval.scoring import is_hit
from docqa.llama.vocab import VocabCounter
from docqa.service import DocQA

QWEN_VOCAB = Path(__file__).resolve().parents[2] / "shared" / "tools" / "ggml-vocab-qwen2.gguf"
# CUAD's category -> how a user asks it of a folder, and the clause's name in a comparison.
QUESTIONS = {
    "Non-Compete": ("Which of these contracts have a non-compete clause?", "non-compete"),
    "Governing Law": ("Which law governs each of these contracts?", "governing law"),
    "Anti-Assignment": ("Which contracts restrict assignment without the other party's consent?", "assignment"),
    "Cap On Liability": ("Which of these contracts cap a party's liability?", "limitation of liability"),
    "Audit Rights": ("Which agreements give a party the right to audit the other's books and records?", "audit"),
    "Termination For Convenience": ("Which contracts can be terminated for convenience?", "termination"),
    "Exclusivity": ("Which of these agreements include an exclusivity commitment?", "exclusivity"),
    "Insurance": ("Which contracts require a party to maintain insurance?", "insurance"),
    "Change Of Control": ("Which contracts have a change of control provision?", "change of control"),
    "Most Favored Nation": ("Which agreements have a most favored nation clause?", "most favored nation"),
    "Liquidated Damages": ("Which contracts provide for liquidated damages?", "liquidated damages"),
    "Renewal Term": ("Which of these contracts renew automatically, and for how long?", "renewal"),
    "Minimum Commitment": ("Which contracts set a minimum purchase commitment?", "minimum purchase"),
    "Ip Ownership Assignment": ("Which contracts assign ownership of intellectual property to the other party?", "IP"),
    "Revenue/Profit Sharing": ("Which agreements require sharing revenue or profits?", "revenue sharing"),
    "Warranty Duration": ("Which contracts state how long the warranty lasts?", "warranty"),
    "No-Solicit Of Employees": ("Which contracts forbid soliciting or hiring the other party's employees?", "no-hire"),
    "Rofr/Rofo/Rofn": ("Which agreements grant a right of first refusal or first offer?", "right of first refusal"),
    "Post-Termination Services": ("Which contracts impose obligations after termination?", "post-termination"),
    "Expiration Date": ("When does each of these contracts expire?", "expiration"),
}
# Earlier runs chose 2,048 tokens and a context weight of 1.0 (cpu_collection_evidence_2026-12-06_83f6a71+.json),
# then the clause words and 4 chunks (..._ced67fb.json); since each document's share depends on the others'
# needs, the question is asked of the whole collection. The title weight (1.0 over 0.0) and the collection's own
# words (on) were chosen on half A with 4 or 6 chunks (..._1ade28d.json: both choices won at both depths); this
# grid searches the chunks further (4 and 6 tied there); for comparisons, the tokens a question over few
# documents spends.
GRID: dict[str, tuple[Any, ...]] = {
    "passages_per_document": (4, 6, 8, 10),
    "title_weight": (1.0,),
    "collection_feedback": (True,),
}
FEW_DOCUMENTS_TOKENS = (16_384, 32_768)


class CountingOnly:
    """The Generator protocol for building prompts: Qwen3's template and tokenizer, no weights, no answers."""

    def __init__(self, vocab: Path, n_ctx: int = 16384) -> None:
        self.count_tokens = VocabCounter(vocab, "qwen3")
        self.info = GeneratorInfo(model_id="qwen3-vocab", n_ctx=n_ctx, prompt_format="qwen3", parallel=16)

    def submit(self, prompt: str, params: Any, loop: Any = None) -> GenerationStream:
        raise RuntimeError("this bench builds prompts only")

    def stats(self) -> GeneratorStats:
        return GeneratorStats(kind="counting")

    def close(self) -> None:
        pass


def _half(name: str) -> str:
    return "A" if int(hashlib.sha256(name.encode()).hexdigest(), 16) % 2 == 0 else "B"


def _company(name: str) -> str:
    """How a user would call a CUAD contract: its filer's name, from the file name's first part, in words
    ("EmmisCommunicationsCorp" -> "Emmis Communications"; an all-capitals run stays one word)."""
    first = re.split(r"[_\s]", name)[0]
    first = re.sub(r"(?:INC|CORP|LLC|LTD|CO|Inc|Corp|Llc|Ltd|Co)$", "", first) or first
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", first)


def _load(data: Path, contracts: int) -> tuple[list[str], dict[str, dict[str, list[str]]]]:
    rows = [json.loads(line) for line in (data / "qa.jsonl").open()]
    names = sorted({Path(r["doc"]).name for r in rows}, key=lambda n: hashlib.sha256(n.encode()).hexdigest())
    chosen = names[:contracts]
    spans: dict[str, dict[str, list[str]]] = defaultdict(dict)
    for r in rows:
        name = Path(r["doc"]).name
        if name in chosen and r["category"] in QUESTIONS and not r["is_impossible"] and r["answers"]:
            spans[r["category"]][name] = [a["text"] for a in r["answers"]]
    return chosen, spans


def _hits(prompts: list[tuple[tuple[int, ...], str]], document_id: int, answers: list[str]) -> bool:
    return any(document_id in ids and any(is_hit(p, a) for a in answers) for ids, p in prompts)


def _score_collection(
    qa: DocQA, ids: dict[str, int], spans: dict[str, dict[str, list[str]]], halves: str = "AB"
) -> dict[str, Any]:
    """Per category: contracts holding the clause (by half) and those whose span reached their prompt, the
    question asked of the whole collection as a user asks it (each contract's share of the prompt tokens
    depends on what the others need: docqa.answering.shares); and the prompt tokens it spends."""
    out: dict[str, Any] = {}
    for category, holders in spans.items():
        question = QUESTIONS[category][0]
        lookup = qa.prompts(AskRequest(question, collection="cuad", scope="lookup"))
        prompts = qa.prompts(AskRequest(question, collection="cuad", scope="collection"))
        row: dict[str, Any] = {"prompt_tokens": sum(qa.count_tokens(p) for _, p in prompts)}
        for half in halves:
            names = [n for n in holders if _half(n) == half]
            row[half] = {
                "holders": len(names),
                "in_prompt": sum(_hits(prompts, ids[n], holders[n]) for n in names),
                "lookup_in_prompt": sum(_hits(lookup, ids[n], holders[n]) for n in names),
            }
        out[category] = row
    return out


def _totals(scores: dict[str, Any], half: str, field: str = "in_prompt") -> float | None:
    if not all(half in row for row in scores.values() if isinstance(row, dict)):
        return None
    held = sum(row[half]["holders"] for row in scores.values())
    return round(sum(row[half][field] for row in scores.values()) / max(held, 1), 4)


def _score_pairs(qa: DocQA, ids: dict[str, int], spans: dict[str, dict[str, list[str]]], half: str) -> dict[str, Any]:
    """Pairs of contracts of one half that both hold a clause (consecutive holders, by name), named by company."""
    pairs = found = both = named = 0
    for category, holders in spans.items():
        names = sorted(n for n in holders if _half(n) == half and _company(n).replace(" ", "").isalpha())
        for a, b in zip(names[::2], names[1::2], strict=False):
            if _company(a).lower() == _company(b).lower():
                continue
            question = (
                f"Compare the {QUESTIONS[category][1]} clauses of the {_company(a)} and the {_company(b)} agreements"
            )
            asked = AskRequest(question, collection="cuad")
            prompts = qa.prompts(asked)
            scope, documents = qa.scope_of(asked)
            pairs += 1
            named += scope == "compare" and set(documents) == {ids[a], ids[b]}
            in_a, in_b = _hits(prompts, ids[a], holders[a]), _hits(prompts, ids[b], holders[b])
            found += in_a + in_b
            both += in_a and in_b
    return {
        "pairs": pairs,
        "both_documents_named": round(named / max(pairs, 1), 4),
        "spans_in_prompt": round(found / max(2 * pairs, 1), 4),
        "both_spans_in_prompt": round(both / max(pairs, 1), 4),
    }


def _use(qa: DocQA, base: Settings, reading: ReadingSettings) -> None:
    qa.settings = base.model_copy(update={"reading": reading})
    qa._asker.settings = qa.settings


def _at_defaults(
    qa: DocQA, ids: dict[str, int], spans: dict[str, dict[str, list[str]]], base: Settings, contracts: int
) -> dict[str, Any]:
    """Both halves and the comparisons at the default settings (a change that tunes nothing: no grid)."""
    scores = _score_collection(qa, ids, spans, "AB")
    return {
        "bench": "collection_evidence_defaults",
        "commit": commit(),
        "contracts": contracts,
        "reading": base.reading.model_dump(),
        "title_weight": packing.TITLE_WEIGHT,
        "collection_evidence": {h: _totals(scores, h) for h in "AB"},
        "lookup_top3_evidence": {h: _totals(scores, h, "lookup_in_prompt") for h in "AB"},
        "prompt_tokens_per_question": {c: row["prompt_tokens"] for c, row in scores.items()},
        "by_category": {c: {h: row[h] for h in "AB"} for c, row in scores.items()},
        "comparisons": {h: _score_pairs(qa, ids, spans, h) for h in "AB"},
    }


def _write(result: dict[str, Any], name: str) -> None:
    path = new_result_path(name)
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2), f"written to {path}", sep="\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/cuad_dev"))
    parser.add_argument("--contracts", type=int, default=100)
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/docqa-collection-evidence"))
    parser.add_argument("--vocab", type=Path, default=QWEN_VOCAB)
    parser.add_argument("--pairs-only", action="store_true", help="the comparisons alone, at the default settings")
    parser.add_argument("--defaults", action="store_true", help="both halves at the default settings, no grid")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    chosen, spans = _load(args.data, args.contracts)
    generator = CountingOnly(args.vocab)
    base = Settings(data_dir=args.data_dir, retrieval=RetrievalSettings(retriever="bm25"))
    qa = DocQA(base, None, generator)
    started = time.perf_counter()
    qa.ingest([args.data / "txt" / name for name in chosen], collection="cuad")
    ingest_s = time.perf_counter() - started
    ids = {d.name: d.id for d in qa.documents("cuad")}
    if args.pairs_only:
        pairs_only = {"bench": "collection_evidence_pairs", "commit": commit(), "reading": base.reading.model_dump(),
                      "comparisons": {half: _score_pairs(qa, ids, spans, half) for half in "AB"}}  # fmt: skip
        _write(pairs_only, "cpu_comparison_evidence")
        return
    if args.defaults:
        _write(_at_defaults(qa, ids, spans, base, len(chosen)), "cpu_collection_evidence")
        return
    grid: list[dict[str, Any]] = []
    for k, title, learn in itertools.product(*GRID.values()):
        packing.TITLE_WEIGHT = title
        _use(qa, base, ReadingSettings(passages_per_document=k, collection_feedback=learn))
        scores = _score_collection(qa, ids, spans, "A")
        grid.append({"passages_per_document": k, "title_weight": title, "collection_feedback": learn})
        grid[-1]["A"] = _totals(scores, "A")
        print(f"k={k} title={title} feedback={learn}: A {grid[-1]['A']}", flush=True)
    # chosen on half A: the highest evidence share, then the fewer chunks, no title weight, no feedback (simpler)
    best = max(grid, key=lambda g: (g["A"], -g["passages_per_document"], -g["title_weight"], -g["collection_feedback"]))
    packing.TITLE_WEIGHT = best["title_weight"]
    picked = {
        "passages_per_document": best["passages_per_document"],
        "collection_feedback": best["collection_feedback"],
    }
    pair_grid = {}
    for few in FEW_DOCUMENTS_TOKENS:
        _use(qa, base, ReadingSettings(**picked, few_documents_tokens=few))
        pair_grid[few] = _score_pairs(qa, ids, spans, "A")
        print(f"few_documents_tokens={few}: A {pair_grid[few]}", flush=True)
    few = max(FEW_DOCUMENTS_TOKENS, key=lambda f: (pair_grid[f]["both_spans_in_prompt"], -f))
    chosen_reading = ReadingSettings(**picked, few_documents_tokens=few)
    _use(qa, base, chosen_reading)
    best["scores"] = _score_collection(qa, ids, spans, "AB")
    best["B"] = _totals(best["scores"], "B")
    pairs = {"A": pair_grid[few], "B": _score_pairs(qa, ids, spans, "B")}
    result = {
        "bench": "collection_evidence",
        "commit": commit(),
        "contracts": len(chosen),
        "ingest_s": round(ingest_s, 1),
        "categories": len(spans),
        "chosen_on_A": {**{k: best[k] for k in GRID}, "few_documents_tokens": few},
        "reading": chosen_reading.model_dump(),
        "collection_evidence": {"A": best["A"], "B": best["B"]},
        "lookup_top3_evidence": {h: _totals(best["scores"], h, "lookup_in_prompt") for h in "AB"},
        "prompt_tokens_per_question": {c: row["prompt_tokens"] for c, row in best["scores"].items()},
        "by_category_B": {c: row["B"] for c, row in best["scores"].items()},
        "comparisons": pairs,
        "grid": [{k: v for k, v in g.items() if k != "scores"} for g in grid],
        "pair_grid_A": pair_grid,
    }
    path = new_result_path("cpu_collection_evidence")
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k not in ("grid", "by_category_B")}, indent=2))
    print(f"written to {path}")
    qa.close()


if __name__ == "__main__":
    main()
