// kvpop (KVpop): a fixed budget per KV head — s attention sinks + w protected recent entries + k
// long-range entries chosen by a scorer (J = s + w + k). The scorer is a learned per-head model of
// each entry's future attention mass (--scorer FILE, see `kvbench train-scorer`); without one the
// documented untrained fallback is the attention mass real queries paid so far (as h2o-true). A stateful
// scorer (mLSTM, policies/kvpop_mlstm.h) sees every entry once as it enters the cache and scores it when
// it leaves the protected window; entries it has not scored yet are kept.
//
// Ragged caches (pyramid, ada): the scores are per layer and KV head already; each layer's are padded to
// the widest layer, padding slots scoring 0 (the allocator never ranks them), and a stateful scorer
// sees each layer's new entries at that layer's end.
#include "policies/attention_mass.h"
#include "policies/layer_scores.h"
#include "policies/policy.h"
#include "policies/retention_scorer.h"

namespace kvbench {

namespace {
class KvpopPolicy final : public Policy {
 public:
  // The scorer file is read when a generation starts, not here: making the policy only checks its spec
  // (job resolution does, for sweeps whose scorers are trained later).
  explicit KvpopPolicy(std::string scorer_path) : scorer_path_(std::move(scorer_path)) {}
  std::string name() const override { return "kvpop"; }
  std::string summary() const override {
    return "per KV head: sinks + protected window + top-k by a learned scorer (`--scorer F`: headwise "
           "linear/MLP, or the stateful mLSTM that scores a token when it leaves the window; untrained "
           "fallback: accumulated attention)";
  }
  PolicyNeeds needs() const override {
    return {false, scorer_path_.empty() ? AttentionCapture::AllLayers : AttentionCapture::None};
  }
  int64_t default_recent(int64_t J) const override { return J / 4; }
  KeepRule keep_rule(const CacheBudget& budget) const override {
    return {false, budget.recent, Granularity::PerKvHead, budget.sinks};
  }
  ScoreKind score_kind() const override { return ScoreKind::PerKvHead; }
  void prepare(const Preparation& preparation) override {
    model_ = &preparation.model;
    if (!scorer_path_.empty() && !scorer_) {
      scorer_ = load_retention_scorer(scorer_path_);
      stream_ = scorer_->stream();
    }
  }
  void observe(const ForwardResult& step, const KvCache& cache) override {
    if (scorer_path_.empty()) mass_.add(step, cache.keys(0).size(1));
    if (stream_) stream_new_entries(cache);
  }
  at::Tensor score(const ScoringContext& context) override {
    if (scorer_path_.empty()) return mass_.value();
    const KvCache& cache = context.cache;
    return score_each_layer(cache, [&](int64_t l, const at::Tensor& positions) {
      const at::Tensor held = cache.ragged() ? positions.clamp_min(0) : positions;
      return stream_ ? stream_->scores(l, held)
                     : scorer_->score(context.model, l, cache.keys(l), cache.values(l), held);
    });
  }
  void on_compact(const at::Tensor& keep) override {
    if (scorer_path_.empty()) mass_.compact(keep);
  }
  void expand_batch(int64_t batch) override {
    mass_.expand_batch(batch);
    if (stream_) stream_->expand_batch(batch);
  }
  void reset() override {
    mass_.reset();
    stream_ = scorer_ ? scorer_->stream() : nullptr;
    newest_streamed_ = -1;
  }

 private:
  // A stateful scorer sees each entry once, when it enters the cache: the tokens fed since the last call
  // (all of them at the first), which every layer appended at its end. Counted by position, since a
  // ragged cache's layers differ in size; tokens are fed in order, as many to every sequence.
  void stream_new_entries(const KvCache& cache) {
    const int64_t newest = cache.head_positions(0).max().item<int64_t>();
    const int64_t count = newest_streamed_ < 0 ? cache.size() : newest - newest_streamed_;
    for (int64_t l = 0; l < cache.num_layers(); ++l) {
      const int64_t end = cache.size(l);
      stream_->append(*model_, l, cache.keys(l).narrow(2, end - count, count), cache.values(l).narrow(2, end - count, count),
                      cache.head_positions(l).narrow(2, end - count, count));
    }
    newest_streamed_ = newest;
  }

  std::string scorer_path_;                 // empty: the untrained fallback
  std::unique_ptr<RetentionScorer> scorer_;  // read from scorer_path_ by the first prepare()
  std::unique_ptr<ScorerStream> stream_;  // stateful scorers only
  const Model* model_ = nullptr;
  int64_t newest_streamed_ = -1;           // the newest position the stream has seen (-1: none)
  AttentionMass mass_;
};
}  // namespace

std::unique_ptr<Policy> make_kvpop_policy(const PolicyOptions& options) {
  return std::make_unique<KvpopPolicy>(options.knobs.string("scorer", ""));
}

}  // namespace kvbench
