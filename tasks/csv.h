// RFC 4180 CSV: comma-separated; "quoted" fields may hold commas, line breaks and "" escapes; LF or CRLF.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kvbench::tasks {

class CsvTable {
 public:
  // The first row is the header; every row must have as many fields. Errors (kvbench::Error) name
  // `source`, the data row and the line it starts on — never the field contents.
  CsvTable(std::string_view text, std::string source);

  std::size_t rows() const { return rows_.size(); }
  // Index of a header column; kvbench::Error "<source>: missing column "name"".
  std::size_t column(const std::string& name) const;
  const std::string& at(std::size_t row, std::size_t column) const { return rows_[row].fields[column]; }
  // "<source>: row R (line L)", for messages about one record.
  std::string where(std::size_t row) const;

 private:
  struct Row {
    std::vector<std::string> fields;
    int line = 0;  // line the row starts on (1-based)
  };
  std::string source_;
  std::vector<std::string> header_;
  std::vector<Row> rows_;
};

}  // namespace kvbench::tasks
