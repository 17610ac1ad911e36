#!/usr/bin/env bash
# The README's result table is the demo's output: runs scripts/demo.sh on its default model (SmolLM2-135M-Instruct
# from the models cache; the demo's own sweeps, into a scratch directory) and checks the table between
# "<!-- demo summary -->" and "<!-- end -->" in README.md against scripts/demo_summary.py of the fresh results
# files, and that the demo wrote its report and plots. A stale README table fails, printing the current one.
# Without the cached model: skips (fails under CI, which ran scripts/setup.sh).
set -uo pipefail
source "$(dirname "$0")/common.bash"
require_h5py
# Once per suite: the demo takes minutes, and scripts/demo.sh's build is Debian's libtorch (build/).
"$KVBENCH" --version | grep -q "libtorch 1\." || skip "the demo runs in the Debian build's suite (build/) only"
source_dir="${KVBENCH_SOURCE:-$here/../..}"
model="${KVBENCH_MODELS:-$HOME/.cache/kvbench/models}/smollm2-135m-instruct/SmolLM2-135M-Instruct.Q4_1.gguf"
if [[ ! -f "$model" ]]; then
  [[ -n "${CI:-}" ]] && fail "CI: $model not found (scripts/setup.sh fetches it)"
  skip "$model not found (run scripts/setup.sh or \`kvbench models fetch\`)"
fi
KVBENCH_DEMO_OUT="$work/demo" KVBENCH="$KVBENCH" bash "$source_dir/scripts/demo.sh" > "$work/demo.log" 2>&1 ||
  { tail -30 "$work/demo.log"; fail "scripts/demo.sh"; }
for file in report.md niah.png score_vs_ratio.png; do [[ -s "$work/demo/$file" ]] || fail "the demo wrote no $file"; done
/usr/bin/python3 "$source_dir/scripts/demo_summary.py" "$work/demo" > "$work/summary" || fail "demo_summary.py"
sed -n '\|<!-- demo summary -->|,\|<!-- end -->|p' "$source_dir/README.md" | sed '1d;$d' > "$work/readme_table"
[[ -s "$work/readme_table" ]] || fail "README.md has no table between <!-- demo summary --> and <!-- end -->"
diff "$work/readme_table" "$work/summary" || { cat "$work/summary"; fail "README.md's demo table is not the demo's output"; }
echo "README.md's demo table is the demo's output ($(grep -c '^| ' "$work/summary") rows)"
