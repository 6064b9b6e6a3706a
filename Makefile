# Executable research compendium on Rényi-divergence privacy.
# Every target bootstraps .venv on first use (pinned requirements, `pip install -e .`),
# so a fresh clone needs only `make book` or `make test`.
#
# The interpreter: the first of python3.11, python3.12, python3.13, python3 that runs
# and is 3.11-3.13 (tools/find-python); `make PYTHON=/path/to/python3.x ...` overrides.
# A different interpreter, or changed requirements, rebuilds .venv.

ifeq ($(origin PYTHON),undefined)
PYTHON := $(shell sh tools/find-python)
endif
VENV     := .venv
BIN      := $(VENV)/bin
PYVER    := $(if $(PYTHON),$(shell $(PYTHON) -c 'import sys; print(sys.version.split()[0])' 2>/dev/null))
PYMM     := $(if $(PYTHON),$(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null))
STAMP    := $(VENV)/.installed-$(PYVER)
TESTSTAMP := $(VENV)/.installed-test-$(PYVER)
NB       := $(shell find book -name '*.ipynb' -not -path '*/.ipynb_checkpoints/*' | sort)
# Tests and chapters run on every core (pytest-xdist); `make test JOBS=1` runs them in one process.
JOBS     ?= auto
PARALLEL := $(if $(filter 1,$(JOBS)),,-n $(JOBS))
# A chapter's cells share one kernel and run in order, so a chapter stays on one worker
# (--dist loadfile); chapters are independent of each other (each reads data/, writes only
# temporary folders of its own), so they run side by side.
NBVAL    := $(BIN)/python -m pytest -q $(if $(PARALLEL),$(PARALLEL) --dist loadfile) --nbval --nbval-current-env \
            --nbval-sanitize-with tests/nbval_sanitize.cfg

.PHONY: help install book book-fresh test lint unit unit-fast nbval nbval-simd book-check browser renotebook data \
        data-libraries bench bench-scip bench-scale bench-scale-large bench-long bench-vectors clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' Makefile | sed 's/:.*## /\t/'

$(STAMP): requirements.txt pyproject.toml
	@test -n "$(PYTHON)" || { echo "error: no Python 3.11-3.13 found (tried python3.11, python3.12, python3.13, python3); install one, or run 'make PYTHON=/path/to/python3.x ...'" >&2; exit 1; }
	@test -n "$(PYVER)" || { echo "error: '$(PYTHON)' does not run; pass a working interpreter, e.g. 'make PYTHON=python3.12 ...'" >&2; exit 1; }
	@$(PYTHON) -c 'import sys; assert (3, 11) <= sys.version_info[:2] <= (3, 13)' 2>/dev/null || { echo "error: $(PYTHON) is Python $(PYVER); the compendium supports 3.11-3.13" >&2; exit 1; }
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || { echo "error: $(PYTHON) has no working venv module; on Debian/Ubuntu install it with: apt install python3-venv (or python$(PYMM)-venv)" >&2; exit 1; }
	@echo "using $(PYTHON) (Python $(PYVER)) for $(VENV)"
	@if [ -x $(BIN)/python ] && [ "$$($(BIN)/python -c 'import sys; print(sys.version.split()[0])' 2>/dev/null)" != "$(PYVER)" ]; then \
	    echo "$(VENV) was made with another interpreter; rebuilding it"; rm -rf $(VENV); fi
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	@rm -f $(VENV)/.installed-*
	@touch $@

$(TESTSTAMP): $(STAMP) requirements-test.txt
	$(BIN)/python -m pip install --quiet -r requirements-test.txt
	@touch $@

install: $(STAMP)  ## create .venv with the pinned environment and the library

book: $(STAMP)  ## execute every chapter and render the HTML book into _build/html
	$(BIN)/jupyter-book build . -W -n --keep-going
	@echo "Open _build/html/index.html in a browser."

book-fresh: $(STAMP)  ## rebuild from scratch (needed after changes in lib/ or data/)
	$(BIN)/jupyter-book clean --all .
	$(MAKE) book

# Tests that start worker processes or a Dask cluster share one xdist_group, so at most one
# of them runs at a time (--dist loadgroup); Hypothesis is derandomised and every test seeds
# its own generator, so no result depends on the worker that runs it.  With one test per
# core, BLAS gets one thread per test: two spinning BLAS threads per core made the oracle
# tests three times slower.
ONE_BLAS := $(if $(PARALLEL),OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1)
XDIST    := $(if $(PARALLEL),$(PARALLEL) --dist loadgroup)
unit: $(TESTSTAMP)  ## library unit, property and data tests (with the optional dask extra), then the doctests
	RENYI_REQUIRE_OPTIONAL=1 $(ONE_BLAS) $(BIN)/python -m pytest -q $(XDIST) tests --ignore=tests/test_browser.py
	$(BIN)/python -m pytest -q --doctest-modules lib/renyi

unit-fast: $(TESTSTAMP)  ## the one-minute loop: unit tests without those marked slow (oracle sweeps, Monte Carlo runs)
	$(ONE_BLAS) $(BIN)/python -m pytest -q -x $(XDIST) -m "not slow" tests --ignore=tests/test_browser.py

nbval: $(STAMP)  ## re-run every chapter and compare with its stored outputs
	$(NBVAL) book

# numpy picks SIMD kernels by CPU, and their last bits differ; stored outputs must not.
# Re-run the chapters with every dispatchable SIMD extension this CPU has switched off,
# i.e. on the baseline code path that an older CPU takes (tests/simd_features.py).
nbval-simd: $(STAMP)  ## nbval again on numpy's baseline SIMD path (a second CPU)
	@feats="$$($(BIN)/python tests/simd_features.py)"; \
	if [ -z "$$feats" ]; then \
	    echo "nbval-simd: skipped, numpy dispatches no SIMD extension beyond its baseline on this CPU"; \
	else \
	    echo "nbval-simd: NPY_DISABLE_CPU_FEATURES=\"$$feats\""; \
	    NPY_DISABLE_CPU_FEATURES="$$feats" $(NBVAL) book; \
	fi

# The strict build renders the stored outputs: execution is off for this build only (a copy
# of _config.yml with execute_notebooks: 'off').  That is sound inside `make test` because
# nbval and nbval-simd have just re-executed every chapter and compared every stored output
# with its re-execution (images aside, which nbval never compares); what this build adds is
# the rendering: MyST, references, citations, glue keys and figures, with warnings as errors.
# `make book` for readers still executes every chapter (cached).
book-check: $(STAMP)  ## render the stored outputs from a clean _build with warnings as errors
	rm -rf _build/check
	sed "s/^\(  execute_notebooks:\) cache/\1 'off'/" _config.yml > _config.check.yml
	@grep -q "^  execute_notebooks: 'off'" _config.check.yml || { echo "book-check: _config.yml has no 'execute_notebooks: cache' line to switch off" >&2; rm -f _config.check.yml; exit 1; }
	$(BIN)/jupyter-book build . --config _config.check.yml --path-output _build/check -W -n --keep-going; \
	    status=$$?; rm -f _config.check.yml; exit $$status

lint: $(TESTSTAMP)  ## ruff on the library, tests and benchmarks, and on the chapters (88 columns)
	$(BIN)/ruff check lib tests benchmarks
	$(BIN)/ruff format --check lib tests benchmarks
	@# The chapters (and book/_ext) at the rendered column's 88 characters: book/ruff.toml.
	$(BIN)/ruff check book
	$(BIN)/ruff format --check book

test: lint unit nbval nbval-simd book-check browser  ## everything CI runs

# Every page of the -W build of book-check in headless Chromium (tests/test_browser.py):
# typeset math, no horizontal overflow, captioned figures at their own size, a clean console.
browser: $(TESTSTAMP)  ## open every page of the book-check build in headless Chromium
	@if [ -z "$$(sh -c 'command -v $${RENYI_CHROMIUM:-chromium} || command -v chromium-browser || command -v google-chrome' 2>/dev/null)" ] && [ "$${RENYI_REQUIRE_BROWSER:-0}" != 1 ]; then \
	    echo "browser: SKIPPED, no Chromium on this machine (apt-get install chromium chromium-driver, or set RENYI_CHROMIUM)"; \
	else \
	    test -f _build/check/_build/html/index.html || $(MAKE) book-check; \
	    RENYI_BOOK_HTML=_build/check/_build/html $(BIN)/python -m pytest -q -s tests/test_browser.py; \
	fi

renotebook: $(STAMP)  ## re-execute chapters in place, deterministically (NB="book/x.ipynb" for one)
	$(BIN)/python tests/refresh_notebooks.py $(NB)

data: $(STAMP)  ## regenerate data/ and data/MANIFEST.json (the Part I sweeps)
	$(BIN)/python -m renyi.sweeps --out data $(if $(FORCE),--force)

data-libraries: $(STAMP)  ## audit diffprivlib and OpenDP into data/part1/libraries.csv (installs the extra)
	$(BIN)/python -m pip install --quiet -e '.[libraries]'
	$(BIN)/python -m renyi.sweeps.libraries --out data $(if $(FORCE),--force)
	$(BIN)/python -m renyi.sweeps.library_finite_sample --out data $(if $(FORCE),--force)

bench: $(STAMP)  ## speed and memory against peer pipelines (installs the bench extra)
	$(BIN)/python -m pip install --quiet -r benchmarks/requirements.txt
	$(BIN)/python benchmarks/run.py

bench-scip: $(STAMP)  ## global_optimum against SCIP on the same instances (installs pyscipopt, benchmark only)
	$(BIN)/python -m pip install --quiet -r benchmarks/requirements-scip.txt
	cd benchmarks && ../$(BIN)/python scip_benchmark.py $(if $(QUICK),--quick)

bench-scale: $(STAMP)  ## global_optimum at |Y| = 20: the gap after 60 s on two workers, alpha in {2, 3, 5}, five budgets
	cd benchmarks && ../$(BIN)/python lift_scale.py

bench-scale-large: $(STAMP)  ## global_optimum at |Y| = 30, 50, 100, 200: bracket, wall time and memory after 60 s on two workers
	cd benchmarks && ../$(BIN)/python lift_scale.py --sizes 30 50 100 200

bench-long: $(STAMP)  ## the |Y| = 20, alpha = 5, eps = 0.02 cell at 60 s and at 10 minutes on two workers
	cd benchmarks && ../$(BIN)/python lift_long_run.py

bench-vectors: $(STAMP)  ## one bound on memory-mapped d = 1000, n = 10^6 outputs (16 GB of scratch disk)
	$(BIN)/python benchmarks/vector_streaming.py $(if $(SCRATCH),--scratch $(SCRATCH))

clean:  ## remove the build and caches (keeps .venv)
	rm -rf _build .pytest_cache .hypothesis
	find . -name __pycache__ -not -path './.venv/*' -prune -exec rm -rf {} +
