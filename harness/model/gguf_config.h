// A GGUF file's metadata as a ModelConfig (torch-free, so the config readers build without libtorch).
#pragma once
#include "common/gguf_file.h"
#include "model/config.h"

namespace kvbench {

// Architectures llama, qwen2, qwen3 ({arch}.block_count, embedding_length, feed_forward_length,
// attention.head_count[_kv], attention.layer_norm_rms_epsilon, rope.freq_base, context_length,
// attention.key_length; vocabulary from {arch}.vocab_size or tokenizer.ggml.tokens; tied without
// output.weight). Anything else, or RoPE scaling, is refused naming the file and key.
ModelConfig gguf_model_config(const GgufFile& file);

}  // namespace kvbench
