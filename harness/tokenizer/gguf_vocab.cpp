#include "tokenizer/gguf_vocab.h"

#include <algorithm>
#include <map>
#include <optional>

#include "common/error.h"

namespace kvbench {

namespace {

// llama_token_type (llama.h): which vocabulary entries are added tokens, and which of those special.
constexpr std::int64_t kControl = 3, kUserDefined = 4;

json byte_level(bool use_regex) {
  return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", use_regex}};
}

json split_then_bytes(const char* pattern) {
  return {{"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}, {"invert", false}},
            byte_level(false)}}};
}

struct PreTokenizerForm {
  json pre_tokenizer;
  bool ignore_merges;  // whole words found in the vocabulary skip BPE (Llama 3's tokenizer.json)
};

// The pre-tokenizers of the tokenizer.json files that llama.cpp's convert_hf_to_gguf.py names by these
// `pre` values (it identifies each by hashing the encodings of a fixed text).
const std::map<std::string, PreTokenizerForm>& pre_tokenizer_forms() {
  static const std::map<std::string, PreTokenizerForm> forms = {
      {"gpt-2", {byte_level(true), false}},
      {"smollm",
       {{{"type", "Sequence"},
         {"pretokenizers", {{{"type", "Digits"}, {"individual_digits", true}}, byte_level(true)}}},
        false}},
      {"llama-bpe",
       {split_then_bytes(R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
        true}},
      {"qwen2",
       {split_then_bytes(R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
        false}},
  };
  return forms;
}

const PreTokenizerForm& pre_tokenizer_form(const GgufFile& file) {
  const std::string pre = file.has("tokenizer.ggml.pre") ? file.string("tokenizer.ggml.pre") : "gpt-2";
  const auto& forms = pre_tokenizer_forms();
  const auto it = forms.find(pre);
  if (it == forms.end()) {
    std::string known;
    for (const auto& [name, form] : forms) known += (known.empty() ? "" : ", ") + name;
    file.fail_at("tokenizer.ggml.pre", fmt::format("pre-tokenizer \"{}\" is not supported (kvbench knows {})", pre, known));
  }
  return it->second;
}

const json& string_array(const GgufFile& file, const std::string& key) {
  if (!file.has(key)) file.fail_at(key, "missing");
  const json& values = file.metadata().at(key);
  const bool strings = values.is_array() && std::all_of(values.begin(), values.end(), [](const json& v) { return v.is_string(); });
  if (!strings) file.fail_at(key, "expected an array of strings");
  return values;
}

std::optional<std::int64_t> token_id(const GgufFile& file, const std::string& key, std::size_t vocabulary) {
  if (!file.has(key)) return std::nullopt;
  const std::int64_t id = file.integer(key);
  if (id < 0 || static_cast<std::size_t>(id) >= vocabulary)
    file.fail_at(key, fmt::format("token id {} outside the vocabulary of {}", id, vocabulary));
  return id;
}

json bpe_model(const json& tokens, const json& merges, bool ignore_merges) {
  json vocab = json::object();
  for (std::size_t id = 0; id < tokens.size(); ++id) vocab.emplace(tokens[id].get<std::string>(), id);  // first id wins
  return {{"type", "BPE"}, {"vocab", std::move(vocab)}, {"merges", merges}, {"dropout", nullptr},
          {"unk_token", nullptr}, {"fuse_unk", false}, {"byte_fallback", false}, {"ignore_merges", ignore_merges}};
}

json added_tokens(const GgufFile& file, const json& tokens) {
  json added = json::array();
  if (!file.has("tokenizer.ggml.token_type")) return added;
  const json& types = file.metadata().at("tokenizer.ggml.token_type");
  if (!types.is_array() || types.size() != tokens.size())
    file.fail_at("tokenizer.ggml.token_type", fmt::format("expected {} token types, one per token", tokens.size()));
  for (std::size_t id = 0; id < types.size(); ++id) {
    const std::int64_t type = types[id].is_number_integer() ? types[id].get<std::int64_t>() : -1;
    if (type != kControl && type != kUserDefined) continue;
    added.push_back({{"id", id}, {"content", tokens[id]}, {"special", type == kControl},
                     {"normalized", type == kUserDefined}, {"lstrip", false}, {"rstrip", false},
                     {"single_word", false}});
  }
  return added;
}

}  // namespace

TokenizerDocuments tokenizer_documents(const GgufFile& file) {
  const std::string model = file.string("tokenizer.ggml.model");
  if (model != "gpt2")
    file.fail_at("tokenizer.ggml.model", fmt::format("tokenizer model \"{}\" is not supported (kvbench reads "
                                                     "\"gpt2\", byte-level BPE)", model));
  const json& tokens = string_array(file, "tokenizer.ggml.tokens");
  const PreTokenizerForm& form = pre_tokenizer_form(file);
  const auto bos = token_id(file, "tokenizer.ggml.bos_token_id", tokens.size());
  const auto eos = token_id(file, "tokenizer.ggml.eos_token_id", tokens.size());
  const auto eot = token_id(file, "tokenizer.ggml.eot_token_id", tokens.size());
  const bool add_bos = bos && file.has("tokenizer.ggml.add_bos_token") &&
                       file.metadata().at("tokenizer.ggml.add_bos_token") == true;

  TokenizerDocuments out;
  out.tokenizer = {{"normalizer", nullptr},
                   {"pre_tokenizer", form.pre_tokenizer},
                   {"model", bpe_model(tokens, string_array(file, "tokenizer.ggml.merges"), form.ignore_merges)},
                   {"added_tokens", added_tokens(file, tokens)},
                   {"decoder", byte_level(true)},
                   {"post_processor", nullptr}};
  if (add_bos) {
    const std::string bos_text = tokens[*bos];
    json special = {{"id", bos_text}, {"ids", json::array({*bos})}, {"tokens", json::array({bos_text})}};
    json single = json::array({json{{"SpecialToken", {{"id", bos_text}, {"type_id", 0}}}},
                               json{{"Sequence", {{"id", "A"}, {"type_id", 0}}}}});
    out.tokenizer["post_processor"] = {{"type", "TemplateProcessing"}, {"single", std::move(single)},
                                       {"special_tokens", {{bos_text, std::move(special)}}}};
  }
  out.config = json::object();
  out.generation = json::object();
  if (bos) out.config["bos_token"] = tokens[*bos], out.generation["bos_token_id"] = *bos;
  if (eos) out.config["eos_token"] = tokens[*eos];
  json eos_ids = json::array();
  for (const std::optional<std::int64_t>& id : {eos, eot})
    if (id && std::find(eos_ids.begin(), eos_ids.end(), *id) == eos_ids.end()) eos_ids.push_back(*id);
  if (!eos_ids.empty()) out.generation["eos_token_id"] = eos_ids;
  if (file.has("tokenizer.chat_template")) out.config["chat_template"] = file.string("tokenizer.chat_template");
  return out;
}

}  // namespace kvbench
