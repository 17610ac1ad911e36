// A large cache for timing passes that only read it (`kvbench bench refresh`), filled in O(n): filling a
// cache of n tokens by the causal forward costs O(L·n²) (at n = 65536 on stories260K it took longer than
// 35 minutes, far more than the scoring pass it was built for).
//
// Why not plain random values: the cost of a counter-causal pass on the CPU does depend on the values.
// On stories260K at n = 2048–4096, standard-normal keys, values and H^(L-1) make the full pass 20–25 %
// faster than the cache a prefill fills (the fast pass is unaffected). With the CPU flushing subnormal
// floats to zero the difference disappears: real activations lead to subnormal intermediates, which are
// slow on x86, and random ones of unit scale do not. Real entries, resampled and moved to their new
// positions, time within a few per cent of the real cache.
#pragma once
#include <cstdint>

#include "cache/kv_cache.h"

namespace kvbench {

class Model;

// n entries at positions 0..n−1, each a copy of an entry of `source` (a token-level cache of one sequence,
// as a causal prefill fills it) drawn uniformly with replacement: its token id, values and H^(L-1) as they
// are, its keys rotated from the source entry's position to the new one (RoPE composes: rotating by the
// difference gives the key the same token would have had there). Appended through KvCache's own append
// API in one append, so the layout (capacity, strides) is the one a prefill of n tokens builds.
// Deterministic in `seed`. Besides the cache it holds one layer's drawn keys and values at a time, then
// the drawn H^(L-1) (n × hidden, as large as the cache's own copy): a few hundred MiB at n = 65536 on a
// 0.5B model, so no chunking is needed. Throws kvbench::Error for n ≤ 0 or an unusable source.
KvCache resampled_cache(const Model& model, const KvCache& source, int64_t n, uint64_t seed);

}  // namespace kvbench
