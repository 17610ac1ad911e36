// bench decode: prefill and decode tokens/s of a full-cache generation, against the machine's rates.
#include <algorithm>

#include "common/error.h"
#include "engine/machine_rates.h"
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/bench.h"
#include "bench/measure.h"

namespace kvbench::bench {

namespace {

// bench decode's --dtype may list several dtypes: one model each (the same weights), timed in turns.
std::vector<api::ModelSource> dtype_variants(const api::ModelSource& m) {
  std::vector<api::ModelSource> variants;
  std::istringstream list(m.dtype);
  for (std::string dtype; std::getline(list, dtype, ',');) {
    api::ModelSource variant = m;
    variant.dtype = dtype;
    const at::ScalarType parsed = parse_dtype(dtype);  // a bad or empty name fails here, before any model loads
    for (const api::ModelSource& listed : variants)
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

// `rates`: the machine's, the GEMM rate in the model's dtype `dtype`.
void print_decode_runs(std::ostream& out, const Model& model, at::ScalarType dtype, const DecodeBench& o,
                       const DecodeRuns& runs, const MachineRates& rates, const std::vector<double>& beside) {
  const TokenCosts costs = token_costs(model);
  const auto bytes_per_token = [&](double cache_size) { return costs.weight_bytes + costs.kv_bytes_per_entry * cache_size; };
  const double decode_tps = median(runs.decode), prefill_tps = median(runs.prefill), cache = median(runs.cache_size);
  const double kv_bytes = costs.kv_bytes_per_entry * cache, token_bytes = bytes_per_token(cache);
  const double decode_gbps = token_bytes * decode_tps / 1e9;
  const double prefill_gflops = prefill_flops(model, costs, o.prompt_len) * prefill_tps / o.prompt_len / 1e9;
  std::vector<double> shares;  // each repeat's GB/s against the bandwidth beside it
  for (size_t r = 0; r < runs.decode.size(); ++r)
    shares.push_back(100.0 * bytes_per_token(runs.cache_size[r]) * runs.decode[r] / 1e9 / beside[r]);
  out << fmt::format("prefill {:.1f} tokens/s, {:.1f} GFLOP/s = {:.0f}% of the {} GEMM rate\n", prefill_tps,
                     prefill_gflops, 100.0 * prefill_gflops / rates.gemm_gflops, dtype_name(dtype))
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
}  // namespace

void run_decode(const DecodeBench& o, std::ostream& out) {
  const std::vector<api::ModelSource> variants = dtype_variants(o.model);
  std::vector<Model> models;
  for (const api::ModelSource& variant : variants) models.push_back(api::load_model(variant).model);
  auto policy = make_policy("full");
  GenerationSettings settings;
  settings.budget.h = o.prompt_len;  // one prefill pass
  settings.max_new_tokens = o.new_tokens;
  const auto prompt = random_ids(o.prompt_len, models.front().config().vocab_size, 0);
  for (size_t i = 0; i < models.size(); ++i) out << describe(variants[i], models[i]) << "\n";
  // The GEMM rate of each dtype run (16-bit products have rates of their own), read bandwidth alike.
  std::vector<MachineRates> before;
  for (const api::ModelSource& variant : variants)
    before.push_back(measure_machine_rates(variant.parsed_device(), variant.parsed_dtype()));
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
  std::vector<MachineRates> rates;
  for (size_t i = 0; i < variants.size(); ++i)
    rates.push_back(best_of(before[i], measure_machine_rates(variants[i].parsed_device(), variants[i].parsed_dtype())));
  for (size_t i = 0; i < variants.size(); ++i)
    out << fmt::format("machine: {} GEMM {:.1f} GFLOP/s; read bandwidth {:.1f} GB/s (best of at::mv, sum, "
                       "kvbench::linear over 1 GiB), by a one-row product (GEMV) {:.1f} GB/s; each the best of before "
                       "and after\n",
                       dtype_name(variants[i].parsed_dtype()), rates[i].gemm_gflops, rates[i].read_gbps,
                       rates[i].gemv_gbps);
  out << fmt::format("prompt {} tokens, {} new tokens, median of {}\n", o.prompt_len, o.new_tokens, o.repeats);
  for (size_t i = 0; i < models.size(); ++i) {
    if (models.size() > 1) out << dtype_name(variants[i].parsed_dtype()) << ":\n";
    print_decode_runs(out, models[i], variants[i].parsed_dtype(), o, runs[i], rates[i], beside);
  }
  for (size_t i = 1; i < models.size(); ++i)
    out << fmt::format("{} against {}, in turns in this run: decode {:.2f}x, prefill {:.2f}x\n",
                             dtype_name(variants[i].parsed_dtype()), dtype_name(variants[0].parsed_dtype()),
                             median(runs[i].decode) / median(runs[0].decode),
                             median(runs[i].prefill) / median(runs[0].prefill));
}


}  // namespace kvbench::bench
