#include "run/recipe.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "common/error.h"
#include "common/gguf_file.h"
#include "common/json_file.h"
#include "run/datasets.h"
#include "tasks/task.h"

namespace kvbench {

namespace {

const std::set<std::string> kMetrics = {"score",          "pred_none",      "pred_none_think", "score_after_think",
                                        "relative_score", "refresh_ms",     "seconds_per_sample", "peak_memory_gb"};

// The dataset whose file `file` is (by its path under a datasets root), for the fetch hint.
std::string source_of(const std::filesystem::path& file) {
  const std::string path = file.string();
  for (const auto& source : dataset_sources())
    if (path.size() >= source.file.size() && path.compare(path.size() - source.file.size(), source.file.size(), source.file) == 0)
      return source.name;
  return "NAME";
}

// The fields that make up a results file's name (job_label): overriding them would merge jobs.
const std::set<std::string> kLabelFields = {"model", "task", "policy", "J", "ratio", "h", "seed", "rollouts"};

std::string text_field(const json& object, const std::string& name, const std::string& where) {
  const auto it = object.find(name);
  if (it == object.end() || !it->is_string()) fail("{}: field \"{}\" must be a string", where, name);
  return it->get<std::string>();
}

std::vector<std::string> text_list(const json& object, const std::string& name, const std::string& where) {
  const auto it = object.find(name);
  if (it == object.end()) return {};
  if (!it->is_array()) fail("{}: field \"{}\" must be a list of strings", where, name);
  std::vector<std::string> values;
  for (const auto& value : *it) {
    if (!value.is_string()) fail("{}: field \"{}\" must be a list of strings (got {})", where, name, value.dump());
    values.push_back(value.get<std::string>());
  }
  return values;
}

void require_known(const json& object, const std::set<std::string>& known, const std::string& where) {
  if (!object.is_object()) fail("{}: expected a JSON object", where);
  for (const auto& [key, value] : object.items())
    if (!known.count(key)) fail("{}: unknown field \"{}\" (expected {})", where, key, fmt::join(known, ", "));
}

std::vector<RecipeCell> parse_cells(const json& table, const std::string& name, const std::string& where) {
  const auto it = table.find(name);
  if (it == table.end() || !it->is_array() || it->empty()) fail("{}: field \"{}\" must be a non-empty list", where, name);
  const bool rows = name == "rows";
  std::vector<RecipeCell> cells;
  for (size_t i = 0; i < it->size(); ++i) {
    const std::string at = fmt::format("{}.{}[{}]", where, name, i);
    const json& cell = (*it)[i];
    require_known(cell, rows ? std::set<std::string>{"name", "where", "reference"} : std::set<std::string>{"name", "where"}, at);
    cells.push_back({text_field(cell, "name", at), cell.value("where", json::object()),
                     cell.contains("reference") ? text_field(cell, "reference", at) : ""});
    if (!cells.back().where.is_object()) fail("{}: field \"where\" must be an object of job fields", at);
    if (cell.contains("reference") && (cells.back().reference.empty() || cell.contains("where")))
      fail("{}: a reference row says why kvbench does not run it and has no \"where\"", at);
  }
  return cells;
}

// A number, null ("–") or {"below": number}.
PublishedValue parse_published(const json& number, const std::string& where) {
  if (number.is_null()) return {};
  if (number.is_number()) return {number.get<double>()};
  if (number.is_object() && number.size() == 1 && number.contains("below") && number["below"].is_number())
    return {number["below"].get<double>(), true};
  fail("{} must be a number, null or {{\"below\": number}} (got {})", where, number.dump());
}

const RecipeCell* find_cell(const std::vector<RecipeCell>& cells, const std::string& name) {
  for (const auto& cell : cells)
    if (cell.name == name) return &cell;
  return nullptr;
}

// The fields a cell's filters can name (match_fields): every job field, "model" and "tag".
std::set<std::string> filter_fields() {
  std::set<std::string> names = {"allocator", "tag"};  // job fields to_json omits by default
  const json fields = to_json(JobConfig{});  // named: items() of a temporary would dangle
  for (const auto& [name, value] : fields.items()) names.insert(name);
  return names;
}

RecipeTable parse_table(const json& value, const std::string& where) {
  require_known(value,
                {"title", "metric", "relative_to", "scale", "digits", "where", "rows", "columns", "published", "note"},
                where);
  RecipeTable t;
  t.title = text_field(value, "title", where);
  t.metric = value.value("metric", t.metric);
  if (!kMetrics.count(t.metric)) fail("{}: field \"metric\" must be one of {} (got \"{}\")", where, fmt::join(kMetrics, ", "), t.metric);
  if (t.metric != "relative_score" && value.contains("relative_to"))
    fail("{}: field \"relative_to\" is for metric relative_score only (the metric is {})", where, t.metric);
  if (t.metric == "relative_score") {
    t.relative_to = value.value("relative_to", json());
    if (!t.relative_to.is_object() || t.relative_to.empty())
      fail("{}: metric relative_score needs field \"relative_to\": the job fields that turn a cell's filter into its "
           "reference's, e.g. {{\"policy\": \"full\"}}",
           where);
    require_known(t.relative_to, filter_fields(), where + ": relative_to");
  }
  t.scale = value.value("scale", t.scale);
  t.digits = value.value("digits", t.digits);
  t.where = value.value("where", json::object());
  t.rows = parse_cells(value, "rows", where);
  t.columns = parse_cells(value, "columns", where);
  const json published = value.value("published", json::object());
  if (!published.is_object()) fail("{}: field \"published\" must map row names to {{column: value}}", where);
  for (const auto& [row, cells] : published.items()) {
    if (!find_cell(t.rows, row)) fail("{}: published row \"{}\" is not one of the table's rows", where, row);
    for (const auto& [column, number] : cells.items()) {
      if (!find_cell(t.columns, column))
        fail("{}: published column \"{}\" (row \"{}\") is not one of the table's columns", where, column, row);
      t.published[{row, column}] =
          parse_published(number, fmt::format("{}: published value of \"{}\" / \"{}\"", where, row, column));
    }
  }
  return t;
}

// A published number that no job reproduces is a broken recipe, not a missing result (reference rows
// carry numbers kvbench does not reproduce).
void check_published_cells(const Recipe& recipe, const RecipeTable& table, const std::string& where) {
  for (const auto& [key, published] : table.published) {
    const RecipeCell *row = find_cell(table.rows, key.first), *column = find_cell(table.columns, key.second);
    if (!published.value || !row->reference.empty()) continue;
    if (cell_jobs(recipe, table, *row, *column).empty())
      fail("{}: no job of the recipe matches the published cell \"{}\" / \"{}\"", where, key.first, key.second);
    if (table.metric == "relative_score" && cell_jobs(recipe, table, *row, *column, true).empty())
      fail("{}: relative_to: no job of the recipe is the reference of the published cell \"{}\" / \"{}\"", where,
           key.first, key.second);
  }
}

std::string model_name(const std::string& model) { return std::filesystem::path(model).filename().string(); }

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// The jobs of one part: the part's base over the recipe's base, its grid, its tag and scorer.
std::vector<RecipeJob> expand_part(const json& config, const json& part, const std::string& where,
                                   const std::filesystem::path& output_dir, const RecipeOptions& options) {
  require_known(part, {"tag", "scorer", "base", "grid"}, where);
  json base = config.value("base", json::object());
  if (!base.is_object()) fail("{}: field \"base\" must be an object of job fields", where);
  base.update(part.value("base", json::object()));
  const json sweep = {{"output_dir", output_dir.string()}, {"base", base}, {"grid", part.value("grid", json::object())}};
  const std::string tag = part.value("tag", "");
  const std::string scorer = part.value("scorer", "");
  std::vector<RecipeJob> jobs;
  Sweep expanded = expand_sweep(sweep, where, {}, options.data_root);
  for (SweepJob& entry : expanded.jobs) {
    RecipeJob job{std::move(entry), {}, tag};
    job.model_id = job.entry.job.model;
    if (!tag.empty()) job.entry.label += "__" + tag;
    job.entry.out = output_dir / (job.entry.label + ".h5");
    if (!scorer.empty()) {  // each model's own scorer
      JobConfig with_scorer = job.entry.job;
      with_scorer.scorer = (options.scorers_dir / replace_all(scorer, "{model}", model_name(job.model_id))).string();
      job.entry.job = resolve_job(std::move(with_scorer), options.data_root);
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

void parse_metadata(Recipe& recipe, const json& section, const std::string& where) {
  require_known(section, {"title", "cite", "datasets", "choices", "tables"}, where);
  recipe.title = text_field(section, "title", where);
  recipe.cite = text_field(section, "cite", where);
  recipe.datasets = text_list(section, "datasets", where);
  for (const auto& name : recipe.datasets) dataset_source(name);  // unknown names fail here
  recipe.choices = text_list(section, "choices", where);
  const json tables = section.value("tables", json::array());
  if (!tables.is_array() || tables.empty()) fail("{}: field \"tables\" must be a non-empty list", where);
  for (size_t i = 0; i < tables.size(); ++i)
    recipe.tables.push_back(parse_table(tables[i], fmt::format("{}.tables[{}]", where, i)));
}

}  // namespace

bool is_recipe(const json& config) { return config.is_object() && config.contains("recipe"); }

Recipe load_recipe(const std::filesystem::path& file, const RecipeOptions& options) {
  const json config = read_json_file(file);
  const std::string where = file.string();
  require_known(config, {"recipe", "output_dir", "base", "grid", "parts"}, where);
  if (config.contains("grid") == config.contains("parts")) fail("{}: give either \"grid\" or \"parts\"", where);
  Recipe recipe;
  recipe.file = file;
  parse_metadata(recipe, config.at("recipe"), where + ": recipe");
  if (!options.output_dir_override.empty()) recipe.output_dir = options.output_dir_override;
  else recipe.output_dir = text_field(config, "output_dir", where);
  const json parts = config.contains("parts") ? config.at("parts") : json::array({{{"grid", config.at("grid")}}});
  if (!parts.is_array() || parts.empty()) fail("{}: field \"parts\" must be a non-empty list", where);
  std::map<std::string, size_t> labels;
  for (size_t p = 0; p < parts.size(); ++p) {
    const std::string at = fmt::format("{}: parts[{}]", where, p);
    for (RecipeJob& job : expand_part(config, parts[p], at, recipe.output_dir, options)) {
      if (!labels.emplace(job.entry.label, p).second)
        fail("{}: a job named {} is already in parts[{}]; give one of the parts a \"tag\"", at, job.entry.label,
             labels[job.entry.label]);
      recipe.jobs.push_back(std::move(job));
    }
  }
  for (size_t t = 0; t < recipe.tables.size(); ++t)
    check_published_cells(recipe, recipe.tables[t], fmt::format("{}: recipe.tables[{}]", where, t));
  return recipe;
}

json match_fields(const RecipeJob& job) {
  json fields = to_json(job.entry.job);
  fields["model"] = job.model_id;
  fields["tag"] = job.tag;
  return fields;
}

bool matches(const json& where, const json& fields) {
  for (const auto& [key, value] : where.items())
    if (!fields.contains(key) || fields[key] != value) return false;
  return true;
}

std::vector<size_t> cell_jobs(const Recipe& recipe, const RecipeTable& table, const RecipeCell& row,
                              const RecipeCell& column, bool reference_cell) {
  std::vector<json> filters = {table.where, row.where, column.where};
  if (reference_cell) {  // merged so that relative_to replaces what the row or column says of a field
    json merged = json::object();
    for (const json& filter : filters) merged.update(filter);
    merged.update(table.relative_to);
    filters = {merged};
  }
  std::vector<size_t> found;
  // A reference row has no jobs (its empty "where" would otherwise match them all).
  for (size_t i = 0; i < recipe.jobs.size() && row.reference.empty(); ++i) {
    const json fields = match_fields(recipe.jobs[i]);
    if (std::all_of(filters.begin(), filters.end(), [&](const json& filter) { return matches(filter, fields); }))
      found.push_back(i);
  }
  return found;
}

std::string resolve_model_path(const std::string& model, const ModelPaths& paths) {
  const auto it = paths.explicit_paths.find(model);
  if (it != paths.explicit_paths.end()) return it->second;
  if (!paths.models_dir.empty()) return (paths.models_dir / model_name(model)).string();
  return model;
}

JobConfig with_overrides(const JobConfig& job, const std::map<std::string, json>& fields) {
  if (fields.empty()) return job;
  json config = to_json(job);
  for (const auto& [field, value] : fields) {
    if (kLabelFields.count(field))
      fail("--set {}: this field names the results files, so it cannot be overridden for every job (edit the "
           "config instead)",
           field);
    if (!config.contains(field)) fail("--set {}: not a job field (known: {})", field, config.dump());
    config[field] = value;
  }
  return job_from_json(config, "--set");
}

std::vector<std::filesystem::path> missing_data_files(const ResolvedJob& job) {
  std::vector<std::filesystem::path> missing;
  for (const auto& file : job.benchmark().files_read(job.data))
    if (!std::filesystem::exists(file)) missing.push_back(file);
  return missing;
}

std::vector<std::string> missing_inputs(const std::vector<SweepJob>& jobs,
                                        const std::map<std::string, std::string>& model_ids) {
  std::set<std::string> seen;
  std::vector<std::string> missing;
  auto report = [&](const std::string& key, const std::string& line) {
    if (seen.insert(key).second) missing.push_back(line);
  };
  for (const auto& entry : jobs) {
    const ResolvedJob& job = entry.job;
    const bool model_present = std::filesystem::exists(std::filesystem::path(job.model) / "config.json") ||
                               !gguf_model_file(job.model).empty();
    if (!model_present) {
      const auto id = model_ids.find(job.model);
      const std::string hf = id != model_ids.end() ? id->second : "ORG/NAME";
      report(job.model, fmt::format("model {}: {} does not exist (download it with `huggingface-cli download {} "
                                    "--local-dir {}`, or point to it with --models-dir DIR / --set model.{}=PATH)",
                                    hf, job.model, hf, job.model, hf));
    }
    if (!job.scorer.empty() && !std::filesystem::exists(job.scorer))
      report(job.scorer, fmt::format("scorer {}: does not exist (train it with `kvbench train-scorer --model {} "
                                     "--out {} ...`, or point --scorers-dir to where it is)",
                                     job.scorer, job.model, job.scorer));
    for (const auto& file : missing_data_files(job))
      report(file.string(), fmt::format("dataset {}: {} does not exist (fetch it with `kvbench datasets fetch {}`, "
                                        "or pass --data-root DIR; sources: datasets/README.md)",
                                        job.task, file.string(), source_of(file)));
  }
  return missing;
}

}  // namespace kvbench
