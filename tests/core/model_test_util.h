// Helpers shared by the core tests: running a model over ids and reading reference JSON.
#pragma once
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "common/error.h"
#include "common/json_file.h"
#include "model/checkpoint_writer.h"
#include "model/model.h"
#include "policies/policy.h"
#include "test_support.h"

namespace kvbench::testing {

// A raw little-endian float32 matrix [rows, columns] that a peer script (tests/peers) wrote.
inline at::Tensor read_matrix(const std::filesystem::path& path, int64_t columns) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open", path.string());
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() % (sizeof(float) * columns) != 0)
    fail("{}: {} bytes are no whole number of rows of {} floats", path.string(), bytes.size(), columns);
  const int64_t rows = static_cast<int64_t>(bytes.size() / (sizeof(float) * columns));
  return at::from_blob(bytes.data(), {rows, columns}, at::kFloat).clone();
}

inline at::Tensor ids_tensor(const std::vector<int64_t>& ids) {
  return at::tensor(ids, at::kLong).unsqueeze(0);
}

inline at::Tensor position_range(int64_t begin, int64_t count) {
  return at::arange(begin, begin + count, at::kLong).unsqueeze(0);
}

// Logits [T, V] of a whole sequence fed in chunks of `chunk` tokens through one growing cache.
inline at::Tensor chunked_logits(const Model& model, const std::vector<int64_t>& ids, int64_t chunk) {
  KvCache cache(cache_shape(model.config()), 1, model.options(), false);
  std::vector<at::Tensor> out;
  for (int64_t begin = 0; begin < static_cast<int64_t>(ids.size()); begin += chunk) {
    const int64_t n = std::min<int64_t>(chunk, static_cast<int64_t>(ids.size()) - begin);
    std::vector<int64_t> part(ids.begin() + begin, ids.begin() + begin + n);
    out.push_back(model.forward(ids_tensor(part), position_range(begin, n), cache, {true}).logits[0]);
  }
  return at::cat(out, 0);
}

// Greedy continuation through the cache one token at a time (the plain decode path).
inline std::vector<int64_t> greedy(const Model& model, const std::vector<int64_t>& prompt, int64_t max_new,
                                   int64_t stop_id = -1) {
  KvCache cache(cache_shape(model.config()), 1, model.options(), false);
  at::Tensor logits = model.forward(ids_tensor(prompt), position_range(0, prompt.size()), cache).logits;
  std::vector<int64_t> generated;
  for (int64_t step = 0; step < max_new; ++step) {
    const int64_t next = logits[0][-1].argmax().item<int64_t>();
    generated.push_back(next);
    if (next == stop_id || step + 1 == max_new) break;
    logits = model.forward(ids_tensor({next}), position_range(prompt.size() + step, 1), cache).logits;
  }
  return generated;
}

// A tiny decoder config (head_dim = hidden / heads) for tests that build models from random weights.
inline ModelConfig tiny_model_config(ModelFamily family, int64_t hidden, int64_t heads, int64_t kv_heads,
                                     int64_t vocab, bool tied = false) {
  ModelConfig c;
  c.family = family;
  c.model_type = to_string(family);
  c.hidden_size = hidden;
  c.intermediate_size = hidden * 3 / 2;
  c.num_layers = 2;
  c.num_heads = heads;
  c.num_kv_heads = kv_heads;
  c.head_dim = hidden / heads;
  c.vocab_size = vocab;
  c.max_position_embeddings = 128;
  c.tie_word_embeddings = tied;
  c.qkv_bias = family == ModelFamily::Qwen2;
  c.qk_norm = family == ModelFamily::Qwen3;
  return c;
}

inline at::Tensor json_matrix(const json& rows) {
  std::vector<at::Tensor> out;
  for (const auto& row : rows) out.push_back(at::tensor(row.get<std::vector<float>>(), at::kFloat));
  return at::stack(out);
}

// Sets libtorch's thread count for a scope, then restores it.
struct ThreadsFor {
  explicit ThreadsFor(int n) : saved(at::get_num_threads()) { at::set_num_threads(n); }
  ~ThreadsFor() { at::set_num_threads(saved); }
  int saved;
};

inline double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

// `spec`'s policy with seed=`seed` where it has that knob (random), as it is otherwise.
// `spec` able to run on `model`: a policy that reads a file gets one made for the model (qfilter: seeded random
// filters [layers, KV heads, head dim] in kvpress's format, in the scratch directory).
inline std::string with_test_files(const std::string& spec, const Model& model) {
  const ModelConfig& c = model.config();
  if (spec == "kvzap") {  // KVzapModel.save_pretrained's layout: per layer Linear(hidden, 8) → GELU → Linear(8, KV)
    const auto dir = scratch_path("kvzap_" + std::to_string(c.num_layers) + "x" + std::to_string(c.hidden_size) + "x" +
                                  std::to_string(c.num_kv_heads));
    if (!std::filesystem::exists(dir / "model.safetensors")) {
      std::filesystem::create_directories(dir);
      std::ofstream(dir / "config.json") << nlohmann::json{{"input_dim", c.hidden_size}, {"output_dim", c.num_kv_heads},
                                                           {"n_modules", c.num_layers}, {"hidden_dim", 8}}.dump();
      const auto generator = at::make_generator<at::CPUGeneratorImpl>(11);
      std::vector<NamedTensor> tensors;
      for (int64_t l = 0; l < c.num_layers; ++l) {
        const std::string layer = "layers." + std::to_string(l);
        tensors.push_back({layer + ".0.weight", at::randn({8, c.hidden_size}, generator)});
        tensors.push_back({layer + ".0.bias", at::randn({8}, generator)});
        tensors.push_back({layer + ".2.weight", at::randn({c.num_kv_heads, 8}, generator)});
        tensors.push_back({layer + ".2.bias", at::randn({c.num_kv_heads}, generator)});
      }
      write_safetensors(dir / "model.safetensors", tensors, at::kFloat);
    }
    return spec + ":model=" + dir.string();
  }
  if (spec != "qfilter") return spec;
  const auto file = scratch_path("qfilter_" + std::to_string(c.num_layers) + "x" + std::to_string(c.num_kv_heads) + "x" +
                                 std::to_string(c.head_dim) + ".safetensors");
  if (!std::filesystem::exists(file)) {
    std::filesystem::create_directories(file.parent_path());
    write_safetensors(file, {{"q_filters", at::randn({c.num_layers, c.num_kv_heads, c.head_dim},
                                                     at::make_generator<at::CPUGeneratorImpl>(7))}},
                      at::kFloat);
  }
  return spec + ":filters=" + file.string();
}

inline std::unique_ptr<Policy> make_seeded_policy(const std::string& spec, uint64_t seed) {
  if (!make_policy(spec)->knob_settings().contains("seed")) return make_policy(spec);
  return make_policy(spec + (spec.find(':') == std::string::npos ? ":" : ",") + "seed=" + std::to_string(seed));
}

}  // namespace kvbench::testing
