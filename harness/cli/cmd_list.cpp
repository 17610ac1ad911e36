// `kvbench list allocators|policies`: what the registries hold, so that docs and checks are derived from
// them rather than written out — the README's allocator table (`--markdown`, compared by
// tests/scripts/registries.sh) and the names the results schema check accepts.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "engine/allocator.h"

namespace kvbench::cli {

namespace {

struct ListOptions {
  std::string what;
  bool markdown = false;
};

void print_allocator_table() {
  std::cout << "| allocator | what it does with J | policies it serves |\n|---|---|---|\n";
  for (const std::string& name : allocator_names()) {
    const Allocator& allocator = find_allocator(name);
    const std::string served = allocator.needs() == ScoreKind::ByPosition
                                   ? "every policy"
                                   : fmt::format("`{}`", fmt::join(policies_served(allocator), "`, `"));
    std::cout << fmt::format("| `{}` | {} | {} |\n", name, allocator.summary(), served);
  }
}

void print_list(const ListOptions& o) {
  if (o.what == "allocators" && o.markdown) return print_allocator_table();
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
  command->callback([options] { print_list(*options); });
}

}  // namespace kvbench::cli
