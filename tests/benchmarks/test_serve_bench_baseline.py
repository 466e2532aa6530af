"""The whole-path bench's --baseline-code (bench/gpu_serve_bench.py): an older checkout's code, not this one,
ingests the contracts and would serve them. A stand-in `docqa` package in a folder says which code ran."""

from __future__ import annotations

import json
import os
from pathlib import Path

from bench.gpu_serve_bench import baseline_ingested

STAND_IN = """
import json, os, sys
from pathlib import Path
Path(os.environ["DOCQA_DATA_DIR"]).mkdir(parents=True, exist_ok=True)
Path(os.environ["DOCQA_DATA_DIR"], "ran.json").write_text(json.dumps({"argv": sys.argv[1:], "file": __file__}))
"""


def test_the_older_code_ingests_into_a_data_home_of_its_own(tmp_path: Path) -> None:
    code = tmp_path / "baseline"
    (code / "docqa").mkdir(parents=True)
    (code / "docqa" / "__init__.py").write_text("")
    (code / "docqa" / "__main__.py").write_text(STAND_IN)
    (code / "COMMIT").write_text("5cc817b\n")
    contract = tmp_path / "contract.txt"
    contract.write_text("Sixty days.")
    data = tmp_path / "data"
    data.mkdir()
    # this checkout first on the import path, as on the device: the folder's code must still be the one run
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")])}
    baseline = baseline_ingested(code, env, str(data), [contract])
    ran = json.loads((data / "baseline" / "ran.json").read_text())
    assert Path(ran["file"]).resolve() == (code / "docqa" / "__main__.py").resolve()
    assert ran["argv"] == ["ingest", str(contract.resolve()), "--no-embeddings"]
    assert baseline["commit"] == "5cc817b" and baseline["cwd"] == str(code)
    assert baseline["env"]["DOCQA_DATA_DIR"] == str(data / "baseline")
