#!/bin/bash
# On the GPU device, from the project root, with .gpu (bench: see docs/benchmarks.md) and .whl carried.
# Stage 1 (`bash bench/gpu_run.sh build`): build llama.cpp + llama-cpp-python with CUDA, write the
# Qwen3-14B-shaped Q4_K_M model. Stage 2 (`bash bench/gpu_run.sh bench`): ceilings + docqa's engine.
set -u
W=/root/w B=/root/w/lcp/vendor/llama.cpp/build/bin
export LD_LIBRARY_PATH=$B LLAMA_CPP_LIB_PATH=$B PYTHONPATH=/tmp/site:$W/lcp:$W/lcp/vendor/llama.cpp/gguf-py:$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
if [ "${1:-bench}" = build ]; then
  WAIT=560 bash .gpu/build_on_device.sh
  [ -f $W/q14.gguf ] || python3 $W/make_qwen3_gguf.py --preset 14b --vocab $W/lcp/vendor/llama.cpp/models/ggml-vocab-qwen2.gguf --out $W/q14.gguf
  ls -la $W/q14.gguf; nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv
else
  PYTHONUNBUFFERED=1 python3 bench/gpu_engine_bench.py --model $W/q14.gguf --bin $B --out ${OUT:-.}/gpu_bench.json ${EXTRA:-}
fi
