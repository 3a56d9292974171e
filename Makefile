# The two commands a new user runs: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# pytest rewrites every test module's asserts on import; with PYTHONDONTWRITEBYTECODE set (as
# on some CI images) it redoes that on every run (~10 s). Its cache lives under .venv.
PYTEST := env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(CURDIR)/$(VENV)/pycache $(BIN)/python -m pytest

.PHONY: demo test test-fast lint typecheck pytest bench redteam schemas docs clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/hookrails demo

# `make test`: lint, typecheck and every test, spread over every core (pytest-xdist; about
# 6 minutes on 2 cores).
# `make test-fast`: the edit-test loop, pytest -m "not slow" only (no lint, no typecheck):
# leaves out the tests marked slow (other processes, the PostgreSQL server, the real Claude
# Code CLI, heavy hypothesis runs, real timeouts), spread over every core (pytest-xdist); under 60 s on 2
# quiet cores. Markers: tests/README.md.
test: $(STAMP) lint typecheck pytest

test-fast: $(STAMP)
	$(PYTEST) -m "not slow" -n auto

lint: $(STAMP)
	$(BIN)/ruff check guardrails tools tests benchmarks examples
	$(BIN)/ruff format --check guardrails tools tests benchmarks examples

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(PYTEST) -n auto

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

# `make redteam`: the shell guards against the red-team and benign corpora (tests/redteam/);
# prints bypass and false-deny rates, `--json` for JSON (benchmarks/redteam.py).
redteam: $(STAMP)
	$(BIN)/python benchmarks/redteam.py

schemas: $(STAMP)
	$(BIN)/python -m tools.schemagen

docs: $(STAMP)
	$(BIN)/python -m tools.clidoc

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
