// The batched sampler (engine/sampler.h) draws exactly the tokens of the sampler it replaced — a full sort of
// the vocabulary per rollout per step, kept here verbatim as the oracle — for every seed: greedy and
// temperature 0.6 / 1.0 / 1.3 × top-p 0.8 / 0.95 / 1 × top-k off / 20, on flat, peaked and tied logits,
// −inf entries, NaN and infinities, vocabularies of 257 to 151 936 entries, both ways the logits reach the
// host, and rollouts sampled in changing subsets (the others' RNG streams must not move).
#include "torch_catch.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "engine/sampler.h"

using namespace kvbench;

namespace {

// The sampler before batching (kvbench 85c2758, Sampler::next), unchanged but for taking its RNG as an argument.
int64_t reference_next(const SamplingParams& params_, std::mt19937_64& rng_, const at::Tensor& logits) {
  if (params_.temperature <= 0.0) return logits.argmax().item<int64_t>();
  const at::Tensor scaled = logits.to(at::kCPU, at::kDouble).contiguous() / params_.temperature;
  const double* data = scaled.data_ptr<double>();
  const int64_t V = scaled.numel();
  std::vector<int64_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  const int64_t k = params_.top_k > 0 ? std::min(params_.top_k, V) : V;
  auto value = [&](int64_t i) { return std::isnan(data[i]) ? -HUGE_VAL : data[i]; };
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
    return value(a) > value(b) || (value(a) == value(b) && a < b);
  });
  order.resize(k);
  std::vector<double> probs(k);
  for (int64_t i = 0; i < k; ++i) probs[i] = std::exp(data[order[i]] - data[order[0]]);
  const double total = std::accumulate(probs.begin(), probs.end(), 0.0);
  double mass = 0.0;
  int64_t kept = 0;
  while (kept < k && (kept == 0 || mass < params_.top_p * total)) mass += probs[kept++];
  const double u = std::uniform_real_distribution<double>(0.0, mass)(rng_);
  double cumulative = 0.0;
  for (int64_t i = 0; i < kept; ++i) {
    cumulative += probs[i];
    if (u < cumulative) return order[i];
  }
  return order[kept - 1];
}

enum class Shape { Flat, Peaked, Ties, NegativeInfinity, Nonfinite, Count };

// One row of logits: flat like a random-weights model's, peaked like a trained one's, quantised (exact ties,
// −0 beside +0), with −inf entries, or holding NaN / ±inf.
std::vector<float> random_row(std::mt19937& rng, int64_t V, Shape shape) {
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> row(V);
  const float spread = shape == Shape::Flat ? 0.6f : 2.5f;
  for (float& v : row) v = spread * normal(rng);
  for (int64_t spikes = uniform(0, 5); spikes > 0 && shape != Shape::Flat; --spikes)
    row[uniform(0, V - 1)] += static_cast<float>(uniform(8, 25));
  switch (shape) {
    case Shape::Ties:
      for (float& v : row) v = std::round(v * 2) / 2 * (uniform(0, 1) ? 1.0f : -1.0f);  // 0 · −1 = −0
      break;
    case Shape::NegativeInfinity:
      for (float& v : row)
        if (uniform(0, 9) < 3) v = -INFINITY;
      break;
    case Shape::Nonfinite: {
      const int64_t mode = uniform(0, 3);
      if (mode == 1) {  // few finite entries: a NaN may rank inside or outside the top k
        const int64_t finite = uniform(0, 30);
        for (int64_t i = 0; i < V; ++i)
          if (uniform(0, V - 1) >= finite) row[i] = -INFINITY;
      }
      if (mode <= 1) row[uniform(0, V - 1)] = NAN;
      if (mode == 2)
        for (int64_t n = uniform(1, 2); n > 0; --n) row[uniform(0, V - 1)] = INFINITY;
      if (mode == 3) std::fill(row.begin(), row.end(), -INFINITY);
      break;
    }
    default:
      break;
  }
  return row;
}

// `steps` steps of `rollouts` rollouts (a random non-empty subset of them each step) against the oracle.
void check_against_reference(const SamplingParams& params, int64_t V, int64_t rollouts, int64_t steps) {
  std::mt19937 rng(static_cast<uint32_t>(params.seed * 7919 + V));
  Sampler sampler(params, rollouts);
  std::vector<std::mt19937_64> oracle;
  for (int64_t b = 0; b < rollouts; ++b) oracle.emplace_back(params.seed * 0x9E3779B97F4A7C15ull + b);
  for (int64_t step = 0; step < steps; ++step) {
    std::vector<float> values;
    for (int64_t b = 0; b < rollouts; ++b) {
      const auto shape = static_cast<Shape>((step * rollouts + b) % static_cast<int64_t>(Shape::Count));
      const std::vector<float> row = random_row(rng, V, shape);
      values.insert(values.end(), row.begin(), row.end());
    }
    const at::Tensor logits = at::tensor(values, at::kFloat).view({rollouts, V});
    std::vector<int64_t> rows;
    for (int64_t b = 0; b < rollouts; ++b)
      if (rng() % 4 != 0 || (rows.empty() && b == rollouts - 1)) rows.push_back(b);
    const auto transfer = step % 2 ? Sampler::Transfer::All : Sampler::Transfer::Candidates;
    const std::vector<int64_t> tokens = sampler.next(logits, rows, transfer);
    REQUIRE(tokens.size() == rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      INFO("T " << params.temperature << " top-p " << params.top_p << " top-k " << params.top_k << " seed "
                << params.seed << " V " << V << " step " << step << " rollout " << rows[i]);
      REQUIRE(tokens[i] == reference_next(params, oracle[rows[i]], logits[rows[i]]));
    }
  }
}

}  // namespace

TEST_CASE("batched sampling draws the tokens of the full-sort sampler, seed for seed") {
  for (const double temperature : {0.0, 0.6, 1.0, 1.3})
    for (const double top_p : {0.8, 0.95, 1.0})
      for (const int64_t top_k : {0, 20}) {
        SamplingParams params{temperature, top_p, top_k, 0};
        params.seed = static_cast<uint64_t>(temperature * 1000 + top_p * 100 + top_k);
        check_against_reference(params, 257, 16, 64);  // 1024 draws (less the rollouts left out)
        check_against_reference(params, 8192, 8, 25);  // the radix sort's sizes
        // The real vocabulary: the oracle's full sort is slow, so a few draws.
        check_against_reference(params, 151936, 3, top_k > 0 ? 6 : 2);
      }
}

TEST_CASE("top-p outside 0..1 is refused") {
  for (const double top_p : {1.5, -0.1, std::nan("")}) {
    const SamplingParams params{1.0, top_p, 0, 0};
    REQUIRE_THROWS(Sampler(params, 1));
  }
}
