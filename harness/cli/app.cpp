// The command line: the root app and its subcommands (cli/cmd_*.cpp), run by the kvbench executable and by
// the Python module's `python -m kvbench`.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "api/machine.h"
#include "cli/commands.h"
#include "common/error.h"

namespace kvbench::cli {

int main(int argc, char** argv) {
  CLI::App app{
      "kvbench — reproduce and extend KV-cache eviction experiments (counter-causal surprise, KVpop).\n"
      "Run `kvbench <command> --help` for the options of one command."};
  app.require_subcommand(1);
  bool verbose = false;
  int threads = 0;
  app.add_flag("-v,--verbose", verbose, "Debug logging");
  app.set_version_flag("--version", [] { return api::build_description(); });
  // Default (model/cpu_threads.h): one thread per logical CPU, large products on one per physical core,
  // BLAS single-threaded inside that pool; --threads N fixes the count, as bit-for-bit training and
  // processes side by side need.
  app.add_option("--threads", threads,
                 "CPU threads for libtorch and kvbench's kernels; BLAS always runs single-threaded inside them "
                 "(default: one per logical CPU, large matrix products one per physical core; 1 on a busy machine "
                 "or for processes side by side)");
  app.parse_complete_callback([&] {
    spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::info);
    api::set_threads(threads);
  });
  // Logs go to stderr: stdout carries results (graded JSONL, tables) that a log line must not corrupt.
  if (!spdlog::get("kvbench")) spdlog::set_default_logger(spdlog::stderr_color_mt("kvbench"));
  spdlog::set_pattern("[%H:%M:%S %^%l%$] %v");

  kvbench::cli::add_generate_command(app);
  kvbench::cli::add_tokenize_command(app);
  kvbench::cli::add_bench_command(app);
  kvbench::cli::add_grade_command(app);
  kvbench::cli::add_run_command(app);
  kvbench::cli::add_sweep_command(app);
  kvbench::cli::add_report_command(app);
  kvbench::cli::add_train_demo_command(app);
  kvbench::cli::add_train_scorer_command(app);
  kvbench::cli::add_duo_patterns_command(app);
  kvbench::cli::add_datasets_command(app);
  kvbench::cli::add_models_command(app);
  kvbench::cli::add_doctor_command(app);
  kvbench::cli::add_list_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const kvbench::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace kvbench::cli
