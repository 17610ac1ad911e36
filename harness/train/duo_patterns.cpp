#include "train/duo_patterns.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include <c10/core/InferenceMode.h>

#include "common/error.h"
#include "common/json_file.h"

namespace kvbench {

namespace {

// One layer's head scores [KV] from the mean query [H, D] and mean key [KV, D] before RoPE.
at::Tensor layer_scores(const Model& model, const at::Tensor& query, const at::Tensor& key, int64_t length) {
  const int64_t H = query.size(0), KV = key.size(0), D = query.size(1);
  const at::Tensor positions = at::arange(length, at::TensorOptions(query.device()).dtype(at::kLong)).unsqueeze(0);
  const at::Tensor q = model.rope(query.view({1, H, 1, D}).expand({1, H, length, D}).contiguous(), positions);
  const at::Tensor k = model.rope(key.view({1, KV, 1, D}).expand({1, KV, length, D}).contiguous(), positions)
                           .repeat_interleave(H / KV, 1);
  const at::Tensor last = q.narrow(2, length - 1, 1);  // [1, H, 1, D]
  const at::Tensor weights = (at::matmul(last, k.transpose(2, 3)) / std::sqrt(static_cast<double>(D)))
                                 .softmax(-1, at::kFloat)
                                 .view({H, length});
  return weights.cumsum(1).mean(1).view({KV, H / KV}).mean(1);
}

}  // namespace

std::vector<std::vector<double>> duo_head_scores(const Model& model, const std::vector<std::vector<int64_t>>& texts,
                                                 int64_t length) {
  if (texts.empty()) fail("DuoAttention patterns need at least one text");
  if (length < 1) fail("DuoAttention patterns: length must be positive (got {})", length);
  const c10::InferenceMode inference;
  const ModelConfig& c = model.config();
  at::Tensor scores = at::zeros({c.num_layers, c.num_kv_heads}, at::kFloat);
  for (const auto& ids : texts) {
    if (ids.empty()) fail("DuoAttention patterns: a text has no tokens");
    const int64_t T = static_cast<int64_t>(ids.size());
    const at::Tensor input = at::tensor(ids, at::kLong).unsqueeze(0).to(model.options().device());
    const at::Tensor positions = at::arange(T, input.options()).unsqueeze(0);
    std::vector<QueryKeyValue> layers;
    model.forward_sequence(input, positions, &layers);
    for (int64_t l = 0; l < c.num_layers; ++l) {
      // The pass gives queries and keys after RoPE: rotated back to their tokens' means before it.
      const at::Tensor q = model.rope(layers[l].q, -positions).to(at::kFloat).mean(2)[0];  // [H, D]
      const at::Tensor k = model.rope(layers[l].k, -positions).to(at::kFloat).mean(2)[0];  // [KV, D]
      scores[l] += layer_scores(model, q, k, length).cpu() / static_cast<double>(texts.size());
    }
  }
  std::vector<std::vector<double>> rows(c.num_layers);
  for (int64_t l = 0; l < c.num_layers; ++l)
    for (int64_t h = 0; h < c.num_kv_heads; ++h) rows[l].push_back(scores[l][h].item<double>());
  return rows;
}

void write_duo_patterns(const std::filesystem::path& directory, const std::vector<std::vector<double>>& scores,
                        int64_t sink, int64_t recent) {
  std::filesystem::create_directories(directory);
  std::string tsv;
  for (const auto& row : scores) {
    for (std::size_t h = 0; h < row.size(); ++h) tsv += fmt::format("{}{:.9g}", h ? "\t" : "", row[h]);
    tsv += "\n";
  }
  write_file_atomically(directory / "full_attention_heads.tsv", tsv);
  write_file_atomically(directory / "config.json", nlohmann::json{{"sink_size", sink}, {"recent_size", recent}}.dump(1) + "\n");
}

}  // namespace kvbench
