#include "engine/sampler.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "common/error.h"

namespace kvbench {

namespace {

// The probabilities are exp(x − max) of the scaled logits x = logit / temperature, summed in the sampling
// order (larger x first, ties to the lower id) from exp(0) = 1 on. A term below 2^-53 is under half an ulp
// of such a sum and leaves it unchanged; exp(−37) < 2^-53, so the entries this far below the top change
// neither the total nor the nucleus (they come after every larger term in the order).
constexpr double kNegligible = -37.0;
// Where the logits are, a row keeps what lies within this many nats of its top: a superset of the above
// (the one nat more absorbs the rounding of doing it in other arithmetic).
constexpr double kDeviceMargin = 38.0;

// Finite x as keys that ascend as x descends: a bijection but for −0, which shares +0's key (they tie).
uint64_t descending_key(double x) {
  if (x == 0) x = 0;
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits >> 63 ? bits : ~bits & (~uint64_t{0} >> 1);
}

double value_of(uint64_t key) {
  const uint64_t bits = key >> 63 ? key : ~key & (~uint64_t{0} >> 1);
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// LSD radix sort, 16 bits a pass. A comparison sort of a flat distribution's ~150 000 entries costs several
// times more.
void radix_sort(std::vector<uint64_t>& keys) {
  constexpr int kBits = 16;
  constexpr uint64_t kMask = (uint64_t{1} << kBits) - 1;
  std::vector<uint64_t> sorted(keys.size());
  std::vector<int64_t> start(kMask + 1);
  for (int shift = 0; shift < 64; shift += kBits) {
    std::fill(start.begin(), start.end(), 0);
    for (const uint64_t key : keys) ++start[(key >> shift) & kMask];
    if (start[(keys.front() >> shift) & kMask] == static_cast<int64_t>(keys.size())) continue;  // nothing to move
    std::exclusive_scan(start.begin(), start.end(), start.begin(), int64_t{0});
    for (const uint64_t key : keys) sorted[start[(key >> shift) & kMask]++] = key;
    keys.swap(sorted);
  }
}

// The keys of one row's entries that can carry probability, top-k applied, in the sampling order. Equal
// keys are equal values: which of the tied ids sits where is settled only for the drawn one (id_at).
std::vector<uint64_t> sorted_keys(const double* x, int64_t n, double top, int64_t top_k) {
  const size_t limit = top_k > 0 ? static_cast<size_t>(top_k) : static_cast<size_t>(n);
  std::vector<uint64_t> keys;  // once top-k fills it, a max-heap: its front is the worst key kept
  for (int64_t i = 0; i < n; ++i) {
    if (!(x[i] - top > kNegligible)) continue;
    const uint64_t key = descending_key(x[i]);
    if (keys.size() < limit) {
      keys.push_back(key);
      if (top_k > 0 && keys.size() == limit) std::make_heap(keys.begin(), keys.end());
    } else if (key < keys.front()) {
      std::pop_heap(keys.begin(), keys.end());
      keys.back() = key;
      std::push_heap(keys.begin(), keys.end());
    }
  }
  if (keys.size() < 4096) std::sort(keys.begin(), keys.end());  // peaked rows, top-k: comparisons win
  else radix_sort(keys);
  return keys;
}

// The id at sorted position j: tied entries sit in id order, so it is the r-th entry of that value in the
// row, r = j − the value's first position.
int64_t id_at(const double* x, const int32_t* ids, int64_t n, const std::vector<uint64_t>& keys, int64_t j) {
  int64_t rank = j - (std::lower_bound(keys.begin(), keys.begin() + j, keys[j]) - keys.begin());
  const double value = value_of(keys[j]);
  for (int64_t i = 0; i < n; ++i)
    if (x[i] == value && rank-- == 0) return ids ? ids[i] : i;
  fail("sampler: the drawn entry is not in its row");
}

struct Top {
  int64_t position = 0;    // of the first entry in the sampling order, NaN ranking as −inf
  bool nan_mass = false;   // a NaN among the top k probabilities: exp(±inf − ±inf), or a NaN logit
};

// NaN and −inf tie (by id) below every other entry, so the first NaN's rank is the count of larger entries
// plus the −inf before it.
Top find_top(const double* x, int64_t n, int64_t k) {
  Top top;
  double best = -HUGE_VAL;
  int64_t above = 0, low_before_nan = 0, first_nan = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(x[i]) && first_nan < 0) first_nan = i;
    if (std::isnan(x[i]) || x[i] == -HUGE_VAL) {
      if (first_nan < 0) ++low_before_nan;
      continue;
    }
    ++above;
    if (x[i] > best) {
      best = x[i];
      top.position = i;
    }
  }
  top.nan_mass = !std::isfinite(best) || (first_nan >= 0 && above + low_before_nan < k);
  return top;
}

// Each row's logits on the host, one after another: row r is values[offsets[r], offsets[r+1]) with vocabulary
// ids `ids` there (undefined: each row is the whole vocabulary). Rows are scaled one at a time where they are
// drawn: a [rollouts, V] float64 copy costs more in fresh pages than the scaling itself.
struct HostRows {
  at::Tensor values;  // 1-D, the logits' dtype
  at::Tensor ids;     // int32
  std::vector<int64_t> offsets;
};

HostRows all_rows(const at::Tensor& logits) {
  HostRows rows{logits.to(at::kCPU).reshape(-1), {}, {}};
  for (int64_t r = 0; r <= logits.size(0); ++r) rows.offsets.push_back(r * logits.size(1));
  return rows;
}

// Selected where the logits are; a row holding NaN or an infinite top travels whole (its rules need it all).
// The division by the temperature stays on the host: a device may divide differently.
HostRows candidate_rows(const at::Tensor& logits, double temperature) {
  const at::Tensor wide = logits.to(at::kDouble);
  const at::Tensor top = std::get<0>(wide.max(1, true));
  const at::Tensor whole = wide.isnan().any(1, true) | top.isinf();
  const at::Tensor keep = wide.ge(top - kDeviceMargin * temperature) | whole;
  HostRows rows{logits.masked_select(keep).to(at::kCPU), keep.nonzero().select(1, 1).to(at::kInt).to(at::kCPU), {0}};
  const at::Tensor counts = keep.sum(1).to(at::kCPU);
  for (int64_t r = 0; r < counts.size(0); ++r) rows.offsets.push_back(rows.offsets.back() + counts[r].item<int64_t>());
  return rows;
}

}  // namespace

Sampler::Sampler(const SamplingParams& params, int64_t rollouts) : params_(params) {
  if (!(params.top_p >= 0 && params.top_p <= 1)) fail("top-p must be in 0..1 (got {})", params.top_p);
  for (int64_t b = 0; b < rollouts; ++b) rngs_.emplace_back(params.seed * 0x9E3779B97F4A7C15ull + b);
}

std::vector<int64_t> Sampler::next(const at::Tensor& logits, const std::vector<int64_t>& rows) {
  return next(logits, rows, logits.is_cpu() ? Transfer::All : Transfer::Candidates);
}

std::vector<int64_t> Sampler::next(const at::Tensor& logits, const std::vector<int64_t>& rows, Transfer transfer) {
  if (rows.empty()) return {};
  std::vector<int64_t> identity(logits.size(0));
  std::iota(identity.begin(), identity.end(), 0);
  const at::Tensor chosen =
      rows == identity ? logits : logits.index_select(0, at::tensor(rows, at::kLong).to(logits.device()));
  if (params_.temperature <= 0.0) {
    const at::Tensor argmax = chosen.argmax(1).to(at::kCPU);
    return {argmax.data_ptr<int64_t>(), argmax.data_ptr<int64_t>() + argmax.numel()};
  }
  const HostRows host = transfer == Transfer::All ? all_rows(chosen) : candidate_rows(chosen, params_.temperature);
  const int32_t* ids = host.ids.defined() ? host.ids.data_ptr<int32_t>() : nullptr;
  std::vector<int64_t> tokens(rows.size());
  at::parallel_for(0, static_cast<int64_t>(rows.size()), 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t offset = host.offsets[r], n = host.offsets[r + 1] - offset;
      const at::Tensor x = host.values.narrow(0, offset, n).to(at::kDouble) / params_.temperature;
      tokens[r] = draw(rngs_[rows[r]], x.data_ptr<double>(), ids ? ids + offset : nullptr, n);
    }
  });
  return tokens;
}

// Inverse-CDF sampling over the probabilities in the sampling order (the top k, or all), within the nucleus:
// the smallest prefix whose mass reaches top_p of the total (at least one token). Every draw takes one number
// from the RNG.
int64_t Sampler::draw(std::mt19937_64& rng, const double* x, const int32_t* ids, int64_t n) const {
  const int64_t k = params_.top_k > 0 ? std::min(params_.top_k, n) : n;
  const Top top = find_top(x, n, k);
  if (top.nan_mass) {  // a NaN total: no prefix reaches it, and the top entry is the nucleus
    std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    return ids ? ids[top.position] : top.position;
  }
  const std::vector<uint64_t> keys = sorted_keys(x, n, x[top.position], params_.top_k);
  const auto size = static_cast<int64_t>(keys.size());
  std::vector<double> probs(size);
  for (int64_t i = 0; i < size; ++i) probs[i] = std::exp(value_of(keys[i]) - value_of(keys[0]));
  const double total = std::accumulate(probs.begin(), probs.end(), 0.0);
  double mass = 0.0;
  int64_t kept = 0;
  while (kept < size && (kept == 0 || mass < params_.top_p * total)) mass += probs[kept++];
  const double u = std::uniform_real_distribution<double>(0.0, mass)(rng);
  int64_t chosen = kept - 1;  // where u is not below any cumulative sum (rounding)
  double cumulative = 0.0;
  for (int64_t i = 0; i < kept; ++i)
    if (u < (cumulative += probs[i])) {
      chosen = i;
      break;
    }
  return id_at(x, ids, n, keys, chosen);
}

}  // namespace kvbench
