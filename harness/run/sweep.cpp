#include "run/sweep.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "common/error.h"
#include "common/json_file.h"
#include "run/runner.h"

namespace kvbench {

namespace {

// "J/4" → J / 4 (at least 1), "J" → J, a number → itself.
json resolve_h(const json& h, int64_t J, const std::string& where) {
  if (!h.is_string()) return h;
  const std::string text = h.get<std::string>();
  if (text == "J") return J;
  if (text.rfind("J/", 0) == 0) {
    try {
      size_t used = 0;
      const int64_t divisor = std::stoll(text.substr(2), &used);
      if (used == text.size() - 2 && divisor > 0) return std::max<int64_t>(J / divisor, 1);
    } catch (const std::exception&) {
    }
  }
  fail("{}: field \"h\" must be a number or a ratio of J like \"J/4\" (got \"{}\")", where, text);
}

// More jobs than any cluster queue takes is a typo in the grid, not a sweep to start expanding.
constexpr std::size_t kMaxJobs = 100000;

// Every combination of the grid's values, the last key varying fastest.
std::vector<json> cross_product(const json& grid, const std::string& where) {
  std::size_t count = 1;
  for (const auto& [key, values] : grid.items()) {
    if (!values.is_array() || values.empty())
      fail("{}: grid field \"{}\" must be a non-empty list of values", where, key);
    if (values.size() > kMaxJobs / count)
      fail("{}: the grid expands to more than {} jobs; split the sweep into several configs", where, kMaxJobs);
    count *= values.size();
  }
  std::vector<json> combos = {json::object()};
  for (const auto& [key, values] : grid.items()) {
    std::vector<json> next;
    for (const auto& combo : combos)
      for (const auto& value : values) {
        json extended = combo;
        extended[key] = value;
        next.push_back(std::move(extended));
      }
    combos = std::move(next);
  }
  return combos;
}

void require_keys(const json& config, const std::set<std::string>& known, const std::string& where) {
  if (!config.is_object()) fail("{}: expected a JSON object with \"base\" and \"grid\"", where);
  for (const auto& [key, value] : config.items())
    if (!known.count(key)) fail("{}: unknown field \"{}\" (expected output_dir, base, grid)", where, key);
}

// One job of the grid, resolved; resolve_job's messages name the field, this says which file and job too.
ResolvedJob resolved(const json& fields, const std::string& where, const std::filesystem::path& data_root) {
  try {
    return resolve_job(job_from_json(fields, where), data_root);
  } catch (const Error& e) {
    const std::string message = e.what();
    if (message.rfind(where, 0) == 0) throw;
    fail("{}: {}", where, message);
  }
}

}  // namespace

Sweep load_sweep(const std::filesystem::path& path, const std::filesystem::path& output_dir_override,
                 const std::filesystem::path& data_root) {
  return expand_sweep(read_json_file(path), path.string(), output_dir_override, data_root);
}

Sweep expand_sweep(const json& config, const std::string& file, const std::filesystem::path& output_dir_override,
                   const std::filesystem::path& data_root) {
  require_keys(config, {"output_dir", "base", "grid"}, file);
  const json base = config.value("base", json::object());
  const json grid = config.value("grid", json::object());
  if (!base.is_object()) fail("{}: field \"base\" must be an object of job fields", file);
  if (!grid.is_object() || grid.empty()) fail("{}: field \"grid\" must be an object of lists of job fields", file);
  Sweep sweep;
  if (!output_dir_override.empty()) sweep.output_dir = output_dir_override;
  else if (config.contains("output_dir") && config["output_dir"].is_string()) sweep.output_dir = config["output_dir"].get<std::string>();
  else fail("{}: no output directory: give \"output_dir\" or --out-dir", file);

  // Grid axes the standard label leaves out (e.g. temperature) name themselves in the file names.
  std::vector<std::string> extra_fields;
  for (const auto& [key, values] : grid.items())
    if (!std::set<std::string>{"model", "task", "policy", "J", "ratio", "h", "seed", "rollouts"}.count(key))
      extra_fields.push_back(key);
  std::map<std::string, size_t> labels;
  for (json fields : cross_product(grid, file)) {
    const std::string where = fmt::format("{}: job {}", file, sweep.jobs.size());
    json merged = base;
    merged.update(fields);
    const json J = merged.value("J", json(0));
    const bool ratio = merged.value("ratio", json(0.0)) != json(0.0) && merged.value("ratio", json(0.0)) != json(0);
    if (ratio && merged.value("h", json(0)) == json("J/4")) merged["h"] = 0;  // a ratio budget's J/4: per sample
    else if (merged.contains("h"))
      merged["h"] = resolve_h(merged["h"], J.is_number_integer() ? J.get<int64_t>() : 0, where);
    SweepJob entry{resolved(merged, where, data_root), {}, {}};
    entry.label = job_label(entry.job, extra_fields);
    entry.out = sweep.output_dir / (entry.label + ".h5");
    if (labels.count(entry.label))
      fail("{}: jobs {} and {} share the file name {} (two models with one directory name?); split the sweep "
           "into two configs",
           file, labels[entry.label], sweep.jobs.size(), entry.label);
    labels[entry.label] = sweep.jobs.size();
    sweep.jobs.push_back(std::move(entry));
  }
  return sweep;
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  try {
    size_t used_index = 0, used_count = 0;
    const Shard shard{std::stoll(text.substr(0, slash), &used_index), std::stoll(text.substr(slash + 1), &used_count)};
    if (slash != std::string::npos && used_index == slash && used_count == text.size() - slash - 1 &&
        shard.count > 0 && shard.index >= 0 && shard.index < shard.count)
      return shard;
  } catch (const std::exception&) {
  }
  fail("--shard must be i/N with 0 <= i < N, e.g. 0/4 (got \"{}\")", text);
}

std::vector<SweepJob> shard_jobs(const std::vector<SweepJob>& jobs, const Shard& shard) {
  std::vector<SweepJob> mine;
  for (size_t k = shard.index; k < jobs.size(); k += shard.count) mine.push_back(jobs[k]);
  return mine;
}

namespace {
std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}
}  // namespace

std::string slurm_script(const std::filesystem::path& kvbench, const std::filesystem::path& config,
                         const std::filesystem::path& output_dir, const std::vector<std::string>& forwarded,
                         int64_t shards, const std::vector<std::string>& sbatch_lines) {
  std::string script = "#!/bin/bash\n# Written by `kvbench sweep --emit-slurm`: one sweep shard per array task.\n"
                       "# Submit with: sbatch THIS_FILE   (then: kvbench report " +
                       output_dir.string() + "/*.h5)\n";
  script += "#SBATCH --job-name=kvbench-sweep\n";
  script += fmt::format("#SBATCH --array=0-{}\n", shards - 1);
  script += fmt::format("#SBATCH --output={}/slurm-%A_%a.log\n", output_dir.string());
  for (const auto& line : sbatch_lines) script += "#SBATCH " + line + "\n";
  script += "set -euo pipefail\n";
  script += fmt::format("cd {}\n", shell_quote(std::filesystem::current_path().string()));
  // As many threads as CPUs allocated to the task (1 unless --cpus-per-task), not one per core of the node.
  script += fmt::format("{} --threads \"${{SLURM_CPUS_PER_TASK:-1}}\" sweep --config {} --out-dir {}",
                        shell_quote(kvbench.string()), shell_quote(config.string()), shell_quote(output_dir.string()));
  for (const auto& word : forwarded) script += " " + shell_quote(word);
  script += fmt::format(" --shard \"${{SLURM_ARRAY_TASK_ID}}/{}\"\n", shards);
  return script;
}

}  // namespace kvbench
