# Two commands set everything up on a fresh machine:
#   make demo   creates .venv, installs, opens the app on the simulated demo fleet
#   make test   creates .venv, installs, runs lint, types, the import contracts and every test
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit bench screenshots package deb wheel package-test translations clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

# The compiled translations (.qm, also committed) are rebuilt whenever a .ts changes; after
# changing user-visible strings run `tools/build_translations.py --update` (lupdate + lrelease).
TS := $(wildcard resources/translations/*.ts)
QM := $(TS:.ts=.qm)

$(QM): %.qm: %.ts $(STAMP)
	$(BIN)/python tools/build_translations.py

translations: $(QM)

# The Qt runtime check runs first, before the virtualenv is built: on a machine without the
# X11/xcb libraries Qt's window needs it stops with the install command for this distribution.
demo:
	$(PYTHON) tools/check_qt_runtime.py
	$(MAKE) --no-print-directory $(STAMP) $(QM)
	$(BIN)/gpufleet --demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports pyproject.toml
	$(BIN)/python tools/module_ceiling.py

typecheck: $(STAMP)
	$(BIN)/mypy

# Two pytest-xdist workers, a test file each at a time (a file's fixtures stay in one
# process): many tests wait on sshd, subprocesses and Qt, and a second worker fills those
# waits. PYTEST_WORKERS=0 runs everything in this one process.
PYTEST_WORKERS ?= 2
unit: $(STAMP) $(QM)
	tools/run-tests $(BIN)/python -m pytest $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --dist loadfile) $(PYTEST_ARGS)

test: lint typecheck unit

bench: $(STAMP)
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

# At 1366x768, the laptop screen the layout is checked at (tests/ui/window/test_layout.py):
# every tab, the benchmark dialog, and the Compare view of the pair of two-hour runs that
# tests/support/compare_streams.py writes (a thermal slowdown on GPU 3 in B, a day later).
SHOT_SIZE := 1366x768
screenshots: $(STAMP) $(QM)
	QT_QPA_PLATFORM=offscreen $(BIN)/gpufleet screenshot --demo --size $(SHOT_SIZE) --out docs/img
	QT_QPA_PLATFORM=offscreen $(BIN)/gpufleet screenshot --demo --size $(SHOT_SIZE) --tab bench --out docs/img
	tmp=$$(mktemp -d) && $(BIN)/python -c 'import sys; from pathlib import Path; \
	from tests.support import compare_streams as cs; d = Path(sys.argv[1]); \
	cs.write(d / "a.jsonl", cs.Run(seconds=7200, gpus=8, seed=1)); \
	cs.write(d / "b.jsonl", cs.Run(seconds=7200, gpus=8, seed=2, t0=cs.Run().t0 + 86400, \
	effects=[cs.thermal((3,))]))' $$tmp && \
	QT_QPA_PLATFORM=offscreen $(BIN)/gpufleet screenshot --size $(SHOT_SIZE) --out docs/img \
	--compare $$tmp/a.jsonl $$tmp/b.jsonl; status=$$?; rm -rf $$tmp; exit $$status
	QT_QPA_PLATFORM=offscreen LC_ALL=zh_CN.UTF-8 LANG=zh_CN.UTF-8 $(BIN)/gpufleet screenshot --demo --size $(SHOT_SIZE) --out docs/img/zh_CN

# The one-folder desktop bundle (PyInstaller) in dist/gpufleet/; see packaging/README.md.
package: $(STAMP) $(QM)
	$(BIN)/python -c 'import PyInstaller' 2>/dev/null || $(BIN)/python -m pip install -q -e '.[package]'
	packaging/build.sh $(BIN)/python

# The .deb of that bundle (dpkg-deb; /opt/gpufleet, /usr/bin/gpufleet, desktop file, icons,
# AppStream): reuses dist/gpufleet/ when it is there, so `make package deb` builds it once.
deb: $(STAMP)
	test -x dist/gpufleet/gpufleet || $(MAKE) --no-print-directory package
	packaging/deb.sh $(BIN)/python

# The wheel that `pipx install dist/gpufleet-*.whl` runs (the sampler's sources inside, from
# which the app builds the zipapp it uploads).
wheel: $(STAMP) $(QM)
	rm -f dist/gpufleet-*.whl
	$(BIN)/python -m pip wheel -q --no-deps -w dist .

# Builds the bundle, then runs it without the virtualenv, installs and removes its .deb, and
# pipx-installs the wheel (tests/integration/package/test_package.py).
package-test: package
	GPUFLEET_TEST_PACKAGE=1 tools/run-tests $(BIN)/python -m pytest -q tests/integration/package/test_package.py

clean:
	rm -rf $(VENV) build dist *.egg-info
