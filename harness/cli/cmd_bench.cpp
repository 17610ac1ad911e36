#include "cli/commands.h"

namespace kvbench::cli {

void add_bench_command(CLI::App& app) { app.add_subcommand("bench", "(not yet implemented)"); }

}  // namespace kvbench::cli
