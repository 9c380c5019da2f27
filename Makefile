# Every target installs what it needs into .venv first, so one command works on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# setuptools warns at every editable install of a flat layout that folders named like the
# packages may shadow them (9 lines); bot/install.py checks exactly that at each start.
QUIET_EDITABLE := PYTHONWARNINGS="ignore:Editable installation"

.PHONY: demo test test-delay lint bench eval clean docker-smoke llm-smoke eval-answers

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(QUIET_EDITABLE) $(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)  ## console on the demo wiki that ships inside the package
	$(BIN)/wikibot console

test: $(STAMP)  ## lint and the whole test suite
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

test-delay: $(STAMP)  ## the /support end-to-end tests with 80 ms of network delay each way
	STANDIN_DELAY=0.08 $(BIN)/python -m pytest -q tests/bot/test_support*.py

bench: $(STAMP)  ## speed and memory figures on ../shared/wiki-snapshot (SCALE=10: 10x wiki)
	$(BIN)/python -m benchmarks $(if $(SCALE),--scale $(SCALE))

docker-smoke: $(STAMP)  ## build the Docker image and run it as deployed (root and a Docker engine)
	scripts/docker-smoke.sh

EVAL_WIKI ?= ../shared/wiki-snapshot
EVAL_REQUESTS ?= ../shared/eval-dev/requests.jsonl
EVAL_WIKI2 ?= ../shared/wiki-snapshot-2026-08-04
EVAL_REQUESTS2 ?= ../shared/eval-dev/requests-2026-08-04.jsonl

eval: $(STAMP)  ## triage and /search scored on both judged dev sets, apart and pooled
	@for f in "$(EVAL_WIKI)" "$(EVAL_REQUESTS)" "$(EVAL_WIKI2)" "$(EVAL_REQUESTS2)"; do \
		if [ ! -e "$$f" ]; then \
			echo "make eval needs the wiki snapshots and the judged requests beside the repository:"; \
			echo "  $$f is missing."; \
			echo "Set EVAL_WIKI/EVAL_REQUESTS and EVAL_WIKI2/EVAL_REQUESTS2, or run:"; \
			echo "  $(BIN)/wikibot eval --set WIKI REQUESTS [--set WIKI REQUESTS ...]"; \
			exit 2; \
		fi; \
	done
	$(BIN)/wikibot eval --calibration \
		--set $(EVAL_WIKI) $(EVAL_REQUESTS) --set $(EVAL_WIKI2) $(EVAL_REQUESTS2)

llm-smoke: $(STAMP)  ## /ask against a real server: SmolLM2-135M on llama-cpp-python (skips if it cannot build)
	scripts/llm-smoke.sh

eval-answers: $(STAMP)  ## /ask scored on a model server: make eval-answers LLM_URL=URL LLM_MODEL=NAME
	@if [ -z "$(LLM_URL)" ] || [ -z "$(LLM_MODEL)" ]; then \
		echo "make eval-answers needs LLM_URL=http://host:port/v1 LLM_MODEL=NAME"; exit 2; fi
	$(BIN)/wikibot eval --answers --llm-url $(LLM_URL) --llm-model $(LLM_MODEL) \
		--wiki $(EVAL_WIKI) $(EVAL_REQUESTS)

clean:
	rm -rf $(VENV) data .pytest_cache .wheelhouse
