#include "model/sdpa_attention.h"

#include <atomic>

#include "common/error.h"

namespace kvbench {

namespace {
std::atomic<bool> sdpa_on_cpu{false};
}

void set_sdpa_on_cpu(bool on) { sdpa_on_cpu = on; }

bool sdpa_serves(const at::Tensor& q) { return KVBENCH_HAS_SDPA && (!q.is_cpu() || sdpa_on_cpu); }

at::Tensor sdpa_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& allowed) {
#if KVBENCH_HAS_SDPA
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2), D = q.size(3), G = H / k.size(1), N = k.size(2);
  // The mask broadcasts over the query heads ([b, 1, T, N]); a per-KV-head one is repeated to each of its
  // query heads, as enable_gqa repeats the keys.
  at::Tensor mask;
  if (allowed.defined())
    mask = allowed.dim() == 4 ? allowed.repeat_interleave(G, 1)
                              : allowed.reshape({allowed.dim() == 3 ? allowed.size(0) : 1, 1, T, N});
  at::Tensor out = at::scaled_dot_product_attention(q, k, v, mask.defined() ? std::optional<at::Tensor>(mask)
                                                                            : std::optional<at::Tensor>(),
                                                    0.0, false, std::nullopt, /*enable_gqa=*/G > 1);
  if (mask.defined()) out.masked_fill_(mask.any(-1, /*keepdim=*/true).logical_not(), 0.0);  // no key → 0, not NaN
  return out.transpose(1, 2).reshape({B, T, H * D});
#else
  (void)q, (void)k, (void)v, (void)allowed;
  fail("scaled_dot_product_attention needs PyTorch ≥ 2.5 (this kvbench is built against libtorch {})",
       TORCH_VERSION);
#endif
}

}  // namespace kvbench
