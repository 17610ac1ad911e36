// GGUF models against llama.cpp's own Python package (gguf 0.19.0) and transformers' GGUF loader, which
// dequantizes with it (tests/peers/reference_gguf.py):
// - dequantization bit for bit equal to gguf.quants.dequantize for every type kvbench reads: random blocks with
//   random finite fp16 scales (subnormals included), the tiny models' mixed-type tensors, SmolLM2's file;
// - every tensor of the loaded model (HF names, Llama's q/k rows un-permuted) bit for bit equal, in float32,
//   to transformers' model from the same file (tiny llama/qwen2/qwen3 in 11 types, SmolLM2-135M-Instruct Q4_1);
// - the tiny models' float32 logits within 1e-4 of transformers' eager forward;
// - SmolLM2's greedy 32-token continuations of 3 chat prompts identical to transformers' generate().
// Skips (with a warning) where the peers' environment or the cached model is absent; fails under CI.
#include "torch_catch.h"

#include <fstream>
#include <random>
#include <set>

#include "common/gguf_file.h"
#include "common/json_file.h"
#include "model/gguf_dequantize.h"
#include "model/safetensors.h"
#include "model/weights.h"
#include "model_test_util.h"
#include "test_support.h"

using namespace kvbench;
using namespace kvbench::testing;

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kTinyModels = {"tiny-llama", "tiny-qwen2", "tiny-qwen3"};

void run_reference(const std::string& arguments) {
  const auto script = source_dir() / "tests/peers/reference_gguf.py";
  const std::string command = "HF_HUB_DISABLE_PROGRESS_BARS=1 TRANSFORMERS_VERBOSITY=error TQDM_DISABLE=1 '" +
                              peer_python() + "' '" + script.string() + "' " + arguments;
  INFO(command);
  REQUIRE(std::system(command.c_str()) == 0);
}

std::string quoted(const fs::path& path) { return "'" + path.string() + "'"; }

struct ScratchDir {
  fs::path path;
  explicit ScratchDir(const std::string& name) : path(scratch_path(name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() { fs::remove_all(path); }
};

// The tiny GGUF files of reference_gguf.py's `make`.
struct TinyFiles : ScratchDir {
  explicit TinyFiles(const std::string& name) : ScratchDir(name) { run_reference("make " + quoted(path)); }
};

// Bitwise equality of float32 tensors (a NaN equals the same NaN); on a difference, says how many and how far.
void require_bitwise(const std::string& name, const at::Tensor& got, const at::Tensor& expected) {
  INFO(name);
  REQUIRE(got.scalar_type() == at::kFloat);
  REQUIRE(got.sizes() == expected.sizes());
  const at::Tensor differ = got.contiguous().view(at::kInt).ne(expected.contiguous().view(at::kInt));
  const int64_t count = differ.sum().item<int64_t>();
  INFO(count << " of " << got.numel() << " values differ; max |difference| " << max_abs_diff(got, expected));
  CHECK(count == 0);
}

// kvbench's dequantization of every tensor of `file` against gguf.quants.dequantize; returns the types seen.
std::set<std::string> compare_dequantization(const fs::path& file, const fs::path& scratch) {
  const fs::path expected_file = scratch / (file.stem().string() + "-dequantized.safetensors");
  run_reference("dequantize " + quoted(file) + " " + quoted(expected_file));
  const SafetensorsFile expected(expected_file);
  const GgufFile gguf(file);
  REQUIRE(expected.tensors().size() == gguf.tensors().size());
  std::set<std::string> types;
  for (const auto& [name, tensor] : gguf.tensors()) {
    require_bitwise(file.filename().string() + ": " + name, dequantize(tensor, file), expected.view(name));
    types.insert(ggml_type_name(tensor.type));
  }
  return types;
}

// Every tensor of kvbench's float32 model from `file` against transformers' (same HF names, same set).
void compare_tensors(const fs::path& file, const fs::path& scratch) {
  const fs::path expected_file = scratch / (file.stem().string() + "-hf.safetensors");
  run_reference("tensors " + quoted(file) + " " + quoted(expected_file));
  const SafetensorsFile expected(expected_file);
  const Model model = Model::load(file);
  std::set<std::string> names;
  for (const auto& [name, tensor] : named_weights(model.config(), model.weights())) {
    names.insert(name);
    INFO(file.filename().string());
    REQUIRE(expected.tensors().count(name));
    require_bitwise(name, tensor, expected.view(name));
  }
  CHECK(names.size() == expected.tensors().size());
  fs::remove(expected_file);  // SmolLM2's is half a gigabyte
}

}  // namespace

TEST_CASE("GGUF dequantization equals gguf.quants.dequantize bit for bit (11 types)", "[model][gguf][peers]") {
  if (!peer_available("gguf")) return;
  const TinyFiles dir("gguf_dequantize");
  const std::set<std::string> all = {"F32",  "F16",  "BF16", "Q4_0", "Q4_1", "Q5_0",
                                     "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K"};
  CHECK(compare_dequantization(dir.path / "blocks.gguf", dir.path) == all);
  CHECK(compare_dequantization(dir.path / "tiny-llama.gguf", dir.path) == all);
}

TEST_CASE("GGUF dequantization of SmolLM2-135M-Instruct (Q8_0/Q4_1/F32) equals gguf's", "[model][gguf][peers]") {
  if (!peer_available("gguf") || !cached_model_available(smollm2_gguf())) return;
  const ScratchDir dir("gguf_dequantize_smollm2");
  CHECK(compare_dequantization(smollm2_gguf(), dir.path) == std::set<std::string>{"F32", "Q4_1", "Q8_0"});
}

TEST_CASE("Tiny GGUF models (llama/qwen2/qwen3): tensors bitwise and logits equal transformers'",
          "[model][gguf][peers]") {
  if (!peer_available("transformers") || !peer_available("gguf")) return;
  const TinyFiles dir("gguf_tiny_models");
  std::mt19937 rng(7);
  std::vector<int64_t> ids(48);
  for (auto& id : ids) id = std::uniform_int_distribution<int64_t>(0, 319)(rng);
  std::string ids_text;
  for (const auto id : ids) ids_text += (ids_text.empty() ? "" : ",") + std::to_string(id);
  for (const std::string& name : kTinyModels) {
    INFO(name);
    const fs::path file = dir.path / (name + ".gguf");
    compare_tensors(file, dir.path);
    run_reference("logits " + quoted(file) + " " + ids_text + " " + quoted(dir.path / (name + ".logits")));
    const Model model = Model::load(file);
    const at::Tensor expected = read_matrix(dir.path / (name + ".logits"), model.config().vocab_size);
    const at::Tensor got = chunked_logits(model, ids, ids.size());
    INFO("max |logit| " << expected.abs().max().item<double>());
    CHECK(max_abs_diff(got, expected) <= 1e-4);
  }
}

TEST_CASE("SmolLM2-135M-Instruct GGUF: every tensor equals transformers' bit for bit", "[model][gguf][peers][real-model]") {
  if (!peer_available("transformers") || !peer_available("gguf") || !cached_model_available(smollm2_gguf())) return;
  const ScratchDir dir("gguf_smollm2_tensors");
  compare_tensors(smollm2_gguf(), dir.path);
}

TEST_CASE("SmolLM2-135M-Instruct GGUF: greedy generation equals transformers'", "[model][gguf][peers][real-model]") {
  if (!peer_available("transformers") || !peer_available("gguf") || !cached_model_available(smollm2_gguf())) return;
  const ScratchDir dir("gguf_smollm2_greedy");
  constexpr int64_t kNewTokens = 32;
  run_reference("greedy " + quoted(smollm2_gguf()) + " " + std::to_string(kNewTokens) + " " +
                quoted(dir.path / "greedy.json"));
  const json reference = read_json_file(dir.path / "greedy.json");
  const Model model = Model::load(smollm2_gguf());
  CHECK(model.config().tie_word_embeddings);
  CHECK(reference.at("cases").size() == 3);
  for (const auto& c : reference.at("cases")) {
    INFO(c.at("prompt").get<std::string>());
    const auto expected = c.at("generated").get<std::vector<int64_t>>();
    CHECK(greedy(model, c.at("ids").get<std::vector<int64_t>>(), kNewTokens) == expected);
  }
}
