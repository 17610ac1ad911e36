// `kvbench doctor` (and `kvbench --version`): what this binary was built against and what it finds here —
// the libtorch, whether the CUDA path is compiled in and how many GPUs it sees, the CPU kernels, threads.
// The first thing to paste into a bug report, and the way to tell which of the two builds is on PATH.
#include <fmt/format.h>

#include <iostream>

#include "api/machine.h"
#include "cli/commands.h"

namespace kvbench::cli {

namespace {

void print_doctor() {
  std::cout << api::build_description() << "\n\n";
  for (const auto& [what, value] : api::machine_facts()) std::cout << fmt::format("{:<26}{}\n", what, value);
  std::cout << "\nlibtorch's build configuration:\n" << api::torch_build_config();
}

}  // namespace

void add_doctor_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "doctor", "What this kvbench was built against and what it finds here: libtorch version, whether CUDA "
                "is compiled in, CUDA devices visible, CPU kernels and threads, libtorch's build configuration");
  command->callback(print_doctor);
}

}  // namespace kvbench::cli
