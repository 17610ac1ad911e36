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

# Sets $model to the repository's demo model (models/kvbench-demo: 2 layers, 4 query and 4 KV heads of 32,
# 892 tokens, float32), always there: tests that need some model use it and never skip for lack of ../shared.
demo_model() {
  model="${KVBENCH_SOURCE:-$here/../..}/models/kvbench-demo"
  [[ -f "$model/model.safetensors" && -f "$model/tokenizer.json" ]] || fail "$model is incomplete"
}

# Sets $stories to ../shared's stories260K and succeeds when it is there (with its llama2.c references); fails
# (no skip) otherwise, so a test runs its reference comparisons only where ../shared is and the rest anywhere.
shared_stories260K() {
  stories="${KVBENCH_SHARED:-}/models/stories260K"
  [[ -d "$stories" ]]
}

# expect_error PATTERN COMMAND...: the command must fail with PATTERN on stderr.
expect_error() {
  local pattern=$1; shift
  if "$@" > "$work/out" 2> "$work/err"; then fail "accepted: $*"; fi
  grep -q -- "$pattern" "$work/err" || { cat "$work/err"; fail "no \"$pattern\" in the error of: $*"; }
}

# One libtorch thread: the tiny test models gain nothing from more, and CTest runs tests side by side.
kvbench() { "$KVBENCH" --threads 1 "$@"; }
