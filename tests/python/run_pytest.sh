#!/usr/bin/env bash
# CTest python.pytest: builds the Python package (python/) into a fresh venv as a user would
# (Debian's python3, --system-site-packages for numpy/torch/onnx, pip without network or build
# isolation), linking the build's libtosac.a, then runs tests/python with pytest from outside the
# source tree so that the installed package is the one imported.
#   run_pytest.sh SOURCE_DIR LIBTOSAC_A TOSAC_BIN WORK_DIR
set -euo pipefail
src=$1 lib=$2 bin=$3 work=$4
py=/usr/bin/python3
rm -rf "$work"
mkdir -p "$work"
# a copy of python/: pip builds in the tree it is given, and the source tree stays clean
cp -r "$src/python" "$work/pkg"
rm -rf "$work/pkg/build" "$work/pkg"/*.egg-info "$work/pkg"/tosac/*.so
"$py" -m venv --system-site-packages "$work/venv"
# warnings in the extension fail the test, as they fail the C build
CFLAGS="-Werror" TOSAC_SOURCE_DIR="$src" TOSAC_STATIC_LIB="$lib" \
  "$work/venv/bin/pip" install --no-build-isolation --no-index --no-deps -q "$work/pkg"
cd "$work"
TOSAC_SOURCE_DIR="$src" TOSAC_BIN="$bin" \
  exec "$work/venv/bin/python" -m pytest -p no:cacheprovider -q --basetemp="$work/tmp" "$src/tests/python"
