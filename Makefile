# One entry point for every machine: `make demo` and `make test` both set up first.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.gui-gym-installed
CORE_STAMP := $(VENV)/.gui-gym-core-installed

.PHONY: setup setup-core constraints browser demo test check-docs lint format bench bench-rewards bench-smollm2 baselines clean

setup: $(STAMP)

$(STAMP): pyproject.toml scripts/setup.sh scripts/constraints.txt scripts/constraints-verl.txt
	bash scripts/setup.sh $(VENV)
	touch $(STAMP) $(CORE_STAMP)

# The core install and WebShop's search: all `make demo` needs (seconds, no torch).
setup-core: $(CORE_STAMP)

$(CORE_STAMP): pyproject.toml scripts/setup.sh scripts/constraints.txt
	bash scripts/setup.sh $(VENV) demo
	touch $(CORE_STAMP)

# Record the installed versions as the ones setup.sh installs (after a green `make test` on
# newer ones, e.g. from `GUI_GYM_UNPINNED=1 make setup`): scripts/constraints*.txt.
constraints: setup
	bash scripts/freeze_constraints.sh $(VENV)

# Chromium + ChromeDriver for MiniWoB++ (installed when root and missing; cheap otherwise).
browser:
	bash scripts/install_browser.sh

# Random vs oracle on three simulated benchmarks in one table, then one episode with ADMIRE's
# milestone reward stacked, each step's shaped reward split into its components.
demo: setup-core
	$(PY) examples/benchmark_agent.py --env-id GuiGym/WikiHow-v0 GuiGym/AndroidWorld-v0 \
		GuiGym/WebShop-v0 --agents random oracle --split test --limit 40 --summary
	$(PY) examples/shaped_rewards.py

# The suite runs on PYTEST_WORKERS processes (pytest-xdist), a test file per process at a time
# (--dist loadfile: a file's module fixtures are built once); PYTEST_WORKERS=0 runs it in one.
PYTEST_WORKERS ?= 2

test: setup browser
	$(VENV)/bin/ruff check gui_gym tests examples benchmarks scripts
	$(VENV)/bin/ruff format --check gui_gym tests examples benchmarks scripts
	CI=$${CI:-} $(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile

# Every README and docs command, the minutes-long ones included (tests/test_docs_commands.py),
# and every paper comparison's arms once (benchmarks/paper_comparisons.py --quick, minutes),
# and the oracle on 60 ALFWorld games (tests/test_alfworld.py).
check-docs: setup browser
	GUI_GYM_DOCS_FULL=1 CI=$${CI:-} $(PY) -m pytest -q tests/test_readme.py tests/test_docs_commands.py \
		tests/test_alfworld.py
	$(PY) benchmarks/paper_comparisons.py --quick --out benchmarks/results/quick

lint: setup
	$(VENV)/bin/ruff check gui_gym tests examples benchmarks scripts
	$(VENV)/bin/ruff format --check gui_gym tests examples benchmarks scripts

format: setup
	$(VENV)/bin/ruff format gui_gym tests examples benchmarks scripts
	$(VENV)/bin/ruff check --fix gui_gym tests examples benchmarks scripts

# Speed on this machine, then benchmarks/results/summary.json: every headline figure and the
# machine and load it was measured under (an idle-machine reference run: benchmarks/reference/).
bench: setup
	$(PY) benchmarks/bench_envs.py --out benchmarks/results/bench_envs.json
	$(PY) benchmarks/bench_miniwob.py --out benchmarks/results/bench_miniwob.json
	$(PY) benchmarks/bench_webshop.py --out benchmarks/results/bench_webshop.json
	$(PY) benchmarks/bench_alfworld.py --out benchmarks/results/bench_alfworld.json
	$(PY) benchmarks/bench_summary.py --results benchmarks/results

# SmolLM2-135M-Instruct (the named model, gui-gym models): SFT, GRPO and generation tokens/s in
# fp32 against bf16 against the static/compiled paths, side by side (docs/models.md; minutes).
bench-smollm2: setup
	nice -n 10 $(PY) benchmarks/bench_smollm2.py --out benchmarks/results/bench_smollm2.json

# The scripted rows of the baselines table (random, WebShop's rule, the expert) on every
# benchmark's test split, as benchmarks/reference/baselines.json holds them (docs/baselines.md;
# minutes once ALFWorld's 134 unseen games are built, which the first run does). The SmolLM2
# rows are separate, long runs: docs/baselines.md lists their commands.
baselines: setup browser
	$(PY) scripts/generate_alfworld.py --split valid_unseen --workers 1
	nice -n 10 $(PY) benchmarks/baselines.py --envs wikihow --rows random oracle --episodes 150
	nice -n 10 $(PY) benchmarks/baselines.py --envs androidworld --rows random oracle --episodes 200
	nice -n 10 $(PY) benchmarks/baselines.py --envs webshop --rows random rule oracle --episodes 500
	nice -n 10 $(PY) benchmarks/baselines.py --envs alfworld --rows random oracle --episodes 134
	nice -n 10 $(PY) benchmarks/baselines.py --envs miniwob --rows random oracle --episodes 120
	$(PY) benchmarks/baselines.py --markdown

# The reward wrappers' speed and quality (tens of minutes on 2 CPU cores; see docs/*.md).
bench-rewards: setup
	$(PY) benchmarks/bench_admire.py --latency-only --out benchmarks/results/bench_admire_latency.json
	$(PY) benchmarks/bench_admire.py --quality-only --out benchmarks/results/bench_admire.json
	$(PY) benchmarks/admire_learning.py
	$(PY) benchmarks/prm_verifier.py
	$(PY) benchmarks/judge_accuracy.py
	$(PY) benchmarks/sop_correlation.py
	$(PY) benchmarks/bench_replay.py
	$(PY) benchmarks/progress_table.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
