# The project's commands. `make run` and `make test` are the README's two commands; CI runs
# `make lint test` (see .ci/run) with PostgreSQL and Redis selected through the environment.
PYTHON ?= python3
VENV := .venv
BIN := $(abspath $(VENV)/bin)
STAMP := $(VENV)/.installed-stamp

.PHONY: install run test test-fast lint format migrate demo clean sdk-events

$(STAMP): pyproject.toml sdk/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ./sdk -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# `make run` is development: DEBUG on (development keys derived from the development
# SECRET_KEY) unless the environment says otherwise. WEB_PORT moves the platform, the
# integrations origin and the sites origin together (127.0.0.1, localhost and 127.0.0.2 on that
# port); RUNTIME_PORT the runtime host's HTTP port (its /health): `make run WEB_PORT=9000
# RUNTIME_PORT=9100`. The platform calls the runtime host in frames on a Unix socket in var/
# (README, "Runtime host: transports"). An URL set in the environment (PLATFORM_URL, ...) wins.
WEB_PORT ?= 8000
RUNTIME_PORT ?= 8100
DEV := DEBUG=$${DEBUG:-true} WEB_PORT=$(WEB_PORT) RUNTIME_PORT=$(RUNTIME_PORT) \
	PLATFORM_URL=$${PLATFORM_URL:-http://127.0.0.1:$(WEB_PORT)} \
	INTEGRATIONS_URL=$${INTEGRATIONS_URL:-http://localhost:$(WEB_PORT)} \
	SITES_URL=$${SITES_URL:-http://127.0.0.2:$(WEB_PORT)} \
	RUNTIME_URL=$${RUNTIME_URL:-unix://$(abspath var)/runtime.sock}

migrate: install
	$(DEV) $(BIN)/python manage.py migrate --no-input

demo: migrate
	$(DEV) $(BIN)/python manage.py seed_demo

# Web, Celery worker, beat and the runtime host together on the embedded default (SQLite,
# file-system broker).
# Integration code runs in the best sandbox the machine can make (bubblewrap, else unshare);
# where none can be made, unconfined with a loud warning (see the README's "Sandbox").
run: demo
	$(DEV) RUNTIME_SANDBOX=$${RUNTIME_SANDBOX:-$$($(BIN)/python -m integrations.runtime.sandbox)} \
		PATH=$(BIN):$$PATH $(BIN)/python tools/run.py

# The whole suite. `make test-fast` leaves out the tests marked slow (real processes, real
# browsers, real time waited on): the quick loop while working, about five minutes on two cores.
test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test-fast: install
	$(BIN)/python -m pytest -m "not slow" $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python tools/import_cycles.py

# The SDK's typed events, written anew from the event catalogue (a test checks they agree).
sdk-events: install
	PYTHONPATH=.:sdk $(BIN)/python tools/generate_sdk_events.py

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf var .pytest_cache
