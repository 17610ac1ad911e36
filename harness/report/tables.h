// Paper tables from results files (never from re-running models): Table-2 layout (rows policies, columns
// models, fixed J and h), an AIME-style table with a pred=None row, accuracy vs J, refresh latency vs
// cache size n, and paired tests between policies on the same samples and seeds. Rendered as markdown,
// CSV or LaTeX.
#pragma once
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "io/results.h"
#include "run/job.h"

namespace kvbench {

// One results file with the config fields tables group by.
struct JobResults {
  std::filesystem::path file;
  std::string model, task;  // model: the directory's name
  std::string policy;       // the policy and its phrase rules, if any: "counter-causal smooth=3 span=2"
  std::string base_policy;  // the policy's name alone: "counter-causal"
  BudgetJ J;  // a token count or a compression ratio
  int64_t h = 0, seed = 0;
  Results results;
};

JobResults load_job_results(const std::filesystem::path& file);
// The policy as tables name it: with its allocator when not uniform ("h2o-true+pyramid:3", "h2o-true+ada"),
// so jobs that differ only by allocator never share a cell.
std::string policy_label(const json& config);

// Per (seed, task/sample), the mean of `value` over its rollouts: the units bootstrap CIs resample.
std::map<std::pair<int64_t, std::string>, double> unit_values(const std::vector<const JobResults*>& group,
                                                              const std::function<double(const ResultRow&)>& value);
// The same where some rows have no value (std::nullopt): the mean over the rollouts that have one; a unit
// none of whose rollouts has one is left out.
std::map<std::pair<int64_t, std::string>, double> defined_unit_values(
    const std::vector<const JobResults*>& group, const std::function<std::optional<double>(const ResultRow&)>& value);

struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

struct TableFilter {
  std::optional<BudgetJ> J;
  std::string h;  // "" = any, a number, or a ratio of J ("J/2")
  std::vector<std::string> policies;  // empty = all; a name matches with and without phrase rules
};

std::vector<JobResults> filter_jobs(const std::vector<JobResults>& jobs, const TableFilter& filter);

// Each throws kvbench::Error when the files do not fit the layout (e.g. several J values in a
// fixed-J table), saying which filter to add.
std::vector<Table> policy_model_tables(const std::vector<JobResults>& jobs);  // one per task
Table aime_table(const std::vector<JobResults>& jobs);
std::vector<Table> accuracy_vs_j_tables(const std::vector<JobResults>& jobs);  // one per model × task
// The same layout, cells = mean fraction of the task's key passages (rare-fact: the facts) in the cache
// when generation began.
std::vector<Table> key_retention_tables(const std::vector<JobResults>& jobs);
// Score split by key retention (1 = every key passage cached when generation began, < 1 = some evicted):
// the by-J layout with "kept / evicted" cells, then per model × task both groups pooled over policies and J.
// A model that recalls should answer when the fact was kept and fail when it was not.
std::vector<Table> retention_split_tables(const std::vector<JobResults>& jobs);
Table latency_table(const std::vector<JobResults>& jobs);
Table paired_table(const std::vector<JobResults>& jobs);
Table overview_table(const std::vector<JobResults>& jobs);  // one row per file

std::string render(const Table& table, const std::string& format);  // md, csv or latex

}  // namespace kvbench
