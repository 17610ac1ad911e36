#include "cli/options.h"

#include "common/error.h"
#include "model/random_model.h"

namespace kvbench::cli {

void ModelOptions::add_to(CLI::App* command) {
  command->add_option("--model", model, "HF model directory (config.json + safetensors), or random:PRESET")
      ->required();
  command->add_option("--device", device, "cpu, cuda or cuda:N")->capture_default_str();
  command->add_option("--dtype", dtype, "Weights/activations: float32, bfloat16, float16 (default: float32 on "
                                        "CPU, bfloat16 on CUDA; softmax and scores are float32 regardless)");
}

at::Device ModelOptions::parsed_device() const { return parse_device(device); }

at::ScalarType ModelOptions::parsed_dtype() const {
  if (!dtype.empty()) return parse_dtype(dtype);
  return parsed_device().is_cuda() ? at::kBFloat16 : at::kFloat;
}

Model ModelOptions::load() const {
  const std::string prefix = "random:";
  if (model.rfind(prefix, 0) == 0)
    return random_model(random_model_config(model.substr(prefix.size())), 0, parsed_device(), parsed_dtype());
  return Model::load(model, parsed_device(), parsed_dtype());
}

void PolicyCliOptions::add_to(CLI::App* command) {
  command->add_option("--policy", policy, "Eviction policy (see `kvbench generate --help` for the list)")
      ->capture_default_str();
  command->add_option("--J", J, "Cache budget J: entries kept by a refresh (besides the frozen prefix)");
  command->add_option("--h", h, "Refresh interval and prefill chunk size (default J/4)");
  command->add_option("--recent", recent, "Recent window always kept (default 0; h2o: J/2)");
  command->add_option("--frozen", frozen,
                      "Frozen prefix that never leaves: a token count, or `auto` = the system prompt's token "
                      "length, then subtracted from J")
      ->capture_default_str();
  command->add_option("--min-gap", min_gap, "Counter-causal mask: entry i attends to slots j > i + min_gap")
      ->capture_default_str();
  command->add_option("--sinks", sinks, "Attention sinks kept by streaming")->capture_default_str();
  command->add_option("--mode", mode, "chunked: refresh after every prefill chunk; prefill_end: one refresh after "
                                      "the whole prompt")
      ->check(CLI::IsMember({"chunked", "prefill_end"}))
      ->capture_default_str();
  command->add_option("--policy-seed", seed, "Seed of the random policy")->capture_default_str();
  command->add_option("--scorer", scorer, "kvpop: learned scorer from `kvbench train-scorer` (default: the "
                                          "untrained attention-mass fallback)");
}

CacheBudget PolicyCliOptions::budget(const Policy& p, int64_t auto_frozen_tokens) const {
  CacheBudget b;
  b.J = J;
  if (frozen == "auto") {
    b.frozen = auto_frozen_tokens;
    b.J -= auto_frozen_tokens;  // the reference's auto_frozen counts the system prompt against J
  } else {
    try {
      b.frozen = std::stoll(frozen);
    } catch (const std::exception&) {
      fail("--frozen must be a token count or `auto` (got \"{}\")", frozen);
    }
  }
  if (p.evicts() && J <= 0) fail("policy {} needs a cache budget: pass --J N (N > 0)", p.name());
  // Without a budget (full) nothing is refreshed, so the prompt is prefilled in one pass.
  b.h = h > 0 ? h : (J > 0 ? std::max<int64_t>(J / 4, 1) : std::numeric_limits<int32_t>::max());
  if (h < 0) fail("--h must be positive (got {})", h);
  b.recent = recent >= 0 ? recent : p.default_recent(b.J);
  b.min_gap = min_gap;
  b.sinks = sinks;
  b.mode = mode == "chunked" ? CacheBudget::Mode::Chunked : CacheBudget::Mode::PrefillEnd;
  return b;
}

}  // namespace kvbench::cli
