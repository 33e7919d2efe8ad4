# The two commands: `make demo` and `make test`. Both create the virtual environment when missing.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
export PYTHONHASHSEED := 0
export MPLBACKEND := Agg

.PHONY: demo test lint typecheck unit notebooks wheel-check lab bench clean node

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

# Third-party EVM clients and a real node for the suite (tests/node: anvil, ethers v6, viem and
# Uniswap's published bytecode), from the npm registry at the versions its lock file pins.
NODE_STAMP := tests/node/node_modules/.installed-stamp
$(NODE_STAMP): tests/node/package.json tests/node/package-lock.json
	npm ci --prefix tests/node --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

node: $(NODE_STAMP)

demo: $(STAMP)
	$(BIN)/toolkit demo

# The parts side by side, not one after the other: the notebooks, lint, mypy and the wheel check
# fill the cores the unit run leaves idle; pip and npm install at once. Each part's output is
# printed whole when it ends (--output-sync), so the unit run's shows last. What bounds the run is
# CPU: a fresh clone's .ci/run took 539-561 s wall for 885-970 CPU s in all (install included,
# 2 cores, 2026-11-29), within ~20 % of its floor (CPU s / 2); the unit run (~470 s there) is the
# critical path. Alone on a quiet machine: unit 341 s, notebooks 125 s (223 CPU s).
test:
	@$(MAKE) --no-print-directory -j --output-sync=target lint typecheck unit notebooks wheel-check

lint: $(STAMP)
	$(BIN)/ruff check toolkit tests bench
	$(BIN)/ruff format --check toolkit tests bench
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

# The unit tests and every docstring example in toolkit/ in one run: one start of the two workers
# and one collection instead of two. The doctest plugin names what client and collector examples
# use; other tests pass through its fixture untouched. --dist worksteal: a worker that runs dry
# takes half of the other's queue, so a long test near the end no longer leaves a core idle.
# Tests marked `wallclock` (they wait more than they compute: a two-minute follow read by another
# process, held requests and Retry-After waits behind the fault proxy, paced rates, watch
# processes polled until they have run; ~4 min of wall and ~40 CPU s in all) run one after the
# other in a process of their own alongside, so a worker never sits idle waiting on them (they
# took ~110 s of the workers' time); that process collects only the files that use the mark
# (collecting the whole tree costs ~20 CPU s).
# nbval and Schemathesis' pytest plugins are not loaded here (their imports cost ~2 CPU s per
# process; Schemathesis runs as its own command in tests/server/test_schemathesis.py).
WALLCLOCK := $(shell grep -rl --include='*.py' 'mark\.wallclock' tests)
UNIT_PLUGINS := -p no:nbval -p no:schemathesis
unit: $(STAMP) $(NODE_STAMP)
	@$(BIN)/pytest $(UNIT_PLUGINS) -p no:xdist -m wallclock $(WALLCLOCK) & wall=$$!; \
	$(BIN)/pytest $(UNIT_PLUGINS) -n 2 --dist worksteal -m "not wallclock" -p tests.doctest_namespace --doctest-modules tests toolkit; \
	rest=$$?; wait $$wall; walled=$$?; \
	if [ $$walled -ne 0 ] && [ $$walled -ne 5 ]; then exit $$walled; fi; exit $$rest

# Regression notebooks are checked strictly on one worker (their outputs against the committed
# ones, written by an earlier run: identical output on every run and machine), alongside the
# others checked lax on two (each notebook whole on one worker: --dist loadfile keeps its cells
# in order). The strict pass (~35 CPU s) ends well before the lax one, so it adds no wall time.
# Progress bars are not results: TQDM_DISABLE=1 hides every tqdm bar while nbval runs.
STRICT := $(BIN)/pytest -p no:randomly --nbval -n 1 --dist loadfile notebooks/regression --nbval-sanitize-with notebooks/sanitize.cfg
notebooks: export TQDM_DISABLE := 1
notebooks: $(STAMP) $(NODE_STAMP)
	@$(STRICT) & strict=$$!; \
	$(BIN)/pytest -p no:randomly --nbval-lax -n 2 --dist loadfile notebooks --ignore=notebooks/regression; \
	lax=$$?; wait $$strict; strict=$$?; \
	if [ $$strict -ne 0 ]; then exit $$strict; fi; exit $$lax

# The package installed from its wheel (not this checkout) runs a backtest and serves a request.
wheel-check: $(STAMP)
	.ci/wheel-check

# JupyterLab on notebooks/ with what every notebook needs: the environment, and the node tools
# (notebook 09 runs a local anvil node with Uniswap's bytecode), as `make notebooks` has them.
lab: $(STAMP) $(NODE_STAMP)
	$(BIN)/jupyter lab notebooks/

bench: $(STAMP) $(NODE_STAMP)
	@for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache tests/node/node_modules
