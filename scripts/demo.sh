#!/usr/bin/env bash
# The main job end to end: build kvbench (if needed), sweep eviction policies over cache budgets on a real
# instruction-tuned model, then print the report tables and write the plots under results/demo/. Rerunning
# resumes and skips finished jobs.
#
# Default: SmolLM2-135M-Instruct (models cache, fetched by scripts/setup.sh), prompted through its chat
# template, on a needle-in-a-haystack grid (needle depth × length, 1–1.5K tokens) and RULER's niah_multikey_1
# at 1K tokens; each policy keeps a share of the prompt's cache (compression ratios 0.5 / 0.75, compressed once
# at the prompt's end as kvpress does). Tables: score by policy × ratio, by needle depth × length, by whether the
# needle was still cached; plots: the depth × length heatmaps and score vs ratio. About 5 minutes on 2 cores.
#
# KVBENCH_MODEL=models/kvbench-demo runs the embedded 1.8 MB demo model (trained by `kvbench train-demo`; see
# its README) on the synthetic rare-fact recall task at J = 32 / 64 / 128 instead; KVBENCH_MODEL=PATH runs the
# needle demo on another model (an HF directory or a .gguf with a chat template).
set -euo pipefail
cd "$(dirname "$0")/.."
models_root=${KVBENCH_MODELS:-$HOME/.cache/kvbench/models}
model=${KVBENCH_MODEL:-$models_root/smollm2-135m-instruct/SmolLM2-135M-Instruct.Q4_1.gguf}
if [[ ! -e "$model" ]]; then
  echo "demo: no model at $model — run scripts/setup.sh (or \`kvbench models fetch\`), or set KVBENCH_MODEL" >&2
  exit 1
fi
out=${KVBENCH_DEMO_OUT:-results/demo}
kvbench=${KVBENCH:-build/kvbench}
if [[ ! -x "$kvbench" ]]; then
  echo "demo: building kvbench (first time: several minutes)" >&2
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
  cmake --build build --target kvbench
fi
mkdir -p "$out"
# Sweeps run side by side: one worker per core, each with one libtorch thread (small models gain little from
# more threads per job, while whole jobs in parallel scale); for large models use one worker and more threads.
threads=${KVBENCH_THREADS:-1}
workers=${KVBENCH_WORKERS:-$(nproc)}
sweep() { "$kvbench" --threads "$threads" sweep --config "$1" --workers "${2:-$workers}"; }  # CONFIG [WORKERS]

rare_fact_demo() {
  local samples=${KVBENCH_DEMO_SAMPLES:-48}
  echo "demo: model $model, $samples rare-fact samples, results in $out/" >&2
  cat > "$out/sweep.json" <<JSON
{"output_dir": "$out",
 "base": {"model": "$model", "task": "rare-fact", "data": "rare-fact:seed=0,samples=$samples,words=150,facts=1",
          "max_new": 12},
 "grid": {"policy": ["full", "sliding", "streaming", "h2o", "tova", "counter-causal", "counter-causal-fast"],
          "J": [32, 64, 128], "h": ["J/4"]}}
JSON
  sweep "$out/sweep.json"
  {
    "$kvbench" report "$out"/*.h5 --table accuracy-vs-j --table key-retention --table by-retention --table latency
    "$kvbench" report "$out"/*.h5 --table paired --J 32 --policy sliding --policy h2o --policy counter-causal \
      --policy counter-causal-fast
  } | tee "$out/report.md"
  /usr/bin/python3 scripts/plot_accuracy_vs_j.py "$out"/*.h5 --out "$out/accuracy_vs_j.png"
  /usr/bin/python3 scripts/plot_latency.py "$out"/*.h5 --out "$out/latency.png"
  /usr/bin/python3 scripts/plot_retention.py "$(ls "$out"/*__counter-causal__J64__*.h5 | head -1)" --row 0 \
    --out "$out/retention.png"
  echo "demo: tables in $out/report.md, plots $out/accuracy_vs_j.png $out/latency.png $out/retention.png" >&2
}

# One sweep file per task: the full cache once, the other policies at each ratio. Every policy keeps the newest
# 64 tokens (the question and the assistant's header: kvpress's pipeline does not compress the question either).
write_needle_sweeps() {  # NAME TASK DATA POLICIES RATIOS
  local base="\"model\": \"$model\", \"task\": \"$2\", \"data\": \"$3\", \"prompt_mode\": \"chat\", \"mode\": \"prefill_end\", \"recent\": 64"
  cat > "$out/$1_full.json" <<JSON
{"output_dir": "$out/$1", "base": {$base}, "grid": {"policy": ["full"]}}
JSON
  cat > "$out/$1.json" <<JSON
{"output_dir": "$out/$1", "base": {$base}, "grid": {"policy": [$4], "ratio": [$5]}}
JSON
}

needle_demo() {
  echo "demo: model $model; needles at 1K and 1.5K tokens and RULER niah_multikey_1 at 1K, results in $out/" >&2
  local policies='"streaming", "snapkv", "tova", "counter-causal-fast", "counter-causal"'
  write_needle_sweeps niah niah "niah:lengths=1024+1536,depths=0+50+100" "$policies" "0.5, 0.75"
  write_needle_sweeps multikey ruler "ruler:niah_multikey_1,length=1024,samples=3,haystack=noise" "$policies" "0.5"
  # All four sweeps at once (their jobs are independent), so that no core idles while another sweep finishes.
  local pids=()
  for config in niah_full niah multikey_full multikey; do
    local workers_here=1
    [[ $config == niah ]] && workers_here=$workers
    sweep "$out/$config.json" "$workers_here" & pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  {
    echo "## Needle in a haystack (1K and 1.5K tokens, depths 0 / 50 / 100 %)"
    "$kvbench" report "$out"/niah/*.h5 --table accuracy-vs-j --table by-retention
    "$kvbench" report "$out"/niah/*.h5 --table niah
    echo "## RULER niah_multikey_1 (4 keys, one asked; noise haystack; 1K tokens)"
    "$kvbench" report "$out"/multikey/*.h5 --table accuracy-vs-j
    "$kvbench" report "$out"/niah/*.h5 "$out"/multikey/*.h5 --table latency
    echo "## Summary (README.md's table)"
    /usr/bin/python3 scripts/demo_summary.py "$out"
  } | tee "$out/report.md"
  /usr/bin/python3 scripts/plot_niah.py "$out"/niah/*__full__*.h5 "$out"/niah/*__ratio0.5__*.h5 --out "$out/niah.png"
  /usr/bin/python3 scripts/plot_accuracy_vs_j.py "$out"/niah/*.h5 "$out"/multikey/*.h5 --out "$out/score_vs_ratio.png"
  echo "demo: tables in $out/report.md, plots $out/niah.png $out/score_vs_ratio.png" >&2
}

if [[ "$(basename "$model")" == kvbench-demo ]]; then rare_fact_demo; else needle_demo; fi
