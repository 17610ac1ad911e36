#!/usr/bin/env bash
# `kvbench report` / `inspect` on results files written by h5py straight from results/README.md (so the
# reader is checked against the documented schema, not against our writer), with known scores: Table-2
# means, the pred=None row, paired counts and exact sign-test p-values, latency bins, accuracy vs J —
# all recomputed in Python. Plus bad files.
set -euo pipefail
source "$(dirname "$0")/common.bash"
require_h5py
/usr/bin/python3 - "$work" <<'PY'
import json, sys
import h5py, numpy as np
work = sys.argv[1]
S = h5py.string_dtype()
V = h5py.vlen_dtype(np.int64)
def write(name, model, policy, J, h, seed, scores, preds, refresh_n):
    f = h5py.File(f"{work}/{name}.h5", "w")
    config = {"model": f"models/{model}", "task": "aime24", "data": "d", "prompt_mode": "raw", "policy": policy,
              "J": J, "h": h, "recent": -1, "frozen": "0", "min_gap": 0, "sinks": 4, "mode": "chunked",
              "policy_seed": 0, "max_new": 8, "temperature": 0.6, "top_p": 0.95, "rollouts": 2, "seed": seed,
              "limit": 0, "samples": [], "device": "cpu", "dtype": "float32"}
    f.attrs["schema_version"] = np.int64(1)
    for key in ["kvbench_version", "git_commit", "torch_version", "device", "dtype", "host", "start_time", "end_time"]:
        f.attrs[key] = "x"
    f.attrs["config"] = json.dumps(config)
    n = len(scores)
    s = f.create_group("summary")
    for key, value in {"samples": np.int64(n // 2), "rows": np.int64(n)}.items(): s.attrs[key] = value
    for key in ["score", "score_ci_low", "score_ci_high", "pred_none_rate", "mean_generated_length"]:
        s.attrs[key] = float(np.mean(scores))
    r = f.create_group("rows")
    r["sample_id"] = np.array([f"q{i // 2}" for i in range(n)], dtype=object).astype(S)
    r["rollout"] = np.array([i % 2 for i in range(n)], dtype=np.int64)
    for key in ["seed", "prompt_length", "generated_length", "refresh_count", "peak_cache_size"]:
        r[key] = np.full(n, seed if key == "seed" else 1, dtype=np.int64)
    ids = r.create_dataset("generated_ids", (n,), dtype=V)
    for i in range(n): ids[i] = np.array([7, i], dtype=np.int64)
    for key in ["stop_reason", "output", "gold"]: r.create_dataset(key, data=["{}"] * n, dtype=S)
    r.create_dataset("pred", data=[p or "" for p in preds], dtype=S)
    r["pred_none"] = np.array([p is None for p in preds], dtype=np.int64)
    r["score"] = np.array(scores, dtype=np.float64)
    r["wall_seconds"] = np.ones(n); r["mean_cache_size"] = np.ones(n)
    t = f.create_group("refreshes")
    m = len(refresh_n)
    for key in ["row", "step", "processed", "size_after"]: t[key] = np.zeros(m, dtype=np.int64)
    t["size_before"] = np.array(refresh_n, dtype=np.int64)
    t["layers"] = np.ones(m, dtype=np.int64); t["kv_heads"] = np.ones(m, dtype=np.int64)
    t.create_dataset("phase", data=["decode"] * m, dtype=S)
    t.create_dataset("kept_positions", (m,), dtype=V)
    t["scoring_ms"] = np.array([0.5 * n_ for n_ in refresh_n], dtype=np.float64)
    t["compaction_ms"] = np.full(m, 0.25)

rng = np.random.default_rng(0)
truth = {}
for model in ["mA", "mB"]:
    for policy in ["full", "sliding"]:
        for J in [64, 128]:
            for seed in [0, 1]:
                scores = list(rng.integers(0, 2, 20).astype(float))
                preds = [None if rng.random() < 0.2 else "5" for _ in scores]
                write(f"{model}_{policy}_J{J}_s{seed}", model, policy, J, J // 4, seed, scores, preds, [40, 60, 100])
                truth[(model, policy, J, seed)] = (scores, preds)
json.dump({"|".join(map(str, k)): v for k, v in truth.items()}, open(f"{work}/truth.json", "w"))
PY

kvbench report "$work"/m*.h5 --table policies --table aime --table paired --table latency --J 64 --h J/4 --format csv > "$work/tables.csv"
kvbench report "$work"/m*.h5 --table accuracy-vs-j --format md > "$work/acc.md"
/usr/bin/python3 - "$work" <<'PY'
import csv, json, math, sys
import numpy as np
work = sys.argv[1]
truth = {tuple(k.split("|")): v for k, v in json.load(open(f"{work}/truth.json")).items()}
tables, current = [], None
for line in open(f"{work}/tables.csv"):
    if line.startswith("#"):
        current = []; tables.append(current)
    elif line.strip():
        current.append(next(csv.reader([line])))
policies, aime, paired, latency = tables
def units(model, policy, J):  # (seed, sample) → mean over the two rollouts
    out = {}
    for seed in "01":
        scores, _ = truth[(model, policy, str(J), seed)]
        for q in range(10): out[(seed, q)] = np.mean(scores[2 * q: 2 * q + 2])
    return out
assert policies[0] == ["policy", "mA", "mB"], policies[0]
for row in policies[1:]:
    for model, cell in zip(["mA", "mB"], row[1:]):
        expected = np.mean(list(units(model, row[0], 64).values()))
        mean, low, high = [float(x.strip("[],")) for x in cell.split()]
        assert abs(mean - expected) < 5e-4 and low <= mean <= high, (row[0], model, cell, expected)
for row in aime[1:]:
    if row[2] != "pred=None": continue
    for policy, cell in zip(aime[0][3:], row[3:]):
        preds = sum((truth[(row[0], policy, "64", s)][1] for s in "01"), [])
        assert abs(float(cell) - np.mean([p is None for p in preds])) < 5e-4, (row, policy, cell)
assert len(paired) == 3, paired  # header + one pair per model
for row in paired[1:]:
    a, b = units(row[0], row[4], 64), units(row[0], row[5], 64)
    wins, losses = sum(a[k] > b[k] for k in a), sum(b[k] > a[k] for k in a)
    n = wins + losses
    p = min(1.0, 2 * sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2 ** n)
    assert (int(row[9]), int(row[10])) == (wins, losses), (row, wins, losses)
    assert abs(float(row[11]) - p) <= 5e-3 * p, (row[11], p)  # printed with 3 significant digits
    assert abs(float(row[7]) - np.mean([a[k] - b[k] for k in a])) < 5e-4
for row in latency[1:]:
    n_bin, scoring = int(row[2]), float(row[4])
    expected = {64: np.mean([20, 30]), 128: 50}[n_bin]  # n = 40, 60 → ≤ 64; n = 100 → ≤ 128
    assert abs(scoring - expected) < 5e-4, row
print("report tables match the Python recomputation")
PY
grep -q "| policy | J=64 | J=128 |" "$work/acc.md" || { cat "$work/acc.md"; fail "accuracy-vs-J columns"; }
kvbench report "$work"/m*.h5 --policy sliding --J 128 --format csv | tail -n +3 | grep -v '^$' > "$work/filtered.csv"
[[ $(wc -l < "$work/filtered.csv") -eq 4 ]] && ! grep -q ",full," "$work/filtered.csv" || { cat "$work/filtered.csv"; fail "--policy / --J filters"; }
kvbench inspect "$work/mA_full_J64_s0.h5" | grep -q "pred=None" || fail "inspect summary"

echo "not hdf5" > "$work/junk.h5"
if kvbench report "$work/junk.h5" 2> "$work/err"; then fail "a non-HDF5 file was accepted"; fi
grep -q "junk.h5: not a readable HDF5 file" "$work/err" || { cat "$work/err"; fail "junk file error"; }
/usr/bin/python3 -c "import h5py,sys; f=h5py.File(sys.argv[1],'a'); del f['rows/score']" "$work/mB_full_J64_s0.h5"
if kvbench inspect "$work/mB_full_J64_s0.h5" 2> "$work/err"; then fail "a file without rows/score was accepted"; fi
grep -q "mB_full_J64_s0.h5:/rows/score: missing dataset" "$work/err" || { cat "$work/err"; fail "missing dataset error"; }
echo "report_tables: all checks passed"
