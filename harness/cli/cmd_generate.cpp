#include "cli/commands.h"

namespace kvbench::cli {

void add_generate_command(CLI::App& app) { app.add_subcommand("generate", "(not yet implemented)"); }

}  // namespace kvbench::cli
