"""How much host memory one embedding costs, by embed.max_output_mb (issue 60, item 3): each setting in its own
child process (llama.cpp keeps its output buffer at the largest size it has seen, so a process measures one
setting), embedding one 8,000-character text with the demo model (262,144-word vocabulary, mean pooling).

    python -m bench.embedder_memory [--bounds 0,256,1024]     (0: no bound, as before)

Writes bench/results/embedder_memory_<date>_<commit>.json."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from bench.result_files import commit, new_result_path
from docqa.llama.model_files import demo_model_path

_CHILD = """
import json, resource, sys, time
from pathlib import Path
from docqa.core.settings import EmbedSettings
from docqa.llama.embedder import LlamaEmbedder
bound = int(sys.argv[2])
embedder = LlamaEmbedder(Path(sys.argv[1]), EmbedSettings(max_output_mb=bound or 10**6))
loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
text = ("The supplier shall deliver the goods within thirty days of the order. " * 120)[:8000]
start = time.perf_counter()
embedder.embed_documents([text])
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"max_output_mb": bound, "window": embedder.window, "grew_mb": round((peak - loaded) / 1024),
                  "seconds": round(seconds, 1)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bounds", default="0,256,1024", help="Comma-separated max_output_mb values; 0: unbounded.")
    args = parser.parse_args()
    model = demo_model_path()
    rows = []
    for bound in (int(b) for b in args.bounds.split(",")):
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(model), str(bound)], capture_output=True, text=True, check=True
        )
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        sys.stderr.write(f"{rows[-1]}\n")
    path = new_result_path("embedder_memory")
    path.write_text(json.dumps({"commit": commit(), "model": model.name, "rows": rows}, indent=2) + "\n")
    sys.stderr.write(f"written {path}\n")


if __name__ == "__main__":
    main()
