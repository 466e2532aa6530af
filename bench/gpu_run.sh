#!/bin/bash
# On the GPU device, from the project root, with .gpu (bench: see docs/benchmarks.md) and .whl carried.
# Stage 1 (`bash bench/gpu_run.sh build`): build llama.cpp + llama-cpp-python with CUDA, write the
# Qwen3-14B-shaped Q4_K_M model. Stage 2 (`bash bench/gpu_run.sh bench`): ceilings + docqa's engine;
# `bash bench/gpu_run.sh embed`: ingest throughput with a Qwen3-Embedding-0.6B-shaped model;
# `bash bench/gpu_run.sh rerank`: a question's reranking cost with a Qwen3-Reranker-0.6B-shaped model.
# `bash bench/gpu_run.sh fit`: the KV-cache fit with the GPU made to look like a 24 GB card (QUANT=q8_0 too).
# `bash bench/gpu_run.sh probe`: single-stream decode taken apart (bench/gpu_single_stream_probe.py);
# `bash bench/gpu_run.sh batch_probe`: the 64 x 512 step taken apart (bench/gpu_batch_step_probe.py).
# `bash bench/gpu_run.sh node`: the engine in-process against the same engine behind `docqa serve
# --generator-only`, through HTTP (bench/gpu_node_bench.py). `bash bench/gpu_run.sh serve`: the whole path
# (bench/gpu_serve_bench.py: in-process, through a node, through llama-server), CUAD contracts in .cuad/;
# `bash bench/gpu_run.sh collection`: questions over whole documents and collections (bench/gpu_collection_bench.py).
# `bash bench/gpu_run.sh same_prompts`: the engine alone on the whole path's prompts, then the whole path.
# CODE=.baseline bash bench/gpu_run.sh bench: the same stage with an older commit's bench and code (OUT absolute).
# `bash bench/gpu_run.sh scale`: retrieval latency at 100k chunks on this box's CPU (no build needed;
# carry .scale_inputs, written here by `retrieval_scale_bench.py --write-inputs .scale_inputs/cuad_inputs.json`).
set -u
W=/root/w B=/root/w/lcp/vendor/llama.cpp/build/bin
export LD_LIBRARY_PATH=$B LLAMA_CPP_LIB_PATH=$B PYTHONPATH=/tmp/site:$W/lcp:$W/lcp/vendor/llama.cpp/gguf-py:$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
[ -d .whl_readers ] && python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl_readers/*.whl 2>/dev/null
python3 -c "import numpy" 2>/dev/null || python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/opt/*.whl
mkdir -p "${OUT:-.}"
if [ -n "${CODE:-}" ]; then  # an older commit's benches and code (BASELINE=<commit> bash bench/gpu_prepare.sh: .baseline)
  cd "$CODE" && export PYTHONPATH=/tmp/site:$W/lcp:$W/lcp/vendor/llama.cpp/gguf-py:$PWD && echo "code: $(cat COMMIT)"
fi
if [ "${1:-bench}" = build ]; then
  WAIT=560 bash .gpu/build_on_device.sh
  [ -n "${SKIP_Q14:-}" ] || [ -f $W/q14.gguf ] || python3 $W/make_qwen3_gguf.py --preset 14b --vocab $W/lcp/vendor/llama.cpp/models/ggml-vocab-qwen2.gguf --out $W/q14.gguf
  ls -la $W/q14.gguf; nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv
elif [ "$1" = embed ]; then
  # Qwen3-Embedding-0.6B-shaped Q8_0 model; ingest throughput against llama-bench -embd 1, same run.
  [ -f $W/emb.gguf ] || python3 $W/make_qwen3_gguf.py --preset 0.6b --quant q8_0 --vocab $W/lcp/vendor/llama.cpp/models/ggml-vocab-qwen2.gguf --out $W/emb.gguf
  PYTHONUNBUFFERED=1 python3 -m bench.gpu_embed_bench --model $W/emb.gguf --bin $B --out ${OUT:-.}/gpu_embed_bench.json ${EXTRA:-}
elif [ "$1" = rerank ]; then
  # Qwen3-Reranker-0.6B-shaped Q8_0 model; a question's reranking cost against llama-batched-bench, same run.
  [ -f $W/rr.gguf ] || python3 $W/make_qwen3_gguf.py --preset 0.6b --quant q8_0 --vocab $W/lcp/vendor/llama.cpp/models/ggml-vocab-qwen2.gguf --out $W/rr.gguf
  for n in 8 16; do
    PYTHONUNBUFFERED=1 python3 -m bench.rerank_bench --model $W/rr.gguf --bin $B --parallel $n --out ${OUT:-.}/rerank_bench_np$n.json ${EXTRA:-}
  done
elif [ "$1" = fit ]; then
  # the KV-cache fit on this GPU made to look like a 24 GB card (a ballast takes the rest), default settings
  # (QUANT=q8_0: a Qwen3-14B-shaped Q8_0 model, 15.7 GB, where the engine must run fewer sequences)
  M=$W/q14.gguf
  if [ "${QUANT:-q4_k_m}" = q8_0 ]; then
    M=$W/q14_q8.gguf
    [ -f $M ] || python3 $W/make_qwen3_gguf.py --preset 14b --quant q8_0 --vocab $W/lcp/vendor/llama.cpp/models/ggml-vocab-qwen2.gguf --out $M
  fi
  PYTHONUNBUFFERED=1 python3 -m bench.gpu_memory_fit_check --model $M --out ${OUT:-.}/memory_fit_${QUANT:-q4_k_m}.json ${EXTRA:-}
elif [ "$1" = probe ]; then
  # single-stream decode: llama-bench tg against raw decodes and the engine, on two context shapes
  PYTHONUNBUFFERED=1 python3 -m bench.gpu_single_stream_probe --model $W/q14.gguf --bin $B --out ${OUT:-.}/single_stream_probe.json ${EXTRA:-}
elif [ "$1" = batch_probe ]; then
  # 64 rows a step: llama-batched-bench npl 64 against raw decodes, the graph's top-k and the engine
  PYTHONUNBUFFERED=1 python3 -m bench.gpu_batch_step_probe --model $W/q14.gguf --bin $B --out ${OUT:-.}/batch_step_probe.json ${EXTRA:-}
elif [ "$1" = serve ]; then
  # the whole path: docqa serve over 100 CUAD contracts (carried in .cuad/), in-process and through a node
  # (SKIP_LLAMA_SERVER=1: set-ups 1 and 2 only, and any --variant)
  BIN_ARG="--bin $B"; [ -z "${SKIP_LLAMA_SERVER:-}" ] || BIN_ARG=""
  [ -n "${SKIP_SERVE:-}" ] || PYTHONUNBUFFERED=1 python3 -m bench.gpu_serve_bench --model $W/q14.gguf ${BIN_ARG:-} --cuad .cuad --out ${OUT:-.}/gpu_serve_bench.json ${EXTRA:-}
elif [ "$1" = same_prompts ]; then
  # the engine alone on the whole path's prompts, then the whole path in-process (contracts in .cuad/)
  PYTHONUNBUFFERED=1 python3 -m bench.gpu_engine_same_prompts --model $W/q14.gguf --cuad .cuad --out ${OUT:-.}/gpu_engine_same_prompts.json ${EXTRA:-}
elif [ "$1" = collection ]; then
  # questions over a collection (100 contracts in .cuad/), a 100-page document part by part, one ~100k-token
  # prompt (bench/gpu_collection_bench.py), each part in its own process, llama.cpp's tools in the same run
  for part in ${PARTS:-collection parts long}; do
    PYTHONUNBUFFERED=1 python3 -m bench.gpu_collection_bench --model $W/q14.gguf --bin $B --cuad .cuad --part $part --out ${OUT:-.}/gpu_collection_$part.json ${EXTRA:-}
  done
elif [ "$1" = node ]; then
  PYTHONUNBUFFERED=1 python3 -m bench.gpu_node_bench --model $W/q14.gguf --bin $B --out ${OUT:-.}/gpu_node_bench.json ${EXTRA:-}
elif [ "$1" = scale ]; then
  PYTHONUNBUFFERED=1 python3 -m bench.retrieval_scale_bench --inputs .scale_inputs/cuad_inputs.json --keep $W/scale100k ${EXTRA:-} > ${OUT:-.}/retrieval_scale.json
  cat ${OUT:-.}/retrieval_scale.json
else
  PYTHONUNBUFFERED=1 python3 -m bench.gpu_engine_bench --model $W/q14.gguf --bin $B --out ${OUT:-.}/gpu_bench.json ${EXTRA:-}
fi
