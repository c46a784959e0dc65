# dkg — every target sets itself up first (idempotent, cached), then does its job.
SHELL := /bin/bash
BIN := .venv/bin
PHASE := scripts/phase.sh

export PREFECT_HOME ?= $(CURDIR)/.dkg/prefect
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS ?= 90
export PREFECT_SERVER_ANALYTICS_ENABLED ?= false
export NO_PROXY := localhost,127.0.0.1
export PYTHONUNBUFFERED := 1

.PHONY: setup services demo serve test lint pytest bench faults ui docs down clean

setup:  ## system packages, .venv and Python dependencies
	@$(PHASE) setup bash scripts/bootstrap.sh

services: setup  ## start Neo4j and CoreNLP (fetches the jars once)
	@$(PHASE) services $(BIN)/dkg services up

demo: services  ## the main job, end to end on the bundled samples (new attributes approved without asking)
	@DKG_AUTO_APPROVE_ATTRIBUTES=$${DKG_AUTO_APPROVE_ATTRIBUTES:-1} $(PHASE) demo $(BIN)/dkg demo

serve: services  ## answers over HTTP and the clinician page on http://127.0.0.1:8080 (after make demo)
	$(BIN)/dkg serve --host $${DKG_SERVE_HOST:-127.0.0.1} --port $${DKG_SERVE_PORT:-8080}

# mypy's incremental cache lives outside the clone, like the wheel cache: a clean clone re-checks only what changed
# (a cold check of the whole tree and its libraries takes about two minutes on two cores, a warm one seconds)
export MYPY_CACHE_DIR ?= $(HOME)/.cache/dkg/mypy

lint: setup  ## ruff and mypy
	@$(PHASE) lint bash -c '$(BIN)/ruff check . && $(BIN)/mypy'

pytest: services
	@$(PHASE) pytest $(BIN)/pytest $(PYTEST_ARGS)

test: lint pytest  ## the whole suite against the real services
	@$(BIN)/python scripts/faults_table.py || true

bench: services  ## benchmarks, one table with ratios against in-run baselines
	@$(PHASE) bench $(BIN)/python bench/run.py

faults: services  ## the fault-injection and bad-input suite, then its table
	@DKG_STRESS_ROUNDS=$${DKG_STRESS_ROUNDS:-20} $(PHASE) faults $(BIN)/pytest tests/faults -q
	@$(BIN)/python scripts/faults_table.py

ui: setup  ## Prefect UI on http://127.0.0.1:4200
	$(BIN)/prefect server start --host 127.0.0.1 --port 4200

docs: setup  ## the documentation site on http://127.0.0.1:8000 (reference pages generated from the code)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:$${DKG_DOCS_PORT:-8000}

down:  ## stop the services this project started
	@$(BIN)/dkg services down

clean: down
	rm -rf .dkg
