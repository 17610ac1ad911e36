// What a cache needs of its model: layers, KV heads, head size and hidden size (model/config.h makes one
// from a ModelConfig: cache_shape). The cache sits below the model, which appends to it.
#pragma once
#include <cstdint>

namespace kvbench {

struct CacheShape {
  int64_t layers = 0, kv_heads = 0, head_dim = 0, hidden = 0;
};

}  // namespace kvbench
