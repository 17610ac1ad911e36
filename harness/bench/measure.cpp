#include "bench/measure.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <fstream>
#include <random>

#include "model/weights.h"

namespace kvbench::bench {

std::vector<int64_t> random_ids(int64_t count, int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> token(3, vocab - 1);
  std::vector<int64_t> ids(count);
  for (auto& id : ids) id = token(rng);
  return ids;
}

std::string describe(const api::ModelSource& m, const Model& model) {
  const auto& c = model.config();
  return fmt::format("model {} ({} layers, hidden {}, {} heads / {} KV), device {}, dtype {}, {} threads", m.model,
                     c.num_layers, c.hidden_size, c.num_heads, c.num_kv_heads, m.device,
                     dtype_name(m.parsed_dtype()), at::get_num_threads());
}

int64_t status_kb(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(field, 0) == 0) return std::stoll(line.substr(field.size()));
  return -1;
}

TokenCosts token_costs(const Model& model) {
  const ModelWeights& w = model.weights();
  TokenCosts costs;
  for (const auto& [name, tensor] : named_weights(model.config(), w))
    if (name.rfind("model.layers.", 0) == 0) {
      costs.layer_params += static_cast<double>(tensor.numel());
      costs.weight_bytes += static_cast<double>(tensor.nbytes());
    }
  costs.head_params = static_cast<double>(w.lm_head.numel() + w.final_norm.numel());
  costs.weight_bytes += static_cast<double>(w.lm_head.nbytes() + w.final_norm.nbytes());
  const auto& c = model.config();
  costs.kv_bytes_per_entry = 2.0 * c.num_layers * c.num_kv_heads * c.head_dim * w.lm_head.element_size();
  return costs;
}

// Prefill: 2 FLOP per multiply-add of every layer's projections for each token, the LM head for the last
// token only, and attention's two products per head over the keys each row sees,
// T(T + 1)/2 of them. On the CPU (model/block_attention.h) a block of rows also multiplies the keys its
// earlier rows do not see, up to its last row's; that work is left out, so the rate is what the causal
// attention needs, not what the blocks computed.
double prefill_flops(const Model& model, const TokenCosts& costs, int64_t T) {
  const auto& c = model.config();
  const double t = static_cast<double>(T), seen = t * (t + 1) / 2;
  return 2.0 * costs.layer_params * t + 2.0 * costs.head_params + 4.0 * c.num_layers * c.num_heads * c.head_dim * seen;
}

double decode_flops(const Model& model, double cache) {
  const auto& c = model.config();
  double weights = static_cast<double>(model.weights().lm_head.numel());
  for (const LayerWeights& w : model.weights().layers)
    for (const at::Tensor* t : {&w.q_proj, &w.k_proj, &w.v_proj, &w.o_proj, &w.gate_proj, &w.up_proj, &w.down_proj})
      weights += static_cast<double>(t->numel());
  return 2.0 * weights + 4.0 * static_cast<double>(c.num_layers * c.num_heads * c.head_dim) * cache;
}


double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace kvbench::bench
