#!/usr/bin/env bash
# Two processes on one sweep (a requeued SLURM array task still running beside its replacement, a user
# starting the same sweep twice): started together, five times over, both exit 0, every job runs in exactly
# one of them (the other skips it: held, or already complete), only results are left, and they equal a
# single process's results (non-timing datasets, via h5py). `--workers 2` does the same within one command.
set -euo pipefail
source "$(dirname "$0")/common.bash"
require_h5py
demo_model
cat > "$work/sweep.json" <<JSON
{"base": {"model": "$model", "task": "rare-fact", "data": "rare-fact:seed=2,samples=3,words=60,facts=1",
          "max_new": 8, "rollouts": 2, "temperature": 0.8, "seed": 5},
 "grid": {"policy": ["sliding", "counter-causal", "tova"], "J": [16, 24]}}
JSON
# stdout: one summary line per job a process ran.
kvbench sweep --config "$work/sweep.json" --out-dir "$work/single" --quiet > "$work/single.out" 2> /dev/null
[[ $(wc -l < "$work/single.out") -eq 6 ]] || fail "one process ran $(wc -l < "$work/single.out") jobs, not 6"
sort "$work/single.out" > "$work/single.sorted"

shared=0
for round in 1 2 3 4 5; do
  dir="$work/round$round"
  kvbench sweep --config "$work/sweep.json" --out-dir "$dir" --quiet > "$work/a.out" 2> "$work/a.err" &
  first=$!
  kvbench sweep --config "$work/sweep.json" --out-dir "$dir" --quiet > "$work/b.out" 2> "$work/b.err" &
  second=$!
  wait "$first" || { cat "$work/a.err"; fail "round $round: the first process failed"; }
  wait "$second" || { cat "$work/b.err"; fail "round $round: the second process failed"; }
  sort "$work/a.out" "$work/b.out" | diff - "$work/single.sorted" > /dev/null \
    || { cat "$work/a.out" "$work/b.out"; fail "round $round: the jobs run by the two processes are not each job once"; }
  skips=$(cat "$work/a.err" "$work/b.err" | grep -c -E ": (held by another process|already complete), skipped$" || true)
  [[ $skips -eq 6 ]] || { cat "$work/a.err" "$work/b.err"; fail "round $round: $skips jobs skipped, not 6"; }
  [[ -s "$work/a.out" && -s "$work/b.out" ]] && shared=$((shared + 1))
  leftovers=$(ls "$dir" | grep -v '\.h5$' || true)
  [[ -z "$leftovers" ]] || fail "round $round: files left besides the results: $leftovers"
  /usr/bin/python3 "$here/compare_results.py" "$work/single" "$dir" > /dev/null
done
# --workers 2: the two processes of one command share the jobs the same way; their lines are one per job run.
for round in 1 2; do
  dir="$work/workers$round"
  kvbench sweep --config "$work/sweep.json" --out-dir "$dir" --workers 2 > "$work/w.out" 2> "$work/w.err" \
    || { cat "$work/w.err"; fail "--workers 2, round $round: failed"; }
  sort "$work/w.out" | diff - "$work/single.sorted" > /dev/null \
    || { cat "$work/w.out"; fail "--workers 2, round $round: the jobs run are not each job once"; }
  grep -q "skipped" "$work/w.err" && { cat "$work/w.err"; fail "--workers 2: a worker printed its skips"; }
  grep -q "^sweep: 6 jobs in 2 worker processes" "$work/w.err" || { cat "$work/w.err"; fail "--workers 2: no total line"; }
  leftovers=$(ls "$dir" | grep -v '\.h5$' || true)
  [[ -z "$leftovers" ]] || fail "--workers 2, round $round: files left besides the results: $leftovers"
  /usr/bin/python3 "$here/compare_results.py" "$work/single" "$dir" > /dev/null
done
# A process killed between a job's final rename and its cleanup leaves the lock file (and the work file):
# rerunning the sweep finds the job complete and removes them.
first_result=$(ls "$work/single"/*.h5 | head -1)
touch "$first_result.lock" "$first_result.partial.jsonl"
kvbench sweep --config "$work/sweep.json" --out-dir "$work/single" --quiet > /dev/null 2>&1 || fail "the rerun failed"
leftovers=$(ls "$work/single" | grep -v '\.h5$' || true)
[[ -z "$leftovers" ]] || fail "a rerun over a finished sweep left: $leftovers"
expect_error "--force with --workers" "$KVBENCH" sweep --config "$work/sweep.json" --out-dir "$work/workers1" --workers 2 --force
echo "sweep_concurrent: all checks passed (both processes ran jobs in $shared of 5 rounds; --workers 2 twice)"
