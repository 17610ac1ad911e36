// bench throughput and bench sweep: samples decoded together, against the GEMM rate and against batch 1.
#include <chrono>
#include <tuple>

#include "engine/machine_rates.h"
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/bench.h"
#include "bench/measure.h"
#include "run/resolved_job.h"

namespace kvbench::bench {

namespace {

struct BatchTiming {
  double decode_tokens_per_second = 0.0, mean_cache = 0.0;
  // The counted work of the refreshes run while decoding (Policy::scoring_flops), per second of decode; 0 when
  // the policy's pass is not counted (its scoring is a few products over the cache's keys: no GEMM).
  double refresh_flops_per_second = 0.0;
};

// `count` samples of one policy and budget: distinct random prompts of `prompt_len` tokens (seeds seed, seed + 1,
// ...), each generating exactly `new_tokens` (no stop token).
struct RandomSamples {
  std::vector<std::unique_ptr<Policy>> policies;
  std::vector<std::unique_ptr<SampleGeneration>> generations;
  std::vector<SampleGeneration*> list;
  CacheBudget budget;  // every sample's: the same options

  RandomSamples(const Model& model, const JobConfig& base, int64_t count, int64_t prompt_len,
                int64_t new_tokens, uint64_t seed) {
    const Profile profile = parse_profile(base.profile);
    for (int64_t b = 0; b < count; ++b) {
      JobConfig job = base;
      job.max_new = new_tokens;
      policies.push_back(make_policy(policy_spec(job, profile)));
      GenerationSettings settings = generation_settings(job, profile, *policies.back(), 0, nullptr, prompt_len);
      if (settings.budget.h <= 0) settings.budget.h = prompt_len;  // full cache: one prefill pass
      budget = settings.budget;
      generations.push_back(std::make_unique<SampleGeneration>(
          model, *policies.back(), random_ids(prompt_len, model.config().vocab_size, seed + b), settings));
      list.push_back(generations.back().get());
    }
  }
};

// B samples (distinct random prompts) decoded together with a fixed length: all B prompts, of one length, are
// prefilled together in the first passes and end in the same one, so decode time = wall time − the longest
// time to first token.
BatchTiming time_batch(const Model& model, const ThroughputBench& o, int64_t B, uint64_t seed) {
  RandomSamples samples(model, o.job, B, o.prompt_len, o.new_tokens, seed);
  std::vector<SampleGeneration*>& list = samples.list;
  const CacheBudget& budget = samples.budget;
  const auto start = std::chrono::steady_clock::now();
  generate_continuously(model, B, list);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  BatchTiming timing;
  double prefill = 0.0, tokens = 0.0, refresh_flops = 0.0;
  for (auto& g : samples.generations) {
    const GenerationResult result = g->take();
    prefill = std::max(prefill, result.prefill_seconds);
    tokens += static_cast<double>(result.rollouts[0].generated.size() - 1);  // token 1 comes from the prefill
    timing.mean_cache += result.mean_cache_size / static_cast<double>(B);
    for (const RefreshRecord& r : result.refreshes)
      if (r.phase == "decode")
        refresh_flops += samples.policies.front()->scoring_flops(model.config(), r.size_before, budget).value_or(0.0);
  }
  const double decode_seconds = wall - prefill;
  timing.decode_tokens_per_second = tokens / decode_seconds;
  timing.refresh_flops_per_second = refresh_flops / decode_seconds;
  return timing;
}

}  // namespace

void run_throughput(const ThroughputBench& o, std::ostream& out) {
  const Model model = api::load_model(o.model).model;
  out << describe(o.model, model) << "\n";
  const MachineRates rates = measure_machine_rates(o.model.parsed_device(), o.model.parsed_dtype());
  out << fmt::format("machine: {} GEMM {:.1f} GFLOP/s; policy {}, J {}, prompt {}, {} new tokens per sample\n",
                           dtype_name(o.model.parsed_dtype()), rates.gemm_gflops, o.job.policy, o.job.budget.J.text(), o.prompt_len, o.new_tokens);
  time_batch(model, o, 1, 999);  // warm-up
  for (int64_t round = 1; round <= o.rounds; ++round) {
    out << fmt::format("round {}\n{:>6} {:>14} {:>9} {:>10} {:>8} {:>9}\n", round, "batch", "decode tok/s",
                             "speed-up", "GFLOP/s", "% GEMM", "refresh");
    double single = 0.0;
    for (int64_t B : o.batches) {
      const BatchTiming t = time_batch(model, o, B, 1000 * round);
      if (single == 0.0) single = t.decode_tokens_per_second / static_cast<double>(B);
      const double refresh_gflops = t.refresh_flops_per_second / 1e9;
      const double gflops = t.decode_tokens_per_second * decode_flops(model, t.mean_cache) / 1e9 + refresh_gflops;
      out << fmt::format("{:>6} {:>14.1f} {:>8.2f}x {:>10.1f} {:>7.1f}% {:>8.1f}%", B, t.decode_tokens_per_second,
                               t.decode_tokens_per_second / single, gflops, 100.0 * gflops / rates.gemm_gflops,
                               100.0 * refresh_gflops / gflops)
                << std::endl;
    }
  }
}

// One fixed job of `samples` random samples through generate_continuously with `batch` slots: wall seconds.
namespace {

double time_job(const Model& model, const SweepBench& o, int64_t batch, int64_t prompt_len, int64_t new_tokens) {
  RandomSamples samples(model, o.job, o.samples, prompt_len, new_tokens, 0);
  const auto start = std::chrono::steady_clock::now();
  generate_continuously(model, batch, samples.list);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Wall time of the same job at --batch 1 and at the batch a sweep runs by default, on a decode-heavy and a
// prefill-heavy shape: what batching saves a sweep. Prompts are cut to fit the model's positions.
}  // namespace

void run_sweep(const SweepBench& o, std::ostream& out) {
  const Model model = api::load_model(o.model).model;
  const int64_t batch = o.batch > 0 ? o.batch : default_batch(model);
  out << describe(o.model, model) << "\n"
            << fmt::format("policy {}, J {}, h {}; {} samples a job, batch 1 vs {}\n", o.job.policy, o.job.budget.J.text(),
                           o.job.budget.h > 0 ? std::to_string(o.job.budget.h) : "J/4", o.samples, batch);
  const int64_t positions = model.config().max_position_embeddings;
  struct Shape {
    std::string name;
    int64_t prompt, new_tokens;
  };
  std::vector<Shape> shapes;
  for (const auto& [name, prompt, new_tokens] : {std::tuple{"decode-heavy", o.decode_prompt, o.decode_new},
                                                 std::tuple{"prefill-heavy", o.prefill_prompt, o.prefill_new}})
    shapes.push_back({name, std::max<int64_t>(1, std::min(prompt, positions - new_tokens)), new_tokens});
  time_job(model, o, batch, 16, 2);  // warm-up
  for (int64_t round = 1; round <= o.rounds; ++round) {
    out << fmt::format("round {}\n{:<14} {:>7} {:>5} {:>12} {:>12} {:>13} {:>9}\n", round, "shape", "prompt",
                             "new", "batch 1 s", fmt::format("batch {} s", batch), "samples/s", "speed-up");
    for (const Shape& shape : shapes) {
      const double alone = time_job(model, o, 1, shape.prompt, shape.new_tokens);
      const double together = time_job(model, o, batch, shape.prompt, shape.new_tokens);
      out << fmt::format("{:<14} {:>7} {:>5} {:>12.3f} {:>12.3f} {:>6.2f} → {:<6.2f} {:>8.2f}x", shape.name,
                               shape.prompt, shape.new_tokens, alone, together, o.samples / alone,
                               o.samples / together, alone / together)
                << std::endl;
    }
  }
}

}  // namespace kvbench::bench
