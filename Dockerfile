# docqa with llama.cpp compiled for NVIDIA GPUs. Not built in docqa's CI (no Docker engine there).
#   docker build -t docqa .
#   docker run --gpus all -p 8000:8000 -v docqa-data:/data -v /models:/models:ro \
#     -e DOCQA_LLM_MODEL=/models/Qwen3-14B-Q4_K_M.gguf -e DOCQA_EMBED_MODEL=/models/Qwen3-Embedding-0.6B-Q8_0.gguf docqa
ARG CUDA_VERSION=12.6.3

FROM nvidia/cuda:${CUDA_VERSION}-devel-ubuntu24.04 AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv python3-dev build-essential cmake git \
    npm && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/docqa
# Link against the driver stub at build time; the real libcuda comes from the host at run time.
# GGML_NATIVE=OFF: the image runs on CPUs other than the build machine's, so no -march=native (which
# would also bring in the AMX kernels that crash on some Sapphire Rapids hosts, llama.cpp#20824).
ENV CMAKE_ARGS="-DGGML_CUDA=on -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DCMAKE_CUDA_ARCHITECTURES=86;89;90" \
    LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs
WORKDIR /src
COPY pyproject.toml README.md ./
COPY docqa ./docqa
COPY ingest ./ingest
COPY tools/vendor_pdfjs.sh ./tools/
RUN bash tools/vendor_pdfjs.sh  # the page's PDF viewer (PDF.js from npm), packaged with docqa/web
RUN /opt/docqa/bin/pip install --no-cache-dir ".[hub,postgres,s3]"

FROM nvidia/cuda:${CUDA_VERSION}-runtime-ubuntu24.04
RUN apt-get update && apt-get install -y --no-install-recommends python3 libgomp1 \
        tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim \
    && rm -rf /var/lib/apt/lists/* && useradd --create-home --uid 10001 docqa && mkdir /data && chown docqa /data
COPY --from=build /opt/docqa /opt/docqa
USER docqa
ENV PATH=/opt/docqa/bin:$PATH DOCQA_DATA_DIR=/data
VOLUME /data
EXPOSE 8000
HEALTHCHECK CMD python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health')"
CMD ["docqa", "serve", "--host", "0.0.0.0", "--port", "8000"]
