# Claimscope: the two set-up commands of README.md live here.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: requirements.txt requirements-dev.txt | $(BIN)/activate
	$(BIN)/pip install -q --disable-pip-version-check -r requirements-dev.txt
	touch $@

.PHONY: install bytecode demo test bench lint
install: $(VENV)/.installed

# The project's own modules compiled once, as the image does: where PYTHONDONTWRITEBYTECODE is
# set, every command would compile them again on import (about 0.2 s of each start-up).
bytecode: install
	$(BIN)/python -m compileall -q config inventory claims migration devtools manage.py

## Start the dashboard on the embedded default (SQLite, eager tasks, demo clusters from real data).
# The demo serves plain http on this machine, so its cookies cannot be Secure-only.
demo: export SESSION_COOKIE_SECURE = 0
demo: export CSRF_COOKIE_SECURE = 0
demo: bytecode
	$(BIN)/python manage.py migrate --noinput -v0
	$(BIN)/python manage.py ensure_roles
	$(BIN)/python manage.py collectstatic --noinput -v0
	$(BIN)/python manage.py load_demo
	$(BIN)/python manage.py seed_readiness_demo
	@echo "Claimscope: http://$(HOST):$(PORT)/  (log in as demo / demo)"
	$(BIN)/python manage.py runserver $(HOST):$(PORT) --noreload

## Run the whole test suite (DATABASE_URL selects PostgreSQL; CLAIMSCOPE_TEST_REDIS_URL a real broker).
# One pytest-xdist worker per CPU (each with its own test database); PYTEST_XDIST= runs serially.
PYTEST_XDIST ?= -n auto
test: install
	$(BIN)/python -m pytest -p no:cacheprovider $(PYTEST_XDIST) $(PYTEST_ARGS)

## Benchmark sync and pages on generated fleets (docs/benchmark.md); DATABASE_URL picks the database.
BENCH_ARGS ?= --nodes 100 1000
bench: bytecode
	$(BIN)/python manage.py migrate --noinput -v0
	$(BIN)/python manage.py benchmark $(BENCH_ARGS)

lint: install
	$(BIN)/ruff check .
