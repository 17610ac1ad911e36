#include "report/fidelity.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/error.h"

namespace kvbench {

namespace {

bool has_shadow(const JobResults& job) {
  return std::any_of(job.results.rows.begin(), job.results.rows.end(),
                     [](const ResultRow& row) { return !row.shadow_kl.empty(); });
}

// "KL 0.0123 / top-1 0.950" pooled over the tokens of the given files; "–" without any.
std::string fidelity_cell(const std::vector<const JobResults*>& files) {
  double kl = 0.0, agree = 0.0;
  size_t tokens = 0;
  for (const JobResults* job : files)
    for (const ResultRow& row : job->results.rows) {
      for (const float value : row.shadow_kl) kl += value;
      for (const int64_t same : row.shadow_top1) agree += static_cast<double>(same);
      tokens += row.shadow_kl.size();
    }
  return tokens == 0 ? "–" : fmt::format("KL {:.4f} / top-1 {:.3f}", kl / tokens, agree / tokens);
}

template <class T>
void add_once(std::vector<T>& values, const T& value) {
  if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
}

}  // namespace

std::vector<Table> fidelity_tables(const std::vector<JobResults>& jobs) {
  std::vector<const JobResults*> shadowed;
  for (const auto& job : jobs)
    if (has_shadow(job)) shadowed.push_back(&job);
  if (shadowed.empty()) fail("no results file holds shadow data: run the jobs with `kvbench run --shadow full`");
  std::vector<std::pair<std::string, std::string>> model_tasks;
  for (const JobResults* job : shadowed) add_once(model_tasks, {job->model, job->task});
  std::vector<Table> tables;
  for (const auto& [model, task] : model_tasks) {
    std::vector<std::string> policies;
    std::set<BudgetJ> Js;
    for (const JobResults* job : shadowed)
      if (job->model == model && job->task == task) add_once(policies, job->policy), Js.insert(job->J);
    Table table{fmt::format("{} on {}: mean KL(full ‖ policy) per chosen token / top-1 agreement with the full cache "
                            "(teacher-forced, --shadow full)",
                            model, task),
                {"policy"},
                {}};
    for (const BudgetJ& J : Js) table.header.push_back("J=" + J.text());
    for (const auto& policy : policies) {
      std::vector<std::string> row = {policy};
      for (const BudgetJ& J : Js) {
        std::vector<const JobResults*> cell;
        for (const JobResults* job : shadowed)
          if (job->model == model && job->task == task && job->policy == policy && job->J == J) cell.push_back(job);
        row.push_back(fidelity_cell(cell));
      }
      table.rows.push_back(std::move(row));
    }
    tables.push_back(std::move(table));
  }
  return tables;
}

}  // namespace kvbench
