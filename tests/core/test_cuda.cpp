// The CUDA path against the CPU: the same random-weight models (the real Qwen2.5 / Llama-3.1 / Qwen3
// shapes, cut to 2 layers) give the same logits on both devices, prefilled in chunks through the cache as
// generation does. Needs a GPU: skipped with a message elsewhere (scripts/gpu_check.sh runs it on one).
#include "torch_catch.h"

#include "model/random_model.h"
#include "model_test_util.h"

using namespace kvbench;
using kvbench::testing::max_abs_diff;

namespace {

bool cuda_here() {
  if (cuda_device_count() > 0) return true;
  WARN("skipped: no CUDA device (" << (KVBENCH_CUDA ? "CUDA compiled in, no GPU visible" : "CUDA not compiled in")
                                   << "); scripts/gpu_check.sh runs this on a GPU machine");
  return false;
}

// Logits [T, V] of `ids` prefilled in chunks of `chunk` on `device`, returned on the CPU in float32.
at::Tensor logits_on(const ModelConfig& config, at::Device device, at::ScalarType dtype,
                     const std::vector<int64_t>& ids, int64_t chunk) {
  const Model model = random_model(config, 1, device, dtype);
  KvCache cache(cache_shape(model.config()), 1, model.options(), false);
  std::vector<at::Tensor> out;
  for (int64_t begin = 0; begin < static_cast<int64_t>(ids.size()); begin += chunk) {
    const int64_t n = std::min<int64_t>(chunk, static_cast<int64_t>(ids.size()) - begin);
    const at::Tensor part = testing::ids_tensor({ids.begin() + begin, ids.begin() + begin + n}).to(device);
    out.push_back(model.forward(part, testing::position_range(begin, n).to(device), cache, {true}).logits[0]);
  }
  return at::cat(out, 0).to(at::kCPU, at::kFloat);
}

}  // namespace

TEST_CASE("CUDA logits equal CPU logits on random models (float32, bfloat16 within its rounding)", "[cuda]") {
  if (!cuda_here()) return;
  for (const std::string preset : {"qwen2.5-0.5b", "llama-3.1-8b", "qwen3-8b"}) {
    ModelConfig config = random_model_config(preset);
    config.num_layers = 2;
    std::vector<int64_t> ids(300);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>((i * 7919) % 30000 + 3);
    const at::Tensor cpu = logits_on(config, at::kCPU, at::kFloat, ids, 64);
    const double scale = cpu.abs().max().item<double>();
    INFO(preset << ": |logit| up to " << scale);
    // float32 on both, summed in other orders (TF32 is off in ATen's matmul by default).
    CHECK(max_abs_diff(logits_on(config, at::kCUDA, at::kFloat, ids, 64), cpu) < 1e-4 * std::max(1.0, scale));
    // bfloat16 weights and activations round at every product: the top token agrees on most rows.
    const at::Tensor bf16 = logits_on(config, at::kCUDA, at::kBFloat16, ids, 64);
    const double agree = bf16.argmax(-1).eq(cpu.argmax(-1)).to(at::kDouble).mean().item<double>();
    CHECK(agree > 0.9);
  }
}
