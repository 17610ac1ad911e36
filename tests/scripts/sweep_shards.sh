#!/usr/bin/env bash
# `kvbench sweep`: 2 policies × 2 budgets × 2 seeds on the demo model + rare-fact, sharded 2 ways and merged
# == unsharded (non-timing datasets, via h5py); skip of finished jobs; SLURM script; report tables checked
# against numbers recomputed with h5py; malformed configs and merge conflicts.
set -euo pipefail
source "$(dirname "$0")/common.bash"
require_h5py
demo_model
cat > "$work/sweep.json" <<JSON
{"output_dir": "$work/full",
 "base": {"model": "$model", "task": "rare-fact", "data": "rare-fact:seed=0,samples=3,words=60,facts=1",
          "max_new": 6, "temperature": 0.7},
 "grid": {"policy": ["sliding", "counter-causal"], "J": [16, 32], "h": ["J/4"], "seed": [0, 1]}}
JSON
kvbench sweep --config "$work/sweep.json" --dry-run --no-bench | grep '\.h5$' > "$work/jobs"
[[ $(wc -l < "$work/jobs") -eq 8 ]] || fail "expected 8 jobs, got $(wc -l < "$work/jobs")"
grep -q "kvbench-demo__rare-fact__counter-causal__J32__h8__s1__r1.h5" "$work/jobs" || fail "job names / h = J/4"

cat > "$work/axes.json" <<JSON
{"base": {"model": "$model", "task": "rare-fact", "policy": "tova", "J": 16},
 "grid": {"temperature": [0.5, 1], "data": ["rare-fact:seed=0,samples=2", "rare-fact:seed=1,samples=2"]}}
JSON
kvbench sweep --config "$work/axes.json" --out-dir "$work/axes" --dry-run --no-bench | grep '\.h5$' > "$work/axes.jobs"
[[ $(sort -u "$work/axes.jobs" | wc -l) -eq 4 ]] || fail "grid axes outside the standard label must name the files"
grep -q "tova__J16__h4__s0__r1__data=rare-fact-seed=1-samples=2__temperature=0.5.h5" "$work/axes.jobs" \
  || { cat "$work/axes.jobs"; fail "extra grid axes in the file name"; }

kvbench sweep --config "$work/sweep.json" --quiet > "$work/full.log" 2>&1
[[ $(ls "$work/full"/*.h5 | wc -l) -eq 8 ]] || fail "unsharded sweep did not write 8 files"
kvbench sweep --config "$work/sweep.json" --quiet 2> "$work/again.log" > /dev/null
grep -q "8 jobs (0 run, 8 already complete)" "$work/again.log" || { cat "$work/again.log"; fail "finished jobs not skipped"; }

for i in 0 1; do kvbench sweep --config "$work/sweep.json" --out-dir "$work/shard$i" --shard "$i/2" --quiet > /dev/null 2>&1; done
[[ $(ls "$work/shard0"/*.h5 | wc -l) -eq 4 && $(ls "$work/shard1"/*.h5 | wc -l) -eq 4 ]] || fail "shards of 4 jobs"
kvbench merge --out "$work/merged" "$work/shard0" "$work/shard1" --config "$work/sweep.json" > /dev/null
/usr/bin/python3 "$here/compare_results.py" "$work/full" "$work/merged"
expect_error "jobs are missing" kvbench merge --out "$work/partial" "$work/shard0" --config "$work/sweep.json"
cp "$work/shard0/$(ls "$work/shard0" | head -1)" "$work/conflict.h5"
mkdir "$work/other" && cp "$work/shard1/$(ls "$work/shard1" | head -1)" "$work/other/$(ls "$work/shard0" | head -1)"
expect_error "different job with the same file name" kvbench merge --out "$work/m2" "$work/shard0" "$work/other"

kvbench sweep --config "$work/sweep.json" --emit-slurm "$work/sweep.sbatch" --slurm-shards 2 --sbatch "--time=01:00:00" 2> /dev/null
grep -q "^#SBATCH --array=0-1$" "$work/sweep.sbatch" || fail "slurm array"
grep -q "^#SBATCH --time=01:00:00$" "$work/sweep.sbatch" || fail "slurm extra line"
grep -q -- "--shard \"\${SLURM_ARRAY_TASK_ID}/2\"" "$work/sweep.sbatch" || fail "slurm shard argument"
bash -n "$work/sweep.sbatch" || fail "slurm script syntax"

# Report: the Table-2 cells equal means recomputed from the files (seeds pooled, per (seed, sample) units).
kvbench report "$work/full"/*.h5 --table policies --J 32 --h J/4 --format csv > "$work/table.csv"
kvbench report "$work/full"/*.h5 --table accuracy-vs-j --table paired --table latency --table aime --J 16 --format latex > "$work/table.tex"
grep -q "\\\\begin{tabular}" "$work/table.tex" || fail "latex table"
/usr/bin/python3 - "$work/table.csv" "$work"/full/*.h5 <<'PY'
import csv, json, sys
import h5py, numpy as np
table = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.strip() and not l.startswith("#"))]
header, rows = table[0], {r[0]: r[1:] for r in table[1:]}
assert header == ["policy", "kvbench-demo"], header
for policy in ("sliding", "counter-causal"):
    units = {}
    for path in sys.argv[2:]:
        f = h5py.File(path, "r")
        c = json.loads(f.attrs["config"])
        if c["policy"] != policy or c["J"] != 32: continue
        for sid, score in zip(f["rows/sample_id"].asstr()[:], f["rows/score"][:]):
            units.setdefault((c["seed"], sid), []).append(score)
    assert len(units) == 6, units
    expected = np.mean([np.mean(v) for v in units.values()])
    cell = rows[policy][0]
    assert abs(float(cell.split()[0]) - expected) < 5e-4, (policy, cell, expected)
print("report cells match h5py recomputation")
PY
# Plots (matplotlib, headless) from the same files.
src=$(cd "$here/../.." && pwd)
/usr/bin/python3 "$src/scripts/plot_accuracy_vs_j.py" "$work/full"/*.h5 --out "$work/acc.png" > /dev/null
/usr/bin/python3 "$src/scripts/plot_latency.py" "$work/full"/*.h5 --out "$work/lat.png" > /dev/null
/usr/bin/python3 "$src/scripts/plot_retention.py" "$(ls "$work/full"/*counter-causal__J32*s0*.h5)" --out "$work/ret.png" > /dev/null
for png in acc lat ret; do [[ $(head -c 4 "$work/$png.png" | tail -c 3) == PNG ]] || fail "$png.png is not a PNG"; done
expect_error "several J values" kvbench report "$work/full"/*.h5 --table policies

# Malformed configs name the file and the field.
echo '{"base": {}, "grid": {"policy": ["full"]' > "$work/bad1.json"
expect_error "bad1.json" kvbench sweep --config "$work/bad1.json" --out-dir "$work/x"
echo '{"base": {"task": "rare-fact", "model": "m"}, "grid": {"policy": "full"}}' > "$work/bad2.json"
expect_error 'grid field "policy" must be a non-empty list' kvbench sweep --config "$work/bad2.json" --out-dir "$work/x"
echo '{"base": {"task": "rare-fact", "colour": 1}, "grid": {"policy": ["full"]}}' > "$work/bad3.json"
expect_error 'unknown field "colour"' kvbench sweep --config "$work/bad3.json" --out-dir "$work/x"
echo '{"base": {"task": "rare-fact"}, "grid": {"policy": ["full"], "J": [8], "h": ["J/zero"]}}' > "$work/bad4.json"
expect_error 'field "h" must be a number or a ratio of J' kvbench sweep --config "$work/bad4.json" --out-dir "$work/x"
echo '{"base": {"task": "rare-fact"}, "grid": {"policy": ["no-such-policy"]}}' > "$work/bad5.json"
expect_error 'unknown policy "no-such-policy"' kvbench sweep --config "$work/bad5.json" --out-dir "$work/x"
echo '{"base": {"task": "rare-fact", "J": "many"}, "grid": {"policy": ["full"]}}' > "$work/bad6.json"
expect_error 'field "J" should be like' kvbench sweep --config "$work/bad6.json" --out-dir "$work/x"
expect_error "--shard must be i/N" kvbench sweep --config "$work/sweep.json" --shard 2/2
echo "sweep_shards: all checks passed"
