#!/usr/bin/env bash
# `kvbench run` end to end on the demo model + rare-fact: the HDF5 file read back with h5py against the
# documented schema (with scores and summary recomputed in Python), determinism, skip/--force, and bad input.
set -euo pipefail
source "$(dirname "$0")/common.bash"
require_h5py
demo_model
job=(--model "$model" --task rare-fact --data "rare-fact:seed=3,samples=3,words=60,facts=1" --J 24 --max-new 10
     --rollouts 2 --temperature 0.8 --seed 5 --quiet)
kvbench run "${job[@]}" --policy counter-causal --out "$work/a.h5" > "$work/summary"
grep -q "score .* pred=None .* (3 samples, 6 rows)" "$work/summary" || { cat "$work/summary"; fail "summary line"; }
/usr/bin/python3 "$here/check_results_schema.py" "$work/a.h5" 2 token
# A per-KV-head policy: kept positions stored per layer and KV head.
kvbench run "${job[@]}" --policy h2o-true --out "$work/heads.h5" > /dev/null
/usr/bin/python3 "$here/check_results_schema.py" "$work/heads.h5" 2 per-head
# Ragged allocators: the allocator in the identity, rows padded with -1 at their end.
for allocator in pyramid:ratio=3 ada; do
  kvbench run "${job[@]}" --policy h2o-true --allocator "$allocator" --out "$work/${allocator%%:*}.h5" > /dev/null
  /usr/bin/python3 "$here/check_results_schema.py" "$work/${allocator%%:*}.h5" 2 per-head
done
kvbench run "${job[@]}" --policy h2o-true --allocator pyramid:ratio=3.0 --out "$work/pyramid.h5" 2> "$work/err" > /dev/null
grep -q "complete" "$work/err" || fail "pyramid:ratio=3.0 and pyramid:ratio=3 are not one job"
[[ ! -e "$work/a.h5.partial.jsonl" ]] || fail "work file left behind"

# One experiment, one identity: knobs at their defaults are no part of the spec (the results file's config
# and the output of the same job); the settings attribute records every knob and the recent window h2o
# resolves from the config's -1 (the paper's J/2 = 12 for J = 24).
kvbench run "${job[@]}" --policy snapkv:window=64,kernel=5 --recent 4 --out "$work/snap.h5" > /dev/null
kvbench run "${job[@]}" --policy snapkv --recent 4 --out "$work/snap.h5" 2> "$work/err" > /dev/null
grep -q "complete" "$work/err" || fail "snapkv and snapkv with its default knobs are not one job"
/usr/bin/python3 "$here/check_results_schema.py" "$work/snap.h5" 2 per-head
kvbench run "${job[@]}" --policy h2o --out "$work/h2o.h5" > /dev/null
/usr/bin/python3 "$here/check_results_schema.py" "$work/h2o.h5" 2 token
/usr/bin/python3 - "$work/snap.h5" "$work/h2o.h5" <<'PY' || fail "settings attribute"
import h5py, json, sys
snap, h2o = (h5py.File(path, "r").attrs for path in sys.argv[1:])
assert json.loads(snap["config"])["policy"] == "snapkv"
assert json.loads(snap["settings"])["policy"]["knobs"] == {"window": 64, "kernel": 5}
assert json.loads(h2o["config"])["recent"] == -1
assert json.loads(h2o["settings"])["budget"]["recent"] == 12, json.loads(h2o["settings"])
assert json.loads(h2o["settings"])["budget"]["sinks"] == 0, "h2o keeps no attention sinks"
PY

# Same config + seed ⇒ same non-timing datasets.
kvbench run "${job[@]}" --policy counter-causal --out "$work/b.h5" > /dev/null
/usr/bin/python3 "$here/compare_results.py" "$work/a.h5" "$work/b.h5"

# A complete output of the same job is kept; a different job is refused unless --force.
before=$(md5sum < "$work/a.h5")
kvbench run "${job[@]}" --policy counter-causal --out "$work/a.h5" 2> "$work/err" > /dev/null
grep -q "complete" "$work/err" || fail "rerun did not report the complete output"
expect_error "holds results of a different job" kvbench run "${job[@]}" --policy sliding --out "$work/a.h5"
[[ "$(md5sum < "$work/a.h5")" == "$before" ]] || fail "output changed by a refused run"
# A file written before a config field existed (here: without "scorer") still names the same job;
# a field this kvbench does not know makes it a different one.
cp "$work/a.h5" "$work/old.h5"
edit_config() {  # edit_config FILE PYTHON-STATEMENT-ON-c: an edit with h5py, then accepted (--reseal)
  /usr/bin/python3 -c "import h5py,json,sys; f=h5py.File(sys.argv[1],'r+'); c=json.loads(f.attrs['config']); $2; f.attrs['config']=json.dumps(c)" "$1"
  kvbench inspect --reseal "$1" > /dev/null
}
# An edit breaks the file's seal: refused as corrupted until accepted.
/usr/bin/python3 -c "import h5py,sys; f=h5py.File(sys.argv[1],'r+'); f.attrs['host']='elsewhere'" "$work/old.h5"
expect_error "changed since kvbench wrote it" kvbench inspect "$work/old.h5"
edit_config "$work/old.h5" "del c['scorer']"
kvbench run "${job[@]}" --policy counter-causal --out "$work/old.h5" 2> "$work/err" > /dev/null
grep -q "complete" "$work/err" || fail "a config without a newer field was not recognised as the same job"
edit_config "$work/old.h5" "c['colour'] = 1"
expect_error "holds results of a different job" kvbench run "${job[@]}" --policy counter-causal --out "$work/old.h5"
kvbench run "${job[@]}" --policy sliding --out "$work/a.h5" --force > /dev/null
/usr/bin/python3 -c "import h5py,json,sys; assert json.loads(h5py.File(sys.argv[1])['/'].attrs['config'])['policy']=='sliding'" "$work/a.h5"

# Key retention (the fact's tokens in the cache when generation began), by construction of the story:
# a fact at the very start is gone from a 64-token sliding window, one right before the question stays,
# and the full cache holds everything.
retention() {  # retention POSITION POLICY: the rows' key_retention values
  kvbench run --model "$model" --task rare-fact --data "rare-fact:seed=4,samples=2,words=150,facts=1,positions=$1" \
    --policy "$2" --J 64 --max-new 2 --quiet --out "$work/kr_$1_$2.h5" > /dev/null
  /usr/bin/python3 -c "import h5py,sys; print(' '.join(f'{v:g}' for v in h5py.File(sys.argv[1])['rows/key_retention'][:]))" \
    "$work/kr_$1_$2.h5"
}
[[ "$(retention 0 sliding)" == "0 0" ]] || fail "an early fact survived a sliding window: $(retention 0 sliding)"
[[ "$(retention 1 sliding)" == "1 1" ]] || fail "a fact right before the question left a sliding window: $(retention 1 sliding)"
[[ "$(retention 0 full)" == "1 1" ]] || fail "the full cache lost a fact: $(retention 0 full)"
kvbench report "$work"/kr_0_*.h5 --table key-retention > "$work/kr_table"
grep -q "| sliding | 0.000 |" "$work/kr_table" || { cat "$work/kr_table"; fail "key-retention table"; }
# Scores split by retention: the sliding window's two rows lost the fact, the full cache's two kept it.
kvbench report "$work"/kr_0_*.h5 --table by-retention > "$work/br_table"
grep -q "| all cached | 2 |" "$work/br_table" && grep -q "| some evicted | 2 |" "$work/br_table" ||
  { cat "$work/br_table"; fail "by-retention table"; }

# Bad input: names the problem, writes nothing.
expect_error 'unknown task "no-such-task"' kvbench run --model "$model" --task no-such-task --J 8 --out "$work/x.h5"
expect_error 'unknown policy "no-such-policy"' kvbench run --model "$model" --task rare-fact --policy no-such-policy --J 8 --out "$work/x.h5"
touch "$work/file"
expect_error "cannot create the output directory" kvbench run "${job[@]}" --policy full --out "$work/file/sub/x.h5"
echo "not hdf5" > "$work/junk.h5"
expect_error "is not a kvbench results file" kvbench run "${job[@]}" --policy full --out "$work/junk.h5"
expect_error 'no sample with id "s3/99"' kvbench run "${job[@]}" --policy full --samples s3/99 --out "$work/x.h5"
[[ ! -e "$work/x.h5" ]] || fail "a failed run left an output"
echo "run_results: all checks passed"
