#include "cli/commands.h"

namespace kvbench::cli {

// Placeholder: filled in by the tokenize work.
void add_tokenize_command(CLI::App& app) { app.add_subcommand("tokenize", "(not yet implemented)"); }

}  // namespace kvbench::cli
