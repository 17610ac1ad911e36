#include "report/tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "common/error.h"
#include "common/stats.h"
#include "engine/allocator.h"
#include "run/job.h"
#include "run/job_fields.h"

namespace kvbench {

namespace {

std::map<std::pair<int64_t, std::string>, double> unit_scores(const std::vector<const JobResults*>& group) {
  return unit_values(group, [](const ResultRow& row) { return row.score; });
}

std::vector<double> values_of(const std::map<std::pair<int64_t, std::string>, double>& units) {
  std::vector<double> values;
  for (const auto& [key, value] : units) values.push_back(value);
  return values;
}

std::string score_cell(const std::vector<const JobResults*>& group) {
  if (group.empty()) return "–";
  const std::vector<double> values = values_of(unit_scores(group));
  const Interval ci = bootstrap_ci(values);
  return fmt::format("{:.3f} [{:.3f}, {:.3f}]", mean(values), ci.low, ci.high);
}

double pred_none_rate(const std::vector<const JobResults*>& group) {
  std::vector<double> none;
  for (const JobResults* job : group)
    for (const auto& row : job->results.rows) none.push_back(row.pred ? 0.0 : 1.0);
  return mean(none);
}

// Mean key retention over the rows that have one (run/key_retention.h); "–" when none has.
std::string key_retention_cell(const std::vector<const JobResults*>& group) {
  std::vector<double> values;
  for (const JobResults* job : group)
    for (const auto& row : job->results.rows)
      if (!std::isnan(row.key_retention)) values.push_back(row.key_retention);
  return values.empty() ? "–" : fmt::format("{:.3f}", mean(values));
}

// Scores of the rows whose key passages were all cached when generation began, and of those with some
// evicted; rows without a key retention (tasks naming no key passage) are in neither.
std::pair<std::vector<double>, std::vector<double>> scores_by_retention(const std::vector<const JobResults*>& group) {
  std::pair<std::vector<double>, std::vector<double>> split;
  for (const JobResults* job : group)
    for (const auto& row : job->results.rows)
      if (!std::isnan(row.key_retention)) (row.key_retention >= 1.0 ? split.first : split.second).push_back(row.score);
  return split;
}

std::string mean_and_count(const std::vector<double>& scores) {
  return scores.empty() ? "–" : fmt::format("{:.2f} (n={})", mean(scores), scores.size());
}

std::string retention_split_cell(const std::vector<const JobResults*>& group) {
  const auto [kept, evicted] = scores_by_retention(group);
  return mean_and_count(kept) + " / " + mean_and_count(evicted);
}

// Jobs grouped by a key, keys in order of first appearance (files are given in a meaningful order).
template <class Key, class F>
std::vector<std::pair<Key, std::vector<const JobResults*>>> group_by(const std::vector<JobResults>& jobs, F key_of) {
  std::vector<std::pair<Key, std::vector<const JobResults*>>> groups;
  for (const auto& job : jobs) {
    const Key key = key_of(job);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) groups.push_back({key, {&job}});
    else it->second.push_back(&job);
  }
  return groups;
}

template <class F>
std::vector<std::string> distinct(const std::vector<JobResults>& jobs, F field) {
  std::vector<std::string> values;
  for (const auto& job : jobs) {
    const std::string value = field(job);
    if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
  }
  return values;
}

void require_single(const std::vector<JobResults>& jobs, const char* field, const std::string& filter_hint,
                    std::vector<std::string> (*values)(const std::vector<JobResults>&)) {
  const auto found = values(jobs);
  if (found.size() > 1)
    fail("the files hold several {} values ({}); this table fixes one: add {}", field, fmt::join(found, ", "),
         filter_hint);
}

std::vector<std::string> J_values(const std::vector<JobResults>& jobs) {
  return distinct(jobs, [](const JobResults& job) { return job.J.table_text(); });
}
std::vector<std::string> h_values(const std::vector<JobResults>& jobs) {
  return distinct(jobs, [](const JobResults& j) { return std::to_string(j.h); });
}

std::vector<const JobResults*> select(const std::vector<const JobResults*>& group,
                                      const std::function<bool(const JobResults&)>& keep) {
  std::vector<const JobResults*> chosen;
  for (const JobResults* job : group)
    if (keep(*job)) chosen.push_back(job);
  return chosen;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string latex_field(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (std::string("&%$#_{}").find(c) != std::string::npos) escaped += '\\';
    escaped += c;
  }
  return escaped;
}

std::string join_row(const std::vector<std::string>& cells, const std::string& separator,
                     std::string (*escape)(const std::string&)) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) line += (i ? separator : "") + (escape ? escape(cells[i]) : cells[i]);
  return line;
}

int64_t power_of_two_at_least(int64_t n) {
  int64_t bin = 1;
  while (bin < n) bin *= 2;
  return bin;
}

}  // namespace

std::map<std::pair<int64_t, std::string>, double> unit_values(const std::vector<const JobResults*>& group,
                                                              const std::function<double(const ResultRow&)>& value) {
  return defined_unit_values(group, [&](const ResultRow& row) { return std::optional<double>(value(row)); });
}

std::map<std::pair<int64_t, std::string>, double> defined_unit_values(
    const std::vector<const JobResults*>& group, const std::function<std::optional<double>(const ResultRow&)>& value) {
  std::map<std::pair<int64_t, std::string>, std::vector<double>> values;
  for (const JobResults* job : group)
    for (const auto& row : job->results.rows)
      // The task in the key: a cell pooling benchmarks must not merge their problems of the same id
      // (HMMT Feb's and Nov's "1").
      if (const std::optional<double> v = value(row)) values[{job->seed, job->task + "/" + row.sample_id}].push_back(*v);
  std::map<std::pair<int64_t, std::string>, double> units;
  for (const auto& [key, of_unit] : values) units[key] = mean(of_unit);
  return units;
}

std::string policy_label(const json& config) {
  std::string label = config.at("policy").get<std::string>();
  if (!config.contains("allocator")) return label;  // uniform: identities as before allocators
  return label + "+" + find_allocator(config.at("allocator").get<std::string>()).spec();
}

JobResults load_job_results(const std::filesystem::path& file) {
  JobResults job;
  job.file = file;
  job.results = read_results(file);
  json config;
  try {
    // In today's form: an older file's fields (e.g. pyramid_ratio) as the job reader maps them.
    config = current_form(json::parse(job.results.info.config_json));
    job.model = model_label(config.at("model").get<std::string>());
    config.at("task").get_to(job.task);
    config.at("policy").get_to(job.base_policy);
    job.policy = policy_label(config);
    // Phrase rules make a policy of their own in every table (absent from files written before them).
    if (const int64_t w = config.value("smooth", int64_t{1}); w != 1) job.policy += fmt::format(" smooth={}", w);
    if (const int64_t s = config.value("keep_span", int64_t{1}); s != 1) job.policy += fmt::format(" span={}", s);
    JobConfig budget;  // J's two fields as the job reader reads them (the file may have fields it lacks)
    job_field("J").set(config.at("J"), budget);
    if (config.contains("ratio")) job_field("ratio").set(config.at("ratio"), budget);
    job.J = budget.budget.J;
    config.at("h").get_to(job.h);
    config.at("seed").get_to(job.seed);
  } catch (const std::exception& e) {
    fail("{}: attribute \"config\" lacks a job field ({})", file.string(), e.what());
  }
  return job;
}

std::vector<JobResults> filter_jobs(const std::vector<JobResults>& jobs, const TableFilter& filter) {
  std::vector<JobResults> kept;
  for (const auto& job : jobs) {
    if (filter.J && job.J != *filter.J) continue;
    const auto& policies = filter.policies;
    const auto named = [&](const std::string& name) {
      return std::find(policies.begin(), policies.end(), name) != policies.end();
    };
    if (!policies.empty() && !named(job.policy) && !named(job.base_policy)) continue;
    if (!filter.h.empty()) {
      const bool ratio = filter.h.rfind("J/", 0) == 0;
      const int64_t wanted = ratio ? std::max<int64_t>(job.J.token_count() / std::stoll(filter.h.substr(2)), 1) : std::stoll(filter.h);
      if (job.h != wanted) continue;
    }
    kept.push_back(job);
  }
  if (kept.empty()) fail("no results file matches the filters (--J / --h / --policy)");
  return kept;
}

std::vector<Table> policy_model_tables(const std::vector<JobResults>& jobs) {
  require_single(jobs, "J", "--J", J_values);
  require_single(jobs, "h", "--h", h_values);
  const auto models = distinct(jobs, [](const JobResults& j) { return j.model; });
  std::vector<Table> tables;
  for (const auto& [task, task_jobs] : group_by<std::string>(jobs, [](const JobResults& j) { return j.task; })) {
    Table table{fmt::format("{} score (pass@1, 95% bootstrap CI), {} h={}", task, jobs.front().J.table_text(), jobs.front().h),
                {"policy"}, {}};
    table.header.insert(table.header.end(), models.begin(), models.end());
    std::vector<JobResults> of_task;
    for (const JobResults* job : task_jobs) of_task.push_back(*job);
    for (const auto& [policy, group] : group_by<std::string>(of_task, [](const JobResults& j) { return j.policy; })) {
      std::vector<std::string> row = {policy};
      for (const auto& model : models)
        row.push_back(score_cell(select(group, [&](const JobResults& j) { return j.model == model; })));
      table.rows.push_back(row);
    }
    tables.push_back(table);
  }
  return tables;
}

Table aime_table(const std::vector<JobResults>& jobs) {
  require_single(jobs, "J", "--J", J_values);
  require_single(jobs, "h", "--h", h_values);
  const auto policies = distinct(jobs, [](const JobResults& j) { return j.policy; });
  Table table{fmt::format("pass@1 and pred=None rate, {} h={}", jobs.front().J.table_text(), jobs.front().h), {"model", "task", ""},
              {}};
  table.header.insert(table.header.end(), policies.begin(), policies.end());
  using Key = std::pair<std::string, std::string>;
  for (const auto& [key, group] : group_by<Key>(jobs, [](const JobResults& j) { return Key{j.model, j.task}; })) {
    std::vector<std::string> scores = {key.first, key.second, "pass@1"}, none = {key.first, key.second, "pred=None"};
    for (const auto& policy : policies) {
      const auto of_policy = select(group, [&](const JobResults& j) { return j.policy == policy; });
      scores.push_back(score_cell(of_policy));
      none.push_back(of_policy.empty() ? "–" : fmt::format("{:.3f}", pred_none_rate(of_policy)));
    }
    table.rows.push_back(scores);
    table.rows.push_back(none);
  }
  return table;
}

namespace {
// Rows policies, columns J, one table per model × task; `cell` summarises the jobs of one cell.
template <class Cell>
std::vector<Table> by_j_tables(const std::vector<JobResults>& jobs, const std::string& what, Cell cell) {
  std::vector<Table> tables;
  using Key = std::pair<std::string, std::string>;
  for (const auto& [key, group] : group_by<Key>(jobs, [](const JobResults& j) { return Key{j.model, j.task}; })) {
    std::set<BudgetJ> budgets;  // token budgets first, then ratios
    for (const JobResults* job : group) budgets.insert(job->J);
    Table table{fmt::format("{} on {}: {} vs J", key.first, key.second, what), {"policy"}, {}};
    for (const BudgetJ& J : budgets) table.header.push_back(J.table_text());
    std::vector<JobResults> of_key;
    for (const JobResults* job : group) of_key.push_back(*job);
    for (const auto& [policy, rows] : group_by<std::string>(of_key, [](const JobResults& j) { return j.policy; })) {
      std::vector<std::string> row = {policy};
      for (const BudgetJ& J : budgets) {
        const auto jobs_at_j = select(rows, [&](const JobResults& j) { return j.J == J; });
        std::set<int64_t> hs;
        for (const JobResults* job : jobs_at_j) hs.insert(job->h);
        if (hs.size() > 1)
          fail("policy {} at {} was run with several h values: add --h (e.g. --h J/4)", policy, table.header[row.size()]);
        row.push_back(cell(jobs_at_j));
      }
      table.rows.push_back(row);
    }
    tables.push_back(table);
  }
  return tables;
}
}  // namespace

std::vector<Table> accuracy_vs_j_tables(const std::vector<JobResults>& jobs) {
  return by_j_tables(jobs, "score", score_cell);
}

std::vector<Table> key_retention_tables(const std::vector<JobResults>& jobs) {
  return by_j_tables(jobs, "key-passage retention after prefill", key_retention_cell);
}

std::vector<Table> retention_split_tables(const std::vector<JobResults>& jobs) {
  std::vector<Table> tables = by_j_tables(jobs, "score when the key passages were all cached / some evicted",
                                          retention_split_cell);
  using Key = std::pair<std::string, std::string>;
  for (const auto& [key, group] : group_by<Key>(jobs, [](const JobResults& j) { return Key{j.model, j.task}; })) {
    Table pooled{fmt::format("{} on {}: score by key-passage retention, all policies and J pooled", key.first,
                             key.second),
                 {"key passages when generation began", "rows", "score [95% CI]"},
                 {}};
    const auto [kept, evicted] = scores_by_retention(group);
    for (const auto& [label, scores] : {std::pair{"all cached", kept}, std::pair{"some evicted", evicted}}) {
      if (scores.empty()) {
        pooled.rows.push_back({label, "0", "–"});
        continue;
      }
      const Interval ci = bootstrap_ci(scores);
      pooled.rows.push_back({label, std::to_string(scores.size()),
                             fmt::format("{:.3f} [{:.3f}, {:.3f}]", mean(scores), ci.low, ci.high)});
    }
    tables.push_back(pooled);
  }
  return tables;
}

Table latency_table(const std::vector<JobResults>& jobs) {
  // (model, policy, n bin) → scoring and compaction times
  std::map<std::tuple<std::string, std::string, int64_t>, std::pair<std::vector<double>, std::vector<double>>> cells;
  for (const auto& job : jobs)
    for (const auto& trace : job.results.refreshes) {
      auto& [scoring, compaction] = cells[{job.model, job.policy, power_of_two_at_least(trace.size_before)}];
      scoring.push_back(trace.scoring_ms);
      compaction.push_back(trace.compaction_ms);
    }
  Table table{"refresh latency by cache size n (mean ms per refresh)",
              {"model", "policy", "n ≤", "refreshes", "scoring ms", "compaction ms"}, {}};
  for (const auto& [key, times] : cells)
    table.rows.push_back({std::get<0>(key), std::get<1>(key), std::to_string(std::get<2>(key)),
                          std::to_string(times.first.size()), fmt::format("{:.3f}", mean(times.first)),
                          fmt::format("{:.3f}", mean(times.second))});
  return table;
}

Table paired_table(const std::vector<JobResults>& jobs) {
  Table table{"paired comparisons on the same samples and seeds (A − B; paired bootstrap CI, exact sign test)",
              {"model", "task", "J", "h", "A", "B", "pairs", "mean A−B", "95% CI", "A>B", "B>A", "sign p"}, {}};
  using Key = std::tuple<std::string, std::string, BudgetJ, int64_t>;
  for (const auto& [key, group] :
       group_by<Key>(jobs, [](const JobResults& j) { return Key{j.model, j.task, j.J, j.h}; })) {
    std::vector<JobResults> of_key;
    for (const JobResults* job : group) of_key.push_back(*job);
    const auto by_policy = group_by<std::string>(of_key, [](const JobResults& j) { return j.policy; });
    for (size_t a = 0; a < by_policy.size(); ++a)
      for (size_t b = a + 1; b < by_policy.size(); ++b) {
        const auto units_a = unit_scores(by_policy[a].second), units_b = unit_scores(by_policy[b].second);
        std::vector<double> xs, ys;
        for (const auto& [unit, score] : units_a)
          if (units_b.count(unit)) {
            xs.push_back(score);
            ys.push_back(units_b.at(unit));
          }
        if (xs.empty()) continue;
        const PairedComparison c = compare_paired(xs, ys);
        table.rows.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key).text(),
                              std::to_string(std::get<3>(key)), by_policy[a].first, by_policy[b].first,
                              std::to_string(c.pairs), fmt::format("{:+.3f}", c.mean_difference),
                              fmt::format("[{:+.3f}, {:+.3f}]", c.difference_ci.low, c.difference_ci.high),
                              std::to_string(c.a_better), std::to_string(c.b_better),
                              fmt::format("{:.3g}", c.sign_test_p)});
      }
  }
  return table;
}

Table overview_table(const std::vector<JobResults>& jobs) {
  Table table{"results files",
              {"model", "task", "policy", "J", "h", "seed", "samples", "rows", "score [95% CI]", "pred=None",
               "mean length"},
              {}};
  for (const auto& job : jobs) {
    const Summary& s = job.results.summary;
    table.rows.push_back({job.model, job.task, job.policy, job.J.text(), std::to_string(job.h),
                          std::to_string(job.seed), std::to_string(s.samples), std::to_string(s.rows),
                          fmt::format("{:.3f} [{:.3f}, {:.3f}]", s.score, s.score_ci_low, s.score_ci_high),
                          fmt::format("{:.3f}", s.pred_none_rate), fmt::format("{:.1f}", s.mean_generated_length)});
  }
  return table;
}

std::string render(const Table& table, const std::string& format) {
  std::string out;
  if (format == "md") {
    out += "**" + table.title + "**\n\n| " + join_row(table.header, " | ", nullptr) + " |\n|";
    for (size_t i = 0; i < table.header.size(); ++i) out += "---|";
    out += "\n";
    for (const auto& row : table.rows) out += "| " + join_row(row, " | ", nullptr) + " |\n";
  } else if (format == "csv") {
    out += "# " + table.title + "\n" + join_row(table.header, ",", csv_field) + "\n";
    for (const auto& row : table.rows) out += join_row(row, ",", csv_field) + "\n";
  } else if (format == "latex") {
    out += "% " + table.title + "\n\\begin{tabular}{l" + std::string(table.header.size() - 1, 'c') + "}\n\\toprule\n";
    out += join_row(table.header, " & ", latex_field) + " \\\\\n\\midrule\n";
    for (const auto& row : table.rows) out += join_row(row, " & ", latex_field) + " \\\\\n";
    out += "\\bottomrule\n\\end{tabular}\n";
  } else {
    fail("unknown table format \"{}\" (expected md, csv or latex)", format);
  }
  return out;
}

}  // namespace kvbench
