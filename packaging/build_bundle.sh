#!/usr/bin/env bash
# Build the one-folder desktop bundle dist/sparsity-gui/ with PyInstaller, then smoke-test it:
# --version, a headless `run` (twice: the second must load numba's cache from the user cache
# folder) and the GUI on Qt's offscreen platform with --quit-after and --screenshot.
#
#   bash packaging/build_bundle.sh            # or: make bundle
#   SKIP_SMOKE=1 bash packaging/build_bundle.sh   # build only
#
# PyInstaller (and build) come from the project's `packaging` extra, installed into .venv.
# The bundle also gets share/ (the .desktop entry, the AppStream metainfo and the hicolor
# icons) for whoever packages it further (tarball, AppImage, Flatpak, distro package).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
PY=$VENV/bin/python
APP_ID=io.github.sparsitygui.SparsityGui
DIST=$ROOT/dist/sparsity-gui
EXE=$DIST/sparsity-gui

if [ ! -x "$PY" ]; then
  "$PYTHON" -m venv "$VENV"
  "$PY" -m pip install --quiet --upgrade pip
fi
if ! "$PY" -c "import PyInstaller, sparsity_gui" >/dev/null 2>&1; then
  echo "== installing the packaging extra into $VENV"
  "$PY" -m pip install --quiet -e ".[packaging]"
fi

echo "== building $DIST with PyInstaller $("$PY" -m PyInstaller --version)"
SECONDS=0
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$ROOT/dist" --workpath "$ROOT/build/pyinstaller" packaging/sparsity-gui.spec
build_s=$SECONDS

# Desktop integration files, laid out as under /usr (or an AppDir's usr/).
share=$DIST/share
install -Dm644 "resources/$APP_ID.desktop" "$share/applications/$APP_ID.desktop"
install -Dm644 "resources/$APP_ID.metainfo.xml" "$share/metainfo/$APP_ID.metainfo.xml"
install -Dm644 resources/icons/icon.svg "$share/icons/hicolor/scalable/apps/$APP_ID.svg"
for png in resources/icons/icon-*.png; do
  n=${png##*/icon-}; n=${n%.png}
  install -Dm644 "$png" "$share/icons/hicolor/${n}x${n}/apps/$APP_ID.png"
done

size=$(du -sh "$DIST" | cut -f1)
echo "== built in ${build_s}s; bundle size $size ($DIST)"

if [ -n "${SKIP_SMOKE:-}" ]; then
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A private user cache folder: core/numba_env.py must point NUMBA_CACHE_DIR into it when frozen.
export XDG_CACHE_HOME=$tmp/cache
unset NUMBA_CACHE_DIR PYTHONPATH

check_stderr() {  # fail on any Python traceback the bundle printed
  if grep -q "Traceback" "$1"; then cat "$1" >&2; echo "FAIL: traceback on stderr" >&2; exit 1; fi
}

echo "== smoke test: --version"
"$EXE" --version

echo "== smoke test: headless run (first: compiles the numba kernels)"
SECONDS=0
"$EXE" run --out "$tmp/run1" --m 2000 --samples 51 2>"$tmp/err1"
first_s=$SECONDS
check_stderr "$tmp/err1"
for f in timeseries.csv weights.csv deaths.csv run.json; do
  [ -s "$tmp/run1/$f" ] || { echo "FAIL: run wrote no $f" >&2; exit 1; }
done
nbi=$(find "$XDG_CACHE_HOME/sparsity-gui/numba" -name '*.nbi' 2>/dev/null | wc -l)
[ "$nbi" -gt 0 ] || { echo "FAIL: no numba cache in $XDG_CACHE_HOME/sparsity-gui/numba" >&2; exit 1; }
if find "$DIST" \( -name '*.nbi' -o -name '*.nbc' \) | grep -q .; then
  echo "FAIL: numba wrote its cache into the bundle" >&2; exit 1
fi

echo "== smoke test: the same run again (numba cache from $XDG_CACHE_HOME/sparsity-gui/numba)"
SECONDS=0
"$EXE" run --out "$tmp/run2" --m 2000 --samples 51 2>"$tmp/err2"
second_s=$SECONDS
check_stderr "$tmp/err2"
cmp -s "$tmp/run1/timeseries.csv" "$tmp/run2/timeseries.csv" \
  || { echo "FAIL: the cached run gave different results" >&2; exit 1; }

echo "== smoke test: headless gradient-descent run"
"$EXE" run --out "$tmp/run3" --m 2000 --samples 51 --method gd 2>"$tmp/err3"
check_stderr "$tmp/err3"
[ -s "$tmp/run3/run.json" ] || { echo "FAIL: the gd run wrote nothing" >&2; exit 1; }

echo "== smoke test: GUI offscreen for 1.5 s"
SECONDS=0
QT_QPA_PLATFORM=offscreen "$EXE" --quit-after 1500 --screenshot "$tmp/window.png" 2>"$tmp/err4"
gui_s=$SECONDS
check_stderr "$tmp/err4"
[ -s "$tmp/window.png" ] || { echo "FAIL: the GUI saved no screenshot" >&2; exit 1; }

echo "== smoke test: the interference model, headless (a tiny sweep with its figure)"
"$EXE" sweep --out "$tmp/sweep" --n 8 --m 8,16 --seeds 2 --steps 200 --jobs 2 2>"$tmp/err5"
check_stderr "$tmp/err5"
for f in sweep.csv sweep.json sweep.png sweep.svg; do
  [ -s "$tmp/sweep/$f" ] || { echo "FAIL: sweep wrote no $f" >&2; exit 1; }
done

echo "== smoke test: the interference window offscreen for 1.5 s"
QT_QPA_PLATFORM=offscreen "$EXE" --model interference --n 16 --m 32 --quit-after 1500 \
  --screenshot "$tmp/interference.png" 2>"$tmp/err6"
check_stderr "$tmp/err6"
[ -s "$tmp/interference.png" ] || { echo "FAIL: the interference window saved no screenshot" >&2; exit 1; }

echo "== OK: build ${build_s}s, bundle $size; first run ${first_s}s ($nbi numba index files" \
     "cached), second run ${second_s}s, GUI ${gui_s}s"
