#include "report/recipe_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <tuple>

#include "common/error.h"
#include "common/stats.h"
#include "run/profile.h"
#include "tasks/task.h"

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
             file.task, file.policy, file.J.text(), file.h, recipe.jobs[i].entry.label);
      found[i] = &file;
    }
  return found;
}

using Units = std::map<std::pair<int64_t, std::string>, double>;

const std::string kThinkEnd = "</think>";

// Per row, the task's grade of the text after the last </think> (0 without one: the paper's pred=None), graded
// as the file's run graded (its task under its profile's protocol); keyed by row, as unit_values sees rows only.
std::map<const ResultRow*, double> scores_after_think(const std::vector<const JobResults*>& group) {
  std::map<const ResultRow*, double> scores;
  for (const JobResults* job : group) {
    const std::string profile = json::parse(job->results.info.config_json).value("profile", "kvbench");
    const auto task = tasks::make_task(job->task, task_protocol(parse_profile(profile)));
    for (const auto& row : job->results.rows) {
      const size_t end = row.output.rfind(kThinkEnd);
      const tasks::Sample sample{row.sample_id, json::parse(row.gold)};
      scores[&row] = end == std::string::npos
                         ? 0.0
                         : tasks::grade_total(*task, sample, std::string_view(row.output).substr(end + kThinkEnd.size()),
                                              job->file.string() + ": " + row.sample_id)
                               .score;
    }
  }
  return scores;
}

// Per (seed, task/sample) unit, the metric's mean over the unit's rollouts; nullopt for metrics not per row.
std::optional<Units> metric_units(const std::string& metric, const std::vector<const JobResults*>& group) {
  std::function<double(const ResultRow&)> value;
  std::map<const ResultRow*, double> after_think;
  if (metric == "score" || metric == "relative_score") value = [](const ResultRow& row) { return row.score; };
  else if (metric == "pred_none") value = [](const ResultRow& row) { return row.pred ? 0.0 : 1.0; };
  else if (metric == "pred_none_think")
    value = [](const ResultRow& row) { return row.output.find(kThinkEnd) == std::string::npos ? 1.0 : 0.0; };
  else if (metric == "score_after_think") {
    after_think = scores_after_think(group);
    value = [&](const ResultRow& row) { return after_think.at(&row); };
  } else if (metric == "seconds_per_sample") value = [](const ResultRow& row) { return row.wall_seconds; };
  else return std::nullopt;
  return unit_values(group, value);
}

std::vector<double> values_of(const Units& units) {
  std::vector<double> values;
  for (const auto& [unit, value] : units) values.push_back(value);
  return values;
}

// The values a cell's mean and CI come from; empty when the metric is not in results files.
std::vector<double> metric_values(const std::string& metric, const std::vector<const JobResults*>& group) {
  if (const auto units = metric_units(metric, group)) return values_of(*units);
  std::vector<double> values;
  if (metric == "refresh_ms")
    for (const JobResults* job : group)
      for (const auto& trace : job->results.refreshes) values.push_back(trace.scoring_ms);
  return values;
}

// mean(a) / mean(b) and its 95% percentile bootstrap CI, as bootstrap_ci resamples a mean: the units resampled
// in pairs when both sides have the same ones (the same problems and seeds: the usual case, and the ratio's
// sides are correlated), else each side on its own; resamples whose denominator is 0 are left out.
std::pair<double, Interval> ratio_ci(const Units& a, const Units& b, uint64_t seed = 0, int resamples = 2000) {
  const std::vector<double> x = values_of(a), y = values_of(b);
  const bool paired = x.size() == y.size() &&
                      std::equal(a.begin(), a.end(), b.begin(), [](const auto& p, const auto& q) { return p.first == q.first; });
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick_x(0, x.size() - 1), pick_y(0, y.size() - 1);
  std::vector<double> ratios;
  for (int r = 0; r < resamples; ++r) {
    double sx = 0.0, sy = 0.0;
    for (size_t i = 0; i < x.size(); ++i) {
      const size_t k = pick_x(rng);
      sx += x[k];
      if (paired) sy += y[k];
    }
    for (size_t i = 0; !paired && i < y.size(); ++i) sy += y[pick_y(rng)];
    if (sy != 0.0) ratios.push_back(sx / static_cast<double>(x.size()) / (sy / static_cast<double>(y.size())));
  }
  if (ratios.empty()) return {mean(x) / mean(y), {NAN, NAN}};
  std::sort(ratios.begin(), ratios.end());
  auto at = [&](double q) { return ratios[static_cast<size_t>(std::floor(q * static_cast<double>(ratios.size() - 1)))]; };
  return {mean(x) / mean(y), {at(0.025), at(0.975)}};
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

// The results files of some of the recipe's jobs, and how many jobs there are.
struct Group {
  std::vector<const JobResults*> files;
  size_t expected = 0;
};

Group group_of(const std::vector<size_t>& jobs, const std::vector<const JobResults*>& results) {
  Group group{{}, jobs.size()};
  for (size_t i : jobs)
    if (results[i]) group.files.push_back(results[i]);
  return group;
}

std::string coverage(const Group& group, const std::string& whose) {
  return group.files.size() < group.expected ? fmt::format(" ({}{} of {} files)", whose, group.files.size(), group.expected) : "";
}

// `reference`: the relative_score cell's reference cell (unused by other metrics).
Cell cell(const RecipeTable& table, const RecipeCell& row, const Group& group, const Group& reference,
          const std::optional<PublishedValue>& published) {
  Cell c;
  const int d = table.digits;
  if (published) c.published = published_text(*published, d);
  if (!row.reference.empty()) return {c.published, "reference: not run by kvbench", ""};
  if (group.expected == 0) return {c.published, "not in recipe", ""};
  if (table.metric == "peak_memory_gb") return {c.published, "not recorded by kvbench", ""};
  const bool relative = table.metric == "relative_score";
  if (relative && reference.expected == 0) return {c.published, "relative_to: no such job in recipe", ""};
  if (group.files.empty() || (relative && reference.files.empty())) return {c.published, "missing", ""};
  double value = 0.0;
  Interval ci;
  if (relative) {
    const Units cell_units = *metric_units("score", group.files), reference_units = *metric_units("score", reference.files);
    if (mean(values_of(reference_units)) == 0.0) return {c.published, "relative_to scores 0: no ratio", ""};
    std::tie(value, ci) = ratio_ci(cell_units, reference_units);
  } else {
    const std::vector<double> values = metric_values(table.metric, group.files);
    if (values.empty()) return {c.published, "no data in results", ""};
    value = mean(values);
    ci = bootstrap_ci(values);
  }
  const double s = table.scale;
  c.measured = fmt::format("{:.{}f} [{:.{}f}, {:.{}f}]", value * s, d, ci.low * s, d, ci.high * s, d) +
               coverage(group, "") + (relative ? coverage(reference, "relative_to: ") : "");
  if (published) c.inside = consistent(*published, {ci.low * s, ci.high * s}, value * s);
  return c;
}

Table render_table(const Recipe& recipe, const RecipeTable& t, const std::vector<const JobResults*>& results) {
  const std::string metric =
      t.metric == "relative_score" ? fmt::format("score / score of the cell with {}", t.relative_to.dump()) : t.metric;
  Table table{fmt::format("{} ({}; {}; measured: mean × {} with 95% bootstrap CI)", t.title, recipe.cite, metric, t.scale),
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
      const Group group = group_of(cell_jobs(recipe, t, row, column), results);
      const Group reference =
          t.metric == "relative_score" ? group_of(cell_jobs(recipe, t, row, column, true), results) : Group{};
      const auto published = t.published.find({row.name, column.name});
      const Cell c = cell(t, row, group, reference,
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
