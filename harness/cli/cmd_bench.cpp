// `kvbench bench`: throughput and refresh-latency benchmarks (figures for issue notes, not tests).
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <tuple>

#include "cache/resampled_cache.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/error.h"
#include "model/cpu_threads.h"
#include "engine/machine_rates.h"
#include "model/linear.h"
#include "model/weights.h"

namespace kvbench::cli {

namespace {

std::vector<int64_t> random_ids(int64_t count, int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> token(3, vocab - 1);
  std::vector<int64_t> ids(count);
  for (auto& id : ids) id = token(rng);
  return ids;
}

std::string describe(const ModelOptions& m, const Model& model) {
  const auto& c = model.config();
  return fmt::format("model {} ({} layers, hidden {}, {} heads / {} KV), device {}, dtype {}, {} threads", m.model,
                     c.num_layers, c.hidden_size, c.num_heads, c.num_kv_heads, m.device,
                     dtype_name(m.parsed_dtype()), at::get_num_threads());
}

// A memory figure of this process (kB) from /proc/self/status: "VmRSS:" resident now, "VmHWM:" its peak.
int64_t status_kb(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(field, 0) == 0) return std::stoll(line.substr(field.size()));
  return -1;
}

struct DecodeBenchOptions {
  ModelOptions model;
  int64_t prompt_len = 512, new_tokens = 128, repeats = 3;
};

// What one token costs: bytes a decode step reads and FLOPs a prefill token computes.
struct TokenCosts {
  double weight_bytes = 0;  // every layer's projections and norms, the final norm and the LM head (one
                            // embedding row, a few kB, is left out)
  double kv_bytes_per_entry = 0;  // K and V of one cache entry, all layers
  double layer_params = 0, head_params = 0;
};

TokenCosts token_costs(const Model& model) {
  const ModelWeights& w = model.weights();
  TokenCosts costs;
  for (const auto& [name, tensor] : named_weights(model.config(), w))
    if (name.rfind("model.layers.", 0) == 0) {
      costs.layer_params += static_cast<double>(tensor.numel());
      costs.weight_bytes += static_cast<double>(tensor.nbytes());
    }
  costs.head_params = static_cast<double>(w.lm_head.numel() + w.final_norm.numel());
  costs.weight_bytes += static_cast<double>(w.lm_head.nbytes() + w.final_norm.nbytes());
  const auto& c = model.config();
  costs.kv_bytes_per_entry = 2.0 * c.num_layers * c.num_kv_heads * c.head_dim * w.lm_head.element_size();
  return costs;
}

// Prefill FLOPs of a T-token prompt: 2 per multiply-add of every layer's projections for each token, the
// LM head for the last token only, and attention's two products per head over the keys each row sees,
// T(T + 1)/2 of them. On the CPU (model/block_attention.h) a block of rows also multiplies the keys its
// earlier rows do not see, up to its last row's; that work is left out, so the rate is what the causal
// attention needs, not what the blocks computed.
double prefill_flops(const Model& model, const TokenCosts& costs, int64_t T) {
  const auto& c = model.config();
  const double t = static_cast<double>(T), seen = t * (t + 1) / 2;
  return 2.0 * costs.layer_params * t + 2.0 * costs.head_params + 4.0 * c.num_layers * c.num_heads * c.head_dim * seen;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// bench decode's --dtype may list several dtypes: one model each (the same weights), timed in turns.
std::vector<ModelOptions> dtype_variants(const ModelOptions& m) {
  std::vector<ModelOptions> variants;
  std::istringstream list(m.dtype);
  for (std::string dtype; std::getline(list, dtype, ',');) {
    ModelOptions variant = m;
    variant.dtype = dtype;
    const at::ScalarType parsed = parse_dtype(dtype);  // a bad or empty name fails here, before any model loads
    for (const ModelOptions& listed : variants)
      if (listed.parsed_dtype() == parsed) fail("--dtype lists {} twice (each one loads a model)", dtype_name(parsed));
    variants.push_back(variant);
  }
  if (variants.empty()) variants.push_back(m);
  return variants;
}

// One dtype's timed generations.
struct DecodeRuns {
  std::vector<double> prefill, decode, cache_size;  // tokens/s, tokens/s, mean cached entries
};

// GB/s of read bandwidth per repeat: the higher of the probes just before and just after it.
std::vector<double> bandwidth_beside(const std::vector<double>& probes) {
  std::vector<double> beside;
  for (size_t r = 0; r + 1 < probes.size(); ++r) beside.push_back(std::max(probes[r], probes[r + 1]));
  return beside;
}

void print_decode_runs(const Model& model, const DecodeBenchOptions& o, const DecodeRuns& runs, const MachineRates& rates,
                       const std::vector<double>& beside) {
  const TokenCosts costs = token_costs(model);
  const auto bytes_per_token = [&](double cache_size) { return costs.weight_bytes + costs.kv_bytes_per_entry * cache_size; };
  const double decode_tps = median(runs.decode), prefill_tps = median(runs.prefill), cache = median(runs.cache_size);
  const double kv_bytes = costs.kv_bytes_per_entry * cache, token_bytes = bytes_per_token(cache);
  const double decode_gbps = token_bytes * decode_tps / 1e9;
  const double prefill_gflops = prefill_flops(model, costs, o.prompt_len) * prefill_tps / o.prompt_len / 1e9;
  std::vector<double> shares;  // each repeat's GB/s against the bandwidth beside it
  for (size_t r = 0; r < runs.decode.size(); ++r)
    shares.push_back(100.0 * bytes_per_token(runs.cache_size[r]) * runs.decode[r] / 1e9 / beside[r]);
  std::cout << fmt::format("prefill {:.1f} tokens/s, {:.1f} GFLOP/s = {:.0f}% of the GEMM rate\n", prefill_tps,
                           prefill_gflops, 100.0 * prefill_gflops / rates.gemm_gflops)
            << fmt::format("decode  {:.1f} tokens/s, {:.1f} MB read per token ({:.1f} MB weights: projections, norms, "
                           "LM head; {:.1f} MB KV cache at the mean {:.0f} entries) = {:.1f} GB/s, {:.0f}% of the read "
                           "bandwidth, {:.0f}% of the GEMV rate\n",
                           decode_tps, token_bytes / 1e6, costs.weight_bytes / 1e6, kv_bytes / 1e6, cache,
                           decode_gbps, 100.0 * decode_gbps / rates.read_gbps, 100.0 * decode_gbps / rates.gemv_gbps)
            << fmt::format("decode against the read bandwidth beside each repeat (the higher of just before and just "
                           "after it), median of {}: {:.0f}% (range {:.0f}-{:.0f}%)\n",
                           shares.size(), median(shares), *std::min_element(shares.begin(), shares.end()),
                           *std::max_element(shares.begin(), shares.end()));
}

// Each repeat runs every dtype once, in turn, so their speeds meet the same machine: on a shared VM the
// read bandwidth drifts by tens of percent within minutes, and separate runs could not settle a ratio.
void run_decode_bench(const DecodeBenchOptions& o) {
  const std::vector<ModelOptions> variants = dtype_variants(o.model);
  std::vector<Model> models;
  for (const ModelOptions& variant : variants) models.push_back(variant.load());
  auto policy = make_policy("full");
  GenerationSettings settings;
  settings.budget.h = o.prompt_len;  // one prefill pass
  settings.max_new_tokens = o.new_tokens;
  const auto prompt = random_ids(o.prompt_len, models.front().config().vocab_size, 0);
  for (size_t i = 0; i < models.size(); ++i) std::cout << describe(variants[i], models[i]) << "\n";
  const MachineRates before = measure_machine_rates(o.model.parsed_device());
  for (const Model& model : models) generate(model, *policy, prompt, settings);  // warm-up
  std::vector<DecodeRuns> runs(models.size());
  std::vector<double> probes;
  {  // the probe's 1 GiB is freed before the rates below allocate their own
    const ReadBandwidthProbe probe(o.model.parsed_device());
    probes.push_back(probe.measure(1).read_gbps);
    for (int64_t r = 0; r < o.repeats; ++r) {
      for (size_t i = 0; i < models.size(); ++i) {
        const GenerationResult result = generate(models[i], *policy, prompt, settings);
        runs[i].prefill.push_back(o.prompt_len / result.prefill_seconds);
        runs[i].decode.push_back((result.rollouts[0].generated.size() - 1) / result.decode_seconds);
        runs[i].cache_size.push_back(result.mean_cache_size);
      }
      probes.push_back(probe.measure(1).read_gbps);
    }
  }
  const std::vector<double> beside = bandwidth_beside(probes);
  const MachineRates rates = best_of(before, measure_machine_rates(o.model.parsed_device()));
  std::cout << fmt::format("machine: GEMM {:.1f} GFLOP/s; read bandwidth {:.1f} GB/s (best of at::mv, sum, kvbench::linear "
                           "over 1 GiB), by a one-row product (GEMV) {:.1f} GB/s; each the best of before and after\n",
                           rates.gemm_gflops, rates.read_gbps, rates.gemv_gbps)
            << fmt::format("prompt {} tokens, {} new tokens, median of {}\n", o.prompt_len, o.new_tokens, o.repeats);
  for (size_t i = 0; i < models.size(); ++i) {
    if (models.size() > 1) std::cout << dtype_name(variants[i].parsed_dtype()) << ":\n";
    print_decode_runs(models[i], o, runs[i], rates, beside);
  }
  for (size_t i = 1; i < models.size(); ++i)
    std::cout << fmt::format("{} against {}, in turns in this run: decode {:.2f}x, prefill {:.2f}x\n",
                             dtype_name(variants[i].parsed_dtype()), dtype_name(variants[0].parsed_dtype()),
                             median(runs[i].decode) / median(runs[0].decode),
                             median(runs[i].prefill) / median(runs[0].prefill));
}

struct LinearBenchOptions {
  std::vector<int64_t> rows = {1, 4, 16, 32, 64, 128};
  int64_t K = 896, N = 4864, repeats = 20;
  std::string dtype = "float32";
  bool cold = false;
};

// Median seconds of `work` over `repeats` runs after one warm-up.
template <typename Work>
double median_seconds(int64_t repeats, Work&& work) {
  work();
  std::vector<double> seconds;
  for (int64_t r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    work();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return median(seconds);
}

// kvbench::linear against at::linear for M rows × [N, K] weights: the evidence for kSmallRows. Cold: each
// repeat runs the product once per copy of the weight, the copies spanning ≥ 1 GiB, so every weight comes
// from memory as in a decode step (one product's warm-cache rate overstates it several times over).
void run_linear_bench(const LinearBenchOptions& o) {
  const at::ScalarType dtype = parse_dtype(o.dtype);
  const at::Tensor weight = at::randn({o.N, o.K}).to(dtype);
  const int64_t copies = o.cold ? std::max<int64_t>(1, (int64_t{1} << 30) / std::max<int64_t>(1, weight.nbytes())) : 1;
  std::vector<at::Tensor> weights{weight};
  while (static_cast<int64_t>(weights.size()) < copies) weights.push_back(weight.clone());
  const double weight_bytes = static_cast<double>(weight.nbytes());
  std::cout << fmt::format("weight [{}, {}] {}, {} threads ({} for BLAS blocks); GB/s = weight bytes / time\n", o.N,
                           o.K, o.dtype, at::get_num_threads(), compute_threads());
  if (o.cold)
    std::cout << fmt::format("cold: {} copies of the weight ({:.0f} MiB) in turn; read bandwidth {:.1f} GB/s\n", copies,
                             copies * weight_bytes / (1 << 20), measure_machine_rates(at::kCPU).read_gbps);
  std::cout << fmt::format("{:>5}  {:>22}  {:>22}\n", "rows", "kvbench::linear", "at::linear");
  for (int64_t M : o.rows) {
    const at::Tensor x = at::randn({M, o.K}).to(dtype);
    const double flops = 2.0 * M * o.N * o.K;
    const auto seconds_per_product = [&](auto&& product) {
      return median_seconds(o.repeats, [&] {
        for (const at::Tensor& w : weights) product(w);
      }) / static_cast<double>(copies);
    };
    const double ours = seconds_per_product([&](const at::Tensor& w) { kvbench::linear(x, w); });
    std::string theirs = "not implemented";
    if (aten_matmul_supported(x.options())) {
      const double seconds = seconds_per_product([&](const at::Tensor& w) { at::linear(x, w); });
      theirs = fmt::format("{:>7.1f} GB/s {:>6.1f} GFLOP/s", weight_bytes / seconds / 1e9, flops / seconds / 1e9);
    }
    std::cout << fmt::format("{:>5}  {:>7.1f} GB/s {:>6.1f} GFLOP/s  {:>22}\n", M, weight_bytes / ours / 1e9,
                             flops / ours / 1e9, theirs);
  }
}

struct ThroughputBenchOptions {
  ModelOptions model;
  PolicyCliOptions policy;
  std::vector<int64_t> batches = {1, 4, 16, 64};
  int64_t prompt_len = 128, new_tokens = 64, rounds = 2;
};

// FLOPs of one decode token: every linear layer's multiply-adds (the LM head included) and attention's two
// products (scores and weighted values) over `cache` entries per head.
double decode_flops(const Model& model, double cache) {
  const auto& c = model.config();
  double weights = static_cast<double>(model.weights().lm_head.numel());
  for (const LayerWeights& w : model.weights().layers)
    for (const at::Tensor* t : {&w.q_proj, &w.k_proj, &w.v_proj, &w.o_proj, &w.gate_proj, &w.up_proj, &w.down_proj})
      weights += static_cast<double>(t->numel());
  return 2.0 * weights + 4.0 * static_cast<double>(c.num_layers * c.num_heads * c.head_dim) * cache;
}

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

  RandomSamples(const Model& model, const PolicyCliOptions& policy, int64_t count, int64_t prompt_len,
                int64_t new_tokens, uint64_t seed) {
    for (int64_t b = 0; b < count; ++b) {
      JobConfig job = policy.job();
      job.max_new = new_tokens;
      policies.push_back(make_policy(job.policy, policy_options(job)));
      GenerationSettings settings = generation_settings(job, *policies.back(), 0, nullptr);
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
BatchTiming time_batch(const Model& model, const ThroughputBenchOptions& o, int64_t B, uint64_t seed) {
  RandomSamples samples(model, o.policy, B, o.prompt_len, o.new_tokens, seed);
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

void run_throughput_bench(const ThroughputBenchOptions& o) {
  const Model model = o.model.load();
  std::cout << describe(o.model, model) << "\n";
  const MachineRates rates = measure_machine_rates(o.model.parsed_device());
  std::cout << fmt::format("machine: GEMM {:.1f} GFLOP/s; policy {}, J {}, prompt {}, {} new tokens per sample\n",
                           rates.gemm_gflops, o.policy.policy, o.policy.J, o.prompt_len, o.new_tokens);
  time_batch(model, o, 1, 999);  // warm-up
  for (int64_t round = 1; round <= o.rounds; ++round) {
    std::cout << fmt::format("round {}\n{:>6} {:>14} {:>9} {:>10} {:>8} {:>9}\n", round, "batch", "decode tok/s",
                             "speed-up", "GFLOP/s", "% GEMM", "refresh");
    double single = 0.0;
    for (int64_t B : o.batches) {
      const BatchTiming t = time_batch(model, o, B, 1000 * round);
      if (single == 0.0) single = t.decode_tokens_per_second / static_cast<double>(B);
      const double refresh_gflops = t.refresh_flops_per_second / 1e9;
      const double gflops = t.decode_tokens_per_second * decode_flops(model, t.mean_cache) / 1e9 + refresh_gflops;
      std::cout << fmt::format("{:>6} {:>14.1f} {:>8.2f}x {:>10.1f} {:>7.1f}% {:>8.1f}%", B, t.decode_tokens_per_second,
                               t.decode_tokens_per_second / single, gflops, 100.0 * gflops / rates.gemm_gflops,
                               100.0 * refresh_gflops / gflops)
                << std::endl;
    }
  }
}

struct SweepBenchOptions {
  ModelOptions model;
  PolicyCliOptions policy;
  int64_t samples = 16, batch = 0, rounds = 2;  // batch 0: default_batch
  int64_t decode_prompt = 64, decode_new = 128, prefill_prompt = 1024, prefill_new = 16;
};

// One fixed job of `samples` random samples through generate_continuously with `batch` slots: wall seconds.
double time_job(const Model& model, const SweepBenchOptions& o, int64_t batch, int64_t prompt_len, int64_t new_tokens) {
  RandomSamples samples(model, o.policy, o.samples, prompt_len, new_tokens, 0);
  const auto start = std::chrono::steady_clock::now();
  generate_continuously(model, batch, samples.list);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Wall time of the same job at --batch 1 and at the batch a sweep runs by default, on a decode-heavy and a
// prefill-heavy shape: what batching saves a sweep. Prompts are cut to fit the model's positions.
void run_sweep_bench(const SweepBenchOptions& o) {
  const Model model = o.model.load();
  const int64_t batch = o.batch > 0 ? o.batch : default_batch(model);
  std::cout << describe(o.model, model) << "\n"
            << fmt::format("policy {}, J {}, h {}; {} samples a job, batch 1 vs {}\n", o.policy.policy, o.policy.J,
                           o.policy.h > 0 ? std::to_string(o.policy.h) : "J/4", o.samples, batch);
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
    std::cout << fmt::format("round {}\n{:<14} {:>7} {:>5} {:>12} {:>12} {:>13} {:>9}\n", round, "shape", "prompt",
                             "new", "batch 1 s", fmt::format("batch {} s", batch), "samples/s", "speed-up");
    for (const Shape& shape : shapes) {
      const double alone = time_job(model, o, 1, shape.prompt, shape.new_tokens);
      const double together = time_job(model, o, batch, shape.prompt, shape.new_tokens);
      std::cout << fmt::format("{:<14} {:>7} {:>5} {:>12.3f} {:>12.3f} {:>6.2f} → {:<6.2f} {:>8.2f}x", shape.name,
                               shape.prompt, shape.new_tokens, alone, together, o.samples / alone,
                               o.samples / together, alone / together)
                << std::endl;
    }
  }
}

struct RefreshBenchOptions {
  ModelOptions model;
  std::vector<int64_t> sizes = {512, 1024, 2048, 4096};
  std::vector<std::string> policies = {"counter-causal", "counter-causal-fast"};
  int64_t repeats = 5, rounds = 1, min_gap = 0, warmups = 1;
};

// Restarts the peak-RSS count (VmHWM) so the next reading is the peak of what follows; false where the
// kernel refuses, and the reading is then the process's peak so far.
bool reset_peak_rss() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  return static_cast<bool>(clear_refs << "5" << std::flush);
}

// Median wall time (ms) of one refresh's scoring over `cache`, after `warmups` untimed runs.
double median_scoring_ms(const Model& model, Policy& policy, const KvCache& cache, const RefreshBenchOptions& o) {
  CacheBudget budget;
  budget.J = cache.size() / 2;
  budget.min_gap = o.min_gap;
  std::vector<double> ms;
  for (int64_t r = 0; r < o.warmups + o.repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    policy.score({model, cache, budget}).cpu();  // the copy waits for the device
    const double elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (r >= o.warmups) ms.push_back(elapsed);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// The exponent a of y ≈ c·x^a: least-squares slope of log y on log x over the points with y > 0 (NaN
// with fewer than two distinct x).
double loglog_exponent(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<std::pair<double, double>> points;
  for (size_t i = 0; i < x.size(); ++i)
    if (y[i] > 0) points.emplace_back(std::log(x[i]), std::log(y[i]));
  double mx = 0, my = 0;
  for (const auto& [lx, ly] : points) mx += lx, my += ly;
  mx /= points.size(), my /= points.size();
  double sxy = 0, sxx = 0;
  for (const auto& [lx, ly] : points) sxy += (lx - mx) * (ly - my), sxx += (lx - mx) * (lx - mx);
  return points.size() >= 2 && sxx > 0 ? sxy / sxx : NAN;
}

// A cache of n entries whose scoring takes as long as on n real tokens, built in O(n) (cache/resampled_cache.h):
// a prefill of min(n, 512) random tokens, as it is for n ≤ 512, resampled to n entries above.
KvCache filled_cache(const Model& model, int64_t n) {
  constexpr int64_t kPrefillTokens = 512;
  const int64_t count = std::min(n, kPrefillTokens);
  KvCache prefilled(model.config(), 1, model.options(), true);
  const auto device = model.options().device();
  model.forward(at::tensor(random_ids(count, model.config().vocab_size, n)).unsqueeze(0).to(device),
                at::arange(count, at::kLong).unsqueeze(0).to(device), prefilled);
  return n == count ? std::move(prefilled) : resampled_cache(model, prefilled, n, n);
}

// One round: the machine's GEMM rate, then for each n its cache, filled just before its policies are
// measured and dropped after (so the largest n never shares memory with the others), then the fitted exponents.
void refresh_bench_round(const RefreshBenchOptions& o, const Model& model, std::vector<std::unique_ptr<Policy>>& policies) {
  const MachineRates rates = measure_machine_rates(o.model.parsed_device(), o.model.parsed_dtype());
  std::cout << fmt::format("machine: GEMM {:.1f} GFLOP/s, read bandwidth {:.1f} GB/s\n", rates.gemm_gflops,
                           rates.read_gbps)
            << fmt::format("{:>7}  {:<22} {:>10} {:>9} {:>9} {:>7} {:>9} {:>9}\n", "n", "policy", "median ms", "GFLOP",
                           "GFLOP/s", "% GEMM", "peak MiB", "pass MiB");
  const std::vector<double> sizes(o.sizes.begin(), o.sizes.end());
  // [policy][n]
  std::vector<std::vector<double>> ms(policies.size()), peak_mib(policies.size()), pass_mib(policies.size());
  CacheBudget budget;  // what scoring_flops reads of it: min_gap
  budget.min_gap = o.min_gap;
  for (size_t s = 0; s < o.sizes.size(); ++s) {
    const KvCache cache = filled_cache(model, o.sizes[s]);
    for (size_t p = 0; p < policies.size(); ++p) {
      ::malloc_trim(0);  // freed heap goes back first, so the pass's own memory shows as growth above `resident`
      const int64_t resident_kb = status_kb("VmRSS:");
      reset_peak_rss();
      ms[p].push_back(median_scoring_ms(model, *policies[p], cache, o));
      const int64_t peak_kb = status_kb("VmHWM:");
      peak_mib[p].push_back(peak_kb / 1024.0);
      pass_mib[p].push_back((peak_kb - resident_kb) / 1024.0);
      const auto flops = policies[p]->scoring_flops(model.config(), o.sizes[s], budget);
      const double gflops = flops ? *flops / 1e9 : NAN, rate = gflops / (ms[p].back() / 1e3);
      std::cout << fmt::format("{:>7}  {:<22} {:>10.1f} {:>9.1f} {:>9.1f} {:>6.1f}% {:>9.0f} {:>9.1f}\n", o.sizes[s],
                               o.policies[p], ms[p].back(), gflops, rate, 100 * rate / rates.gemm_gflops,
                               peak_mib[p].back(), pass_mib[p].back());
    }
    if (ms.size() == 2)
      std::cout << fmt::format("{:>7}  time ratio {} / {}: {:.2f}x\n", "", o.policies[0], o.policies[1],
                               ms[0].back() / ms[1].back());
    std::cout << std::flush;
  }
  const auto exponent = [&](const std::vector<double>& y) {
    const double a = loglog_exponent(sizes, y);
    return std::isnan(a) ? std::string("– (under two n with a value > 0)") : fmt::format("{:.2f}", a);
  };
  for (size_t p = 0; p < policies.size(); ++p)
    std::cout << fmt::format("fit over n = {}: {} latency ∝ n^{}, peak RSS ∝ n^{}, pass memory ∝ n^{}\n",
                             fmt::join(o.sizes, ","), o.policies[p], exponent(ms[p]), exponent(peak_mib[p]),
                             exponent(pass_mib[p]));
}

void run_refresh_bench(const RefreshBenchOptions& o) {
  const Model model = o.model.load();
  std::cout << describe(o.model, model) << "\n";
  std::vector<std::unique_ptr<Policy>> policies;
  for (const auto& name : o.policies) policies.push_back(make_policy(name));
  if (!reset_peak_rss()) std::cout << "(peak RSS cannot be reset here: each figure is the process's peak so far)\n";
  for (int64_t round = 1; round <= o.rounds; ++round) {
    std::cout << fmt::format("round {} of {}, median of {} timed scorings after {} warm-up(s)\n", round, o.rounds,
                             o.repeats, o.warmups);
    refresh_bench_round(o, model, policies);
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  CLI::App* bench =
      app.add_subcommand("bench", "Benchmarks: decode speed, batched throughput, sweep speed-up, linear kernels, refresh latency");
  bench->require_subcommand(1);

  auto decode = std::make_shared<DecodeBenchOptions>();
  CLI::App* d = bench->add_subcommand("decode", "Prefill and decode tokens/s (full cache, greedy, random prompt): prefill against the "
                                                      "GEMM rate, decode against the read bandwidth, both measured in the same run (the "
                                                      "bandwidth also beside each repeat)");
  decode->model.add_to(d);
  d->get_option("--dtype")->description(
      "Weights/activations: float32, bfloat16, float16, or several comma-separated (e.g. float32,bfloat16): one\n"
      "model each, timed in turns within each repeat, and each speed against the first's (default: float32 on\n"
      "CPU, bfloat16 on CUDA; softmax and scores are float32 regardless)");
  d->add_option("--prompt-len", decode->prompt_len, "Prompt tokens")->capture_default_str()->check(CLI::PositiveNumber);
  d->add_option("--new", decode->new_tokens, "New tokens")->capture_default_str()->check(CLI::PositiveNumber);
  d->add_option("--repeats", decode->repeats, "Timed repeats (median reported)")->capture_default_str()->check(CLI::PositiveNumber);
  d->callback([decode] { run_decode_bench(*decode); });

  auto throughput = std::make_shared<ThroughputBenchOptions>();
  CLI::App* t = bench->add_subcommand(
      "throughput",
      "Aggregate decode tokens/s of B samples decoded together (refreshes included), the speed-up over the first\n"
      "batch size, and the achieved GFLOP/s against the GEMM rate measured in the same run: per token 2 × linear\n"
      "weights + 4 × layers × heads × head_dim × cache, plus the decode refreshes' scoring work as each policy\n"
      "reports it (as bench refresh counts it), whose share is the refresh column (a policy whose scoring is a\n"
      "few products over the cached keys reports none: 0%)");
  throughput->model.add_to(t);
  throughput->policy.add_to(t);
  t->add_option("--batch", throughput->batches, "Batch sizes, comma-separated")->delimiter(',')->capture_default_str()
      ->check(CLI::PositiveNumber);
  t->add_option("--prompt-len", throughput->prompt_len, "Prompt tokens per sample")->capture_default_str()
      ->check(CLI::PositiveNumber);
  t->add_option("--new", throughput->new_tokens, "New tokens per sample")->capture_default_str()->check(CLI::PositiveNumber);
  t->add_option("--rounds", throughput->rounds, "Rounds (each prints its own table)")->capture_default_str()
      ->check(CLI::PositiveNumber);
  t->callback([throughput] { run_throughput_bench(*throughput); });

  auto sweep = std::make_shared<SweepBenchOptions>();
  CLI::App* w = bench->add_subcommand(
      "sweep",
      "Wall time of one fixed job (--samples random prompts, each generating exactly --*-new tokens) at batch 1\n"
      "and at the batch a run or sweep takes by default, on a decode-heavy and a prefill-heavy shape: the\n"
      "speed-up batching gives, and samples/s at each. Prefill chunks and refreshes of the samples in flight\n"
      "share passes, as decode steps do. Prompts are cut to the model's positions.\n"
      "Example: kvbench --threads 1 bench sweep --model models/kvbench-demo --policy counter-causal --J 64");
  sweep->model.add_to(w);
  sweep->policy.add_to(w);
  w->add_option("--samples", sweep->samples, "Samples a job")->capture_default_str()->check(CLI::PositiveNumber);
  w->add_option("--batch", sweep->batch, "Batch to compare with 1 (default: a run's default batch)")
      ->check(CLI::PositiveNumber);
  w->add_option("--decode-prompt", sweep->decode_prompt, "Decode-heavy shape: prompt tokens")->capture_default_str()
      ->check(CLI::PositiveNumber);
  w->add_option("--decode-new", sweep->decode_new, "Decode-heavy shape: new tokens")->capture_default_str()
      ->check(CLI::PositiveNumber);
  w->add_option("--prefill-prompt", sweep->prefill_prompt, "Prefill-heavy shape: prompt tokens")->capture_default_str()
      ->check(CLI::PositiveNumber);
  w->add_option("--prefill-new", sweep->prefill_new, "Prefill-heavy shape: new tokens")->capture_default_str()
      ->check(CLI::PositiveNumber);
  w->add_option("--rounds", sweep->rounds, "Rounds (each prints its own table)")->capture_default_str()
      ->check(CLI::PositiveNumber);
  w->callback([sweep] { run_sweep_bench(*sweep); });

  auto lin = std::make_shared<LinearBenchOptions>();
  CLI::App* l = bench->add_subcommand("linear", "kvbench::linear vs at::linear: GB/s and GFLOP/s per row count");
  l->add_option("--rows", lin->rows, "Row counts M, comma-separated")->delimiter(',')->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  l->add_option("--k", lin->K, "Input features K")->capture_default_str()->check(CLI::PositiveNumber);
  l->add_option("--n", lin->N, "Output features N")->capture_default_str()->check(CLI::PositiveNumber);
  l->add_option("--dtype", lin->dtype, "float32, bfloat16 or float16 (x and weight)")->capture_default_str();
  l->add_option("--repeats", lin->repeats, "Timed repeats (median reported)")->capture_default_str()->check(CLI::PositiveNumber);
  l->add_flag("--cold", lin->cold,
              "Weights from memory, as in decode: each repeat runs the product over copies of the weight spanning\n"
              "1 GiB, and the read bandwidth measured in the same run is printed beside");
  l->callback([lin] { run_linear_bench(*lin); });

  auto refresh = std::make_shared<RefreshBenchOptions>();
  CLI::App* r = bench->add_subcommand(
      "refresh",
      "Refresh scoring latency vs cache size n, per policy: median ms, the pass's work in GFLOP and the rate\n"
      "achieved, as a share of the GEMM rate measured in the same run, the peak RSS while scoring and the part\n"
      "of it the pass added (pass MiB = peak − resident before), then per policy the exponents of latency, peak\n"
      "RSS and pass memory fitted by least squares on log–log over the n measured (blocked passes: memory ≈ n^1).\n"
      "Each n's cache is a prefill of n random tokens up to n = 512; above, not an O(n^2) prefill but O(n)\n"
      "copies: entries of a 512-token prefill drawn with replacement into positions 0..n-1, keys re-rotated to\n"
      "their new positions (real activations: plain random values time the full pass 20-25% fast). It is built\n"
      "just before its policies are measured and freed after, so peak RSS holds one cache at a time and large n\n"
      "(65536) fit in memory.\n"
      "Work (counter-causal over all L layers with MLP, counter-causal-fast over the last without), a\n"
      "multiply-add = 2 FLOP: per layer 2·n·hidden·(2·H·D [q, o] + 3·intermediate [MLP]) + 4·H·D·P, with\n"
      "P = m(m+1)/2 allowed (query, key) pairs, m = n − min_gap − 1; plus 2·n·hidden for the own-token logits.");
  refresh->model.add_to(r);
  r->add_option("--n", refresh->sizes, "Cache sizes, comma-separated")->delimiter(',')->capture_default_str()
      ->check(CLI::PositiveNumber);
  r->add_option("--policy", refresh->policies, "Policies, comma-separated (two: their ratio is printed)")
      ->delimiter(',')
      ->capture_default_str();
  r->add_option("--repeats", refresh->repeats, "Timed repeats (median reported)")->capture_default_str()
      ->check(CLI::PositiveNumber);
  r->add_option("--warmups", refresh->warmups, "Untimed scorings before the timed ones (0 for minutes-long passes)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  r->add_option("--rounds", refresh->rounds, "Rounds, each measuring the GEMM rate again and then every n and policy")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  r->add_option("--min-gap", refresh->min_gap, "Counter-causal min_gap")->capture_default_str();
  r->callback([refresh] { run_refresh_bench(*refresh); });
}

}  // namespace kvbench::cli
