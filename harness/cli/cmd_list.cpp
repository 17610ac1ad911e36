// `kvbench list allocators|policies`: what the registries hold, so that docs and checks are derived from
// them rather than written out — the README's allocator table (`--markdown`, compared by
// tests/scripts/registries.sh) and the names the results schema check accepts.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "engine/allocator.h"

namespace kvbench::cli {

namespace {

struct ListOptions {
  std::string what;
  bool markdown = false;
  bool json = false;
};

std::string served_text(const Allocator& allocator) {
  return allocator.needs() == ScoreKind::ByPosition ? "every policy"
                                                    : fmt::format("`{}`", fmt::join(policies_served(allocator), "`, `"));
}

void print_allocator_table() {
  std::cout << "| allocator | what it does with J | policies it serves |\n|---|---|---|\n";
  for (const std::string& name : allocator_names()) {
    const Allocator& allocator = find_allocator(name);
    std::cout << fmt::format("| `{}` | {} | {} |\n", name, allocator.summary(), served_text(allocator));
  }
}

// What a results file's config may hold for each allocator (tests/scripts/check_results_schema.py).
void print_allocator_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& name : allocator_names()) {
    const Allocator& allocator = find_allocator(name);
    out.push_back({{"name", name},
                   {"ragged", allocator.ragged()},
                   {"uses_pyramid_ratio", allocator.uses_pyramid_ratio()},
                   {"policies", allocator.needs() == ScoreKind::ByPosition ? policy_names()
                                                                            : policies_served(allocator)}});
  }
  std::cout << out.dump(1) << "\n";
}

void print_list(const ListOptions& o) {
  if (o.what == "allocators" && o.markdown) return print_allocator_table();
  if (o.what == "allocators" && o.json) return print_allocator_json();
  for (const std::string& name : o.what == "allocators" ? allocator_names() : policy_names()) std::cout << name << "\n";
}

}  // namespace

void add_list_command(CLI::App& app) {
  auto options = std::make_shared<ListOptions>();
  auto* command = app.add_subcommand("list", "The registered allocators or policies, one name a line");
  command->add_option("what", options->what, "allocators or policies")
      ->required()
      ->check(CLI::IsMember({"allocators", "policies"}));
  command->add_flag("--markdown", options->markdown, "allocators: the README's table (what each does, whom it serves)");
  command->add_flag("--json", options->json, "allocators: each one's name, whether it makes the cache ragged, "
                    "whether it reads --pyramid-ratio, the policies it serves");
  command->callback([options] { print_list(*options); });
}

}  // namespace kvbench::cli
