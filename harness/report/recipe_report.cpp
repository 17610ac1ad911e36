#include "report/recipe_report.h"

#include <fmt/format.h>

#include <functional>

#include "common/error.h"
#include "common/stats.h"

namespace kvbench {

namespace {

// The results file of each recipe job (nullptr: none given).
std::vector<const JobResults*> results_of_jobs(const Recipe& recipe, const std::vector<JobResults>& files) {
  std::vector<const JobResults*> found(recipe.jobs.size(), nullptr);
  for (const auto& file : files)
    for (size_t i = 0; i < recipe.jobs.size(); ++i) {
      const JobConfig& job = recipe.jobs[i].entry.job;
      if (file.file.stem().string() != recipe.jobs[i].entry.label) continue;
      if (file.task != job.task || file.policy != policy_label(to_json(job)) || file.J != job.budget.J ||
          file.h != job.budget.h)
        fail("{}: its config (task {}, policy {}, J {}, h {}) is not the job its name says ({})", file.file.string(),
             file.task, file.policy, file.J, file.h, recipe.jobs[i].entry.label);
      found[i] = &file;
    }
  return found;
}

// The values a cell's mean and CI come from; empty when the metric is not in results files.
std::vector<double> metric_values(const std::string& metric, const std::vector<const JobResults*>& group) {
  std::vector<double> values;
  if (metric == "refresh_ms") {
    for (const JobResults* job : group)
      for (const auto& trace : job->results.refreshes) values.push_back(trace.scoring_ms);
    return values;
  }
  std::function<double(const ResultRow&)> value;
  if (metric == "score") value = [](const ResultRow& row) { return row.score; };
  else if (metric == "pred_none") value = [](const ResultRow& row) { return row.pred ? 0.0 : 1.0; };
  else if (metric == "seconds_per_sample") value = [](const ResultRow& row) { return row.wall_seconds; };
  else return values;
  for (const auto& [unit, mean_value] : unit_values(group, value)) values.push_back(mean_value);
  return values;
}

struct Cell {
  std::string published, measured, inside;
};

std::string published_text(const PublishedValue& published, int digits) {
  if (!published.value) return "–";
  if (published.below) return fmt::format("< {:g}", *published.value);
  return fmt::format("{:.{}f}", *published.value, digits);
}

// Whether the measured CI is consistent with the paper: a number inside the CI, a bound above the mean.
std::string consistent(const PublishedValue& published, const Interval& ci, double mean_value) {
  if (!published.value) return "";
  if (published.below) return mean_value < *published.value ? "yes" : "no";
  return *published.value >= ci.low && *published.value <= ci.high ? "yes" : "no";
}

Cell cell(const RecipeTable& table, const RecipeCell& row, const std::vector<const JobResults*>& group,
          size_t expected, const std::optional<PublishedValue>& published) {
  Cell c;
  const int d = table.digits;
  if (published) c.published = published_text(*published, d);
  if (!row.reference.empty()) return {c.published, "reference: not run by kvbench", ""};
  if (expected == 0) return {c.published, "not in recipe", ""};
  if (table.metric == "peak_memory_gb") return {c.published, "not recorded by kvbench", ""};
  if (group.empty()) return {c.published, "missing", ""};
  const std::vector<double> values = metric_values(table.metric, group);
  if (values.empty()) return {c.published, "no data in results", ""};
  const Interval ci = bootstrap_ci(values);
  const double s = table.scale;
  c.measured = fmt::format("{:.{}f} [{:.{}f}, {:.{}f}]", mean(values) * s, d, ci.low * s, d, ci.high * s, d);
  if (group.size() < expected) c.measured += fmt::format(" ({} of {} files)", group.size(), expected);
  if (published) c.inside = consistent(*published, {ci.low * s, ci.high * s}, mean(values) * s);
  return c;
}

Table render_table(const Recipe& recipe, const RecipeTable& t, const std::vector<const JobResults*>& results) {
  Table table{fmt::format("{} ({}; {}; measured: mean × {} with 95% bootstrap CI)", t.title, recipe.cite, t.metric,
                          t.scale),
              {""},
              {}};
  // Our own recipes have no published numbers: then only the measured column.
  const bool has_published = !t.published.empty();
  const std::vector<std::string> parts =
      has_published ? std::vector<std::string>{"paper", "measured [95% CI]", "in CI"} : std::vector<std::string>{""};
  for (const auto& column : t.columns)
    for (const auto& part : parts) table.header.push_back(part.empty() ? column.name : column.name + " " + part);
  for (const auto& row : t.rows) {
    std::vector<std::string> line = {row.name};
    for (const auto& column : t.columns) {
      std::vector<const JobResults*> group;
      size_t expected = 0;
      // A reference row has no jobs (its empty "where" would otherwise match them all).
      for (size_t i = 0; i < recipe.jobs.size() && row.reference.empty(); ++i) {
        const json fields = match_fields(recipe.jobs[i]);
        if (!matches(t.where, fields) || !matches(row.where, fields) || !matches(column.where, fields)) continue;
        ++expected;
        if (results[i]) group.push_back(results[i]);
      }
      const auto published = t.published.find({row.name, column.name});
      const Cell c = cell(t, row, group, expected,
                          published == t.published.end() ? std::nullopt : std::optional(published->second));
      if (has_published) line.insert(line.end(), {c.published, c.measured, c.inside});
      else line.push_back(c.measured);
    }
    table.rows.push_back(line);
  }
  return table;
}

}  // namespace

std::vector<Table> recipe_tables(const Recipe& recipe, const std::vector<JobResults>& files) {
  const std::vector<const JobResults*> results = results_of_jobs(recipe, files);
  std::vector<Table> tables;
  for (const auto& t : recipe.tables) tables.push_back(render_table(recipe, t, results));
  return tables;
}

}  // namespace kvbench
