"""Smallest engine run on the device, with faulthandler: python3 -X faulthandler bench/gpu_smoke.py MODEL"""

import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docqa.engine.batching import BatchingGenerator  # noqa: E402
from docqa.generation import NON_THINKING_SAMPLING  # noqa: E402
from docqa.settings import LLMSettings  # noqa: E402

print("loading", flush=True)
engine = BatchingGenerator(Path(sys.argv[1]), LLMSettings(n_ctx=4096, n_parallel=2, kv_cells=8192))
print("loaded", engine.memory_report(), flush=True)
events = list(engine.submit("Hello there, " * 50, replace(NON_THINKING_SAMPLING, max_tokens=16, ignore_eos=True)))
print("events", len(events), events[-1], flush=True)
engine.close()
