# Executable research compendium on Rényi-divergence privacy.
# Every target bootstraps .venv on first use (Python 3.11, pinned requirements,
# `pip install -e .`), so a fresh clone needs only `make book` or `make test`.

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NB     := $(shell find book -name '*.ipynb' -not -path '*/.ipynb_checkpoints/*' | sort)

.PHONY: help install book book-fresh test unit nbval book-check renotebook data bench clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' Makefile | sed 's/:.*## /\t/'

$(STAMP): requirements.txt pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; run 'make PYTHON=/path/to/python3.11 ...'" >&2; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	@touch $@

install: $(STAMP)  ## create .venv with the pinned environment and the library

book: $(STAMP)  ## execute every chapter and render the HTML book into _build/html
	$(BIN)/jupyter-book build . -W -n --keep-going
	@echo "Open _build/html/index.html in a browser."

book-fresh: $(STAMP)  ## rebuild from scratch (needed after changes in lib/ or data/)
	$(BIN)/jupyter-book clean --all .
	$(MAKE) book

unit: $(STAMP)  ## library unit, property and data tests
	$(BIN)/python -m pytest -q tests

nbval: $(STAMP)  ## re-run every chapter and compare with its stored outputs
	$(BIN)/python -m pytest -q --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg book

book-check: $(STAMP)  ## build the book from a clean _build with warnings as errors
	rm -rf _build/check
	$(BIN)/jupyter-book build . --path-output _build/check -W -n --keep-going

test: unit nbval book-check  ## everything CI runs

renotebook: $(STAMP)  ## re-execute chapters in place, deterministically (NB="book/x.ipynb" for one)
	$(BIN)/python tests/refresh_notebooks.py $(NB)

data: $(STAMP)  ## regenerate data/ and data/MANIFEST.json (the Part I sweeps)
	$(BIN)/python -m renyi.experiments --out data

bench: $(STAMP)  ## speed and memory against peer pipelines (installs the bench extra)
	$(BIN)/python -m pip install --quiet -r benchmarks/requirements.txt
	$(BIN)/python benchmarks/run.py

clean:  ## remove the build and caches (keeps .venv)
	rm -rf _build .pytest_cache .hypothesis
	find . -name __pycache__ -not -path './.venv/*' -prune -exec rm -rf {} +
