#include "tasks/csv.h"

#include <fmt/format.h>

#include "common/error.h"

namespace kvbench::tasks {

namespace {

struct ParsedRow {
  std::vector<std::string> fields;
  int line = 0;
};

// Splits the whole text into rows. A quote opens a quoted field only at the start of a field.
std::vector<ParsedRow> parse_rows(std::string_view text, const std::string& source) {
  std::vector<ParsedRow> rows;
  ParsedRow row{{}, 1};
  std::string field;
  int line = 1;
  std::size_t i = 0;
  auto end_row = [&] {
    row.fields.push_back(std::move(field));
    field.clear();
    rows.push_back(std::move(row));
    row = ParsedRow{{}, line};
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"' && field.empty()) {
      const int opened_on = line;
      for (++i;; ++i) {
        if (i >= text.size()) fail("{}: line {}: quoted field never closed (file truncated?)", source, opened_on);
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            ++i;
            continue;
          }
          ++i;
          break;
        }
        if (text[i] == '\n') ++line;
        field += text[i];
      }
      if (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
        fail("{}: line {}: text after a closing quote", source, line);
      continue;
    }
    if (c == ',') {
      row.fields.push_back(std::move(field));
      field.clear();
    } else if (c == '\n' || (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
      if (c == '\r') ++i;
      ++line;
      end_row();
    } else {
      field += c;
    }
    ++i;
  }
  if (!field.empty() || !row.fields.empty()) end_row();  // last row without a final line break
  return rows;
}

}  // namespace

CsvTable::CsvTable(std::string_view text, std::string source) : source_(std::move(source)) {
  auto parsed = parse_rows(text, source_);
  if (parsed.empty()) fail("{}: empty CSV (no header)", source_);
  header_ = std::move(parsed.front().fields);
  for (std::size_t r = 1; r < parsed.size(); ++r) {
    rows_.push_back({std::move(parsed[r].fields), parsed[r].line});
    if (rows_.back().fields.size() != header_.size())
      fail("{}: {} fields, but the header has {}", where(rows_.size() - 1), rows_.back().fields.size(),
           header_.size());
  }
}

std::size_t CsvTable::column(const std::string& name) const {
  for (std::size_t c = 0; c < header_.size(); ++c)
    if (header_[c] == name) return c;
  fail("{}: missing column \"{}\"", source_, name);
}

std::string CsvTable::where(std::size_t row) const {
  return fmt::format("{}: row {} (line {})", source_, row + 1, rows_[row].line);
}

}  // namespace kvbench::tasks
