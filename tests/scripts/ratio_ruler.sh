#!/usr/bin/env bash
# Compression-ratio budgets (--J ratio:R) and the generated long-context tasks (ruler, niah) end to end on
# models/kvbench-demo: each row records J = max(1, floor(prompt_length x (1 - R))) (recomputed here from the
# file's own prompt lengths), and a sample run with --J ratio:R generates exactly what the same sample run with
# that absolute J generates; a sweep over ratios labels its files by ratio; `--task ruler:TASK,length=N` runs
# and records the spec; a random model takes a tokenizer (--tokenizer); niah's report table and heatmap.
set -uo pipefail
source "$(dirname "$0")/common.bash"
demo_model
require_h5py
py=/usr/bin/python3

data="rare-fact:seed=3,samples=3,words=150"
"$KVBENCH" run --model "$model" --task rare-fact --data "$data" --policy snapkv --J ratio:0.6 --mode prefill_end \
  --out "$work/ratio.h5" --quiet > /dev/null 2>&1 || fail "run --J ratio:0.6"
read -r sample J < <("$py" - "$work/ratio.h5" <<'PY'
import json, math, sys, h5py
with h5py.File(sys.argv[1]) as f:
    config = json.loads(f["/"].attrs["config"])
    assert config["ratio"] == 0.6 and config["J"] == 0, config
    lengths, Js = f["rows/prompt_length"][:], f["rows/budget_J"][:]
    for n, J in zip(lengths, Js):
        assert J == max(1, math.floor(n * (1 - 0.6))), (n, J)
    assert len(set(Js)) > 1, Js  # the samples' prompts differ, so do their budgets
    print(f["rows/sample_id"].asstr()[1], Js[1])
PY
) || fail "budget_J is not floor(prompt x (1 - ratio))"
"$KVBENCH" run --model "$model" --task rare-fact --data "$data" --samples "$sample" --policy snapkv --J "$J" \
  --mode prefill_end --out "$work/absolute.h5" --quiet > /dev/null 2>&1 || fail "run --J $J"
"$py" - "$work/ratio.h5" "$work/absolute.h5" "$sample" <<'PY' || fail "ratio and absolute J generate differently"
import sys, h5py
with h5py.File(sys.argv[1]) as a, h5py.File(sys.argv[2]) as b:
    row = list(a["rows/sample_id"].asstr()[:]).index(sys.argv[3])
    assert list(a["rows/generated_ids"][row]) == list(b["rows/generated_ids"][0])
    assert a["rows/budget_J"][row] == b["rows/budget_J"][0]
PY
expect_error "ratio:R, a compression ratio with 0 < R < 1" "$KVBENCH" run --model "$model" --task rare-fact \
  --policy snapkv --J ratio:1 --out "$work/bad.h5"

cat > "$work/sweep.json" <<JSON
{"output_dir": "$work/sweep", "base": {"model": "$model", "task": "rare-fact", "data": "$data", "limit": 2,
 "mode": "prefill_end", "h": "J/4"}, "grid": {"policy": ["knorm", "tova"], "ratio": [0.25, 0.75]}}
JSON
"$KVBENCH" sweep --config "$work/sweep.json" --quiet > /dev/null 2>&1 || fail "sweep over ratios"
for policy in knorm tova; do
  for ratio in 0.25 0.75; do
    [[ -f "$work/sweep/kvbench-demo__rare-fact__${policy}__ratio${ratio}__h0__s0__r1.h5" ]] ||
      fail "no file for $policy ratio $ratio: $(ls "$work/sweep")"
  done
done
# The report selects a ratio budget as it does a token count: the files whose config holds that ratio.
"$KVBENCH" report "$work"/sweep/*.h5 "$work/absolute.h5" --J ratio:0.25 --format csv > "$work/overview.csv" ||
  fail "report --J ratio:0.25"
"$py" - "$work/overview.csv" "$work"/sweep/*.h5 "$work/absolute.h5" <<'PY' || fail "report --J ratio:0.25 selects other files"
import csv, io, json, sys, h5py
rows = list(csv.DictReader(io.StringIO(open(sys.argv[1]).read().split("\n\n")[0].split("\n", 1)[1])))
wanted = sorted(json.loads(h5py.File(p)["/"].attrs["config"])["policy"] for p in sys.argv[2:]
                if json.loads(h5py.File(p)["/"].attrs["config"]).get("ratio") == 0.25)
assert sorted(r["policy"] for r in rows) == wanted == ["knorm", "tova"], (rows, wanted)
assert all(r["J"] == "ratio:0.25" for r in rows), rows
PY

"$KVBENCH" run --model "$model" --task ruler:niah_single_1,length=512,samples=2 --policy streaming --J 128 \
  --out "$work/ruler.h5" --quiet > /dev/null 2>&1 || fail "run --task ruler:niah_single_1"
"$py" - "$work/ruler.h5" <<'PY' || fail "ruler's results"
import json, sys, h5py
with h5py.File(sys.argv[1]) as f:
    config = json.loads(f["/"].attrs["config"])
    assert config["task"] == "ruler" and config["data"].endswith("ruler:niah_single_1,length=512,samples=2"), config
    assert config["max_new"] == 128, config  # RULER's tokens to generate for niah
    gold = json.loads(f["rows/gold"].asstr()[0])
    assert gold["task"] == "niah_single_1" and gold["max_length"] == 512 and 0.98 * 512 <= gold["length"] <= 512, gold
    assert len(f["rows/sample_id"]) == 2
PY
expect_error "names its data already" "$KVBENCH" run --model "$model" --task ruler:vt --data x --policy full \
  --out "$work/bad.h5"
expect_error "tokenizer" "$KVBENCH" run --model random:qwen2.5-0.5b --task rare-fact --policy full --out "$work/bad.h5"

"$KVBENCH" run --model "$model" --task niah --data "niah:lengths=384+512,depths=0+50+100" --policy full \
  --max-new 16 --out "$work/niah-full.h5" --quiet > /dev/null 2>&1 || fail "run niah (full)"
"$KVBENCH" run --model "$model" --task niah --data "niah:lengths=384+512,depths=0+50+100" --policy sliding --J 64 \
  --max-new 16 --out "$work/niah-sliding.h5" --quiet > /dev/null 2>&1 || fail "run niah (sliding)"
"$KVBENCH" report "$work/niah-full.h5" "$work/niah-sliding.h5" --table niah --format csv > "$work/niah.csv" ||
  fail "report --table niah"
"$py" - "$work/niah.csv" "$work/niah-full.h5" "$work/niah-sliding.h5" <<'PY' || fail "the niah table is not the files' means"
import csv, io, json, sys, h5py
text = open(sys.argv[1]).read()
for path in sys.argv[2:]:
    with h5py.File(path) as f:
        policy = json.loads(f["/"].attrs["config"])["policy"]
        cells = {}
        for gold, score in zip(f["rows/gold"].asstr()[:], f["rows/score"][:]):
            g = json.loads(gold)
            cells.setdefault((g["depth"], g["max_length"]), []).append(score)
    block = text[text.index(policy):]
    rows = list(csv.reader(io.StringIO(block.split("\n\n")[0])))
    header = rows[1]
    assert header[1:] == ["384", "512"], header
    for row in rows[2:]:
        for length, cell in zip(header[1:], row[1:]):
            scores = cells[(float(row[0]), int(length))]
            assert abs(float(cell) - sum(scores) / len(scores)) < 5e-3, (policy, row, cell, scores)
PY
"$py" "$here/../../scripts/plot_niah.py" "$work/niah-full.h5" "$work/niah-sliding.h5" --out "$work/niah.png" \
  > /dev/null || fail "plot_niah.py"
"$py" "$here/../../scripts/plot_niah.py" "$work/niah-full.h5" "$work/niah-sliding.h5" --metric key_retention \
  --out "$work/niah-kept.png" > /dev/null || fail "plot_niah.py --metric key_retention"
[[ -s "$work/niah.png" && -s "$work/niah-kept.png" ]] || fail "no heatmap"
echo "ok"
