#!/usr/bin/env bash
# A CUDA build of PyTorch (.venv's, from PyPI) on a machine without nvcc: configuring kvbench says so and
# links PyTorch's CPU libraries alone, instead of stopping in PyTorch's own CMake config. nvcc and the
# CUDA toolkit are hidden in a bubblewrap sandbox; only the configure step runs.
set -euo pipefail
source "$(dirname "$0")/common.bash"
python="$KVBENCH_SOURCE/.venv/bin/python"
[[ -x "$python" ]] || { [[ -n "${CI:-}" ]] && fail "CI: no $python (scripts/setup.sh)"; skip "no $python (scripts/setup.sh)"; }
torch_dir=$("$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))')
[[ -f "$torch_dir/lib/libtorch_cuda.so" ]] || skip "$torch_dir is not a CUDA build of PyTorch"
command -v bwrap > /dev/null || skip "no bwrap"

hide=(--tmpfs /usr/local/bin)  # holds an nvcc wrapper on this machine kind
for dir in /usr/local/cuda*; do [[ -d "$dir" && ! -L "$dir" ]] && hide+=(--tmpfs "$dir"); done
path=$(tr ':' '\n' <<< "$PATH" | grep -v -e cuda -e '^/usr/local/bin$' | paste -sd:)
bwrap --bind / / --dev /dev --proc /proc "${hide[@]}" env -u CUDA_HOME -u CUDA_PATH PATH="$path" \
  sh -c '! command -v nvcc' || fail "nvcc still visible in the sandbox"
bwrap --bind / / --dev /dev --proc /proc "${hide[@]}" env -u CUDA_HOME -u CUDA_PATH PATH="$path" \
  cmake -S "$KVBENCH_SOURCE" -B "$work/build" -G Ninja -DKVBENCH_TORCH_PREFIX="$torch_dir" > "$work/out" 2>&1 ||
  { cat "$work/out"; fail "configure failed without nvcc"; }
grep -q "nvcc was not found" "$work/out" || { cat "$work/out"; fail "no message about the missing nvcc"; }
grep -q "libtorch_cpu.so" "$work/build/build.ninja" || fail "the CPU libraries are not linked"
! grep -q "libtorch_cuda" "$work/build/build.ninja" || fail "libtorch_cuda is linked without nvcc"
grep -q "KVBENCH_CUDA=0" "$work/build/build.ninja" || fail "KVBENCH_CUDA is not 0"
echo "ok: configured for the CPU with $torch_dir, the missing nvcc named"
