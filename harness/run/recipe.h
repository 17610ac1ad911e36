// A recipe: a sweep config (run/sweep.h) that reproduces one paper table or figure, carrying the
// paper's settings, the datasets it needs and the published numbers (recipes/*.json, README
// "Reproducing the papers"). Beside a sweep's fields it has:
//
//   "recipe": {
//     "title": "...", "cite": "Gould & van den Hengel, arXiv 2607.27600, Table 2",
//     "datasets": ["math500"],                     (task names whose data the jobs read)
//     "choices": ["what the paper leaves open and what this recipe chose", ...],
//     "tables": [{
//       "title": "...", "metric": "score",         (below)
//       "scale": 100, "digits": 1,                 (measured × scale is in the paper's unit; shown digits)
//       "where": {"J": 512},                       (job fields every cell's jobs share)
//       "rows":    [{"name": "H2O", "where": {"policy": "h2o"}}, ...,
//                   {"name": "DMS", "reference": "why kvbench does not run it"}],   (published values only)
//       "columns": [{"name": "Qwen2.5-7B", "where": {"model": "Qwen/Qwen2.5-7B-Instruct"}}, ...],
//       "published": {"H2O": {"Qwen2.5-7B": 76.2, "Llama-3.1-8B": null},   (null: the paper gives "–")
//                     "importance": {"n=512": {"below": 1}}}             (the paper gives only a bound: "< 1")
//     }]
//   },
//   "parts": [{"tag": "mlp", "scorer": "{model}/kvpop-mlp.safetensors", "base": {...}, "grid": {...}}]
//
// Metrics: score, pred_none (no answer extractable anywhere in the output), refresh_ms, seconds_per_sample,
// peak_memory_gb; and for thinking models, as the counter-causal paper reads them (the answer only after
// </think>): pred_none_think (1 when the output has no </think>: thinking not closed within the budget) and
// score_after_think (the task's grade of the text after the last </think>; 0 without one);
// relative_score: the cell's mean score over that of its reference cell, the jobs matching the same
// filters with the table's "relative_to" fields put over them (required with relative_score only):
//       "metric": "relative_score", "relative_to": {"policy": "full", "J": 4096, "tag": ""},
// (the same model's uncompressed teacher); its CI bootstraps the ratio (see report/recipe_report.h).
//
// "parts" (instead of "grid") unions several grids: each part's base extends the recipe's base, and a
// non-empty tag names its jobs ("<label>__<tag>") and is matchable as the field "tag". A part's
// scorer (kvpop) is a file under the scorers directory, "{model}" standing for the model's name.
// A cell's jobs are the recipe's jobs matching the table's, the row's and the column's "where"
// ("model" matches the HF id as the recipe writes it); other fields (e.g. task) are pooled.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "run/sweep.h"

namespace kvbench {

struct RecipeCell {
  std::string name;
  json where;
  std::string reference;  // rows only: non-empty = a published method kvbench does not run (why), no jobs
};

// A published cell: a number, "–" (nullopt: the paper has no value there), or an upper bound ("< 1").
struct PublishedValue {
  std::optional<double> value;
  bool below = false;
};

struct RecipeTable {
  std::string title, metric = "score";
  double scale = 1.0;
  int digits = 3;
  json where = json::object();
  json relative_to = json::object();  // relative_score: the fields that turn a cell's filter into its reference's
  std::vector<RecipeCell> rows, columns;
  std::map<std::pair<std::string, std::string>, PublishedValue> published;  // (row, column)
};

struct RecipeJob {
  SweepJob entry;
  std::string model_id;  // the model as the recipe names it (an HF id)
  std::string tag;
};

struct Recipe {
  std::filesystem::path file;
  std::string title, cite;
  std::vector<std::string> datasets, choices;
  std::vector<RecipeTable> tables;
  std::filesystem::path output_dir;
  std::vector<RecipeJob> jobs;
};

struct RecipeOptions {
  std::filesystem::path output_dir_override, data_root, scorers_dir = "scorers";
};

// True when a sweep config carries a "recipe" section.
bool is_recipe(const json& config);

// Throws kvbench::Error naming the file and the field on malformed recipes (including a published
// number no job of the recipe reproduces).
Recipe load_recipe(const std::filesystem::path& file, const RecipeOptions& options);

// The fields a table's "where" matches: the job's fields, "model" as the HF id, and "tag".
json match_fields(const RecipeJob& job);
bool matches(const json& where, const json& fields);
// The jobs of a cell (indices into recipe.jobs; none for a reference row); with `reference_cell`, those of
// the cell's relative_score reference: its filters merged, the table's relative_to over them.
std::vector<size_t> cell_jobs(const Recipe& recipe, const RecipeTable& table, const RecipeCell& row,
                              const RecipeCell& column, bool reference_cell = false);

// Where models live on this machine: `--set model.ID=PATH` first, else DIR/<name> for ID = org/name
// when `--models-dir DIR` is given, else the model field as written.
struct ModelPaths {
  std::filesystem::path models_dir;
  std::map<std::string, std::string> explicit_paths;  // id → directory
};
std::string resolve_model_path(const std::string& model, const ModelPaths& paths);

// `job` with fields overridden (`--set max_new=8`, `--limit 1`: the same for every job of a sweep); fields
// that name results files (model, task, policy, J, h, seed, rollouts) cannot be. Throws naming the field.
JobConfig with_overrides(const JobConfig& job, const std::map<std::string, json>& fields);

// The data files the job's task reads that are not on this machine.
std::vector<std::filesystem::path> missing_data_files(const ResolvedJob& job);
// Models, scorers and datasets the jobs need that are not on this machine, one line each with how to get it.
std::vector<std::string> missing_inputs(const std::vector<SweepJob>& jobs, const std::map<std::string, std::string>& model_ids);

}  // namespace kvbench
