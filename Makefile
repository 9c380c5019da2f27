# Every target installs what it needs into .venv first, so one command works on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-delay lint bench eval clean docker-smoke

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
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

docker-smoke:  ## build the Docker image and run it as deployed (root and a Docker engine)
	scripts/docker-smoke.sh

EVAL_WIKI ?= ../shared/wiki-snapshot
EVAL_REQUESTS ?= ../shared/eval-dev/requests.jsonl

eval: $(STAMP)  ## triage and /search scored on the judged dev requests
	@if [ ! -d "$(EVAL_WIKI)" ] || [ ! -f "$(EVAL_REQUESTS)" ]; then \
		echo "make eval needs the wiki snapshot and the judged requests beside the repository:"; \
		echo "  $(EVAL_WIKI) and $(EVAL_REQUESTS) (one or both are missing)."; \
		echo "Set EVAL_WIKI=DIR EVAL_REQUESTS=FILE, or run: $(BIN)/wikibot eval --wiki DIR FILE"; \
		exit 2; \
	fi
	$(BIN)/wikibot eval --wiki $(EVAL_WIKI) $(EVAL_REQUESTS)

clean:
	rm -rf $(VENV) data .pytest_cache .wheelhouse
