#include "io/results.h"

#include <map>

#include "common/error.h"
#include "io/hdf5.h"
#include "report/stats.h"

namespace kvbench {

namespace {

constexpr int64_t kSchemaVersion = 1;

// Gathers one field of every element into a column.
template <class T, class F>
auto column(const std::vector<T>& items, F field) {
  std::vector<std::decay_t<decltype(field(items.front()))>> values;
  for (const auto& item : items) values.push_back(field(item));
  return values;
}

void write_info(const h5::Location& root, const RunInfo& info) {
  h5::write_attribute(root, "schema_version", kSchemaVersion);
  h5::write_attribute(root, "kvbench_version", info.kvbench_version);
  h5::write_attribute(root, "git_commit", info.git_commit);
  h5::write_attribute(root, "config", info.config_json);
  h5::write_attribute(root, "torch_version", info.torch_version);
  h5::write_attribute(root, "device", info.device);
  h5::write_attribute(root, "dtype", info.dtype);
  h5::write_attribute(root, "host", info.host);
  h5::write_attribute(root, "start_time", info.start_time);
  h5::write_attribute(root, "end_time", info.end_time);
}

RunInfo read_info(const h5::Location& root) {
  RunInfo info;
  info.kvbench_version = h5::read_string_attribute(root, "kvbench_version");
  info.git_commit = h5::read_string_attribute(root, "git_commit");
  info.config_json = h5::read_string_attribute(root, "config");
  info.torch_version = h5::read_string_attribute(root, "torch_version");
  info.device = h5::read_string_attribute(root, "device");
  info.dtype = h5::read_string_attribute(root, "dtype");
  info.host = h5::read_string_attribute(root, "host");
  info.start_time = h5::read_string_attribute(root, "start_time");
  info.end_time = h5::read_string_attribute(root, "end_time");
  return info;
}

void write_summary(const h5::Location& group, const Summary& s) {
  h5::write_attribute(group, "samples", s.samples);
  h5::write_attribute(group, "rows", s.rows);
  h5::write_attribute(group, "score", s.score);
  h5::write_attribute(group, "score_ci_low", s.score_ci_low);
  h5::write_attribute(group, "score_ci_high", s.score_ci_high);
  h5::write_attribute(group, "pred_none_rate", s.pred_none_rate);
  h5::write_attribute(group, "mean_generated_length", s.mean_generated_length);
}

Summary read_summary(const h5::Location& group) {
  Summary s;
  s.samples = h5::read_int_attribute(group, "samples");
  s.rows = h5::read_int_attribute(group, "rows");
  s.score = h5::read_double_attribute(group, "score");
  s.score_ci_low = h5::read_double_attribute(group, "score_ci_low");
  s.score_ci_high = h5::read_double_attribute(group, "score_ci_high");
  s.pred_none_rate = h5::read_double_attribute(group, "pred_none_rate");
  s.mean_generated_length = h5::read_double_attribute(group, "mean_generated_length");
  return s;
}

void write_rows(const h5::Location& group, const std::vector<ResultRow>& rows) {
  h5::write_column(group, "sample_id", column(rows, [](const ResultRow& r) { return r.sample_id; }));
  h5::write_column(group, "rollout", column(rows, [](const ResultRow& r) { return r.rollout; }));
  h5::write_column(group, "seed", column(rows, [](const ResultRow& r) { return r.seed; }));
  h5::write_column(group, "prompt_length", column(rows, [](const ResultRow& r) { return r.prompt_length; }));
  h5::write_column(group, "generated_ids", column(rows, [](const ResultRow& r) { return r.generated_ids; }));
  h5::write_column(group, "generated_length",
                   column(rows, [](const ResultRow& r) { return static_cast<int64_t>(r.generated_ids.size()); }));
  h5::write_column(group, "stop_reason", column(rows, [](const ResultRow& r) { return r.stop_reason; }));
  h5::write_column(group, "output", column(rows, [](const ResultRow& r) { return r.output; }));
  h5::write_column(group, "pred", column(rows, [](const ResultRow& r) { return r.pred.value_or(""); }));
  h5::write_column(group, "pred_none", column(rows, [](const ResultRow& r) { return int64_t{!r.pred}; }));
  h5::write_column(group, "gold", column(rows, [](const ResultRow& r) { return r.gold; }));
  h5::write_column(group, "score", column(rows, [](const ResultRow& r) { return r.score; }));
  h5::write_column(group, "wall_seconds", column(rows, [](const ResultRow& r) { return r.wall_seconds; }));
  h5::write_column(group, "refresh_count", column(rows, [](const ResultRow& r) { return r.refresh_count; }));
  h5::write_column(group, "mean_cache_size", column(rows, [](const ResultRow& r) { return r.mean_cache_size; }));
  h5::write_column(group, "peak_cache_size", column(rows, [](const ResultRow& r) { return r.peak_cache_size; }));
}

std::vector<ResultRow> read_rows(const h5::Location& group) {
  const auto ids = h5::read_string_column(group, "sample_id");
  const auto rollout = h5::read_int_column(group, "rollout");
  const auto seed = h5::read_int_column(group, "seed");
  const auto prompt_length = h5::read_int_column(group, "prompt_length");
  const auto generated = h5::read_int_sequence_column(group, "generated_ids");
  const auto stop_reason = h5::read_string_column(group, "stop_reason");
  const auto output = h5::read_string_column(group, "output");
  const auto pred = h5::read_string_column(group, "pred");
  const auto pred_none = h5::read_int_column(group, "pred_none");
  const auto gold = h5::read_string_column(group, "gold");
  const auto score = h5::read_double_column(group, "score");
  const auto wall = h5::read_double_column(group, "wall_seconds");
  const auto refresh_count = h5::read_int_column(group, "refresh_count");
  const auto mean_cache = h5::read_double_column(group, "mean_cache_size");
  const auto peak_cache = h5::read_int_column(group, "peak_cache_size");
  for (size_t length : {rollout.size(), seed.size(), generated.size(), score.size(), peak_cache.size()})
    if (length != ids.size()) fail("{}: row columns have different lengths", group.where);
  std::vector<ResultRow> rows(ids.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    ResultRow& r = rows[i];
    r = {ids[i], rollout[i], seed[i], prompt_length[i], generated[i], stop_reason[i], output[i],
         pred_none[i] ? std::nullopt : std::optional<std::string>(pred[i]), gold[i], score[i], wall[i],
         refresh_count[i], mean_cache[i], peak_cache[i]};
  }
  return rows;
}

void write_refreshes(const h5::Location& group, const std::vector<RefreshTrace>& traces) {
  using T = RefreshTrace;
  h5::write_column(group, "row", column(traces, [](const T& t) { return t.row; }));
  h5::write_column(group, "phase", column(traces, [](const T& t) { return t.phase; }));
  h5::write_column(group, "step", column(traces, [](const T& t) { return t.step; }));
  h5::write_column(group, "processed", column(traces, [](const T& t) { return t.processed; }));
  h5::write_column(group, "size_before", column(traces, [](const T& t) { return t.size_before; }));
  h5::write_column(group, "size_after", column(traces, [](const T& t) { return t.size_after; }));
  h5::write_column(group, "layers", column(traces, [](const T& t) { return t.layers; }));
  h5::write_column(group, "kv_heads", column(traces, [](const T& t) { return t.kv_heads; }));
  h5::write_column(group, "kept_positions", column(traces, [](const T& t) { return t.kept_positions; }));
  h5::write_column(group, "scoring_ms", column(traces, [](const T& t) { return t.scoring_ms; }));
  h5::write_column(group, "compaction_ms", column(traces, [](const T& t) { return t.compaction_ms; }));
}

std::vector<RefreshTrace> read_refreshes(const h5::Location& group) {
  const auto row = h5::read_int_column(group, "row");
  const auto phase = h5::read_string_column(group, "phase");
  const auto step = h5::read_int_column(group, "step");
  const auto processed = h5::read_int_column(group, "processed");
  const auto before = h5::read_int_column(group, "size_before");
  const auto after = h5::read_int_column(group, "size_after");
  const auto layers = h5::read_int_column(group, "layers");
  const auto kv_heads = h5::read_int_column(group, "kv_heads");
  const auto kept = h5::read_int_sequence_column(group, "kept_positions");
  const auto scoring = h5::read_double_column(group, "scoring_ms");
  const auto compaction = h5::read_double_column(group, "compaction_ms");
  for (size_t length : {phase.size(), step.size(), before.size(), kept.size(), compaction.size()})
    if (length != row.size()) fail("{}: refresh columns have different lengths", group.where);
  std::vector<RefreshTrace> traces(row.size());
  for (size_t i = 0; i < traces.size(); ++i)
    traces[i] = {row[i], phase[i], step[i], processed[i], before[i], after[i], layers[i], kv_heads[i], kept[i],
                 scoring[i], compaction[i]};
  return traces;
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
  const h5::Location root = h5::create_file(path);
  write_info(root, results.info);
  write_summary(h5::create_group(root, "summary"), results.summary);
  write_rows(h5::create_group(root, "rows"), results.rows);
  write_refreshes(h5::create_group(root, "refreshes"), results.refreshes);
}

Results read_results(const std::filesystem::path& path) {
  const h5::Location root = h5::open_file(path);
  Results results;
  results.info = read_info(root);
  results.summary = read_summary(h5::open_group(root, "summary"));
  results.rows = read_rows(h5::open_group(root, "rows"));
  results.refreshes = read_refreshes(h5::open_group(root, "refreshes"));
  return results;
}

RunInfo read_run_info(const std::filesystem::path& path) { return read_info(h5::open_file(path)); }

// The journal's JSON mirrors the HDF5 columns; pred null = pred=None.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RefreshTrace, row, phase, step, processed, size_before, size_after, layers,
                                   kv_heads, kept_positions, scoring_ms, compaction_ms)

json to_json(const ResultRow& r) {
  return {{"sample_id", r.sample_id},       {"rollout", r.rollout},
          {"seed", r.seed},                 {"prompt_length", r.prompt_length},
          {"generated_ids", r.generated_ids}, {"stop_reason", r.stop_reason},
          {"output", r.output},             {"pred", r.pred ? json(*r.pred) : json(nullptr)},
          {"gold", r.gold},                 {"score", r.score},
          {"wall_seconds", r.wall_seconds}, {"refresh_count", r.refresh_count},
          {"mean_cache_size", r.mean_cache_size}, {"peak_cache_size", r.peak_cache_size}};
}

json to_json(const RefreshTrace& t) {
  json value;
  to_json(value, t);
  return value;
}

ResultRow row_from_json(const json& v) {
  ResultRow r;
  v.at("sample_id").get_to(r.sample_id);
  v.at("rollout").get_to(r.rollout);
  v.at("seed").get_to(r.seed);
  v.at("prompt_length").get_to(r.prompt_length);
  v.at("generated_ids").get_to(r.generated_ids);
  v.at("stop_reason").get_to(r.stop_reason);
  v.at("output").get_to(r.output);
  if (!v.at("pred").is_null()) r.pred = v.at("pred").get<std::string>();
  v.at("gold").get_to(r.gold);
  v.at("score").get_to(r.score);
  v.at("wall_seconds").get_to(r.wall_seconds);
  v.at("refresh_count").get_to(r.refresh_count);
  v.at("mean_cache_size").get_to(r.mean_cache_size);
  v.at("peak_cache_size").get_to(r.peak_cache_size);
  return r;
}

RefreshTrace trace_from_json(const json& v) { return v.get<RefreshTrace>(); }

}  // namespace kvbench
