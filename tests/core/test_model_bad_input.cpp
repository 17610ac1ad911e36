// Bad checkpoints fail with one clear kvbench::Error naming the file and the tensor or field.
#include "torch_catch.h"

#include <fstream>

#include "common/error.h"
#include "common/json_file.h"
#include "model/model.h"
#include "model/safetensors.h"
#include "test_support.h"

using namespace kvbench;

namespace {

namespace fs = std::filesystem;

// A 1-layer Llama config small enough to write its safetensors by hand.
json tiny_config() {
  return {{"model_type", "llama"}, {"hidden_size", 4}, {"intermediate_size", 8}, {"num_hidden_layers", 1},
          {"num_attention_heads", 2}, {"num_key_value_heads", 1}, {"vocab_size", 6}, {"rms_norm_eps", 1e-5},
          {"tie_word_embeddings", true}};
}

std::map<std::string, std::vector<int64_t>> tiny_shapes() {
  const std::string p = "model.layers.0.";
  return {{"model.embed_tokens.weight", {6, 4}},     {"model.norm.weight", {4}},
          {p + "input_layernorm.weight", {4}},       {p + "post_attention_layernorm.weight", {4}},
          {p + "self_attn.q_proj.weight", {4, 4}},   {p + "self_attn.k_proj.weight", {2, 4}},
          {p + "self_attn.v_proj.weight", {2, 4}},   {p + "self_attn.o_proj.weight", {4, 4}},
          {p + "mlp.gate_proj.weight", {8, 4}},      {p + "mlp.up_proj.weight", {8, 4}},
          {p + "mlp.down_proj.weight", {4, 8}}};
}

// Writes a safetensors file of F32 zeros for `shapes`; `dtype_of` overrides one tensor's dtype string.
std::string safetensors_bytes(const std::map<std::string, std::vector<int64_t>>& shapes,
                              const std::string& odd_tensor = "", const std::string& odd_dtype = "") {
  json header = json::object();
  size_t offset = 0;
  for (const auto& [name, shape] : shapes) {
    size_t numel = 1;
    for (auto d : shape) numel *= d;
    header[name] = {{"dtype", name == odd_tensor ? odd_dtype : "F32"}, {"shape", shape},
                    {"data_offsets", {offset, offset + 4 * numel}}};
    offset += 4 * numel;
  }
  const std::string text = header.dump();
  const uint64_t len = text.size();
  std::string bytes(reinterpret_cast<const char*>(&len), 8);
  return bytes + text + std::string(offset, '\0');
}

struct TempModel {
  fs::path dir = kvbench::testing::scratch_path("bad_model");
  TempModel() {
    fs::remove_all(dir);
    fs::create_directories(dir);
    write("config.json", tiny_config().dump());
    write("model.safetensors", safetensors_bytes(tiny_shapes()));
  }
  ~TempModel() { fs::remove_all(dir); }
  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir / name, std::ios::binary) << bytes;
  }
};

void require_error(const TempModel& m, const std::vector<std::string>& fragments) {
  try {
    Model::load(m.dir);
    FAIL("expected kvbench::Error");
  } catch (const Error& e) {
    for (const auto& f : fragments) CHECK_THAT(e.what(), Catch::Contains(f));
  }
}

}  // namespace

TEST_CASE("the hand-written tiny checkpoint itself loads", "[model][errors]") {
  TempModel m;
  CHECK(Model::load(m.dir).config().num_layers == 1);
}

TEST_CASE("missing config.json is named", "[model][errors]") {
  TempModel m;
  fs::remove(m.dir / "config.json");
  require_error(m, {"config.json", "missing"});
}

TEST_CASE("config with a missing or mistyped field is named", "[model][errors]") {
  TempModel m;
  json c = tiny_config();
  c.erase("hidden_size");
  m.write("config.json", c.dump());
  require_error(m, {"config.json", "hidden_size"});
  c = tiny_config();
  c["num_attention_heads"] = "two";
  m.write("config.json", c.dump());
  require_error(m, {"config.json", "num_attention_heads"});
  m.write("config.json", "{\"model_type\": \"llama\",");
  require_error(m, {"config.json", "malformed JSON"});
}

TEST_CASE("RoPE settings are read from transformers 5's rope_parameters as from rope_theta/rope_scaling", "[model]") {
  TempModel m;
  json c = tiny_config();
  // transformers 5 writes neither rope_theta nor rope_scaling at the top level, only this object.
  c["rope_parameters"] = {{"rope_type", "llama3"}, {"rope_theta", 500000.0}, {"factor", 8.0},
                          {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                          {"original_max_position_embeddings", 8192}};
  m.write("config.json", c.dump());
  ModelConfig config = load_model_config(m.dir);
  CHECK(config.rope_theta == 500000.0);
  REQUIRE(config.rope_scaling);
  CHECK(config.rope_scaling->factor == 8.0);
  CHECK(config.rope_scaling->original_max_position_embeddings == 8192);
  c["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 1000000.0}};
  m.write("config.json", c.dump());
  config = load_model_config(m.dir);
  CHECK(config.rope_theta == 1000000.0);
  CHECK_FALSE(config.rope_scaling);
  c["rope_parameters"] = {{"rope_type", "yarn"}, {"rope_theta", 1000000.0}, {"factor", 4.0}};
  m.write("config.json", c.dump());
  require_error(m, {"config.json", "rope_parameters.rope_type", "yarn"});
  // Top-level fields (transformers 4) still count, and win where both are present.
  c.erase("rope_parameters");
  c["rope_theta"] = 250000.0;
  c["rope_scaling"] = {{"type", "llama3"}, {"factor", 32.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                       {"original_max_position_embeddings", 8192}};
  m.write("config.json", c.dump());
  config = load_model_config(m.dir);
  CHECK(config.rope_theta == 250000.0);
  REQUIRE(config.rope_scaling);
  CHECK(config.rope_scaling->factor == 32.0);
}

TEST_CASE("truncated safetensors names the file and the tensor past the end", "[model][errors]") {
  TempModel m;
  const std::string full = safetensors_bytes(tiny_shapes());
  m.write("model.safetensors", full.substr(0, full.size() - 20));
  require_error(m, {"model.safetensors", "truncated"});
  m.write("model.safetensors", full.substr(0, 5));
  require_error(m, {"model.safetensors", "truncated"});
}

TEST_CASE("header length past the end of the file", "[model][errors]") {
  TempModel m;
  std::string bytes = safetensors_bytes(tiny_shapes());
  const uint64_t huge = 1ull << 40;
  bytes.replace(0, 8, std::string(reinterpret_cast<const char*>(&huge), 8));
  m.write("model.safetensors", bytes);
  require_error(m, {"model.safetensors", "header length"});
}

TEST_CASE("unknown dtype names the tensor", "[model][errors]") {
  TempModel m;
  m.write("model.safetensors", safetensors_bytes(tiny_shapes(), "model.norm.weight", "F8_E9"));
  require_error(m, {"model.safetensors", "model.norm.weight", "F8_E9"});
}

TEST_CASE("shape mismatch names the tensor and both shapes", "[model][errors]") {
  TempModel m;
  auto shapes = tiny_shapes();
  shapes["model.layers.0.mlp.up_proj.weight"] = {7, 4};
  m.write("model.safetensors", safetensors_bytes(shapes));
  require_error(m, {"model.safetensors", "model.layers.0.mlp.up_proj.weight", "[7, 4]", "[8, 4]"});
}

TEST_CASE("missing tensor is named", "[model][errors]") {
  TempModel m;
  auto shapes = tiny_shapes();
  shapes.erase("model.layers.0.self_attn.v_proj.weight");
  m.write("model.safetensors", safetensors_bytes(shapes));
  require_error(m, {"model.safetensors", "model.layers.0.self_attn.v_proj.weight", "missing"});
}

TEST_CASE("sharded checkpoints load through model.safetensors.index.json", "[model]") {
  TempModel m;
  auto shapes = tiny_shapes();
  std::map<std::string, std::vector<int64_t>> first, second;
  json weight_map = json::object();
  for (const auto& [name, shape] : shapes) {
    const bool in_first = name.find("mlp") == std::string::npos;
    (in_first ? first : second)[name] = shape;
    weight_map[name] = in_first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  fs::remove(m.dir / "model.safetensors");
  m.write("model-00001-of-00002.safetensors", safetensors_bytes(first));
  m.write("model-00002-of-00002.safetensors", safetensors_bytes(second));
  m.write("model.safetensors.index.json", json{{"weight_map", weight_map}}.dump());
  CHECK(Model::load(m.dir).weights().layers[0].down_proj.sizes() == at::IntArrayRef({4, 8}));
  m.write("model-00002-of-00002.safetensors", "");
  require_error(m, {"model-00002-of-00002.safetensors"});
}
