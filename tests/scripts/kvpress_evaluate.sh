#!/usr/bin/env bash
# kvpress's own evaluation end to end against a kvbench sweep of the same grid, on SmolLM2-135M-Instruct and RULER
# samples kvbench generates (`kvbench datasets export`: niah_single_1, niah_multikey_2, vt and fwe at 1536 tokens).
# tests/peers/reference_evaluate.py runs evaluation/evaluate.py of the NVIDIA/kvpress repository (not in the
# wheel: KVPRESS_EVALUATION names a checkout's evaluation/ directory; without it the test skips, as under CI)
# for each press of its registry that kvbench has, and kvbench sweeps the same presses by its names through
# --pipeline kvpress. Per sample: the predicted answers identical, and the scores of evaluate.py's RULER metric
# identical to kvbench's (× 100, rounded to 2 decimals as evaluate.py rounds); per task, metrics.json's score
# equal to kvbench's mean.
# Each row runs its own max new tokens on both sides (evaluate.py's max_new_tokens null; kvbench's max_new unset);
# KVPRESS_EVALUATE_MAX_NEW=N gives both N. A slice by default (7 presses at ratio 0.5 and kvzap_mlp at threshold 0,
# one sample a task); KVPRESS_EVALUATE_FULL=1 runs every press at 0.25, 0.5, 0.75 and 0.875 (the kvzap ones at
# thresholds 0, -0.5 and 0.5) with two samples a task (KVPRESS_EVALUATE_RATIOS,
# KVPRESS_EVALUATE_SAMPLES and KVPRESS_EVALUATE_PRESSES, registry names comma-separated, override them), and prints the
# table.
set -uo pipefail
source "$(dirname "$0")/common.bash"
require_h5py
source_dir=${KVBENCH_SOURCE:-$here/../..}
peer_python=${KVBENCH_PYTHON:-$source_dir/.venv/bin/python}
gguf=${KVBENCH_MODELS:-$HOME/.cache/kvbench/models}/smollm2-135m-instruct/SmolLM2-135M-Instruct.Q4_1.gguf
[[ -n "${KVPRESS_EVALUATION:-}" && -f "${KVPRESS_EVALUATION:-}/evaluate.py" ]] ||
  skip "KVPRESS_EVALUATION does not name kvpress's evaluation/ directory (a checkout of NVIDIA/kvpress; the wheel lacks it)"
[[ -x "$peer_python" ]] || skip "no peer environment at $peer_python (run scripts/setup.sh)"
[[ -f "$gguf" ]] || skip "$gguf not found (run scripts/setup.sh or \`kvbench models fetch\`)"
"$peer_python" -c "import kvpress" 2>/dev/null || skip "$peer_python has no kvpress"

full=${KVPRESS_EVALUATE_FULL:-0}
samples=${KVPRESS_EVALUATE_SAMPLES:-$([[ $full == 1 ]] && echo 2 || echo 1)}
for task in niah_single_1 niah_multikey_2 vt fwe; do
  kvbench datasets export --model "$gguf" --task ruler --data "ruler:$task,length=1536,samples=$samples" \
    --out "$work/$task.jsonl" > /dev/null || fail "kvbench datasets export $task"
done
# One file, each row's index its line.
/usr/bin/python3 - "$work" > "$work/rows.jsonl" <<'PY' || fail "rows"
import json, sys
rows = [json.loads(line) for task in ("niah_single_1", "niah_multikey_2", "vt", "fwe")
        for line in open(f"{sys.argv[1]}/{task}.jsonl")]
for index, row in enumerate(rows):
    print(json.dumps(dict(row, index=index)))
PY

# kvpress's registry name → kvbench's job fields (evaluate_registry.py; the leaderboard recipe's choices).
/usr/bin/python3 - "$work" "$gguf" "$full" "${KVPRESS_EVALUATE_MAX_NEW:-}" "${KVPRESS_EVALUATE_RATIOS:-}" \
  "${KVPRESS_EVALUATE_PRESSES:-}" <<'PY' || fail "cases"
import json, sys
work, gguf, full = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
max_new = int(sys.argv[4]) if sys.argv[4] else None  # None: each row its own
ADA = "ada:safeguard=0.2"
PRESSES = {  # name: (kvbench fields, query_aware, reseed)
    "knorm": ({"policy": "knorm"}, False, None),
    "snapkv": ({"policy": "snapkv"}, False, None),
    "streaming_llm": ({"policy": "streaming"}, False, None),
    "tova": ({"policy": "tova:layers=each", "recent": 1}, False, None),
    "observed_attention": ({"policy": "observed-attention"}, False, None),
    "keydiff": ({"policy": "keydiff"}, False, None),
    "expected_attention": ({"policy": "expected-attention:epsilon=0.01", "allocator": ADA}, False, None),
    "adakv_snapkv": ({"policy": "snapkv", "allocator": ADA}, False, None),
    "lagkv": ({"policy": "lagkv"}, False, None),
    "cur": ({"policy": "cur"}, False, None),
    "compactor": ({"policy": "compactor"}, False, 0),
    "adakv_compactor": ({"policy": "compactor", "allocator": ADA}, False, 0),
    "snapkv ": ({"policy": "snapkv"}, True, None),
    "chunkkv": ({"policy": "snapkv", "allocator": "chunkkv", "recent": 0}, True, None),
    "kvzip": ({"policy": "kvzip", "allocator": "global"}, False, None),
    "finch": ({"policy": "finch"}, True, None),
}
# DMSPress(KVzapPress): kept by a score threshold, not a ratio. Seeded random surrogates (reference_press.py's,
# written by the peer's run), whose scores lie around 0, in place of the hub's.
THRESHOLD_PRESSES = {name: f"kvzap:model={work}/kvzap/{name}" for name in ("kvzap_linear", "kvzap_mlp")}
thresholds = [0.0, -0.5, 0.5] if full else [0.0]
slice_ = sys.argv[6].split(",") if sys.argv[6] else ["knorm", "snapkv", "lagkv", "compactor", "chunkkv", "kvzip", "finch",
                                                     "kvzap_mlp"]
ratios = [float(r) for r in sys.argv[5].split(",")] if sys.argv[5] else [0.25, 0.5, 0.75, 0.875] if full else [0.5]
cases, parts = [], [{"grid": {"policy": ["full"]}}]
cases.append({"press_name": "no_press", "compression_ratio": 0.0, "query_aware": False, "max_new_tokens": max_new,
              "output": f"{work}/peer-no_press.json", "kvbench": {"policy": "full", "ratio": 0}})
for name, (fields, query_aware, reseed) in PRESSES.items():
    if (not full or sys.argv[6]) and name.strip() not in slice_ or (name == "snapkv " and not full):
        continue
    part = {"base": {k: v for k, v in fields.items() if k != "policy"}, "grid": {"policy": [fields["policy"]], "ratio": ratios}}
    if query_aware:
        part["base"]["compress_questions"] = True
    parts.append(part)
    for ratio in ratios:
        case = {"press_name": name.strip(), "compression_ratio": ratio, "query_aware": query_aware,
                "max_new_tokens": max_new, "output": f"{work}/peer-{name.strip()}-{int(query_aware)}-{ratio}.json",
                "kvbench": dict(fields, ratio=ratio, compress_questions=query_aware)}
        if reseed is not None:
            case["reseed"] = reseed
        cases.append(case)
for name, policy in THRESHOLD_PRESSES.items():
    if (not full or sys.argv[6]) and name not in slice_:
        continue
    allocators = [f"dms:threshold={t:g}" for t in thresholds]
    parts.append({"grid": {"policy": [policy], "allocator": allocators}})
    for t, allocator in zip(thresholds, allocators):
        cases.append({"press_name": name, "compression_ratio": 0.0, "threshold": t, "surrogates": f"{work}/kvzap",
                      "query_aware": False, "max_new_tokens": max_new, "output": f"{work}/peer-{name}-{t:g}.json",
                      "kvbench": {"policy": policy, "allocator": allocator, "ratio": 0}})
json.dump(cases, open(f"{work}/cases.json", "w"), indent=1)
base = {"model": gguf, "task": "ruler", "data": f"{work}/rows.jsonl", "prompt_mode": "chat", "pipeline": "kvpress",
        "mode": "prefill_end", "max_new": max_new or 0, "temperature": 0, "rollouts": 1}
for i, part in enumerate(parts):  # one sweep a part: its own fields on top of the shared ones
    json.dump({"output_dir": f"{work}/kvbench/{i}", "base": dict(base, **part.get("base", {})), "grid": part["grid"]},
              open(f"{work}/sweep-{i}.json", "w"), indent=1)
PY
# kvpress first: it writes the KVzap surrogates that kvbench's sweep reads.
HF_HUB_DISABLE_PROGRESS_BARS=1 TRANSFORMERS_VERBOSITY=error TQDM_DISABLE=1 \
  "$peer_python" "$source_dir/tests/peers/reference_evaluate.py" "$KVPRESS_EVALUATION" "$gguf" "$work/rows.jsonl" \
  "$work/cases.json" > "$work/peer.log" 2>&1 || { tail -30 "$work/peer.log"; fail "kvpress's evaluate.py"; }
for config in "$work"/sweep-*.json; do
  kvbench sweep --config "$config" --quiet > "$work/sweep.log" 2>&1 || { tail -20 "$work/sweep.log"; fail "kvbench sweep $config"; }
done

/usr/bin/python3 - "$work" <<'PY' || fail "kvbench's sweep differs from kvpress's evaluate.py (above)"
import glob, json, sys
import h5py
work = sys.argv[1]
files = {}
for path in glob.glob(f"{work}/kvbench/*/*.h5"):
    with h5py.File(path) as f:
        c = json.loads(f["/"].attrs["config"])
        key = (c["policy"], c.get("allocator", "uniform"), c.get("ratio", 0) or 0, bool(c.get("compress_questions")),
               c.get("recent", -1))
        files[key] = {"output": [o.decode() for o in f["rows/output"][:]], "score": list(f["rows/score"][:]),
                      "sample": [s.decode() for s in f["rows/sample_id"][:]]}
rows = [json.loads(line) for line in open(f"{work}/rows.jsonl")]
problems, table = [], []
for case in json.load(open(f"{work}/cases.json")):
    k = case["kvbench"]
    key = (k["policy"], k.get("allocator", "uniform"), k["ratio"], k.get("compress_questions", False), k.get("recent", -1))
    if key not in files:
        problems.append(f"no kvbench file for {key} (have {sorted(files)})")
        continue
    ours, peer = files[key], json.load(open(case["output"]))
    order = [f"{row['task']}/{row['index']}" for row in rows]
    by_id = dict(zip(ours["sample"], zip(ours["output"], ours["score"])))
    same_pred = same_score = 0
    for i, sample in enumerate(order):
        output, score = by_id[sample]
        same_pred += output == peer["predictions"][i]
        scored_alike = round(100 * score, 2) == peer["scores"][i]  # evaluate.py's metric rounds to 2 decimals
        same_score += scored_alike
        if output != peer["predictions"][i] or not scored_alike:
            problems.append(f"{case['press_name']} {case['compression_ratio']} {sample}: kvbench {output!r} "
                            f"({100 * score:g}) vs kvpress {peer['predictions'][i]!r} ({peer['scores'][i]:g})")
    for task, metric in peer["metrics"].items():
        mean = [100 * by_id[s][1] for s in order if s.startswith(task + "/")]
        if abs(sum(mean) / len(mean) - metric["string_match"]) > 0.006:
            problems.append(f"{case['press_name']} {case['compression_ratio']} {task}: kvbench mean "
                            f"{sum(mean) / len(mean):.2f} vs metrics.json {metric['string_match']}")
    aware = ", query-aware" if case["query_aware"] else ""
    table.append(f"| {case['press_name']}{aware} | {' '.join(f'{a}={b}' for a, b in k.items())} | "
                 f"{case.get('threshold', case['compression_ratio'])} | {len(order)} | {same_pred} | {same_score} |")
print("| kvpress press | kvbench job | ratio (threshold) | samples | predictions equal | scores equal |\n|---|---|---|---|---|---|")
print("\n".join(table))
for problem in problems:
    print("  " + problem)
sys.exit(1 if problems else 0)
PY
echo "kvpress_evaluate: all checks passed"
