#include "report/attention_loss.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "common/error.h"
#include "common/stats.h"

namespace kvbench {

namespace {

// Run with --shadow full (its rows compare with the full twin) by a kvbench that records attention loss
// (older files leave shadow_lost_queries at −1).
bool records_attention_loss(const JobResults& job) {
  const auto& rows = job.results.rows;
  const auto& refreshes = job.results.refreshes;
  const bool shadowed =
      std::any_of(rows.begin(), rows.end(), [](const ResultRow& row) { return !row.shadow_kl.empty(); });
  return shadowed && std::none_of(refreshes.begin(), refreshes.end(),
                                  [](const RefreshTrace& t) { return t.shadow_lost_queries < 0; });
}

// Each row's attention lost, keyed by the row (for defined_unit_values, which sees rows only).
std::map<const ResultRow*, std::optional<double>> attention_lost_by_row(const JobResults& job, RefreshPhases phases) {
  const auto& rows = job.results.rows;
  std::vector<std::vector<const RefreshTrace*>> per_row(rows.size());
  for (const auto& trace : job.results.refreshes) {
    if (trace.row < 0 || trace.row >= static_cast<int64_t>(rows.size()))
      fail("{}: a refresh names row {} of {}", job.file.string(), trace.row, rows.size());
    per_row[trace.row].push_back(&trace);
  }
  std::map<const ResultRow*, std::optional<double>> lost;
  for (size_t i = 0; i < rows.size(); ++i) lost[&rows[i]] = row_attention_lost(per_row[i], phases);
  return lost;
}

std::string loss_cell(const std::vector<const JobResults*>& files, RefreshPhases phases) {
  std::map<const ResultRow*, std::optional<double>> lost;
  for (const JobResults* job : files) lost.merge(attention_lost_by_row(*job, phases));
  std::vector<double> values;
  for (const auto& [unit, value] : defined_unit_values(files, [&](const ResultRow& row) { return lost.at(&row); }))
    values.push_back(value);
  if (values.empty()) return "–";
  const Interval ci = bootstrap_ci(values);
  return fmt::format("{:.4f} [{:.4f}, {:.4f}]", mean(values), ci.low, ci.high);
}

template <class T>
void add_once(std::vector<T>& values, const T& value) {
  if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
}

Table loss_table(const std::string& model, const std::string& task, const std::vector<const JobResults*>& files,
                 RefreshPhases phases) {
  std::vector<std::string> policies;
  std::set<std::pair<BudgetJ, int64_t>> budgets;  // (J, h)
  for (const JobResults* job : files) add_once(policies, job->policy), budgets.insert({job->J, job->h});
  const bool decode = phases == RefreshPhases::Decode;
  Table table{fmt::format("{} on {}, {} refreshes: attention mass lost per refresh — the full twin's attention on "
                          "entries the policy had evicted at that refresh or earlier, over the tokens fed until the "
                          "next refresh (mean over them, layers and query heads; --shadow full); mean over a row's {} "
                          "refreshes, bootstrap 95% CI over (seed, sample){}",
                          model, task, decode ? "decode" : "all", decode ? "decode" : "prefill and decode",
                          decode ? "; samples with no decode refresh followed by a token are left out" : ""),
              {"policy"},
              {}};
  for (const auto& [J, h] : budgets) table.header.push_back(fmt::format("J={} h={}", J.text(), h));
  for (const auto& policy : policies) {
    std::vector<std::string> row = {policy};
    for (const auto& budget : budgets) {
      std::vector<const JobResults*> cell;
      for (const JobResults* job : files)
        if (job->policy == policy && std::pair{job->J, job->h} == budget) cell.push_back(job);
      row.push_back(loss_cell(cell, phases));
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace

std::optional<double> row_attention_lost(const std::vector<const RefreshTrace*>& row_refreshes, RefreshPhases phases) {
  std::vector<double> followed;
  for (const RefreshTrace* trace : row_refreshes)
    if (trace->shadow_lost_queries > 0 && (phases == RefreshPhases::All || trace->phase == "decode"))
      followed.push_back(trace->shadow_lost_mass);
  if (!followed.empty()) return mean(followed);
  if (row_refreshes.empty() || phases == RefreshPhases::All) return 0.0;
  return std::nullopt;
}

std::vector<Table> attention_loss_tables(const std::vector<JobResults>& jobs) {
  std::vector<const JobResults*> recorded;
  for (const auto& job : jobs)
    if (records_attention_loss(job)) recorded.push_back(&job);
  if (recorded.empty())
    fail("no results file records attention loss: run the jobs with `kvbench run --shadow full` (files written "
         "before attention loss was recorded hold only the fidelity data)");
  std::vector<std::pair<std::string, std::string>> model_tasks;
  for (const JobResults* job : recorded) add_once(model_tasks, {job->model, job->task});
  std::vector<Table> tables;
  for (const auto& [model, task] : model_tasks) {
    std::vector<const JobResults*> files;
    for (const JobResults* job : recorded)
      if (job->model == model && job->task == task) files.push_back(job);
    for (const RefreshPhases phases : {RefreshPhases::All, RefreshPhases::Decode})
      tables.push_back(loss_table(model, task, files, phases));
  }
  return tables;
}

}  // namespace kvbench
