# Every target sets itself up: a fresh clone needs only `make run` or `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test bench bench-gui screenshot bundle icons clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/sparsity-gui $(ARGS)

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(PY) benchmarks/bench_core.py

bench-gui: $(STAMP)
	$(PY) benchmarks/bench_gui.py

screenshot: $(STAMP)
	xvfb-run -a -s "-screen 0 1600x1000x24" env SPARSITY_GUI_SETTINGS=/tmp/sparsity-gui-screenshot.ini \
	  $(VENV)/bin/sparsity-gui --m 100000 --lam 1e-3 --quit-after 3000 --screenshot docs/screenshot.png

bundle: $(STAMP)
	bash packaging/build_bundle.sh

icons: $(STAMP)
	$(PY) packaging/make_icons.py

clean:
	rm -rf $(VENV) build dist *.egg-info
