// `kvbench bench`: throughput and refresh-latency benchmarks (figures for issue notes, not tests).
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/error.h"
#include "engine/machine_rates.h"
#include "policies/anticausal.h"

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

// Peak resident memory of this process (kB), from /proc.
int64_t peak_rss_kb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  return -1;
}

struct DecodeBenchOptions {
  ModelOptions model;
  int64_t prompt_len = 512, new_tokens = 128, repeats = 3;
};

void run_decode_bench(const DecodeBenchOptions& o) {
  const Model model = o.model.load();
  auto policy = make_policy("full");
  GenerationSettings settings;
  settings.budget.h = o.prompt_len;  // one prefill pass
  settings.max_new_tokens = o.new_tokens;
  const auto prompt = random_ids(o.prompt_len, model.config().vocab_size, 0);
  std::cout << describe(o.model, model) << "\n";
  const MachineRates rates = measure_machine_rates(o.model.parsed_device());
  std::cout << fmt::format("machine: GEMM {:.1f} GFLOP/s, read bandwidth {:.1f} GB/s\n", rates.gemm_gflops,
                           rates.read_gbps);
  generate(model, *policy, prompt, settings);  // warm-up
  std::vector<double> prefill, decode;
  for (int64_t r = 0; r < o.repeats; ++r) {
    const GenerationResult result = generate(model, *policy, prompt, settings);
    prefill.push_back(o.prompt_len / result.prefill_seconds);
    decode.push_back((result.rollouts[0].generated.size() - 1) / result.decode_seconds);
  }
  std::sort(prefill.begin(), prefill.end());
  std::sort(decode.begin(), decode.end());
  std::cout << fmt::format("prompt {} tokens, {} new tokens, median of {}\n", o.prompt_len, o.new_tokens, o.repeats)
            << fmt::format("prefill {:.1f} tokens/s\ndecode  {:.1f} tokens/s\n", prefill[prefill.size() / 2],
                           decode[decode.size() / 2]);
}

struct RefreshBenchOptions {
  ModelOptions model;
  std::vector<int64_t> sizes = {512, 1024, 2048, 4096};
  std::vector<std::string> policies = {"counter-causal", "counter-causal-fast"};
  int64_t repeats = 5, rounds = 1, min_gap = 0;
};

// Restarts the peak-RSS count (VmHWM) so the next reading is the peak of what follows; false where the
// kernel refuses, and the reading is then the process's peak so far.
bool reset_peak_rss() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  return static_cast<bool>(clear_refs << "5" << std::flush);
}

// The work of one scoring pass (FLOP), for the policies whose pass is counted (policies/anticausal.h).
std::optional<double> scoring_flops(const std::string& policy, const ModelConfig& c, int64_t n, int64_t min_gap) {
  if (policy == "counter-causal") return anticausal_pass_flops(c, n, min_gap, c.num_layers, /*with_mlp=*/true);
  if (policy == "counter-causal-fast") return anticausal_pass_flops(c, n, min_gap, 1, /*with_mlp=*/false);
  return std::nullopt;
}

// Median wall time (ms) of one refresh's scoring over `cache`.
double median_scoring_ms(const Model& model, Policy& policy, const KvCache& cache, int64_t min_gap, int64_t repeats) {
  CacheBudget budget;
  budget.J = cache.size() / 2;
  budget.min_gap = min_gap;
  std::vector<double> ms;
  for (int64_t r = 0; r <= repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    policy.score({model, cache, budget}).cpu();  // the copy waits for the device
    const double elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (r > 0) ms.push_back(elapsed);  // the first run is a warm-up
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// A cache of n random tokens, filled by the causal forward in chunks of 512.
KvCache filled_cache(const Model& model, int64_t n) {
  KvCache cache(model.config(), 1, model.options(), true);
  const auto ids = random_ids(n, model.config().vocab_size, n);
  const auto device = model.options().device();
  for (int64_t begin = 0; begin < n; begin += 512) {
    const int64_t len = std::min<int64_t>(512, n - begin);
    model.forward(at::tensor(std::vector<int64_t>(ids.begin() + begin, ids.begin() + begin + len)).unsqueeze(0).to(device),
                  at::arange(begin, begin + len, at::kLong).unsqueeze(0).to(device), cache);
  }
  return cache;
}

// One round: the machine's GEMM rate, then every (n, policy) against it.
void refresh_bench_round(const RefreshBenchOptions& o, const Model& model, std::vector<std::unique_ptr<Policy>>& policies,
                         const std::vector<KvCache>& caches) {
  const MachineRates rates = measure_machine_rates(o.model.parsed_device(), o.model.parsed_dtype());
  std::cout << fmt::format("machine: GEMM {:.1f} GFLOP/s, read bandwidth {:.1f} GB/s\n", rates.gemm_gflops,
                           rates.read_gbps)
            << fmt::format("{:>7}  {:<22} {:>10} {:>9} {:>9} {:>7} {:>9}\n", "n", "policy", "median ms", "GFLOP",
                           "GFLOP/s", "% GEMM", "peak MiB");
  for (size_t s = 0; s < o.sizes.size(); ++s) {
    std::vector<double> ms;
    for (size_t p = 0; p < policies.size(); ++p) {
      reset_peak_rss();
      ms.push_back(median_scoring_ms(model, *policies[p], caches[s], o.min_gap, o.repeats));
      const auto flops = scoring_flops(o.policies[p], model.config(), o.sizes[s], o.min_gap);
      const double gflops = flops ? *flops / 1e9 : NAN, rate = gflops / (ms.back() / 1e3);
      std::cout << fmt::format("{:>7}  {:<22} {:>10.1f} {:>9.1f} {:>9.1f} {:>6.1f}% {:>9.0f}\n", o.sizes[s],
                               o.policies[p], ms.back(), gflops, rate, 100 * rate / rates.gemm_gflops,
                               peak_rss_kb() / 1024.0);
    }
    if (ms.size() == 2) std::cout << fmt::format("{:>7}  time ratio {} / {}: {:.2f}x\n", "", o.policies[0], o.policies[1], ms[0] / ms[1]);
    std::cout << std::flush;
  }
}

void run_refresh_bench(const RefreshBenchOptions& o) {
  const Model model = o.model.load();
  std::cout << describe(o.model, model) << "\n";
  std::vector<std::unique_ptr<Policy>> policies;
  for (const auto& name : o.policies) policies.push_back(make_policy(name));
  std::vector<KvCache> caches;
  for (int64_t n : o.sizes) caches.push_back(filled_cache(model, n));
  if (!reset_peak_rss()) std::cout << "(peak RSS cannot be reset here: each figure is the process's peak so far)\n";
  for (int64_t round = 1; round <= o.rounds; ++round) {
    std::cout << fmt::format("round {} of {}, median of {} timed scorings after one warm-up\n", round, o.rounds,
                             o.repeats);
    refresh_bench_round(o, model, policies, caches);
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks: decode throughput, refresh latency");
  bench->require_subcommand(1);

  auto decode = std::make_shared<DecodeBenchOptions>();
  CLI::App* d = bench->add_subcommand("decode", "Prefill and decode tokens/s (full cache, greedy, random prompt)");
  decode->model.add_to(d);
  d->add_option("--prompt-len", decode->prompt_len, "Prompt tokens")->capture_default_str();
  d->add_option("--new", decode->new_tokens, "New tokens")->capture_default_str();
  d->add_option("--repeats", decode->repeats, "Timed repeats (median reported)")->capture_default_str();
  d->callback([decode] { run_decode_bench(*decode); });

  auto refresh = std::make_shared<RefreshBenchOptions>();
  CLI::App* r = bench->add_subcommand(
      "refresh",
      "Refresh scoring latency vs cache size n, per policy: median ms, the pass's work in GFLOP and the rate\n"
      "achieved, as a share of the GEMM rate measured in the same run, and the peak RSS while scoring.\n"
      "Work (counter-causal over all L layers with MLP, counter-causal-fast over the last without), a\n"
      "multiply-add = 2 FLOP: per layer 2·n·hidden·(2·H·D [q, o] + 3·intermediate [MLP]) + 4·H·D·P, with\n"
      "P = m(m+1)/2 allowed (query, key) pairs, m = n − min_gap − 1; plus 2·n·hidden for the own-token logits.");
  refresh->model.add_to(r);
  r->add_option("--n", refresh->sizes, "Cache sizes, comma-separated")->delimiter(',')->capture_default_str();
  r->add_option("--policy", refresh->policies, "Policies, comma-separated (two: their ratio is printed)")
      ->delimiter(',')
      ->capture_default_str();
  r->add_option("--repeats", refresh->repeats, "Timed repeats (median reported)")->capture_default_str();
  r->add_option("--rounds", refresh->rounds, "Rounds, each measuring the GEMM rate again and then every n and policy")
      ->capture_default_str();
  r->add_option("--min-gap", refresh->min_gap, "Counter-causal min_gap")->capture_default_str();
  r->callback([refresh] { run_refresh_bench(*refresh); });
}

}  // namespace kvbench::cli
