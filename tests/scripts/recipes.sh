#!/usr/bin/env bash
# Every recipe in recipes/: parses, resolves its HF ids under --models-dir (tiny stand-ins: models/kvbench-demo
# with a Qwen3 chat template), dry-runs with a job count and a cost estimate, runs with --limit 1 and
# reports with the published numbers beside the measured ones. Also: missing models, scorers and datasets
# are all listed before any job starts; report cells without results say "missing"; the measured cell
# equals the mean recomputed from the results file with h5py; so do a relative_score cell (over its teacher)
# and the cells read after </think> (Table 3).
set -euo pipefail
source "$(dirname "$0")/common.bash"
require_h5py
demo_model
shared=${KVBENCH_SHARED:-}
recipes="${KVBENCH_SOURCE:-$here/../..}/recipes"
# The recipes' datasets and the Qwen3 chat template come from ../shared.
[[ -d "$shared/datasets/math500" && -d "$shared/tokenizers/qwen3" ]] || skip "$shared/datasets or tokenizers/qwen3 not found"

# Stand-in models under the names the recipes' HF ids resolve to.
mkdir -p "$work/standin"
for f in config.json generation_config.json model.safetensors tokenizer.json; do ln -s "$model/$f" "$work/standin/$f"; done
/usr/bin/python3 - "$model/tokenizer_config.json" "$shared/tokenizers/qwen3/tokenizer_config.json" "$work/standin/tokenizer_config.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["chat_template"] = json.load(open(sys.argv[2]))["chat_template"]
json.dump(config, open(sys.argv[3], "w"))
PY
mkdir -p "$work/models"
for name in Qwen2.5-3B-Instruct Qwen2.5-7B-Instruct Qwen2.5-14B-Instruct Llama-3.1-8B-Instruct Qwen3-4B Qwen3-8B; do
  ln -s "$work/standin" "$work/models/$name"
done

# Datasets: the staged ones in place; small fixtures in the published formats for the long-context ones and
# for those not staged (Qasper's dev split, HMMT Nov 2025, LiveCodeBench v6: two v5 records in its format).
mkdir -p "$work/data/longhealth" "$work/data/qasper" "$work/data/locomo" "$work/data/hmmt_nov_2025" "$work/data/livecodebench"
for d in math500 aime24 aime25 hmmt_feb_2025 gpqa_diamond; do ln -s "$shared/datasets/$d" "$work/data/$d"; done
lcb=livecodebench/livecodebench_v5_2408_2502_prompts.jsonl
ln -s "$shared/datasets/$lcb" "$work/data/$lcb"
head -n 2 "$shared/datasets/$lcb" > "$work/data/livecodebench/livecodebench_v6_prompts.jsonl"
printf '{"problem_idx": 1, "problem": "Compute $2+3$.", "answer": "5"}\n' > "$work/data/hmmt_nov_2025/test.jsonl"
mkdir -p "$work/data/ruler"  # kvpress's RULER set (HF simonjegou/ruler): one row of its layout, long enough that
# a tenth of it exceeds snapkv's 64-token window (the row's J at ratio 0.9)
/usr/bin/python3 -c '
import json
noise = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.\n" * 20
print(json.dumps({"context": noise + "One of the special magic numbers for cold-lake is: 1234567.\n" + noise,
                  "question": " What is the special magic number for cold-lake?",
                  "answer_prefix": " The special magic number for cold-lake mentioned in the provided text is",
                  "answer": ["1234567"], "task": "niah_single_1", "max_new_tokens": 128}))' > "$work/data/ruler/kvpress_4096.jsonl"
ln -s "$here/../data/longhealth_fixture.json" "$work/data/longhealth/benchmark_v5.json"
cat > "$work/data/qasper/qasper-dev-v0.3.json" <<'JSON'
{"1234.5678": {"title": "A tiny paper", "abstract": "We count sheep in a meadow.",
  "full_text": [{"section_name": "Method", "paragraphs": ["Sheep were counted twice, at dawn and at dusk."]}],
  "figures_and_tables": [],
  "qas": [{"question": "When were sheep counted?", "question_id": "q1",
           "answers": [{"answer": {"unanswerable": false, "extractive_spans": ["at dawn and at dusk"], "yes_no": null,
                                   "free_form_answer": "", "evidence": [], "highlighted_evidence": []},
                        "annotation_id": "a1", "worker_id": "w1"}]}]}}
JSON
# LoCoMo: ../shared's locomo10.json with every conversation cut to three turns, its QA lists whole, so the
# sample ids (<sample_id>/q<index>) are the real ones: Figure 5's recipe names its category-1 questions by id.
/usr/bin/python3 - "$shared/datasets/locomo/locomo10.json" "$work/data/locomo/locomo10.json" <<'PY'
import json, sys
conversations = json.load(open(sys.argv[1]))
for c in conversations:
    c["conversation"] = {"speaker_a": "Ann", "speaker_b": "Bob", "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat called Tom yesterday."},
                      {"speaker": "Bob", "dia_id": "D1:2", "text": "Lovely, what colour is he?"},
                      {"speaker": "Ann", "dia_id": "D1:3", "text": "He is grey with white paws."}]}
    c["event_summary"] = c["observation"] = c["session_summary"] = {}
json.dump(conversations, open(sys.argv[2], "w"))
PY
# Figure 5 restricts LoCoMo to category 1 (multi-hop) by listing its sample ids: exactly those of the file.
/usr/bin/python3 - "$shared/datasets/locomo/locomo10.json" "$recipes/counter-causal-figure5-j-sweeps.json" <<'PY' \
  || fail "Figure 5: LoCoMo's samples are not the 282 category-1 questions of locomo10.json"
import json, sys
ids = [f"{c['sample_id']}/q{i}" for c in json.load(open(sys.argv[1])) for i, qa in enumerate(c["qa"]) if qa["category"] == 1]
parts = [p for p in json.load(open(sys.argv[2]))["parts"] if p["base"].get("task") == "locomo-paper"]
sys.exit(not (len(ids) == 282 and parts and all(p["base"].get("samples") == ids for p in parts)))
PY

# Stand-in scorers: a few training steps of each kind on the stand-in model.
for kind in mlp mlstm; do
  kvbench train-scorer --model "$model" --data "rare-fact:seed=7,samples=2,words=60" --s 2 --w 8 --k 8 --kind $kind \
    --hidden 8 --steps 5 --out "$work/kvpop-$kind.safetensors" > /dev/null 2>&1 || fail "train-scorer --kind $kind"
  for name in Qwen3-4B Qwen3-8B; do mkdir -p "$work/scorers/$name" && cp "$work/kvpop-$kind.safetensors" "$work/scorers/$name/"; done
done

cd "$work"
cpu=(--set device=cpu --set dtype=float32 --set max_new=4 --limit 1 --quiet)
common=(--models-dir "$work/models" --data-root "$work/data" --scorers-dir "$work/scorers" "${cpu[@]}")

# Missing inputs: every one listed, nothing started.
expect_error "model Qwen/Qwen2.5-14B-Instruct: $work/nowhere/Qwen2.5-14B-Instruct does not exist" \
  kvbench sweep --config "$recipes/counter-causal-table2-math500.json" --models-dir "$work/nowhere" --data-root "$work/data"
grep -q "4 of the sweep's inputs are missing" "$work/err" || { cat "$work/err"; fail "all four models listed"; }
[[ ! -d results/counter-causal ]] || fail "a job started although models were missing"
expect_error "scorer $work/noscorers/Qwen3-4B/kvpop-mlp.safetensors: does not exist" \
  kvbench sweep --config "$recipes/kvpop-table2-gpqa-livecodebench.json" --models-dir "$work/models" \
    --data-root "$work/data" --scorers-dir "$work/noscorers" "${cpu[@]}"
expect_error "dataset math500: $work/nodata/math500/test.jsonl does not exist" \
  kvbench sweep --config "$recipes/ablation-h-over-j.json" --models-dir "$work/models" --data-root "$work/nodata"
expect_error "cannot be overridden" kvbench sweep --config "$recipes/ablation-h-over-j.json" --set J=8 --dry-run
# --set model.ID=PATH wins over --models-dir for that model only.
kvbench sweep --config "$recipes/counter-causal-table2-math500.json" --models-dir "$work/nowhere" --data-root "$work/data" \
  --set "model.Qwen/Qwen2.5-14B-Instruct=$work/standin" --dry-run --no-bench > set.plan
grep -q "^missing (3;" set.plan && ! grep -q "model Qwen/Qwen2.5-14B-Instruct" set.plan || { cat set.plan; fail "--set model.ID=PATH"; }

# Malformed recipes: one error naming the file and the field.
bad() {  # bad PATTERN JQ-LIKE-PYTHON-EDIT: a copy of Table 2's recipe with one edit must fail with PATTERN
  /usr/bin/python3 -c "
import json, sys
r = json.load(open(sys.argv[1])); exec(sys.argv[2]); json.dump(r, open(sys.argv[3], 'w'))" \
    "$recipes/counter-causal-table2-math500.json" "$2" "$work/bad.json"
  expect_error "$1" kvbench sweep --config "$work/bad.json" --dry-run --no-bench
}
bad "bad.json: recipe.tables\[0\]: field \"metric\" must be one of" "r['recipe']['tables'][0]['metric'] = 'speed'"
bad "bad.json: recipe.tables\[0\]: published column \"Qwen9\"" "r['recipe']['tables'][0]['published']['H2O']['Qwen9'] = 1"
bad "no job of the recipe matches the published cell \"H2O\" / \"Llama-3.1-8B\"" "r['grid']['policy'].remove('h2o')"
bad "bad.json: recipe: unknown field \"notes\"" "r['recipe']['notes'] = 'x'"
bad "rows\[6\]: a reference row says why kvbench does not run it and has no \"where\"" \
  "r['recipe']['tables'][0]['rows'].append({'name': 'DMS', 'reference': 'retrofit', 'where': {'policy': 'full'}})"
bad "published value of \"H2O\" / \"Qwen2.5-7B\" must be a number, null or {\"below\": number}" \
  "r['recipe']['tables'][0]['published']['H2O']['Qwen2.5-7B'] = {'above': 1}"
bad "unknown dataset \"math5000\"" "r['recipe']['datasets'] = ['math5000']"
bad "tables\[0\]: field \"relative_to\" is for metric relative_score only" "r['recipe']['tables'][0]['relative_to'] = {'policy': 'full'}"
bad "tables\[0\]: metric relative_score needs field \"relative_to\"" "r['recipe']['tables'][0]['metric'] = 'relative_score'"
bad "tables\[0\]: relative_to: unknown field \"polcy\"" \
  "r['recipe']['tables'][0].update(metric='relative_score', relative_to={'polcy': 'full'})"
bad "relative_to: no job of the recipe is the reference of the published cell \"H2O\" / \"Llama-3.1-8B\"" \
  "r['recipe']['tables'][0].update(metric='relative_score', relative_to={'policy': 'fulll'})"

# The measured benchmark behind the cost estimate, on one recipe (at J = 4096 it costs minutes on a CPU).
kvbench sweep --config "$recipes/counter-causal-table2-math500.json" "${common[@]}" --dry-run > table2.bench
grep -q "^total: 24 samples, .* estimated .* for 24 of 24 jobs" table2.bench || { cat table2.bench; fail "cost estimate"; }
[[ $(grep -c "bench .*J=512 h=256 on cpu: prefill .* tok/s, decode .* tok/s, refresh .* ms" table2.bench) -eq 24 ]] \
  || { cat table2.bench; fail "one benchmark per model × policy"; }

published=0
for recipe in "$recipes"/*.json; do
  name=$(basename "$recipe" .json)
  kvbench sweep --config "$recipe" "${common[@]}" --dry-run --no-bench > "$name.plan" 2> "$name.plan.err" \
    || { cat "$name.plan.err"; fail "$name: dry-run"; }
  jobs=$(grep -c '\.h5$' "$name.plan")
  grep -q "^$jobs jobs, results in" "$name.plan" || fail "$name: dry-run job count"
  grep -q "^total: .* estimated 0:00 for 0 of $jobs jobs" "$name.plan" || { cat "$name.plan"; fail "$name: dry-run total"; }
  ! grep -q "^missing" "$name.plan" || { cat "$name.plan"; fail "$name: inputs missing"; }
  kvbench sweep --config "$recipe" "${common[@]}" --workers 2 > "$name.log" 2>&1 || { tail "$name.log"; fail "$name: sweep"; }
  dir=$(sed -n 's/^[0-9]* jobs, results in //p' "$name.plan")
  kvbench report --recipe "$recipe" "$dir"/*.h5 > "$name.md" || fail "$name: report"
  ! grep -q "| missing |" "$name.md" || { cat "$name.md"; fail "$name: a cell lacks results after the sweep"; }
  published=$((published + $(/usr/bin/python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))['recipe']
print(sum(v is not None for t in r['tables'] for row in t.get('published', {}).values() for v in row.values()))" "$recipe")))
done
# The published numbers (each checked against the notes by recipes_published.sh): counter-causal Table 1:
# 4 latencies + 4 bounds ("under 1 ms") + 3 s/sample + 3 memory; Table 2: counter-causal 4 + H2O 4 + fast 2 +
# full 2 + sliding 2 (5 of them from DESIGN.md §2); Table 3: 5 + 2. KVpop Table 1: 2 + 2 + 2 + 4 + 2 DMS
# (reference), relative to teacher 4 + 2 DMS + 2; Table 2: 2 + 4 + 2 + 2 DMS. In all 65.
[[ $published -eq 65 ]] || fail "expected 65 published numbers over the recipes, found $published"
# A bound is shown as such; a reference row shows its published values and no measurement.
grep -q "| H2O | < 1 | " counter-causal-table1-latency.md \
  || { cat counter-causal-table1-latency.md; fail "Table 1: the < 1 ms bound"; }
grep -q "| DMS | 0.43 | reference: not run by kvbench |  | 0.41 | reference: not run by kvbench |  | " kvpop-table1-math.md \
  || { cat kvpop-table1-math.md; fail "KVpop Table 1: the DMS reference row"; }

# A published number sits beside its measured cell; a cell without results says missing, not 0.
grep -q "| counter-causal | 60.2 | " counter-causal-table2-math500.md || { cat counter-causal-table2-math500.md; fail "Table 2 layout"; }
# (The counter-causal recipes run profile reference, which the file names carry after __r1.)
h2o_3b=(results/counter-causal/Qwen2.5-3B-Instruct__math500__h2o__J512__h256__s0__r1*.h5)
[[ ${#h2o_3b[@]} -eq 1 && -f ${h2o_3b[0]} ]] || fail "one results file for H2O on Qwen2.5-3B: ${h2o_3b[*]}"
rm "${h2o_3b[0]}"
kvbench report --recipe "$recipes/counter-causal-table2-math500.json" results/counter-causal/*.h5 > partial.md
grep -q "| H2O | 52.6 | missing |  | 76.2 | " partial.md || { cat partial.md; fail "missing cell"; }

# The measured cell is the file's mean score × 100 with one decimal, recomputed from the file.
files=(results/counter-causal/Qwen2.5-7B-Instruct__math500__counter-causal__J512__h256__s0__r1*.h5)
[[ ${#files[@]} -eq 1 && -f ${files[0]} ]] || fail "one results file for counter-causal on Qwen2.5-7B: ${files[*]}"
file=${files[0]}
expected=$(/usr/bin/python3 -c "
import h5py, sys
with h5py.File(sys.argv[1]) as f: print('%.1f' % (100 * f['rows/score'][:].mean()))" "$file")
grep -q "| counter-causal | 60.2 | [^|]* | [^|]* | 74.4 | $expected \[" partial.md || { cat partial.md; fail "measured cell != $expected"; }
# Table 1's time per sample is the file's mean wall time per (seed, sample), recomputed with h5py.
expected=$(/usr/bin/python3 -c "
import h5py, sys
with h5py.File(sys.argv[1]) as f: print('%.1f' % f['rows/wall_seconds'][:].mean())" "$file")
grep -q "| counter-causal | 10.2 | $expected \[" counter-causal-table1-latency.md \
  || { cat counter-causal-table1-latency.md; fail "time per sample != $expected"; }

# relative_score (KVpop Table 1's second table): a cell's mean score over its teacher's (the same model's full
# cache, relative_to), each the mean over (task, sample) units of the rollouts' mean, recomputed with h5py
# after seeded random scores are written into the cell's and the teacher's files (resealed: an accepted edit).
# (Table 2's files share the directory.)
kvpop=(results/kvpop/Qwen3-4B__{aime24,aime25,hmmt-feb-2025,hmmt-nov-2025}__kvpop__J2048__*__mlstm.h5)
teacher=(results/kvpop/Qwen3-4B__{aime24,aime25,hmmt-feb-2025,hmmt-nov-2025}__full__J4096__*.h5)
[[ ${#kvpop[@]} -eq 4 && ${#teacher[@]} -eq 4 ]] || fail "KVpop Table 1: 4 + 4 files for Qwen3-4B: ${kvpop[*]} ${teacher[*]}"
expected=$(/usr/bin/python3 - "${#kvpop[@]}" "${kvpop[@]}" "${teacher[@]}" <<'PY'
import h5py, json, random, sys
n, files = int(sys.argv[1]), sys.argv[2:]
random.seed(7)
def cell_mean(paths):
    units = {}
    for path in paths:
        with h5py.File(path, "r+") as f:
            f["rows/score"][...] = [float(random.random() < 0.6) for _ in range(len(f["rows/score"]))]
            task = json.loads(f.attrs["config"])["task"]
            for sample, score in zip(f["rows/sample_id"].asstr()[:], f["rows/score"][:]):
                units.setdefault((task, sample), []).append(score)
    return sum(sum(v) / len(v) for v in units.values()) / len(units)
print("%.2f" % (cell_mean(files[:n]) / cell_mean(files[n:])))
PY
) || fail "recomputing the relative score"
for f in "${kvpop[@]}" "${teacher[@]}"; do kvbench inspect --reseal "$f" > /dev/null; done
kvbench report --recipe "$recipes/kvpop-table1-math.json" results/kvpop/*.h5 > relative.md
kvpop_88='| KVpop | 0.98 | [^|]* | [^|]* | 1.00 | [^|]* | [^|]* | 0.97 '
grep -q "$kvpop_88| $expected \[" relative.md || { cat relative.md; fail "relative score != $expected"; }
# Without the teacher's files the relative cells say missing, never 0.
rm "${teacher[@]}"
kvbench report --recipe "$recipes/kvpop-table1-math.json" results/kvpop/*.h5 > relative.md
grep -q "$kvpop_88| missing | " relative.md || { cat relative.md; fail "relative score without its teacher"; }

# Table 3 reads the answer only after </think> (pred_none_think, score_after_think): three outputs written into
# counter-causal's file (thinking unclosed with a \boxed{} inside, closed without an answer, closed then the
# gold answer boxed), both cells recomputed from the stored outputs.
file=(results/counter-causal-aime/Qwen3-8B__aime24__counter-causal__*__r3__profile=reference.h5)
[[ ${#file[@]} -eq 1 && -f ${file[0]} ]] || fail "one Table 3 file for counter-causal: ${file[*]}"
read -r none score < <(/usr/bin/python3 - "${file[0]}" <<'PY'
import h5py, json, re, sys
with h5py.File(sys.argv[1], "r+") as f:
    gold = json.loads(f["rows/gold"].asstr()[0])["answer"]
    outputs = ["<think>so \\boxed{%s}" % gold, "<think>hm</think> no idea", "<think>ok</think> So \\boxed{%s}." % gold]
    assert len(f["rows/output"]) == 3
    for i, text in enumerate(outputs): f["rows/output"][i] = text
    stored = list(f["rows/output"].asstr()[:])
none = sum("</think>" not in o for o in stored) / len(stored)
after = [re.findall(r"\\boxed\{([^}]*)\}", o.rsplit("</think>", 1)[1]) if "</think>" in o else [] for o in stored]
print("%.0f %.1f" % (100 * none, 100 * sum(bool(a) and a[-1] == gold for a in after) / len(stored)))
PY
) || fail "recomputing Table 3's cells"
[[ $none == 33 && $score == 33.3 ]] || fail "Table 3 recomputation: pred=None $none, score $score"
kvbench inspect --reseal "${file[0]}" > /dev/null
kvbench report --recipe "$recipes/counter-causal-table3-aime.json" results/counter-causal-aime/*.h5 > table3.md
grep -q "| Qwen3-8B | 36.7 | $score \[" table3.md || { cat table3.md; fail "Table 3 score after </think> != $score"; }
grep -q "| Qwen3-8B | 57 | $none \[" table3.md || { cat table3.md; fail "Table 3 pred=None (</think> unclosed) != $none"; }
echo "ok: $(ls "$recipes"/*.json | wc -l) recipes, $published published numbers"
