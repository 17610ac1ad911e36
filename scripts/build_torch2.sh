#!/usr/bin/env bash
# Configure and build build-torch2/: kvbench against PyTorch 2.x's libtorch from .venv (scripts/setup.sh makes
# it), with the CUDA path compiled and linked when nvcc is installed (no GPU is needed to build it), and the
# Python module, installed into .venv (a .pth naming build-torch2/python) so that `import kvbench` works there.
# The text tests (no torch) are built in build/ only.
#   bash scripts/build_torch2.sh                   everything (scripts/test.sh)
#   bash scripts/build_torch2.sh kvbench_python    the Python module alone (scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || { echo "no .venv: run scripts/setup.sh for the PyTorch build" >&2; exit 1; }
build=build-torch2
torch_prefix=$(.venv/bin/python -c 'import os, torch; print(os.path.dirname(torch.__file__))')
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKVBENCH_TORCH_PREFIX="$torch_prefix" \
  -DKVBENCH_TEXT_TESTS=OFF > /dev/null
targets=()
for target in "$@"; do
  # CMake leaves the module out when .venv's Python has no development headers (its configure warning says so).
  if ! ninja -C "$build" -t targets all | grep -q "^$target:"; then
    echo "build_torch2: no target $target in $build (see the warnings of: cmake -S . -B $build)" >&2
    exit 0
  fi
  targets+=(--target "$target")
done
cmake --build "$build" "${targets[@]}"
# `import kvbench` in .venv: the package the build lays out in build-torch2/python (python/CMakeLists.txt).
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$PWD/$build/python" > "$site/kvbench.pth"
