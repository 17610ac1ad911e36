// The forward pass against independent references: llama2.c run.c (stories260K), an independent
// float64 forward recorded in tinystories-656k's SOURCE.md, and ../shared/tools/ref_decoder.py goldens.
#include "torch_catch.h"

#include <regex>

#include "model_test_util.h"
#include "test_support.h"

using namespace kvbench;
using namespace kvbench::testing;

namespace {

void check_against_runc(const std::filesystem::path& dir) {
  const Model model = Model::load(dir);
  const json reference = read_json_file(dir / "reference" / "greedy.json");
  for (const auto& c : reference.at("cases")) {
    INFO("prompt: " << c.at("prompt").get<std::string>());
    const auto tokens = c.at("tokens").get<std::vector<int64_t>>();
    const auto prompt = c.at("prompt_tokens").get<std::vector<int64_t>>();
    const at::Tensor expected = json_matrix(c.at("logits"));
    const int64_t recorded = expected.size(0);
    std::vector<int64_t> head(tokens.begin(), tokens.begin() + recorded);
    // Positions 0..recorded-1 through a full forward and token by token (RoPE bugs hide at position 0).
    CHECK(max_abs_diff(chunked_logits(model, head, recorded), expected) < 1e-4);
    CHECK(max_abs_diff(chunked_logits(model, head, 1), expected) < 1e-4);
    // run.c stops when the argmax is BOS (1), and runs `steps` positions in all.
    const int64_t max_new = c.at("steps").get<int64_t>() - static_cast<int64_t>(prompt.size()) + 1;
    CHECK(greedy(model, prompt, max_new, /*stop_id=*/1) == c.at("generated_tokens").get<std::vector<int64_t>>());
  }
}

std::vector<int64_t> parse_id_list(const std::string& text) {
  std::vector<int64_t> ids;
  static const std::regex number("\\d+");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), number); it != std::sregex_iterator(); ++it)
    ids.push_back(std::stoll(it->str()));
  return ids;
}

}  // namespace

TEST_CASE("stories260K matches llama2.c run.c: logits and greedy tokens", "[model][reference]") {
  KVBENCH_REQUIRE_SHARED("models/stories260K");
  check_against_runc(shared_dir() / "models/stories260K");
}

TEST_CASE("stories260K variants without lm_head (f32 and bf16) match their run.c references", "[model][reference]") {
  KVBENCH_REQUIRE_SHARED("models/stories260K/variants");
  check_against_runc(shared_dir() / "models/stories260K/variants/f32_no_lm_head");
  check_against_runc(shared_dir() / "models/stories260K/variants/bf16_no_lm_head");
}

TEST_CASE("tinystories-656k (only lm_head.weight stored, tied) greedy ids equal its SOURCE.md", "[model][reference]") {
  KVBENCH_REQUIRE_SHARED("models/tinystories-656k");
  const auto dir = shared_dir() / "models/tinystories-656k";
  const std::string source = read_text_file(dir / "SOURCE.md");
  // SOURCE.md: "-> tokenizer.json ids (BOS added): [...]" then "Greedy 60 new tokens ...:\n  [...]".
  const auto prompt_at = source.find("ids (BOS added): [");
  const auto greedy_at = source.find("Greedy 60 new tokens");
  REQUIRE(prompt_at != std::string::npos);
  REQUIRE(greedy_at != std::string::npos);
  const auto prompt = parse_id_list(source.substr(source.find('[', prompt_at), source.find(']', prompt_at) - source.find('[', prompt_at)));
  const auto list_begin = source.find('[', greedy_at);
  const auto expected = parse_id_list(source.substr(list_begin, source.find(']', list_begin) - list_begin));
  REQUIRE(prompt.size() == 9);
  REQUIRE(expected.size() == 60);
  const Model model = Model::load(dir);
  CHECK(greedy(model, prompt, 60) == expected);
}

TEST_CASE("tiny llama3/qwen2/qwen3 match ref_decoder.py golden logits, full and chunked", "[model][reference]") {
  for (const char* name : {"tiny-llama3", "tiny-qwen2", "tiny-qwen3"}) {
    KVBENCH_REQUIRE_SHARED(std::string("models/") + name);
    INFO(name);
    const auto dir = shared_dir() / "models" / name;
    const Model model = Model::load(dir);
    const json reference = read_json_file(dir / "reference" / "logits.json");
    for (const auto& c : reference.at("cases")) {
      const auto ids = c.at("ids").get<std::vector<int64_t>>();
      const at::Tensor expected = json_matrix(c.at("logits"));
      INFO("sequence length " << ids.size());
      CHECK(max_abs_diff(chunked_logits(model, ids, static_cast<int64_t>(ids.size())), expected) < 1e-4);
      for (int64_t chunk : {1, 3, 16}) {
        INFO("chunk " << chunk);
        CHECK(max_abs_diff(chunked_logits(model, ids, chunk), expected) < 1e-4);
      }
    }
    const json& g = reference.at("greedy");
    CHECK(greedy(model, g.at("prompt").get<std::vector<int64_t>>(), g.at("max_new").get<int64_t>()) ==
          g.at("generated").get<std::vector<int64_t>>());
  }
}
