#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU and PyTorch 2.x with CUDA (`python3 -c "import torch"`).
#   bash scripts/gpu_check.sh        prints one report; about 5 minutes on an H200
# What it runs:
#   1. kvbench against that machine's PyTorch: built there (build-gpu/) when it has kvbench's build
#      dependencies, else the binaries packed beforehand by scripts/gpu_pack.sh (.gpu/), loading its libtorch.
#   2. kvbench doctor; the CUDA tests: CUDA vs CPU logits on random models, batched = sequential on CUDA,
#      SDPA against kvbench's attention.
#   3. bench decode / throughput (B = 1, 16, 64) / refresh (n = 512 … 4096) on random:qwen2.5-7b and
#      random:llama-3.1-8b in bfloat16, beside the paper's RTX 4090 refresh figures (Llama-3.1-8B:
#      full 54 / 496 ms, fast 7.9 / 52.6 ms at n = 512 / 4096).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/kvbench-gpu}; mkdir -p "$out"
torch_dir=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))') || { echo "no PyTorch"; exit 1; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true

if [ -x .gpu/bin/kvbench ]; then
  bin=.gpu/bin
  export LD_LIBRARY_PATH="$PWD/.gpu/lib:$torch_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # The tests find the repository's files where it was built (KVBENCH_SOURCE_DIR): this copy stands there.
  src=$(cat .gpu/source_dir)
  [ -e "$src" ] || { mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"; }
else
  bin=build-gpu
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DKVBENCH_TORCH_PREFIX="$torch_dir" \
    -DTORCH_CUDA_ARCH_LIST=9.0 > "$out/configure.log" 2>&1 && cmake --build build-gpu -j "$(nproc)" \
    > "$out/build.log" 2>&1 || { tail -30 "$out/configure.log" "$out/build.log"; exit 1; }
fi
kvbench=$bin/kvbench
section() { printf '\n== %s\n' "$*"; }

section "doctor"
"$kvbench" doctor | head -9
section "CUDA tests: CUDA vs CPU logits, batched = sequential on CUDA, SDPA vs kvbench's attention"
timeout 240 "$bin/kvbench_core_tests" "[cuda],[sdpa]" --durations yes 2>&1 | tail -25

for model in random:qwen2.5-7b random:llama-3.1-8b; do
  section "$model: bench decode (bfloat16, prompt 512, 128 new)"
  timeout 120 "$kvbench" bench decode --model "$model" --device cuda --dtype bfloat16 --prompt-len 512 --new 128 \
    --repeats 2 2>&1 | tail -8
  section "$model: bench throughput (full, B = 1, 16, 64)"
  timeout 150 "$kvbench" bench throughput --model "$model" --device cuda --batch 1,16,64 2>&1 | tail -8
  section "$model: bench refresh (n = 512 … 4096)"
  timeout 150 "$kvbench" bench refresh --model "$model" --device cuda --n 512,1024,2048,4096 \
    --policy counter-causal,counter-causal-fast 2>&1 | tail -10
done
section "paper (RTX 4090, Llama-3.1-8B): full 54 / 496 ms, fast 7.9 / 52.6 ms at n = 512 / 4096"
