// kvzip (KVzip, Kim et al. 2025, as kvpress's KVzipPress): the model is asked to repeat its context, and an entry
// scores the most attention any query of the repetition pays it. The context (the cache's tokens after the chat
// template's opening) is repeated in chunks of `chunk` tokens. A pass feeds, after the whole cache (which it leaves
// as it was): "\n\nRepeat the previous context exactly." (later chunks: "\n\nRepeat the part of the previous
// context exactly, starting with" and the previous chunk's last 8 tokens), the user turn's end and the assistant
// header (raw prompts: "\n"), then the chunk. Per layer and query head, the pass's queries attend (softmax) to the
// sinks, the chunk's entries and the pass's own tokens, causally; a chunk entry scores its largest weight over the
// pass's queries and its KV head's query group. The template's opening scores 0; the sinks stay (--sinks, kvpress's
// n_sink 4). kvpress ranks every layer and head together: --allocator global (its layerwise: --allocator ada).
// Knob: chunk (default 2048). Not here: KVzip+'s normalisation (kvpress's kvzip_plus_normalization).
#include <cmath>
#include <limits>

#include "common/error.h"
#include "policies/policy.h"
#include "tokenizer/tokenizer.h"

namespace kvbench {

namespace {

constexpr int64_t kPreviousTail = 8;  // tokens of the previous chunk quoted in the next request (prepare's prev_postfix_size)

std::vector<int64_t> joined(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class KvzipPolicy final : public Policy {
 public:
  explicit KvzipPolicy(int64_t chunk) : chunk_(chunk) {}
  std::string name() const override { return "kvzip"; }
  std::string summary() const override {
    return "per KV head: the most attention the model pays an entry while repeating its context, chunk by chunk "
           "(kvpress KVzipPress; with --allocator global)";
  }
  PolicyNeeds needs() const override {
    PolicyNeeds needs;
    needs.tokenizer = true;
    return needs;
  }
  KeepRule keep_rule(const CacheBudget& budget) const override {
    return {false, budget.recent, Granularity::PerKvHead, budget.sinks};
  }
  ScoreKind score_kind() const override { return ScoreKind::PerKvHead; }

  // The request texts and the turn's frame, in the job's tokens (kvpress's __call__ and prepare).
  void prepare(const Preparation& preparation) override {
    if (preparation.budget.mode != CacheBudget::Mode::PrefillEnd)
      fail("kvzip reconstructs the context once, before anything is evicted: run it with --mode prefill_end");
    const Tokenizer& tokenizer = *preparation.tokenizer;
    std::string opening, turn_end = "\n";
    if (preparation.chat && tokenizer.has_chat_template()) {
      const std::string dummy = "dummy context", separator = "\n" + std::string(dummy.size(), '#');
      const std::string rendered = tokenizer.apply_chat_template({{"user", dummy + separator}}, true, false);
      const std::size_t at = rendered.find(separator);
      opening = rendered.substr(0, rendered.find(dummy));
      turn_end = rendered.substr(at + separator.size());
    }
    opening_tokens_ = static_cast<int64_t>(tokenizer.encode(opening, false).size());
    turn_end_ = tokenizer.encode(turn_end, false);
    first_request_ = tokenizer.encode("\n\nRepeat the previous context exactly.", false);
    next_request_ = tokenizer.encode("\n\nRepeat the part of the previous context exactly, starting with", false);
  }

  at::Tensor score(const ScoringContext& context) override {
    const KvCache& cache = context.cache;
    if (cache.per_head() || cache.batch() != 1)
      fail("kvzip scores a prompt's cache before any eviction (one sequence, token level)");
    const Model& model = context.model;
    const int64_t C = cache.size(), L = cache.num_layers(), KV = cache.keys(0).size(1);
    const at::Tensor ids = cache.token_ids()[0].cpu().contiguous();
    const int64_t* id = ids.data_ptr<int64_t>();
    at::Tensor scores = at::zeros({1, L, KV, C}, cache.keys(0).options().dtype(at::kFloat));
    for (int64_t start = std::min(opening_tokens_, C); start < C; start += chunk_) {
      const int64_t end = std::min(start + chunk_, C);
      std::vector<int64_t> request = first_request_;
      if (start > opening_tokens_) request = joined(next_request_, {id + start - std::min(kPreviousTail, chunk_), id + start});
      const std::vector<int64_t> pass = joined(joined(request, turn_end_), {id + start, id + end});
      score_chunk(model, cache, pass, start, end, std::min(context.budget.sinks, start), scores);
    }
    return scores;
  }

 private:
  // One reconstruction pass: the chunk [start, end)'s scores in every layer.
  void score_chunk(const Model& model, const KvCache& cache, const std::vector<int64_t>& pass, int64_t start,
                   int64_t end, int64_t sinks, at::Tensor& scores) const {
    const at::Device device = cache.keys(0).device();
    const int64_t C = cache.size(), q = static_cast<int64_t>(pass.size());
    const at::Tensor positions = at::arange(C, C + q, at::kLong).unsqueeze(0).to(device);
    KvCache scratch = cache.scratch();
    ForwardOptions options;
    options.queries = true;
    const ForwardResult result = model.forward(at::tensor(pass, at::kLong).unsqueeze(0).to(device), positions, scratch, options);
    const at::Tensor future = at::ones({q, q}, at::TensorOptions(device).dtype(at::kBool)).triu(1);
    for (int64_t l = 0; l < cache.num_layers(); ++l) {
      const at::Tensor keys = scratch.keys(l);  // [1, KV, C + q, D]
      const int64_t KV = keys.size(1), D = keys.size(3);
      const at::Tensor queries = model.rope(result.queries[l], positions).to(at::kFloat);  // [1, H, q, D]
      const at::Tensor observed =
          at::cat({keys.narrow(2, 0, sinks), keys.narrow(2, start, end - start), keys.narrow(2, C, q)}, 2).to(at::kFloat);
      const at::Tensor logits =
          at::matmul(queries.view({1, KV, -1, q, D}), observed.unsqueeze(2).transpose(-2, -1)) / std::sqrt(static_cast<double>(D));
      logits.narrow(-1, logits.size(-1) - q, q).masked_fill_(future, -std::numeric_limits<float>::infinity());
      const at::Tensor weights = logits.softmax(-1).narrow(-1, sinks, end - start);  // [1, KV, G, q, chunk]
      scores.select(1, l).narrow(-1, start, end - start).copy_(weights.amax({2, 3}));
    }
  }

  int64_t chunk_;
  int64_t opening_tokens_ = 0;
  std::vector<int64_t> turn_end_, first_request_, next_request_;
};

}  // namespace

std::unique_ptr<Policy> make_kvzip_policy(const PolicyOptions& options) {
  return std::make_unique<KvzipPolicy>(options.knobs.integer("chunk", 2048, 1, 1 << 20));
}

}  // namespace kvbench
