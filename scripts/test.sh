#!/usr/bin/env bash
# Configure, build and run the whole test suite (CTest) against both torches kvbench supports:
#   build/          Debian's libtorch 1.13 (CPU)
#   build-torch2/   PyTorch 2.x's libtorch from .venv (scripts/build_torch2.sh: the CUDA path compiled and
#                   linked when nvcc is installed, no GPU needed; its tests run on the CPU) and the Python
#                   module. It runs the tests labelled `torch` (CMakeLists.txt says which): the rest checked
#                   nothing a torch changes.
# plus the libFuzzer targets (build/fuzz) when clang++ is installed; each fuzz target runs a few seconds.
#   bash scripts/test.sh                     both builds, every test; extra arguments go to ctest (-R tokenizer)
#   bash scripts/test.sh --torch debian      only build/ (or --torch pytorch: only build-torch2/)
#   bash scripts/test.sh --sanitize          the suite under AddressSanitizer + UndefinedBehaviorSanitizer
#                                            (gcc, Debian's libtorch, build-sanitize/); libtorch is not instrumented
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=0
torches=(debian pytorch)
while (($#)); do
  case "$1" in
    --sanitize) sanitize=1; torches=(debian); shift ;;
    --torch) torches=("$2"); shift 2 ;;
    *) break ;;
  esac
done
jobs=$(nproc)

configure_and_build() {  # SOURCE_DIR BUILD_DIR CMAKE_ARGS...
  local source=$1 build=$2; shift 2
  cmake -S "$source" -B "$build" -G Ninja "$@" > /dev/null
  cmake --build "$build"
}

status=0
for torch in "${torches[@]}"; do
  labels=()
  if ((sanitize)); then
    build=build-sanitize
    flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
    configure_and_build . "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="$flags" \
      -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
    # Leaks: libtorch and OpenBLAS keep pools alive at exit by design. Everything else aborts the test.
    export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:detect_odr_violation=0
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  elif [[ "$torch" == debian ]]; then
    build=build
    configure_and_build . "$build" -DCMAKE_BUILD_TYPE=Release -DKVBENCH_TORCH_PREFIX=
    if command -v clang++ > /dev/null; then
      configure_and_build tests/fuzz "$build/fuzz" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
        -DCMAKE_CXX_COMPILER=clang++
    fi
  elif [[ "$torch" == pytorch ]]; then
    build=build-torch2
    bash scripts/build_torch2.sh
    labels=(-L torch)
  else
    echo "unknown --torch $torch (expected debian or pytorch)" >&2; exit 2
  fi
  echo "== $build: $("$build/kvbench" --version)"
  ctest --test-dir "$build" --output-on-failure -j "$jobs" "${labels[@]}" "$@" || status=1
done
exit $status
