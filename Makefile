VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PACKAGES := jsonrpc_core mcp_layer acp_layer a2a_layer rpcweave

.PHONY: setup specs test lint typecheck pytest demo bench conformance clean postgres-up postgres-down soak grpc-proto

$(PY):
	python3 -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)
	@echo "installed into $(VENV): '. $(VENV)/bin/activate' puts rpcweave and python on PATH"

setup: $(STAMP)

lint: setup
	$(VENV)/bin/ruff check $(PACKAGES) tests bench scripts
	$(VENV)/bin/ruff format --check $(PACKAGES)

typecheck: setup
	$(VENV)/bin/mypy $(PACKAGES)
	$(VENV)/bin/mypy --config-file tests/mypy.ini tests

# Spec material a registry package ships (ACP's v1 schemas, npm @agentclientprotocol/sdk,
# into tests/acp_fixtures/node_modules). Without npm it prints one line and goes on; the
# rest comes from $$RPCWEAVE_SPECS or ../shared/specs (tests/_specs.py).
specs: setup
	$(PY) scripts/fetch_specs.py

# pytest exits 5 when it collected no test; that is not a failure of the suite.
pytest: setup specs
	$(PY) -m pytest; status=$$?; [ $$status -eq 0 ] || [ $$status -eq 5 ]

test: lint typecheck pytest

# The descriptor modules of the A2A gRPC binding, from a2a_layer/_grpc/*.proto (needs
# grpcio-tools, a dev dependency; tests/a2a_layer/test_a2a_grpc_proto.py checks they are current).
grpc-proto: setup
	$(PY) scripts/gen_a2a_grpc.py

demo: setup
	$(PY) -m rpcweave demo

bench: setup
	$(PY) -m bench

# The official MCP conformance suite (npm), server and client mode; tools go to .tools/.
conformance: setup
	$(PY) scripts/conformance.py

# A throwaway PostgreSQL on 127.0.0.1 for the scale-out tests and bench/a2a_replicas.py:
# `make postgres-up && . ./.postgres.env`, later `make postgres-down`. (Without it, the
# tests start one of their own when PostgreSQL's server programs are installed.)
postgres-up:
	bash scripts/postgres.sh up > .postgres.env
	@cat .postgres.env

postgres-down:
	@if [ -f .postgres.env ]; then . ./.postgres.env && bash scripts/postgres.sh down "$$RPCWEAVE_PG_DIR"; fi
	rm -f .postgres.env

# Heavier reliability runs, not part of `make test` (a few minutes): the fuzzers with
# 10x the inputs and 10 MB strings, then the load soak (1,000 MCP sessions and 1,000
# streamed A2A tasks against one server process each, then idle), printing its figures.
soak: setup
	RPCWEAVE_SOAK=1 $(PY) -m pytest -q -s tests/jsonrpc_core/test_reliability_params.py tests/jsonrpc_core/test_reliability_servers.py
	$(PY) tests/soak/load.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
