#!/usr/bin/env bash
# kvpress 0.5.5's defaults against kvbench's for the presses kvbench implements (tests/peers/press_defaults.py):
# every field of KnormPress, KeyDiffPress, SnapKVPress, ExpectedAttentionPress, ObservedAttentionPress,
# TOVAPress, StreamingLLMPress, RandomPress, AdaKVPress, PyramidKVPress, LagKVPress, CURPress, LeverageScorePress,
# NonCausalAttnPress, CompactorPress, ChunkKVPress, QFilterPress and DuoAttentionPress against the knob or job field that plays its role. Fails on a difference the script's ON_PURPOSE table gives no reason for, and on an entry
# of that table that no longer differs.
set -uo pipefail
source "$(dirname "$0")/common.bash"
peer_python=${KVBENCH_PYTHON:-${KVBENCH_SOURCE:-$here/../..}/.venv/bin/python}
missing() { if [[ -n "${CI:-}" ]]; then fail "CI: $1"; else skip "$1"; fi; }
[[ -x "$peer_python" ]] || missing "no peer environment at $peer_python (run scripts/setup.sh)"
"$peer_python" -c "import kvpress" 2>/dev/null || missing "$peer_python has no kvpress"
"$peer_python" "${KVBENCH_SOURCE:-$here/../..}/tests/peers/press_defaults.py" "$KVBENCH" ||
  fail "kvbench's defaults differ from kvpress's (above)"
echo "press_defaults: all checks passed"
