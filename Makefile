# Two entry points (see README): `make run` and `make test`. Both work on a fresh machine with only
# python3, pip and make: they create .venv and install the package into it.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
OUT    := out

.PHONY: run test install install-test bench docs check clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[test,dask]"
	touch $@

$(VENV)/.installed-docs: $(VENV)/.installed pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	touch $@

# the API reference imports every subpackage, so the checks install the test extras too (dask, serve, arrow)
$(VENV)/.installed-dev: $(VENV)/.installed-test pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[test,dask,dev,docs]"
	touch $@

$(VENV)/.installed-bench: $(VENV)/.installed-test pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[test,dask,benchmark]"
	touch $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

# The main job: every learner, one pass over the bundled a9a, scored on a9a.t; table + PNG in out/.
run: $(VENV)/.installed
	mkdir -p $(OUT)
	$(BIN)/streamlearn demo --plot $(OUT)/demo_online_error.png

# One BLAS thread per pytest worker: 2 workers on 2 cores; oversubscribed BLAS is 100x slower here.
test: $(VENV)/.installed-test
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 -q

bench: $(VENV)/.installed-bench
	$(BIN)/python benchmarks/first_order.py

# The documentation site (docs/, mkdocs.yml) into site/; strict: broken links, missing includes and
# unparsable docstrings fail the build.
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --site-dir site

# The checks CI runs before the tests: lint, formatting, types, and the documentation site in strict mode.
check: $(VENV)/.installed-dev
	$(BIN)/python -m ruff check .
	$(BIN)/python -m ruff format --check .
	$(BIN)/python -m mypy
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) $(OUT) build site *.egg-info
