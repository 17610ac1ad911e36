#include "run/key_retention.h"

#include <limits>

namespace kvbench {

std::vector<int64_t> key_positions(const std::vector<int64_t>& prompt, const Tokenizer& tokenizer,
                                   const std::vector<std::string>& keys) {
  if (keys.empty()) return {};
  const std::string text = tokenizer.decode(prompt);
  // Characters decoded from the first n tokens; grows with n, so token spans are found by bisection.
  auto decoded_length = [&](size_t n) {
    return tokenizer.decode(std::vector<int64_t>(prompt.begin(), prompt.begin() + n)).size();
  };
  auto first_token_ending_after = [&](size_t character) {  // smallest i with decoded_length(i + 1) > character
    size_t low = 0, high = prompt.size();
    while (low < high) {
      const size_t mid = (low + high) / 2;
      if (decoded_length(mid + 1) > character) high = mid;
      else low = mid + 1;
    }
    return low;
  };
  std::vector<int64_t> positions;
  for (const auto& key : keys) {
    const size_t begin = text.find(key);
    if (key.empty() || begin == std::string::npos) return {};
    const size_t first = first_token_ending_after(begin), last = first_token_ending_after(begin + key.size() - 1);
    for (size_t i = first; i <= last && i < prompt.size(); ++i) positions.push_back(static_cast<int64_t>(i));
  }
  return positions;
}

double key_retention(const GenerationResult& result, int64_t rollout, const std::vector<int64_t>& keys) {
  if (keys.empty()) return std::numeric_limits<double>::quiet_NaN();
  const RefreshRecord* last_prefill = nullptr;
  for (const auto& record : result.refreshes)
    if (record.phase == "prefill") last_prefill = &record;
  if (!last_prefill) return 1.0;
  const at::Tensor& kept = last_prefill->kept_positions;  // [B, M] or [B, L, KV, M]
  const at::Tensor row = kept.select(0, kept.size(0) == 1 ? 0 : rollout).unsqueeze(-1);
  const at::Tensor wanted = at::tensor(keys, at::kLong);
  const at::Tensor held = row.eq(wanted).any(-2).logical_or(wanted.ge(last_prefill->processed));
  return held.to(at::kDouble).mean().item<double>();
}

}  // namespace kvbench
