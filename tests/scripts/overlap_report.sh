#!/usr/bin/env bash
# `kvbench report --table overlap` / `overlap-refreshes` recomputed in Python from the HDF5 datasets
# (overlap_recompute.py): counter-causal vs its fast variant (token level), and h2o-true (per KV head)
# vs counter-causal; a policy against itself with other phrase rules; bad selections.
set -euo pipefail
source "$(dirname "$0")/common.bash"
require_h5py
demo_model
job=(--model "$model" --task rare-fact --data "rare-fact:seed=1,samples=3,words=70,facts=1" --J 24 --max-new 10
     --rollouts 2 --temperature 0.8 --seed 2 --quiet)
for policy in counter-causal counter-causal-fast h2o-true sliding; do
  kvbench run "${job[@]}" --policy "$policy" --out "$work/$policy.h5" > /dev/null
done

check() {  # check A B: both tables of the pair recomputed
  kvbench report "$work/$1.h5" "$work/$2.h5" --table overlap-refreshes --format csv > "$work/refreshes.csv"
  kvbench report "$work/$1.h5" "$work/$2.h5" --table overlap --format csv > "$work/summary.csv"
  /usr/bin/python3 "$here/overlap_recompute.py" "$work/$1.h5" "$work/$2.h5" "$work/refreshes.csv" "$work/summary.csv"
}
check counter-causal counter-causal-fast
check h2o-true counter-causal
check counter-causal sliding

# The same policy with other phrase rules is another policy; identical kept sets overlap exactly.
kvbench run "${job[@]}" --policy counter-causal --smooth 3 --out "$work/smooth.h5" > /dev/null
check counter-causal smooth
cp "$work/counter-causal.h5" "$work/same.h5"
/usr/bin/python3 -c "import h5py,json,sys; f=h5py.File(sys.argv[1],'r+'); c=json.loads(f.attrs['config']); \
c['policy_seed']=1; c['policy']='counter-causal-copy'; f.attrs['config']=json.dumps(c)" "$work/same.h5"
kvbench inspect --reseal "$work/same.h5" > /dev/null
kvbench report "$work/counter-causal.h5" "$work/same.h5" --table overlap --format csv > "$work/same.csv"
grep -q ",1.000,1.000,1.000,1.000,0$" "$work/same.csv" || { cat "$work/same.csv"; fail "identical kept sets"; }

# --policy selects the pair among many files; a selection without a pair is refused with the reason.
kvbench report "$work"/*.h5 --table overlap --policy counter-causal --policy counter-causal-fast --format csv \
  > "$work/selected.csv"
[[ $(grep -c "^kvbench-demo" "$work/selected.csv") == 3 ]] || { cat "$work/selected.csv"; fail "pairs of the selection"; }
expect_error "no two files share" kvbench report "$work/counter-causal.h5" --table overlap
echo "overlap report: ok"
