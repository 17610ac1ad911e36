// `kvbench report`: paper tables from results files; `kvbench inspect`: what one results file holds.
#include <fmt/format.h>

#include <iostream>
#include <map>

#include "api/kvbench.h"
#include "api/report.h"
#include "cli/commands.h"
#include "common/error.h"

namespace kvbench::cli {

namespace {

struct ReportOptions {
  std::vector<std::string> files, tables = {"overview"};
  std::string format = "md", h, recipe;
  std::vector<std::string> policies;
  std::string J;  // "" = any
};

// The recipe's tables, paper beside measured; the recipe's documented choices under them.
std::string recipe_report(const ReportOptions& o) {
  const api::RecipeReport report = api::recipe_report(o.recipe, {o.files.begin(), o.files.end()});
  std::string out;
  for (const auto& table : report.tables) out += render(table, o.format) + "\n";
  if (o.format == "md")
    for (const auto& choice : report.choices) out += "- choice: " + choice + "\n";
  return out;
}

void report_command(const ReportOptions& o) {
  if (!o.recipe.empty()) {
    std::cout << recipe_report(o);
    return;
  }
  TableFilter filter;
  if (!o.J.empty()) filter.J = BudgetJ::parse(o.J);
  filter.h = o.h;
  filter.policies = o.policies;
  const std::vector<std::filesystem::path> files(o.files.begin(), o.files.end());
  std::string out;
  for (const auto& table : api::report_tables(files, o.tables, filter)) out += render(table, o.format) + "\n";
  std::cout << out;
}

void inspect_command(const std::string& file) {
  const JobResults job = load_job_results(file);
  const Results& r = job.results;
  std::cout << fmt::format("{}\n  kvbench {} (commit {}), libtorch {}, {} {}, batch {}, host {}\n  {} → {}\n", file,
                           r.info.kvbench_version, r.info.git_commit, r.info.torch_version, r.info.device,
                           r.info.dtype, r.info.batch, r.info.host, r.info.start_time, r.info.end_time);
  std::cout << "  config: " << r.info.config_json << "\n";
  const Summary& s = r.summary;
  std::cout << fmt::format("  score {:.3f} [{:.3f}, {:.3f}]  pred=None {:.3f}  mean length {:.1f}  ({} samples, {} "
                           "rows)\n",
                           s.score, s.score_ci_low, s.score_ci_high, s.pred_none_rate, s.mean_generated_length,
                           s.samples, s.rows);
  std::map<std::string, int64_t> stops;
  for (const auto& row : r.rows) ++stops[row.stop_reason];
  std::cout << "  stop reasons:";
  for (const auto& [reason, count] : stops) std::cout << fmt::format(" {}={}", reason, count);
  double scoring = 0.0;
  for (const auto& trace : r.refreshes) scoring += trace.scoring_ms;
  std::cout << fmt::format("\n  refreshes: {} (mean scoring {:.3f} ms)\n", r.refreshes.size(),
                           r.refreshes.empty() ? 0.0 : scoring / r.refreshes.size());
  constexpr size_t kShown = 5;
  for (size_t i = 0; i < std::min(kShown, r.rows.size()); ++i) {
    const ResultRow& row = r.rows[i];
    std::cout << fmt::format("  {} r{}: score {:.2f} pred {} ({} tokens, {})\n", row.sample_id, row.rollout, row.score,
                             row.pred ? "\"" + *row.pred + "\"" : "None", row.generated_ids.size(), row.stop_reason);
  }
  if (r.rows.size() > kShown) std::cout << fmt::format("  … {} more rows\n", r.rows.size() - kShown);
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Tables from results files (never re-runs a model). Tables (--table, repeatable):\n"
      "  overview       one row per file: score with bootstrap 95% CI, pred=None rate, mean length\n"
      "  policies       paper Table 2: rows policies, columns models, one fixed J and h (one table per task)\n"
      "  aime           paper Table 3: columns policies, a pass@1 row and a pred=None row per model × task\n"
      "  accuracy-vs-j  rows policies, columns J (Fig. 2/5 data), one table per model × task\n"
      "  key-retention  the same layout: share of the task's key passages (rare-fact: the facts) still\n"
      "                 cached when generation began — whether a policy kept the fact, apart from its use\n"
      "  by-retention   score of rows whose key passages were all cached vs some evicted, per policy × J\n"
      "                 and pooled — does the model answer when it kept the fact and fail when it did not\n"
      "  latency        refresh latency (scoring, compaction) by cache size n (Table 1)\n"
      "  paired         every pair of policies on the same samples and seeds: paired bootstrap CI, sign test\n"
      "  overlap        kept-set overlap of every pair of policies (same model, task, J, h, seed): Jaccard of\n"
      "                 the kept positions per refresh, matched by sample, rollout and refresh index, averaged\n"
      "                 (all, prefill, decode refreshes), its minimum, and refreshes without a partner\n"
      "  overlap-refreshes  the same, one row per matched refresh\n"
      "  fidelity       files run with --shadow full: mean KL(full || policy) per chosen token and top-1\n"
      "                 agreement with the full cache, rows policies, columns J (one table per model × task)\n"
      "  attention-loss files run with --shadow full: per refresh, the full cache's attention (mean over the\n"
      "                 tokens fed until the next refresh, layers and query heads) on the entries the policy\n"
      "                 had evicted at that refresh or earlier; mean over a row's refreshes, 95% CI; rows\n"
      "                 policies, columns J and h (the full policy loses 0); a second table averages the\n"
      "                 decode refreshes only (prefill ones, a chunk each, dominate the first)\n"
      "  niah           files of the niah task: score by needle depth (rows) and length (columns), one table\n"
      "                 per model x policy x budget (scripts/plot_niah.py draws them as heatmaps)\n"
      "Seeds are pooled: a CI resamples (seed, sample) units, each the mean over its rollouts.\n"
      "Examples:\n"
      "  kvbench report results/demo/*.h5 --table policies --J 64 --h J/4\n"
      "  kvbench report results/demo/*.h5 --table accuracy-vs-j --table paired --format latex\n"
      "  kvbench report results/demo/*.h5 --table paired --J 64 --policy counter-causal --policy sliding\n"
      "  kvbench report results/demo/*.h5 --table overlap --policy counter-causal --policy counter-causal-fast\n"
      "  kvbench report results/shadow/*.h5 --table attention-loss --table fidelity\n"
      "  kvbench report --recipe recipes/counter-causal-table2.json results/counter-causal/*.h5");
  cmd->add_option("files", o->files, "Results files (.h5)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--table", o->tables, fmt::format("{}", fmt::join(api::report_table_names(), ", ")))
      ->check(CLI::IsMember(api::report_table_names()))
      ->capture_default_str();
  cmd->add_option("--format", o->format, "md, csv or latex")->check(CLI::IsMember({"md", "csv", "latex"}))
      ->capture_default_str();
  cmd->add_option("--recipe", o->recipe,
                  "A recipe (recipes/*.json): its tables in the paper's layout, the published value beside the\n"
                  "measured one with its 95% bootstrap CI and whether the CI holds it; cells without results say\n"
                  "\"missing\". Files are matched to the recipe's jobs by the names the sweep gave them")
      ->check(CLI::ExistingFile);
  cmd->add_option("--J", o->J, "Only files with this budget: a token count J or ratio:R");
  cmd->add_option("--h", o->h, "Only files with this h: a number or a ratio of J (J/4)");
  cmd->add_option("--policy", o->policies,
                  "Only these policies (repeatable; a name also selects its variants with --smooth/--keep-span); "
                  "rows follow the files' order");
  cmd->callback([o] { report_command(*o); });

  auto file = std::make_shared<std::string>();
  auto reseal = std::make_shared<bool>(false);
  CLI::App* inspect = app.add_subcommand(
      "inspect", "Summarise one results file: provenance, config, score, stop reasons, refreshes, first rows.\n"
                 "Every file kvbench writes carries a checksum (its seal); a file that no longer matches it is\n"
                 "refused as truncated or corrupted. After a deliberate edit (e.g. with h5py), --reseal accepts it.\n"
                 "Example: kvbench inspect results/demo/stories260K__rare-fact__tova__J64__h16__s0__r1.h5");
  inspect->add_option("file", *file, "Results file (.h5)")->required()->check(CLI::ExistingFile);
  inspect->add_flag("--reseal", *reseal, "Accept the file's current contents: write a new checksum, then summarise");
  inspect->callback([file, reseal] {
    if (*reseal) api::reseal(*file);
    inspect_command(*file);
  });
}

}  // namespace kvbench::cli
