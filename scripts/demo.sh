#!/usr/bin/env bash
# The main job end to end: build kvbench (if needed), run a demo sweep — several eviction policies × 3
# cache budgets on the synthetic rare-fact recall task — then print the report tables and write the plots
# under results/demo/. Rerunning resumes and skips finished jobs.
#
# The model: KVBENCH_MODEL, else the embedded models/kvbench-demo (trained by `kvbench train-demo`;
# see its README), which recalls the fact with the full cache. The budgets are small enough that the
# fact often does not fit, so the policies differ in whether they kept it — and the by-retention table
# shows the model answering when the fact was cached and failing when it was evicted.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${KVBENCH_MODEL:-models/kvbench-demo}
if [[ ! -f "$model/config.json" ]]; then
  echo "demo: no model at $model — set KVBENCH_MODEL to a model directory (config.json, safetensors, tokenizer.json)" >&2
  exit 1
fi
out=${KVBENCH_DEMO_OUT:-results/demo}
samples=${KVBENCH_DEMO_SAMPLES:-48}
# One libtorch thread suits the tiny default model (more threads only contend), and one sweep worker per core
# runs its jobs side by side; for real models, raise the threads and use one worker.
threads=${KVBENCH_THREADS:-1}
workers=${KVBENCH_WORKERS:-$(nproc)}
kvbench=build/kvbench
if [[ ! -x "$kvbench" ]]; then
  echo "demo: building kvbench (first time: several minutes)" >&2
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
  cmake --build build --target kvbench
fi
echo "demo: model $model, $samples rare-fact samples, results in $out/" >&2
mkdir -p "$out"
cat > "$out/sweep.json" <<JSON
{"output_dir": "$out",
 "base": {"model": "$model", "task": "rare-fact", "data": "rare-fact:seed=0,samples=$samples,words=150,facts=1",
          "max_new": 12},
 "grid": {"policy": ["full", "sliding", "streaming", "h2o", "tova", "counter-causal", "counter-causal-fast"],
          "J": [32, 64, 128], "h": ["J/4"]}}
JSON
"$kvbench" --threads "$threads" sweep --config "$out/sweep.json" --workers "$workers"
{
  "$kvbench" report "$out"/*.h5 --table accuracy-vs-j --table key-retention --table by-retention --table latency
  "$kvbench" report "$out"/*.h5 --table paired --J 32 --policy sliding --policy h2o --policy counter-causal \
    --policy counter-causal-fast
} | tee "$out/report.md"
/usr/bin/python3 scripts/plot_accuracy_vs_j.py "$out"/*.h5 --out "$out/accuracy_vs_j.png"
/usr/bin/python3 scripts/plot_latency.py "$out"/*.h5 --out "$out/latency.png"
retention_file=$(ls "$out"/*__counter-causal__J64__*.h5 | head -1)
/usr/bin/python3 scripts/plot_retention.py "$retention_file" --row 0 --out "$out/retention.png"
echo "demo: tables in $out/report.md, plots $out/accuracy_vs_j.png $out/latency.png $out/retention.png" >&2
