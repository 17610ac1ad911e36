// kvbench: KV-cache eviction research harness. The command line is cli/app.cpp; subcommands cli/cmd_*.cpp.
#include "api/machine.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  kvbench::api::tune_allocator();
  return kvbench::cli::main(argc, argv);
}
