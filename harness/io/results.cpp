#include "io/results.h"

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "common/error.h"
#include "io/hdf5.h"
#include "common/stats.h"

namespace kvbench {

namespace {

constexpr int64_t kSchemaVersion = 1;

// A struct's stored fields: (name in the file, member) per element type. One table per struct drives
// writing, reading and the journal's JSON, so the three can never disagree.
template <class T>
struct Fields {
  std::vector<std::pair<const char*, std::string T::*>> strings;
  std::vector<std::pair<const char*, int64_t T::*>> ints;
  std::vector<std::pair<const char*, double T::*>> doubles;
  std::vector<std::pair<const char*, std::vector<int64_t> T::*>> sequences;
  std::vector<std::pair<const char*, std::vector<float> T::*>> float_sequences;
};

// kSequences = false for attributes, which are scalars.
template <bool kSequences = true, class T, class F>
void for_each_field(const Fields<T>& fields, F visit) {
  for (const auto& [name, member] : fields.strings) visit(name, member);
  for (const auto& [name, member] : fields.ints) visit(name, member);
  for (const auto& [name, member] : fields.doubles) visit(name, member);
  if constexpr (kSequences) {
    for (const auto& [name, member] : fields.sequences) visit(name, member);
    for (const auto& [name, member] : fields.float_sequences) visit(name, member);
  }
}

const Fields<RunInfo> kInfoFields = {{{"kvbench_version", &RunInfo::kvbench_version},
                                      {"git_commit", &RunInfo::git_commit},
                                      {"config", &RunInfo::config_json},
                                      {"torch_version", &RunInfo::torch_version},
                                      {"device", &RunInfo::device},
                                      {"dtype", &RunInfo::dtype},
                                      {"host", &RunInfo::host},
                                      {"start_time", &RunInfo::start_time},
                                      {"end_time", &RunInfo::end_time}}};

const Fields<Summary> kSummaryFields = {{},
                                        {{"samples", &Summary::samples}, {"rows", &Summary::rows}},
                                        {{"score", &Summary::score},
                                         {"score_ci_low", &Summary::score_ci_low},
                                         {"score_ci_high", &Summary::score_ci_high},
                                         {"pred_none_rate", &Summary::pred_none_rate},
                                         {"mean_generated_length", &Summary::mean_generated_length}}};

// pred / pred_none and generated_length are derived columns, handled beside the table.
const Fields<ResultRow> kRowFields = {{{"sample_id", &ResultRow::sample_id},
                                       {"stop_reason", &ResultRow::stop_reason},
                                       {"output", &ResultRow::output},
                                       {"gold", &ResultRow::gold}},
                                      {{"rollout", &ResultRow::rollout},
                                       {"seed", &ResultRow::seed},
                                       {"prompt_length", &ResultRow::prompt_length},
                                       {"refresh_count", &ResultRow::refresh_count},
                                       {"peak_cache_size", &ResultRow::peak_cache_size},
                                       {"budget_J", &ResultRow::budget_J}},
                                      {{"score", &ResultRow::score},
                                       {"wall_seconds", &ResultRow::wall_seconds},
                                       {"mean_cache_size", &ResultRow::mean_cache_size},
                                       {"key_retention", &ResultRow::key_retention},
                                       {"mean_entries_per_head", &ResultRow::mean_entries_per_head},
                                       {"peak_cache_bytes", &ResultRow::peak_cache_bytes}},
                                      {{"generated_ids", &ResultRow::generated_ids},
                                       {"shadow_top1", &ResultRow::shadow_top1}},
                                      {{"shadow_kl", &ResultRow::shadow_kl}}};

const Fields<RefreshTrace> kTraceFields = {{{"phase", &RefreshTrace::phase}},
                                           {{"row", &RefreshTrace::row},
                                            {"step", &RefreshTrace::step},
                                            {"processed", &RefreshTrace::processed},
                                            {"size_before", &RefreshTrace::size_before},
                                            {"size_after", &RefreshTrace::size_after},
                                            {"layers", &RefreshTrace::layers},
                                            {"kv_heads", &RefreshTrace::kv_heads},
                                            {"candidates_begin", &RefreshTrace::candidates_begin},
                                            {"candidates_end", &RefreshTrace::candidates_end},
                                            {"shadow_lost_queries", &RefreshTrace::shadow_lost_queries}},
                                           {{"scoring_ms", &RefreshTrace::scoring_ms},
                                            {"compaction_ms", &RefreshTrace::compaction_ms},
                                            {"shadow_lost_mass", &RefreshTrace::shadow_lost_mass}},
                                           {{"kept_positions", &RefreshTrace::kept_positions}},
                                           {{"scores", &RefreshTrace::scores},
                                            {"shadow_lost_by_layer", &RefreshTrace::shadow_lost_by_layer}}};

// Stored beside the data (engine/shadow.h has the reasoning).
constexpr const char* kLostAttentionDefinition =
    "--shadow full: per refresh, queries x layers row-major (queries = shadow_lost_queries): for every token fed "
    "after this refresh until the next refresh of the row (or the end of generation; tokens of finished rollouts "
    "excluded), per layer, the full-cache twin's attention probability on the original positions absent from the "
    "policy's cache at that step (evicted at this refresh or an earlier one), mean over query heads. "
    "shadow_lost_mass = the mean of these values (NaN when no token followed the refresh).";

template <class T>
void write_attributes(const h5::Location& at, const T& value, const Fields<T>& fields) {
  for_each_field<false>(fields, [&](const char* name, auto member) { h5::write_attribute(at, name, value.*member); });
}

template <class T>
T read_attributes(const h5::Location& at, const Fields<T>& fields) {
  T value;
  for_each_field<false>(fields, [&](const char* name, auto member) { h5::read_attribute(at, name, value.*member); });
  return value;
}

template <class T, class F>
auto column(const std::vector<T>& items, F field) {
  std::vector<std::decay_t<decltype(field(items.front()))>> values;
  for (const auto& item : items) values.push_back(field(item));
  return values;
}

template <class T>
void write_columns(const h5::Location& at, const std::vector<T>& items, const Fields<T>& fields) {
  for_each_field(fields, [&](const char* name, auto member) {
    h5::write_column(at, name, column(items, [&](const T& item) { return item.*member; }));
  });
}

// Columns added after the first schema-1 files (files and journals written before them read NaN, −1 or
// empty: see missing_value). Names are unique across rows and refreshes.
const std::set<std::string> kAddedInSchema1 = {"key_retention",   "mean_entries_per_head", "peak_cache_bytes", "budget_J",
                                               "scores",          "candidates_begin",      "candidates_end",
                                               "shadow_kl",       "shadow_top1",           "shadow_lost_queries",
                                               "shadow_lost_mass", "shadow_lost_by_layer"};

template <class Value>
Value missing_value() {
  if constexpr (std::is_same_v<Value, double>) return std::numeric_limits<double>::quiet_NaN();
  else if constexpr (std::is_same_v<Value, int64_t>) return -1;
  else return Value{};
}

// `count` items from the group's columns.
template <class T>
std::vector<T> read_columns(const h5::Location& at, size_t count, const Fields<T>& fields) {
  std::vector<T> items(count);
  for_each_field(fields, [&](const char* name, auto member) {
    using Value = std::decay_t<decltype(items.front().*member)>;
    std::vector<Value> values;
    if (!kAddedInSchema1.count(name) || h5::has_object(at, name)) h5::read_column(at, name, values);
    else values.assign(count, missing_value<Value>());
    if (values.size() != count) fail("{}/{}: {} values, expected {}", at.where, name, values.size(), count);
    for (size_t i = 0; i < count; ++i) items[i].*member = std::move(values[i]);
  });
  return items;
}

template <class T>
json fields_to_json(const T& value, const Fields<T>& fields) {
  json out;
  for_each_field(fields, [&](const char* name, auto member) {
    if constexpr (std::is_same_v<std::decay_t<decltype(value.*member)>, double>)
      if (std::isnan(value.*member)) {  // JSON has no NaN: null, read back as NaN (fields_from_json)
        out[name] = nullptr;
        return;
      }
    out[name] = value.*member;
  });
  return out;
}

// JSON has no NaN or infinity (they are written as null): null reads back as NaN.
double number_or_nan(const json& value) {
  return value.is_null() ? std::numeric_limits<double>::quiet_NaN() : value.get<double>();
}

template <class T>
T fields_from_json(const json& in, const Fields<T>& fields) {
  T value;
  for_each_field(fields, [&](const char* name, auto member) {
    using Value = std::decay_t<decltype(value.*member)>;
    if (!in.contains(name) && kAddedInSchema1.count(name)) {  // a journal from before the field existed
      value.*member = missing_value<Value>();
      return;
    }
    const json& field = in.at(name);
    if constexpr (std::is_same_v<Value, double>) {
      value.*member = number_or_nan(field);
    } else if constexpr (std::is_same_v<Value, std::vector<float>>) {
      if (!field.is_array()) fail("{}: expected a list of numbers", name);
      for (const json& element : field) (value.*member).push_back(static_cast<float>(number_or_nan(element)));
    } else {
      field.get_to(value.*member);
    }
  });
  return value;
}

void write_rows(const h5::Location& group, const std::vector<ResultRow>& rows) {
  write_columns(group, rows, kRowFields);
  h5::write_column(group, "pred", column(rows, [](const ResultRow& r) { return r.pred.value_or(""); }));
  h5::write_column(group, "pred_none", column(rows, [](const ResultRow& r) { return int64_t{!r.pred}; }));
  h5::write_column(group, "generated_length",
                   column(rows, [](const ResultRow& r) { return static_cast<int64_t>(r.generated_ids.size()); }));
}

std::vector<ResultRow> read_rows(const h5::Location& group) {
  const auto pred = h5::read_string_column(group, "pred");
  const auto pred_none = h5::read_int_column(group, "pred_none");
  if (pred.size() != pred_none.size()) fail("{}: pred and pred_none have different lengths", group.where);
  std::vector<ResultRow> rows = read_columns(group, pred.size(), kRowFields);
  for (size_t i = 0; i < rows.size(); ++i)
    if (!pred_none[i]) rows[i].pred = pred[i];
  return rows;
}

RunInfo run_info_of(const h5::Location& root) {
  RunInfo info = read_attributes(root, kInfoFields);
  if (h5::has_attribute(root, "batch")) info.batch = h5::read_int_attribute(root, "batch");
  if (h5::has_attribute(root, "threads")) info.threads = h5::read_int_attribute(root, "threads");
  if (h5::has_attribute(root, "settings")) info.settings_json = h5::read_string_attribute(root, "settings");
  if (h5::has_attribute(root, "blas")) info.blas = h5::read_string_attribute(root, "blas");
  return info;
}

}  // namespace

Summary summarize(const std::vector<ResultRow>& rows) {
  std::map<std::string, std::vector<double>> per_sample;  // pass@1 of a sample = mean over its rollouts
  std::vector<double> none, lengths;
  for (const auto& r : rows) {
    per_sample[r.sample_id].push_back(r.score);
    none.push_back(r.pred ? 0.0 : 1.0);
    lengths.push_back(static_cast<double>(r.generated_ids.size()));
  }
  std::vector<double> sample_scores;
  for (const auto& [id, scores] : per_sample) sample_scores.push_back(mean(scores));
  Summary s;
  s.samples = static_cast<int64_t>(per_sample.size());
  s.rows = static_cast<int64_t>(rows.size());
  s.score = mean(sample_scores);
  const Interval ci = bootstrap_ci(sample_scores);
  s.score_ci_low = ci.low;
  s.score_ci_high = ci.high;
  s.pred_none_rate = mean(none);
  s.mean_generated_length = mean(lengths);
  return s;
}

void write_results(const std::filesystem::path& path, const Results& results) {
  {
    const h5::Location root = h5::create_file(path);
    h5::write_attribute(root, "schema_version", kSchemaVersion);
    write_attributes(root, results.info, kInfoFields);
    h5::write_attribute(root, "batch", results.info.batch);
    h5::write_attribute(root, "threads", results.info.threads);
    if (!results.info.settings_json.empty()) h5::write_attribute(root, "settings", results.info.settings_json);
    if (!results.info.blas.empty()) h5::write_attribute(root, "blas", results.info.blas);
    write_attributes(h5::create_group(root, "summary"), results.summary, kSummaryFields);
    write_rows(h5::create_group(root, "rows"), results.rows);
    const h5::Location refreshes = h5::create_group(root, "refreshes");
    write_columns(refreshes, results.refreshes, kTraceFields);
    h5::write_attribute(h5::open_dataset(refreshes, "shadow_lost_by_layer"), "definition", kLostAttentionDefinition);
  }  // closed: the seal covers the final bytes
  h5::seal(path);
}

Results read_results(const std::filesystem::path& path) {
  const h5::Location root = h5::open_file(path);
  Results results;
  results.info = run_info_of(root);
  results.summary = read_attributes(h5::open_group(root, "summary"), kSummaryFields);
  results.rows = read_rows(h5::open_group(root, "rows"));
  const h5::Location refreshes = h5::open_group(root, "refreshes");
  results.refreshes = read_columns(refreshes, h5::read_int_column(refreshes, "row").size(), kTraceFields);
  return results;
}

RunInfo read_run_info(const std::filesystem::path& path) { return run_info_of(h5::open_file(path)); }

// The journal's JSON mirrors the HDF5 columns; pred null = pred=None.
json to_json(const ResultRow& row) {
  json out = fields_to_json(row, kRowFields);
  out["pred"] = row.pred ? json(*row.pred) : json(nullptr);
  return out;
}

json to_json(const RefreshTrace& trace) { return fields_to_json(trace, kTraceFields); }

json to_json(const Summary& summary) { return fields_to_json(summary, kSummaryFields); }

json to_json(const RunInfo& info) {
  json out = fields_to_json(info, kInfoFields);
  out["config"] = json::parse(info.config_json, nullptr, false);  // JSON text in the file
  out["batch"] = info.batch;
  out["threads"] = info.threads;
  out["settings"] = info.settings_json.empty() ? json(nullptr) : json::parse(info.settings_json, nullptr, false);
  out["blas"] = info.blas;
  return out;
}

ResultRow row_from_json(const json& value) {
  ResultRow row = fields_from_json(value, kRowFields);
  if (!value.at("pred").is_null()) row.pred = value.at("pred").get<std::string>();
  return row;
}

RefreshTrace trace_from_json(const json& value) { return fields_from_json(value, kTraceFields); }

}  // namespace kvbench
