#!/usr/bin/env bash
# --smooth and --keep-span end to end on models/kvbench-demo: every kept set of counter-causal and h2o runs is
# recomputed in numpy from the recorded raw scores (recompute_kept.py), --smooth 1 / --keep-span 1 give
# the same file as no option, the settings are part of the job's identity, and bad values are refused.
set -euo pipefail
source "$(dirname "$0")/common.bash"
require_h5py
demo_model
job=(--model "$model" --task rare-fact --data "rare-fact:seed=2,samples=2,words=80,facts=1" --J 24 --h 6
     --max-new 12 --rollouts 2 --temperature 0.7 --seed 3 --quiet)

run() {  # run NAME ARGS...: a results file $work/NAME.h5
  local name=$1; shift
  kvbench run "${job[@]}" "$@" --out "$work/$name.h5" > /dev/null
}

# Without phrase rules the recorded scores already explain the kept sets (plain top-k).
run cc --policy counter-causal
/usr/bin/python3 "$here/recompute_kept.py" "$work/cc.h5"
run cc1 --policy counter-causal --smooth 1 --keep-span 1
/usr/bin/python3 "$here/compare_results.py" "$work/cc.h5" "$work/cc1.h5"

for policy in counter-causal h2o; do
  for rules in "--smooth 3" "--smooth 5" "--keep-span 3" "--smooth 3 --keep-span 2"; do
    name="$policy${rules// /}"
    run "$name" --policy "$policy" $rules
    /usr/bin/python3 "$here/recompute_kept.py" "$work/$name.h5" --expect-differs
  done
done
# A min gap and a recent window move the candidate range; the fast variant scores differently.
run fast --policy counter-causal-fast --min-gap 1 --recent 3 --smooth 3 --keep-span 2
/usr/bin/python3 "$here/recompute_kept.py" "$work/fast.h5" --expect-differs

# Identity: the file records the rules, another W is another job, and old files (no field) mean W = 1.
/usr/bin/python3 -c "import h5py,json,sys; c=json.loads(h5py.File(sys.argv[1])['/'].attrs['config']); \
assert (c['smooth'], c['keep_span']) == (3, 2), c" "$work/counter-causal--smooth3--keep-span2.h5"
expect_error "holds results of a different job" \
  kvbench run "${job[@]}" --policy counter-causal --smooth 5 --out "$work/counter-causal--smooth3.h5"
kvbench report "$work"/counter-causal*.h5 "$work/cc.h5" > "$work/table"
grep -q "| counter-causal smooth=3 span=2 |" "$work/table" || { cat "$work/table"; fail "report rows name the rules"; }

# Bad values name the option.
expect_error "smooth (--smooth) must be an odd window" kvbench run "${job[@]}" --policy counter-causal --smooth 2 --out "$work/x.h5"
expect_error "smooth (--smooth) must be an odd window" kvbench run "${job[@]}" --policy counter-causal --smooth 0 --out "$work/x.h5"
expect_error "keep_span (--keep-span) must be" kvbench run "${job[@]}" --policy counter-causal --keep-span 0 --out "$work/x.h5"
echo "phrase rules: ok"
