// The results file of one job (schema documented in results/README.md): root attributes describing the
// run, one row per sample × rollout, one trace per refresh (kept original positions and timing), and
// summary attributes. The same rows travel as JSON lines in the crash-safe journal (run/journal.h).
#pragma once
#include <cstdint>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kvbench {

using json = nlohmann::json;

struct ResultRow {  // one sample × rollout
  std::string sample_id;
  int64_t rollout = 0;
  int64_t seed = 0;  // the job's sampling seed; rollout r draws from its own stream of it
  int64_t prompt_length = 0;
  std::vector<int64_t> generated_ids;
  std::string stop_reason;  // eos, stop, max_tokens
  std::string output;       // decoded text
  std::optional<std::string> pred;
  std::string gold;         // the sample's record as JSON
  double score = 0.0;
  double wall_seconds = 0.0;  // timing: the sample's generation (shared by its rollouts)
  int64_t refresh_count = 0;
  double mean_cache_size = 0.0;
  int64_t peak_cache_size = 0;
  int64_t budget_J = -1;  // the J its refreshes kept (a ratio budget's share of its prompt); -1 in older files
  // Realised cache size: entries per layer and KV head (padding excluded), mean over decode steps; and the
  // most key/value bytes the sequence held. NaN in files written before allocators.
  double mean_entries_per_head = std::numeric_limits<double>::quiet_NaN();
  double peak_cache_bytes = std::numeric_limits<double>::quiet_NaN();
  // Fraction of the task's key passages in the cache when generation began (run/key_retention.h);
  // NaN when the task names none.
  double key_retention = std::numeric_limits<double>::quiet_NaN();
  // --shadow full: per chosen token, KL(full ‖ policy) of the next-token distributions and whether the
  // argmax tokens agree (engine/shadow.h); empty without a shadow.
  std::vector<float> shadow_kl;
  std::vector<int64_t> shadow_top1;
};

struct RefreshTrace {  // one refresh as seen by one row
  int64_t row = 0;      // index into the rows (within a journal line: the rollout)
  std::string phase;    // prefill or decode
  int64_t step = 0, processed = 0;
  int64_t size_before = 0, size_after = 0;  // n = size_before
  int64_t layers = 1, kv_heads = 1;         // > 1 when the policy keeps per KV head
  std::vector<int64_t> kept_positions;      // layers × kv_heads × M, row-major; -1 = padding (ragged allocators)
  // The policy's raw scores of the n entries in cache order (token-level policies; empty for per-KV-head
  // ones and policies without scores), and the candidate slots [begin, end) that competed for the budget:
  // with the job's smooth and keep_span, enough to recompute the kept set. −1 / empty in older files.
  std::vector<float> scores;
  int64_t candidates_begin = -1, candidates_end = -1;
  double scoring_ms = 0.0, compaction_ms = 0.0;  // timing
  // --shadow full (engine/shadow.h): the refresh's window is every token fed after it until the next refresh
  // (or the end of generation); per such query and layer, the full twin's attention probability on the entries
  // the policy's cache lacked (evicted at this refresh or an earlier one), mean over query heads: queries ×
  // layers, row-major; and its mean over queries and layers (NaN when no token followed the refresh).
  // Without a shadow (and in older files): −1, empty, NaN.
  int64_t shadow_lost_queries = -1;
  std::vector<float> shadow_lost_by_layer;
  double shadow_lost_mass = std::numeric_limits<double>::quiet_NaN();
};

struct RunInfo {
  std::string kvbench_version, git_commit, config_json, torch_version, device, dtype, host, start_time, end_time;
  int64_t batch = 1;  // samples decoded together (--batch); files from before batching ran one at a time
  int64_t threads = 0;  // CPU threads (--threads or its default); 0 in files from before it was recorded
  // What ran, resolved (run/job.h effective_settings): knobs with defaults filled in, the budget as refreshed.
  // Empty in files from before it was recorded.
  std::string settings_json;
  // The BLAS kernels float32 products beyond kvbench's own kernel ran on ("OpenBLAS Cooperlake"): their
  // accumulation order is part of the numbers. Empty for another BLAS and in files from before it was recorded.
  std::string blas;
};

struct Summary {
  int64_t samples = 0, rows = 0;
  double score = 0.0, score_ci_low = 0.0, score_ci_high = 0.0;  // pass@1; bootstrap 95% CI over samples
  double pred_none_rate = 0.0, mean_generated_length = 0.0;
};

struct Results {
  RunInfo info;
  Summary summary;
  std::vector<ResultRow> rows;
  std::vector<RefreshTrace> refreshes;
};

// Summary of rows: pass@1 = mean over a sample's rollouts, then over samples (bootstrap CI over samples).
Summary summarize(const std::vector<ResultRow>& rows);

void write_results(const std::filesystem::path& path, const Results& results);
Results read_results(const std::filesystem::path& path);
// Only the root attributes (cheap: for resume checks and listings).
RunInfo read_run_info(const std::filesystem::path& path);

json to_json(const ResultRow& row);
json to_json(const RefreshTrace& trace);
json to_json(const Summary& summary);
// The file's attributes; config and settings (JSON text in the file) parsed.
json to_json(const RunInfo& info);
ResultRow row_from_json(const json& value);
RefreshTrace trace_from_json(const json& value);

}  // namespace kvbench
