#!/usr/bin/env bash
# Configure, build and run the whole test suite (CTest). Extra arguments go to ctest (e.g. -R tokenizer).
#   bash scripts/test.sh               Release build in build/, plus the libFuzzer targets (build/fuzz)
#                                      when clang++ is installed; each fuzz target runs a few seconds.
#   bash scripts/test.sh --sanitize    the suite under AddressSanitizer + UndefinedBehaviorSanitizer
#                                      (gcc, build-sanitize/); libtorch itself is not instrumented.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=0
if [[ "${1:-}" == "--sanitize" ]]; then sanitize=1; shift; fi

if ((sanitize)); then
  build=build-sanitize
  flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" > /dev/null
  # Leaks: libtorch and OpenBLAS keep pools alive at exit by design. Everything else aborts the test.
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:detect_odr_violation=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
else
  build=build
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
fi
cmake --build "$build"
if ((!sanitize)) && command -v clang++ > /dev/null; then
  cmake -S tests/fuzz -B "$build/fuzz" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ > /dev/null
  cmake --build "$build/fuzz"
fi
ctest --test-dir "$build" --output-on-failure "$@"
