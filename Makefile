# Every target sets itself up: a fresh clone needs only `make run` or `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
APP_STAMP := $(VENV)/.installed-app

.PHONY: run test lint format bench bench-run bench-figures bench-gui bench-gui-phases bench-interference bench-gui-interference bench-pins bench-pins-memory bench-cluster bench-signals bench-movie screenshot screenshot-interference screenshot-pins sweep-figure scaling-figure checkpoint-figure warmup-figure noise-figure optimizer-figure bench-schedules bench-noise bench-grid bench-series bench-warm-up bundle dist icons clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# `make run`: the app alone, then its numba kernels compiled once into numba's cache (tens
# of seconds), so the first window loads them
$(APP_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	$(PY) -m sparsity_gui.cli.precompile
	touch $(APP_STAMP)

# every other target: the app with the test, lint, cluster and movie extras
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test,lint,cluster,movie]'
	touch $(STAMP)

run: $(APP_STAMP)
	$(VENV)/bin/sparsity-gui $(ARGS)

# two pytest-xdist workers, a test file each at a time (a file's module fixtures are built
# once), the longest first, the files of the shared dask cluster together on one worker (one
# cluster a run): tests/run_layout.py's scheduler for `--dist loadfile`; TEST_WORKERS=0 runs
# the tests in one process, in file order. The numba kernels are
# compiled first, once: from a fresh clone each worker, and each command a test starts
# before the cache is written, would compile all of them side by side (27 s of CPU each)
TEST_WORKERS ?= 2
# Python's bytecode cache is on for the suite even where the environment turns it off
# (PYTHONDONTWRITEBYTECODE): without it each of the hundreds of commands the tests start
# compiles the package's modules again (0.25 s of CPU each), and every run's workers rewrite
# every test module's asserts again (collecting: 30 s of CPU a worker, 14 s from the cache).
# One BLAS and OpenMP thread per process, as the app caps its own runs: two workers on two
# cores, each with pools of two threads, spin against each other (a torch-oracle test: 43 s
# of CPU against 25 s with one)
test: $(STAMP)
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m sparsity_gui.cli.precompile
	env -u PYTHONDONTWRITEBYTECODE OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 QT_QPA_PLATFORM=offscreen $(PY) -m pytest $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile) $(PYTEST_ARGS)

# style, import order, the layers and the types (pyproject.toml: [tool.ruff],
# [tool.importlinter], [tool.mypy]: the API strictly, core in mypy's default mode)
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy sparsity_gui/api/ sparsity_gui/core/

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

bench: $(STAMP)
	$(PY) benchmarks/bench_core.py

bench-run: $(STAMP)
	$(PY) benchmarks/bench_run.py $(ARGS)

bench-figures: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) benchmarks/bench_figures.py $(ARGS)

bench-movie: $(STAMP)
	$(PY) benchmarks/bench_movie.py $(ARGS)

bench-gui: $(STAMP)
	$(PY) benchmarks/bench_gui.py

bench-gui-phases: $(STAMP)
	$(PY) benchmarks/bench_gui_phases.py $(ARGS)

bench-interference: $(STAMP)
	$(PY) benchmarks/bench_interference.py

bench-gui-interference: $(STAMP)
	$(PY) benchmarks/bench_gui_interference.py

bench-pins: $(STAMP)
	$(PY) benchmarks/bench_pins.py $(ARGS)

bench-pins-memory: $(STAMP)
	$(PY) benchmarks/bench_pins_memory.py $(ARGS)

bench-cluster: $(STAMP)
	$(PY) benchmarks/bench_cluster.py $(ARGS)

bench-schedules: $(STAMP)
	$(PY) benchmarks/bench_schedules.py $(ARGS)

bench-noise: $(STAMP)
	$(PY) benchmarks/bench_noise.py $(ARGS)

bench-grid: $(STAMP)
	$(PY) benchmarks/bench_grid.py $(ARGS)

bench-signals: $(STAMP)
	$(PY) benchmarks/bench_signals.py $(ARGS)

# a first launch's compile of each model's numba kernels, beside a load from the cache
bench-warm-up: $(STAMP)
	$(PY) benchmarks/bench_warm_up.py $(ARGS)

# a 4 GB series (1,000 snapshots of 256 x 4096 float32) read through core/series.py against
# cat; written to the temporary folder and deleted after (ARGS="--snapshots 50": smaller)
bench-series: $(STAMP)
	$(PY) benchmarks/bench_series.py $(ARGS)

# Each screenshot is a first launch (no saved settings) on a screen of that size: 1600x1000,
# and a 1366x768 laptop's, where the window sizes itself to the screen.
SHOT_SETTINGS := /tmp/sparsity-gui-screenshot.ini

screenshot: $(STAMP)
	rm -f $(SHOT_SETTINGS)
	xvfb-run -a -s "-screen 0 1600x1000x24" env SPARSITY_GUI_SETTINGS=$(SHOT_SETTINGS) \
	  $(VENV)/bin/sparsity-gui --m 100000 --lam 1e-3 --quit-after 3000 --screenshot docs/screenshot.png
	rm -f $(SHOT_SETTINGS)
	xvfb-run -a -s "-screen 0 1366x768x24" env SPARSITY_GUI_SETTINGS=$(SHOT_SETTINGS) \
	  $(VENV)/bin/sparsity-gui --m 100000 --lam 1e-3 --quit-after 3000 --screenshot docs/screenshot-1366.png

screenshot-interference: $(STAMP)
	rm -f $(SHOT_SETTINGS)
	xvfb-run -a -s "-screen 0 1600x1000x24" env SPARSITY_GUI_SETTINGS=$(SHOT_SETTINGS) \
	  $(VENV)/bin/sparsity-gui --model interference --n 64 --m 256 --lr 3e-3 --steps 4000 \
	  --quit-after 9000 --screenshot resources/screenshots/interference.png
	rm -f $(SHOT_SETTINGS)
	xvfb-run -a -s "-screen 0 1366x768x24" env SPARSITY_GUI_SETTINGS=$(SHOT_SETTINGS) \
	  $(VENV)/bin/sparsity-gui --model interference --n 64 --m 256 --lr 3e-3 --steps 4000 \
	  --quit-after 9000 --screenshot resources/screenshots/interference-1366.png

# resources/screenshots/{pinned,phase-plane}.png: the note's window driven by docs/screenshots.py
screenshot-pins: $(STAMP)
	xvfb-run -a -s "-screen 0 1600x1000x24" env SPARSITY_GUI_SETTINGS=/tmp/sparsity-gui-screenshot.ini \
	  $(PY) docs/screenshots.py pinned resources/screenshots/pinned.png
	xvfb-run -a -s "-screen 0 1600x1000x24" env SPARSITY_GUI_SETTINGS=/tmp/sparsity-gui-screenshot.ini \
	  $(PY) docs/screenshots.py phase-plane resources/screenshots/phase-plane.png

sweep-figure: $(STAMP)
	$(VENV)/bin/sparsity-gui sweep --out docs/sweep-n128 --n 128 --m 128,256,512,1024,2048 \
	  --seeds 8 --steps 7500 --force

# a series written by a small torch training run (docs/checkpoints/train_series.py), compared
checkpoint-figure: $(STAMP)
	rm -rf docs/checkpoints/series && $(PY) docs/checkpoints/train_series.py docs/checkpoints/series
	$(VENV)/bin/sparsity-gui checkpoints docs/checkpoints/series --row 0 --l1 0.04 --lr 2e-3 \
	  --optimizer sgd --figures --out docs/checkpoints/compare --force
	rm -rf docs/checkpoints/series

# docs/interference.md's warm-up figure: l1 warm-ups in the interference model (about a minute)
warmup-figure: $(STAMP)
	$(PY) docs/schedules/warmup_figure.py docs/schedules

# docs/interference.md's noise figure: the paper's noise experiment (about ten seconds)
noise-figure: $(STAMP)
	$(PY) docs/noise/noise_figure.py docs/noise

# docs/interference.md's "Why Adam ignores the L1 coefficient" (about five minutes on two cores), and the
# same question as one grid of `sweep` (about a minute)
optimizer-figure: $(STAMP)
	$(PY) docs/optimizers/optimizer_figure.py docs/optimizers
	$(VENV)/bin/sparsity-gui sweep --n 8 --m 16 --lr 1e-3 --steps 12000 --seeds 5 \
	  --l1 1e-3,1e-2,0.05,0.2,0.5 --optimizer adamw,gd-zero,ista,signsgd \
	  --readout steps_to_sparse --out docs/optimizers/grid --force

scaling-figure: $(STAMP)
	$(VENV)/bin/sparsity-gui scaling --m 1e3,1e4,1e5,1e6 --lam 1e-4,1e-3,1e-2 --seeds 5 \
	  --out docs/scaling --force

bundle: $(STAMP)
	bash packaging/build_bundle.sh

# the sdist and the wheel in dist/, checked as PyPI would render and accept them
dist: $(STAMP)
	rm -f dist/sparsity_gui-*.tar.gz dist/sparsity_gui-*.whl
	$(PY) -m build --outdir dist .
	$(PY) -m twine check --strict dist/sparsity_gui-*.tar.gz dist/sparsity_gui-*.whl

icons: $(STAMP)
	$(PY) packaging/make_icons.py

clean:
	rm -rf $(VENV) build dist *.egg-info
