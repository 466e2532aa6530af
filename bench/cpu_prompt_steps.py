"""First tokens of prompts read together, with a step that finishes a prompt ended there or filled to n_batch
(DOCQA_LLM_PROMPT_STEP_ENDS_WITH_PROMPT), on this machine's CPU with the demo model: the batching engine alone,
each setting in turn, alternated over rounds so that drift on the machine shows.

Several prompts of different lengths are submitted in one step (the engine loop held while they are queued);
each one's time to its first token is taken from the submission, the answers are 8 tokens (EOS ignored). On a
CPU the engine reads prompts in steps of n_batch tokens (512 here, so that a prompt takes several steps) and
generating rows ride every step.

    python -m bench.cpu_prompt_steps [--rounds 3] [--lengths 700 1100 1500 1900]

Writes bench/results/cpu_prompt_steps_<date>_<commit>.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from pathlib import Path

from bench.result_files import new_result_path
from docqa.core.sampling_params import SamplingParams
from docqa.core.settings import LLMSettings
from docqa.core.streams import GenerationStream
from docqa.engine.batching import BatchingGenerator
from docqa.llama.model_files import demo_model_path

WORDS = "the agreement shall remain in force for a term of five years unless terminated by either party"


def prompt_of(tokens: int, engine: BatchingGenerator, salt: int) -> str:
    """A prompt of about `tokens` tokens, different from the others from its first word (no shared prefix)."""
    text = f"Document {salt}: "
    while engine.count_tokens(text) < tokens:
        text += f"{WORDS} ({salt}). "
    return text


def one_run(model: Path, lengths: list[int], ends: bool, n_batch: int) -> dict[str, float]:
    settings = LLMSettings(
        n_ctx=4096,
        n_parallel=len(lengths),
        n_batch=n_batch,
        n_ubatch=n_batch,
        prefix_cache_slots=0,
        prompt_step_ends_with_prompt=ends,
    )
    engine = BatchingGenerator(model, settings)
    try:
        params = SamplingParams(temperature=0.0, top_p=1.0, top_k=1, min_p=0.0, max_tokens=8, ignore_eos=True)
        prompts = [prompt_of(n, engine, i) for i, n in enumerate(lengths)]
        for _ in engine.submit("warm up", SamplingParams(temperature=0.0, top_p=1.0, top_k=1, min_p=0.0, max_tokens=1)):
            pass
        with engine._step_lock:  # queued together: admitted in one step
            start = time.perf_counter()
            streams = [engine.submit(p, params) for p in prompts]
        first: list[float] = []

        def read(stream: GenerationStream) -> None:
            """Each stream in a thread of its own: a stream holds its events until read, so reading them one
            after another would time a later stream's first token when the earlier ones are done."""
            timed = False
            for event in stream:
                if event.kind == "text" and not timed:
                    first.append(time.perf_counter() - start)
                    timed = True

        readers = [threading.Thread(target=read, args=(stream,)) for stream in streams]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join()
        wall = time.perf_counter() - start
    finally:
        engine.close()
    return {"ttft_p50_s": statistics.median(first), "ttft_mean_s": statistics.mean(first), "wall_s": wall}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--lengths", type=int, nargs="+", default=[700, 1100, 1500, 1900])
    ap.add_argument("--n-batch", type=int, default=512)
    args = ap.parse_args()
    model = demo_model_path()
    runs: dict[str, list[dict[str, float]]] = {"ends_at_prompt_end": [], "filled_to_n_batch": []}
    for _ in range(args.rounds):
        for ends, tag in ((True, "ends_at_prompt_end"), (False, "filled_to_n_batch")):
            runs[tag].append(one_run(model, args.lengths, ends, args.n_batch))
            print(tag, json.dumps(runs[tag][-1]), flush=True)
    summary = {
        tag: {key: statistics.median(run[key] for run in found) for key in found[0]} for tag, found in runs.items()
    }
    out = new_result_path("cpu_prompt_steps")
    out.write_text(
        json.dumps({"lengths": args.lengths, "n_batch": args.n_batch, "median": summary, "runs": runs}, indent=1)
    )
    print(json.dumps(summary, indent=1), f"written {out}")


if __name__ == "__main__":
    main()
