#!/usr/bin/env bash
# Build the one-folder gpufleet bundle with PyInstaller: dist/gpufleet/gpufleet (+ _internal/).
# Usage: packaging/build.sh [PYTHON]   (default: .venv/bin/python, with pyinstaller installed,
# e.g. by `make package`, which installs the `package` extra first).
# The same spec builds on macOS and Windows; see packaging/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${1:-.venv/bin/python}"
if ! "$PY" -c 'import PyInstaller' 2>/dev/null; then
  echo "build.sh: PyInstaller is not installed for $PY (run: $PY -m pip install -e '.[package]')" >&2
  exit 2
fi
start=$(date +%s)
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath dist --workpath build/pyinstaller packaging/gpufleet.spec
echo "built dist/gpufleet/ in $(( $(date +%s) - start )) s ($(du -sh dist/gpufleet | cut -f1))"
