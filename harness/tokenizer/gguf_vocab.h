// A GGUF file's vocabulary (tokenizer.ggml.*) as the tokenizer.json, tokenizer_config.json and
// generation_config.json its model's authors publish, so one tokenizer implementation serves both.
// llama.cpp's `tokenizer.ggml.pre` names the pre-tokenizer (src/llama-vocab.cpp); each known name maps
// to the pipeline of the tokenizer.json it was converted from.
#pragma once
#include "common/gguf_file.h"
#include "common/json_file.h"

namespace kvbench {

struct TokenizerDocuments {
  json tokenizer;   // tokenizer.json
  json config;      // tokenizer_config.json: bos_token, eos_token, chat_template
  json generation;  // generation_config.json: bos_token_id, eos_token_id
};

// Throws kvbench::Error naming the file and key for a tokenizer model other than byte-level BPE
// ("gpt2") or a pre-tokenizer name it does not know.
TokenizerDocuments tokenizer_documents(const GgufFile& file);

}  // namespace kvbench
