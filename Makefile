VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PACKAGES := jsonrpc_core mcp_layer acp_layer a2a_layer rpcweave

.PHONY: setup test lint typecheck pytest demo bench conformance clean

$(PY):
	python3 -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

lint: setup
	$(VENV)/bin/ruff check $(PACKAGES) tests examples bench scripts
	$(VENV)/bin/ruff format --check $(PACKAGES)

typecheck: setup
	$(VENV)/bin/mypy $(PACKAGES)

# pytest exits 5 when it collected no test; that is not a failure of the suite.
pytest: setup
	$(PY) -m pytest; status=$$?; [ $$status -eq 0 ] || [ $$status -eq 5 ]

test: lint typecheck pytest

demo: setup
	$(PY) -m rpcweave demo

bench: setup
	$(PY) -m bench

# The official MCP conformance suite (npm), server and client mode; tools go to .tools/.
conformance: setup
	$(PY) scripts/conformance.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
