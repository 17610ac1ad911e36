#!/usr/bin/env bash
# Crash safety: kill -9 a sweep at several random moments, rerun it to the end, and compare every
# results file with an uninterrupted sweep's (non-timing datasets, via h5py): no finished sample lost,
# none duplicated. The reference decodes one sample at a time, the killed runs 3 together and the final
# rerun 5: samples finish (and are journaled) while others are mid-decode, and batching changes nothing. Set KVBENCH_CRASH_SEED to replay a sequence of kill times.
set -euo pipefail
source "$(dirname "$0")/common.bash"
require_h5py
demo_model
seed=${KVBENCH_CRASH_SEED:-$$}
RANDOM=$seed
echo "kill times seeded with $seed (KVBENCH_CRASH_SEED=$seed replays them)"

# 150-word stories (the demo's own length): with 80 words the demo, twice as fast as stories260K was, often
# finished before any kill found a sample in a work file, and the resume went untested.
cat > "$work/sweep.json" <<JSON
{"base": {"model": "$model", "task": "rare-fact", "data": "rare-fact:seed=1,samples=8,words=150,facts=1",
          "max_new": 16, "rollouts": 2, "temperature": 0.9, "seed": 3},
 "grid": {"policy": ["counter-causal", "tova"], "J": [24]}}
JSON
start=$(date +%s%N)
kvbench sweep --config "$work/sweep.json" --out-dir "$work/reference" --batch 1 --quiet > /dev/null 2>&1
duration_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "uninterrupted sweep: ${duration_ms} ms"

journals_seen=0
for attempt in 1 2 3 4 5; do
  "$KVBENCH" --threads 1 sweep --config "$work/sweep.json" --out-dir "$work/crashed" --batch 3 --quiet > /dev/null 2>&1 &  # not the function: kill must reach kvbench itself
  pid=$!
  delay_ms=$(( 50 + RANDOM % (duration_ms > 200 ? duration_ms / 2 : 100) ))  # early enough to land mid-sweep
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  partial=$(ls "$work/crashed"/*.partial.jsonl 2>/dev/null | wc -l || true)
  journals_seen=$((journals_seen + partial))
  echo "attempt $attempt: killed after ${delay_ms} ms; files now: $(ls "$work/crashed" 2>/dev/null | tr '\n' ' ')"
done
# A damaged tail after the last kill (a torn half-line, zeros from a crashed file system): the rerun drops
# it with a warning and keeps every sample finished before it.
read -r finished journals < <(/usr/bin/python3 - "$work/crashed" <<'PY'
import glob, sys
total = 0
for k, path in enumerate(sorted(glob.glob(sys.argv[1] + "/*.partial.jsonl"))):
    total += open(path, "rb").read().count(b"\n") - 1  # complete lines after the header
    with open(path, "ab") as f:
        f.write(b'{"rows": [{"sample_id": 7\n' if k % 2 else b"\0" * 100 + b"\n")
print(total, len(glob.glob(sys.argv[1] + "/*.partial.jsonl")))
PY
)
kvbench sweep --config "$work/sweep.json" --out-dir "$work/crashed" --batch 5 --quiet > /dev/null 2> "$work/final.log" || { cat "$work/final.log"; fail "the resumed sweep failed"; }
resumed=$(sed -n 's/.*resumed, \([0-9]*\) samples were already finished/\1/p' "$work/final.log" | awk '{s += $1} END {print s + 0}')
[[ "$resumed" -eq "$finished" ]] || { cat "$work/final.log"; fail "$finished samples were finished before the rerun, it resumed $resumed"; }
damaged=$(grep -c "damaged line in the run's work file" "$work/final.log" || true)
[[ "$damaged" -eq "$journals" ]] || { cat "$work/final.log"; fail "$journals damaged work files, $damaged warnings"; }
leftovers=$(ls "$work/crashed" | grep -v '\.h5$' || true)
[[ -z "$leftovers" ]] || fail "work files left after completion: $leftovers"
/usr/bin/python3 "$here/compare_results.py" "$work/reference" "$work/crashed"
echo "crash_resume: all checks passed (a kill left a work file to resume from ${journals_seen} times; $finished finished samples kept past a damaged tail)"
