// What `run` and `sweep` share: the --batch option.
#pragma once
#include <CLI/CLI.hpp>

namespace kvbench::cli {

// --batch N: samples decoded together (0 = default_batch for the model and device).
void add_batch_option(CLI::App* command, int64_t& batch);

}  // namespace kvbench::cli
