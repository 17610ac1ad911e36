// Tokenizer built from a HuggingFace tokenizer.json: a BPE model (byte-level as in Qwen2/2.5/3, Llama 3,
// GPT-2, SmolLM, StarCoder, OLMo, Pythia; sentencepiece-style with byte fallback as in Llama 2 / llama2.c
// and Metaspace tokenizers) inside the normalizer, pre-tokenizer, post-processor and decoder forms that
// pipeline.h lists, matching HF tokenizers byte for byte (tests/text/test_tokenizer_forms.cpp); plus the
// special ids of tokenizer_config.json / generation_config.json and the chat templates kvbench knows how to
// render.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/chat.h"

namespace kvbench {

namespace tokenizer_json {
struct Node;
}

class Tokenizer {
 public:
  // `model` is a directory holding tokenizer.json and optionally tokenizer_config.json and
  // generation_config.json, or a GGUF file (or a directory holding one) whose tokenizer.ggml.* metadata
  // stands for them (tokenizer/gguf_vocab.h). Throws kvbench::Error naming the file and field on missing
  // files, malformed JSON or pipeline stages this implementation does not support.
  static Tokenizer load(const std::filesystem::path& model);
  // Whether `model` has a tokenizer load() would read.
  static bool available(const std::filesystem::path& model);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Added/special tokens written in the text (e.g. "<|im_start|>") always become their ids.
  // add_special_tokens applies tokenizer.json's post_processor (e.g. BOS for Llama 2 / llama2.c).
  // `text` must be valid UTF-8.
  std::vector<std::int64_t> encode(std::string_view text, bool add_special_tokens = true) const;
  // Ids the tokenizer does not know are skipped, as HF does.
  std::string decode(const std::vector<std::int64_t>& ids, bool skip_special_tokens = true) const;

  std::optional<std::int64_t> bos_id() const;
  // tokenizer_config's eos_token together with generation_config's eos_token_id (int or list).
  std::vector<std::int64_t> eos_ids() const;
  // tokenizer_config's eos_token alone: HF's tokenizer.eos_token_id (none when the config names none).
  std::optional<std::int64_t> eos_token_id() const;
  std::optional<std::int64_t> token_to_id(const std::string& token) const;
  std::int64_t vocab_size() const;  // largest known id + 1

  bool has_chat_template() const;
  // Renders the conversation as tokenizer_config.json's chat_template does (Qwen ChatML, including
  // Qwen3's thinking blocks; Llama 3). Encode the result with add_special_tokens = false: the
  // template writes the special tokens itself. Throws kvbench::Error for other templates.
  std::string apply_chat_template(const Conversation& messages, bool add_generation_prompt = true,
                                  bool enable_thinking = true) const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  static Tokenizer from_documents(const tokenizer_json::Node& tokenizer, const tokenizer_json::Node& config,
                                  const tokenizer_json::Node& generation);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvbench
