#include "bench/resampled_cache.h"

#include <ATen/CPUGeneratorImpl.h>

#include "common/error.h"
#include "model/model.h"

namespace kvbench {

KvCache resampled_cache(const Model& model, const KvCache& source, int64_t n, uint64_t seed) {
  if (n <= 0) fail("resampled_cache: n must be positive (got {})", n);
  if (source.size() == 0 || source.batch() != 1 || source.per_head() || source.ragged() ||
      !source.keeps_last_layer_input())
    fail("resampled_cache: the source must be a non-empty token-level cache of one sequence that keeps H^(L-1)");
  // Drawn on the CPU whatever the device, so a seed gives the same cache everywhere.
  at::Generator generator = at::detail::createCPUGenerator(seed);
  const at::Tensor rows = at::randint(0, source.size(), {n}, generator, at::TensorOptions().dtype(at::kLong))
                              .to(source.token_ids().device());
  const at::Tensor positions = at::arange(n, rows.options()).unsqueeze(0);
  const at::Tensor shift = positions - source.positions().index_select(1, rows);
  KvCache cache(cache_shape(model.config()), 1, model.options(), /*keep_last_layer_input=*/true);
  cache.begin_append(n);  // one append reserves exactly n slots, as a prefill of n tokens does
  for (int64_t layer = 0; layer < cache.num_layers(); ++layer)
    cache.append_layer(layer, model.rope(source.keys(layer).index_select(2, rows), shift),
                       source.values(layer).index_select(2, rows));
  cache.end_append(source.token_ids().index_select(1, rows), positions, source.last_layer_input().index_select(1, rows));
  return cache;
}

}  // namespace kvbench
