// `kvbench bench`: the options of the benchmarks in harness/bench (figures for issue notes, not tests).
#include <iostream>

#include "api/bench.h"
#include "cli/commands.h"
#include "cli/options.h"

namespace kvbench::cli {

namespace {

struct Decode {
  JobCliOptions options;  // the model's
  bench::DecodeBench bench;
};

struct Refresh {
  JobCliOptions options;  // the model's
  bench::RefreshBench bench;
};

// A benchmark that runs a policy with its budget: the model and policy options fill its `model` and `job`.
template <class Bench>
struct WithPolicy {
  JobCliOptions options;
  Bench bench;

  Bench filled() const {
    Bench out = bench;
    out.model = options.model_source();
    out.job = options.job;
    return out;
  }
};

}  // namespace

void add_bench_command(CLI::App& app) {
  CLI::App* bench =
      app.add_subcommand("bench", "Benchmarks: decode speed, batched throughput, sweep speed-up, linear kernels, refresh latency");
  bench->require_subcommand(1);

  auto decode = std::make_shared<Decode>();
  CLI::App* d = bench->add_subcommand("decode", "Prefill and decode tokens/s (full cache, greedy, random prompt): prefill against the "
                                                      "GEMM rate, decode against the read bandwidth, both measured in the same run (the "
                                                      "bandwidth also beside each repeat)");
  decode->options.add_model(d);
  d->get_option("--dtype")->description(
      "Weights/activations: float32, bfloat16, float16, or several comma-separated (e.g. float32,bfloat16): one\n"
      "model each, timed in turns within each repeat, and each speed against the first's (default: float32 on\n"
      "CPU, bfloat16 on CUDA; softmax and scores are float32 regardless)");
  d->add_option("--prompt-len", decode->bench.prompt_len, "Prompt tokens")->capture_default_str()->check(CLI::PositiveNumber);
  d->add_option("--new", decode->bench.new_tokens, "New tokens")->capture_default_str()->check(CLI::PositiveNumber);
  d->add_option("--repeats", decode->bench.repeats, "Timed repeats (median reported)")->capture_default_str()->check(CLI::PositiveNumber);
  d->callback([decode] {
    decode->bench.model = decode->options.model_source();
    bench::run_decode(decode->bench, std::cout);
  });

  auto throughput = std::make_shared<WithPolicy<bench::ThroughputBench>>();
  CLI::App* t = bench->add_subcommand(
      "throughput",
      "Aggregate decode tokens/s of B samples decoded together (refreshes included), the speed-up over the first\n"
      "batch size, and the achieved GFLOP/s against the GEMM rate measured in the same run: per token 2 × linear\n"
      "weights + 4 × layers × heads × head_dim × cache, plus the decode refreshes' scoring work as each policy\n"
      "reports it (as bench refresh counts it), whose share is the refresh column (a policy whose scoring is a\n"
      "few products over the cached keys reports none: 0%)");
  throughput->options.add_model(t);
  throughput->options.add_policy(t);
  t->add_option("--batch", throughput->bench.batches, "Batch sizes, comma-separated")->delimiter(',')->capture_default_str()
      ->check(CLI::PositiveNumber);
  t->add_option("--prompt-len", throughput->bench.prompt_len, "Prompt tokens per sample")->capture_default_str()
      ->check(CLI::PositiveNumber);
  t->add_option("--new", throughput->bench.new_tokens, "New tokens per sample")->capture_default_str()->check(CLI::PositiveNumber);
  t->add_option("--rounds", throughput->bench.rounds, "Rounds (each prints its own table)")->capture_default_str()
      ->check(CLI::PositiveNumber);
  t->callback([throughput] { bench::run_throughput(throughput->filled(), std::cout); });

  auto sweep = std::make_shared<WithPolicy<bench::SweepBench>>();
  CLI::App* w = bench->add_subcommand(
      "sweep",
      "Wall time of one fixed job (--samples random prompts, each generating exactly --*-new tokens) at batch 1\n"
      "and at the batch a run or sweep takes by default, on a decode-heavy and a prefill-heavy shape: the\n"
      "speed-up batching gives, and samples/s at each. Prefill chunks and refreshes of the samples in flight\n"
      "share passes, as decode steps do. Prompts are cut to the model's positions.\n"
      "Example: kvbench --threads 1 bench sweep --model models/kvbench-demo --policy counter-causal --J 64");
  sweep->options.add_model(w);
  sweep->options.add_policy(w);
  w->add_option("--samples", sweep->bench.samples, "Samples a job")->capture_default_str()->check(CLI::PositiveNumber);
  w->add_option("--batch", sweep->bench.batch, "Batch to compare with 1 (default: a run's default batch)")
      ->check(CLI::PositiveNumber);
  w->add_option("--decode-prompt", sweep->bench.decode_prompt, "Decode-heavy shape: prompt tokens")->capture_default_str()
      ->check(CLI::PositiveNumber);
  w->add_option("--decode-new", sweep->bench.decode_new, "Decode-heavy shape: new tokens")->capture_default_str()
      ->check(CLI::PositiveNumber);
  w->add_option("--prefill-prompt", sweep->bench.prefill_prompt, "Prefill-heavy shape: prompt tokens")->capture_default_str()
      ->check(CLI::PositiveNumber);
  w->add_option("--prefill-new", sweep->bench.prefill_new, "Prefill-heavy shape: new tokens")->capture_default_str()
      ->check(CLI::PositiveNumber);
  w->add_option("--rounds", sweep->bench.rounds, "Rounds (each prints its own table)")->capture_default_str()
      ->check(CLI::PositiveNumber);
  w->callback([sweep] { bench::run_sweep(sweep->filled(), std::cout); });

  auto lin = std::make_shared<bench::LinearBench>();
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
  l->callback([lin] { bench::run_linear(*lin, std::cout); });

  auto refresh = std::make_shared<Refresh>();
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
  refresh->options.add_model(r);
  r->add_option("--n", refresh->bench.sizes, "Cache sizes, comma-separated")->delimiter(',')->capture_default_str()
      ->check(CLI::PositiveNumber);
  r->add_option("--policy", refresh->bench.policies, "Policies, comma-separated (two: their ratio is printed)")
      ->delimiter(',')
      ->capture_default_str();
  r->add_option("--repeats", refresh->bench.repeats, "Timed repeats (median reported)")->capture_default_str()
      ->check(CLI::PositiveNumber);
  r->add_option("--warmups", refresh->bench.warmups, "Untimed scorings before the timed ones (0 for minutes-long passes)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  r->add_option("--rounds", refresh->bench.rounds, "Rounds, each measuring the GEMM rate again and then every n and policy")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  r->add_option("--min-gap", refresh->bench.min_gap, "Counter-causal min_gap")->capture_default_str();
  r->callback([refresh] {
    refresh->bench.model = refresh->options.model_source();
    bench::run_refresh(refresh->bench, std::cout);
  });
}

}  // namespace kvbench::cli
