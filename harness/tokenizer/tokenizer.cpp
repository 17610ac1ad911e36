#include "tokenizer/tokenizer.h"

#include <algorithm>

#include "common/error.h"
#include "common/json_file.h"
#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe.h"
#include "common/gguf_file.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/pipeline.h"
#include "tokenizer/utf8.h"

namespace kvbench {

using tokenizer_json::Node;

namespace {

// A stage tokenizer.json may omit or set to null.
Node optional_stage(const Node& root, const std::string& name) {
  static const json null_value;
  if (!root.has(name)) return {null_value, root.file, name};
  return root.at(name);
}

// tokenizer_config's special tokens are strings, {"content": ...} objects (older files) or null.
std::optional<std::string> special_token_text(const Node& config, const std::string& name) {
  if (!config.has(name)) return std::nullopt;
  const auto field = config.at(name);
  return field.value.is_object() ? field.at("content").string() : field.string();
}

// generation_config's *_token_id: an int or a list of ints.
std::vector<std::int64_t> token_id_list(const Node& config, const std::string& name) {
  if (!config.has(name)) return {};
  const auto field = config.at(name);
  if (!field.value.is_array()) return {field.integer()};
  std::vector<std::int64_t> ids;
  for (std::size_t i = 0; i < field.value.size(); ++i) ids.push_back(field.at(i).integer());
  return ids;
}

json read_optional_json(const std::filesystem::path& path) {
  return std::filesystem::exists(path) ? read_json_file(path) : json::object();
}

}  // namespace

struct Tokenizer::Impl {
  Impl(const Node& root)
      : normalizer(optional_stage(root, "normalizer")),
        pre_tokenizer(optional_stage(root, "pre_tokenizer")),
        model(root.at("model")),
        added(root.at("added_tokens"), normalizer),
        post_processor(optional_stage(root, "post_processor")),
        decoder(optional_stage(root, "decoder")) {}

  std::optional<std::int64_t> token_to_id(const std::string& token) const {
    if (auto id = added.find(token)) return id;
    return model.token_to_id(token);
  }

  // Text between added tokens: normalize, match normalized added tokens, pre-tokenize, run BPE.
  // `at_text_start`: `text` begins the input (Metaspace's prepend_scheme "first" needs to know).
  void encode_plain(std::string_view text, bool at_text_start, std::vector<std::int64_t>& ids) const {
    const NormalizedText normalized = normalizer.apply(text);
    const std::size_t origin = at_text_start ? normalized.origin_bytes : 0;
    for (const auto& segment : added.split_normalized(normalized.text)) {
      if (segment.added_id) {
        ids.push_back(*segment.added_id);
        continue;
      }
      const std::size_t start = segment.text.data() - normalized.text.data();
      for (const auto& word : pre_tokenizer.split(segment.text, origin_within(origin, start, segment.text.size())))
        model.encode_word(word, ids);
    }
  }

  void load_special_ids(const Node& config, const Node& generation);

  Normalizer normalizer;
  PreTokenizer pre_tokenizer;
  BpeModel model;
  AddedTokens added;
  PostProcessor post_processor;
  Decoder decoder;
  std::optional<std::int64_t> bos;
  std::vector<std::int64_t> eos;
  std::optional<std::int64_t> eos_token;
  ChatTemplate chat_template;
};

void Tokenizer::Impl::load_special_ids(const Node& config, const Node& generation) {
  const auto lookup = [&](const std::string& field) -> std::optional<std::int64_t> {
    const auto text = special_token_text(config, field);
    if (!text) return std::nullopt;
    const auto id = token_to_id(*text);
    if (!id) config.at(field).fail_here("token \"" + *text + "\" is not in tokenizer.json");
    return id;
  };
  bos = lookup("bos_token");
  if (!bos) {
    const auto ids = token_id_list(generation, "bos_token_id");
    if (!ids.empty()) bos = ids.front();
  }
  eos_token = lookup("eos_token");
  if (eos_token) eos.push_back(*eos_token);
  for (const auto id : token_id_list(generation, "eos_token_id"))
    if (std::find(eos.begin(), eos.end(), id) == eos.end()) eos.push_back(id);

  if (config.has("chat_template")) {
    const auto field = config.at("chat_template");
    if (!field.value.is_string()) field.fail_here("only a single template string is supported");
    chat_template = ChatTemplate(field.string(), special_token_text(config, "bos_token").value_or(""));
  }
}

Tokenizer Tokenizer::load(const std::filesystem::path& model) {
  if (const auto gguf_path = gguf_model_file(model); !gguf_path.empty()) {
    const GgufFile gguf(gguf_path);
    const TokenizerDocuments documents = tokenizer_documents(gguf);
    return from_documents({documents.tokenizer, gguf_path, ""}, {documents.config, gguf_path, ""},
                          {documents.generation, gguf_path, ""});
  }
  const auto path = model / "tokenizer.json";
  if (!std::filesystem::exists(path)) fail("{}: file not found", path.string());
  const auto config_path = model / "tokenizer_config.json", generation_path = model / "generation_config.json";
  const json document = read_json_file(path), config = read_optional_json(config_path),
             generation = read_optional_json(generation_path);
  return from_documents({document, path, ""}, {config, config_path, ""}, {generation, generation_path, ""});
}

Tokenizer Tokenizer::from_documents(const Node& tokenizer, const Node& config, const Node& generation) {
  auto impl = std::make_unique<Impl>(tokenizer);
  impl->load_special_ids(config, generation);
  return Tokenizer(std::move(impl));
}

bool Tokenizer::available(const std::filesystem::path& model) {
  return std::filesystem::exists(model / "tokenizer.json") || !gguf_model_file(model).empty();
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

std::vector<std::int64_t> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  utf8::require_valid(text, "tokenizer input");
  std::vector<std::int64_t> ids;
  ids.reserve(text.size() / 3);
  for (const auto& segment : impl_->added.split_raw(text)) {
    if (segment.added_id) {
      ids.push_back(*segment.added_id);
    } else {
      impl_->encode_plain(segment.text, segment.text.data() == text.data(), ids);
    }
  }
  if (add_special_tokens) impl_->post_processor.add_special_tokens(ids);
  return ids;
}

std::string Tokenizer::decode(const std::vector<std::int64_t>& ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const auto id : ids) {
    if (const AddedToken* added = impl_->added.find(id)) {
      if (!(skip_special_tokens && added->special)) tokens.push_back(added->content);
    } else if (const std::string* token = impl_->model.id_to_token(id)) {
      tokens.push_back(*token);
    }
  }
  return impl_->decoder.decode(std::move(tokens));
}

std::optional<std::int64_t> Tokenizer::bos_id() const { return impl_->bos; }
std::vector<std::int64_t> Tokenizer::eos_ids() const { return impl_->eos; }
std::optional<std::int64_t> Tokenizer::eos_token_id() const { return impl_->eos_token; }
std::optional<std::int64_t> Tokenizer::token_to_id(const std::string& token) const { return impl_->token_to_id(token); }
std::int64_t Tokenizer::vocab_size() const { return std::max(impl_->model.max_id(), impl_->added.max_id()) + 1; }
bool Tokenizer::has_chat_template() const { return impl_->chat_template.known(); }

std::string Tokenizer::apply_chat_template(const Conversation& messages, bool add_generation_prompt,
                                           bool enable_thinking) const {
  return impl_->chat_template.render(messages, add_generation_prompt, enable_thinking);
}

}  // namespace kvbench
