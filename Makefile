# One entry point for every machine: `make demo` and `make test` both set up first.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.gui-gym-installed

.PHONY: setup browser demo test lint format bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml scripts/setup.sh
	bash scripts/setup.sh $(VENV)
	touch $(STAMP)

# Chromium + ChromeDriver for MiniWoB++ (installed when root and missing; cheap otherwise).
browser:
	bash scripts/install_browser.sh

demo: setup
	$(PY) examples/benchmark_agent.py --env-id GuiGym/WikiHow-v0 --agents random oracle --split test

test: setup browser
	$(VENV)/bin/ruff check gui_gym tests examples benchmarks scripts
	$(VENV)/bin/ruff format --check gui_gym tests examples benchmarks scripts
	CI=$${CI:-} $(PY) -m pytest -q

lint: setup
	$(VENV)/bin/ruff check gui_gym tests examples benchmarks scripts
	$(VENV)/bin/ruff format --check gui_gym tests examples benchmarks scripts

format: setup
	$(VENV)/bin/ruff format gui_gym tests examples benchmarks scripts
	$(VENV)/bin/ruff check --fix gui_gym tests examples benchmarks scripts

bench: setup
	$(PY) benchmarks/bench_envs.py --out benchmarks/results/bench_envs.json
	$(PY) benchmarks/bench_miniwob.py --out benchmarks/results/bench_miniwob.json

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
