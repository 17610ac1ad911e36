// `kvbench list allocators|policies|profiles`: what the registries hold, so that docs and checks are derived
// from them rather than written out — the README's policy, allocator and profile tables (`--markdown`,
// compared by tests/scripts/registries.sh) and the names and knobs the results schema check accepts.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "api/registries.h"
#include "common/spec.h"

namespace kvbench::cli {

namespace {

struct ListOptions {
  std::string what;
  bool markdown = false;
  bool json = false;
};

// A knob list for a table cell: `window=64`, `kernel=5` (defaults), `threshold` (required: no default), or —
// for none.
std::string knobs_text(const nlohmann::json& knobs) {
  std::vector<std::string> cells;
  for (const auto& [key, value] : knobs.items()) {
    const bool required = (value.is_number_float() && std::isnan(value.get<double>())) || value == "";
    cells.push_back(required ? fmt::format("`{}` (required)", key) : fmt::format("`{}={}`", key, knob_text(value)));
  }
  return cells.empty() ? "—" : fmt::format("{}", fmt::join(cells, ", "));
}

// The README's tables: a row per registered name, nothing that changes when another one is added.
void print_policy_table() {
  std::cout << "| policy | what it keeps | knobs (defaults) |\n|---|---|---|\n";
  for (const api::PolicyInfo& policy : api::policies())
    std::cout << fmt::format("| `{}` | {} | {} |\n", policy.name, policy.summary, knobs_text(policy.knobs));
}

void print_allocator_table() {
  std::cout << "| allocator | what it does with J | knobs (defaults) |\n|---|---|---|\n";
  for (const api::AllocatorInfo& allocator : api::allocators())
    std::cout << fmt::format("| `{}` | {} | {} |\n", allocator.name, allocator.summary, knobs_text(allocator.knobs));
}

void print_allocator_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const api::AllocatorInfo& allocator : api::allocators())
    out.push_back({{"name", allocator.name},
                   {"summary", allocator.summary},
                   {"ragged", allocator.ragged},
                   {"knobs", allocator.knobs},
                   {"policies", allocator.policies}});
  std::cout << out.dump(1) << "\n";
}

void print_policy_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const api::PolicyInfo& policy : api::policies())
    out.push_back({{"name", policy.name}, {"summary", policy.summary}, {"knobs", policy.knobs}, {"scores", policy.scores}});
  std::cout << out.dump(1) << "\n";
}

void print_profile_table() {
  std::cout << "| behaviour | the paper's code = `--profile reference` | kvbench's default (`--profile kvbench`) | "
               "what `reference` sets |\n|---|---|---|---|\n";
  for (const api::ProfileRow& row : api::profile_rows())
    std::cout << fmt::format("| {} | {} | {} | {} |\n", row.behaviour, row.reference, row.kvbench, row.preset);
}

void print_list(const ListOptions& o) {
  if (o.what == "allocators" && o.markdown) return print_allocator_table();
  if (o.what == "allocators" && o.json) return print_allocator_json();
  if (o.what == "policies" && o.markdown) return print_policy_table();
  if (o.what == "policies" && o.json) return print_policy_json();
  if (o.what == "profiles" && o.markdown) return print_profile_table();
  if (o.what == "profiles") {
    for (const std::string& name : api::profile_names()) std::cout << name << "\n";
    return;
  }
  if (o.what == "allocators")
    for (const api::AllocatorInfo& allocator : api::allocators()) std::cout << allocator.name << "\n";
  else
    for (const api::PolicyInfo& policy : api::policies()) std::cout << policy.name << "\n";
}

}  // namespace

void add_list_command(CLI::App& app) {
  auto options = std::make_shared<ListOptions>();
  auto* command = app.add_subcommand("list", "The registered allocators, policies or profiles, one name a line");
  command->add_option("what", options->what, "allocators, policies or profiles")
      ->required()
      ->check(CLI::IsMember({"allocators", "policies", "profiles"}));
  command->add_flag("--markdown", options->markdown,
                    "policies and allocators: a table of what each does and its knobs (the README's tables are "
                    "rows of it); profiles: each behaviour where the paper's code and kvbench's default differ, "
                    "or agree by choice");
  command->add_flag("--json", options->json,
                    "policies: name, summary, knobs with their defaults, what it scores; allocators: name, "
                    "summary, knobs, whether it makes the cache ragged, the policies it serves");
  command->callback([options] { print_list(*options); });
}

}  // namespace kvbench::cli
