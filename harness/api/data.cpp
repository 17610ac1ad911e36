#include "api/data.h"

#include "common/json_file.h"
#include "run/kvpress_rows.h"

namespace kvbench::api {

int64_t export_kvpress_rows(const ResolvedJob& job, const std::filesystem::path& out) {
  const Tokenizer tokenizer = Tokenizer::load(tokenizer_source(job));
  std::string lines;
  const std::vector<nlohmann::json> rows = kvpress_rows(job, tokenizer);
  for (const nlohmann::json& row : rows) lines += row.dump() + "\n";
  write_file_atomically(out, lines);
  return static_cast<int64_t>(rows.size());
}

}  // namespace kvbench::api
