# The two commands a new user runs: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest bench schemas docs clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/hookrails demo

test: $(STAMP) lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check guardrails tools tests benchmarks examples
	$(BIN)/ruff format --check guardrails tools tests benchmarks examples

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

schemas: $(STAMP)
	$(BIN)/python -m tools.schemagen

docs: $(STAMP)
	$(BIN)/python -m tools.clidoc

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
