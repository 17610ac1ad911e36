#include "report/niah.h"

#include <fmt/format.h>

#include <map>

#include "common/error.h"

namespace kvbench {

std::vector<Table> niah_tables(const std::vector<JobResults>& jobs) {
  std::vector<Table> tables;
  for (const JobResults& job : jobs) {
    if (job.task != "niah") continue;
    std::map<double, std::map<int64_t, std::pair<double, int64_t>>> cells;  // depth → length → (sum, count)
    std::set<int64_t> lengths;
    for (const ResultRow& row : job.results.rows) {
      const json gold = json::parse(row.gold);
      const double depth = gold.at("depth").get<double>();
      const int64_t length = gold.at("max_length").get<int64_t>();
      auto& [sum, count] = cells[depth][length];
      sum += row.score;
      ++count;
      lengths.insert(length);
    }
    Table table{fmt::format("niah: {} at {} on {}: score by needle depth (rows; % of the haystack) and length "
                            "(columns; tokens)",
                            job.policy, job.J.table_text(), job.model),
                {"depth %"}, {}};
    for (const int64_t length : lengths) table.header.push_back(std::to_string(length));
    for (const auto& [depth, by_length] : cells) {
      std::vector<std::string> row = {fmt::format("{}", depth)};
      for (const int64_t length : lengths) {
        const auto it = by_length.find(length);
        row.push_back(it == by_length.end() ? "" : fmt::format("{:.2f}", it->second.first / it->second.second));
      }
      table.rows.push_back(std::move(row));
    }
    tables.push_back(std::move(table));
  }
  if (tables.empty()) fail("the niah table needs results of the niah task (kvbench run --task niah …)");
  return tables;
}

}  // namespace kvbench
