// `kvbench list allocators|policies|profiles`: what the registries hold, so that docs and checks are derived
// from them rather than written out — the README's allocator and profile tables (`--markdown`, compared by
// tests/scripts/registries.sh) and the names the results schema check accepts.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "engine/allocator.h"
#include "run/profile.h"

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

// Where the paper's code and kvbench's default differ, and what --profile reference does about it.
void print_profile_table() {
  std::cout << "| behaviour | the paper's code = `--profile reference` | kvbench's default (`--profile kvbench`) |\n"
               "|---|---|---|\n";
  for (const ProfileBehaviour& row : profile_behaviours())
    std::cout << fmt::format("| {} | {} | {} |\n", row.behaviour, row.reference, row.kvbench);
}

void print_list(const ListOptions& o) {
  if (o.what == "allocators" && o.markdown) return print_allocator_table();
  if (o.what == "allocators" && o.json) return print_allocator_json();
  if (o.what == "profiles" && o.markdown) return print_profile_table();
  const std::vector<std::string> names =
      o.what == "allocators" ? allocator_names() : o.what == "profiles" ? profile_names() : policy_names();
  for (const std::string& name : names) std::cout << name << "\n";
}

}  // namespace

void add_list_command(CLI::App& app) {
  auto options = std::make_shared<ListOptions>();
  auto* command = app.add_subcommand("list", "The registered allocators, policies or profiles, one name a line");
  command->add_option("what", options->what, "allocators, policies or profiles")
      ->required()
      ->check(CLI::IsMember({"allocators", "policies", "profiles"}));
  command->add_flag("--markdown", options->markdown,
                    "allocators: the README's table (what each does, whom it serves); profiles: the README's table "
                    "(each behaviour where the paper's code and kvbench's default differ, or agree by choice)");
  command->add_flag("--json", options->json, "allocators: each one's name, whether it makes the cache ragged, "
                    "whether it reads --pyramid-ratio, the policies it serves");
  command->callback([options] { print_list(*options); });
}

}  // namespace kvbench::cli
