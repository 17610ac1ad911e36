// The real instruct model every machine has (SmolLM2-135M-Instruct's GGUF, from the models cache) end to end
// through kvbench's front door (api::load_model, api::generate with the chat template), against transformers
// on the same file (tests/peers/reference_chat_generate.py, its model dequantized to float32): the chat
// prompt's ids, the greedy tokens until <|im_end|>, and the decoded answer are identical.
// Skips (with a warning) without the cached model or the peers' environment; fails under CI.
#include "torch_catch.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "api/kvbench.h"
#include "test_support.h"

using namespace kvbench;
using namespace kvbench::testing;

TEST_CASE("SmolLM2-135M-Instruct from its GGUF answers chat prompts as transformers does", "[real-model][peers]") {
  const auto gguf = smollm2_gguf();
  if (!cached_model_available(gguf) || !peer_available("transformers") || !peer_available("gguf")) return;
  const std::vector<std::string> prompts = {"What is the capital of France?",
                                            "Write a haiku about the sea.",
                                            "List three prime numbers greater than 10.",
                                            "Translate 'good morning' into Spanish and explain 12345 + 678."};
  const int64_t max_new = 48;
  const auto dir = scratch_path("real_model");
  std::filesystem::create_directories(dir);
  const auto tokenizer_dir = dir / "tokenizer";
  const auto peers = source_dir() / "tests/peers";
  const std::string python = "TQDM_DISABLE=1 TRANSFORMERS_VERBOSITY=error '" + peer_python() + "' ";
  run_command(python + "'" + (peers / "reference_gguf_tokenizer.py").string() + "' '" + gguf.string() + "' '" +
              tokenizer_dir.string() + "'");
  std::ofstream(dir / "cases.json") << json{{"prompts", prompts}, {"max_new", max_new}}.dump();
  const std::string output = run_command(python + "'" + (peers / "reference_chat_generate.py").string() + "' '" +
                                         gguf.string() + "' '" + tokenizer_dir.string() + "' '" +
                                         (dir / "cases.json").string() + "' 2>/dev/null");
  std::vector<json> references;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) references.push_back(json::parse(line));
  REQUIRE(references.size() == prompts.size());

  const api::LoadedModel model = api::load_model({gguf.string()});
  REQUIRE(model.tokenizer);
  std::cout << "| SmolLM2-135M-Instruct (GGUF) vs transformers, chat prompt | prompt ids | greedy tokens | text |\n";
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    INFO(prompts[i]);
    api::GenerateRequest request;
    request.prompt.text = prompts[i];
    request.prompt.chat = true;
    request.job.policy = "full";
    request.job.max_new = max_new;
    const api::Generation generation = api::generate(model, request);
    const auto& theirs = references[i];
    const bool same_prompt = generation.result.prompt == theirs["prompt_ids"].get<std::vector<int64_t>>();
    const bool same_tokens = generation.result.rollouts[0].generated == theirs["generated"].get<std::vector<int64_t>>();
    const bool same_text = generation.texts[0] == theirs["text"].get<std::string>();
    CHECK(same_prompt);
    CHECK(same_tokens);
    CHECK(same_text);
    std::cout << fmt::format("| {} | {} | {} | {} |\n", json(prompts[i]).dump(), same_prompt ? "identical" : "differ",
                             same_tokens ? "identical" : "differ", json(generation.texts[0]).dump());
  }
  std::filesystem::remove_all(dir);
}
