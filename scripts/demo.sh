#!/usr/bin/env bash
# The main job: build, then generate from stories260K with several eviction policies at one budget.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${KVBENCH_MODEL:-../shared/models/stories260K}
if [ ! -f "$model/config.json" ]; then
  echo "demo: no default model at $model (set KVBENCH_MODEL=DIR to a HF model directory)" >&2
  exit 1
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target kvbench
for policy in full sliding h2o counter-causal counter-causal-fast kvpop; do
  echo "== $policy (J=32, h=8)"
  ./build/kvbench generate --model "$model" --prompt "Once upon a time" --policy "$policy" --J 32 --h 8 --max-new 96
done
