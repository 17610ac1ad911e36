#include "cli/commands.h"

namespace kvbench::cli {

// Placeholder: filled in by the grade work.
void add_grade_command(CLI::App& app) { app.add_subcommand("grade", "(not yet implemented)"); }

}  // namespace kvbench::cli
