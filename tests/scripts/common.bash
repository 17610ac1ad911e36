# Shared by the script tests (sourced, not a test itself): skips, a work directory
# removed on exit, and assertions.
if [[ -z "${KVBENCH:-}" || ! -x "${KVBENCH}" ]]; then echo "skip: KVBENCH binary not set or not built"; exit 77; fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
cleanup() { :; }  # a test may redefine it: run on exit, before the work directory is removed
trap 'cleanup; rm -rf "$work"' EXIT

fail() { echo "FAILED: $*"; exit 1; }
skip() { echo "skip: $*"; exit 77; }

# wait_for SECONDS COMMAND...: polls the command every 0.2 s until it succeeds; fails after SECONDS.
wait_for() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do ((SECONDS < deadline)) || return 1; sleep 0.2; done
}

# Skips the test when the result files cannot be read back (no h5py for /usr/bin/python3).
require_h5py() {
  /usr/bin/python3 -c "import h5py" 2>/dev/null || skip "/usr/bin/python3 has no h5py"
}

# Sets $model to stories260K, or skips the test when ../shared is not there.
require_tiny_model() {
  model="${KVBENCH_SHARED:-}/models/stories260K"
  [[ -d "$model" ]] || skip "$model not found (set KVBENCH_SHARED)"
}

# expect_error PATTERN COMMAND...: the command must fail with PATTERN on stderr.
expect_error() {
  local pattern=$1; shift
  if "$@" > "$work/out" 2> "$work/err"; then fail "accepted: $*"; fi
  grep -q -- "$pattern" "$work/err" || { cat "$work/err"; fail "no \"$pattern\" in the error of: $*"; }
}

# One libtorch thread: the tiny test models gain nothing from more, and CTest runs tests side by side.
kvbench() { "$KVBENCH" --threads 1 "$@"; }
