# Every target installs what it needs into .venv first, so one command works on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# setuptools warns at every editable install of a flat layout that folders named like the
# packages may shadow them (9 lines); bot/install.py checks exactly that at each start.
QUIET_EDITABLE := PYTHONWARNINGS="ignore:Editable installation"

.PHONY: demo test lint bench eval clean docker-smoke

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
