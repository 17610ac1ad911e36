// JSONL, CSV and zip readers used by the task loaders: good input and the errors for bad input.
#include <fstream>

#include "common/error.h"
#include "tasks/csv.h"
#include "tasks/jsonl.h"
#include "tasks/zip.h"
#include "task_test_util.h"
#include "test_support.h"

using kvbench::tasks::CsvTable;
using kvbench::testing::write_temp;

TEST_CASE("read_jsonl skips blank lines and keeps line numbers", "[tasks][jsonl]") {
  auto path = write_temp("kvbench_ok.jsonl", "{\"a\": 1}\n\n{\"a\": 2}\r\n");
  auto lines = kvbench::tasks::read_jsonl(path);
  REQUIRE(lines.size() == 2);
  CHECK(lines[1].value["a"] == 2);
  CHECK(lines[1].location == path.string() + ":3");
  std::filesystem::remove(path);
}

TEST_CASE("read_jsonl names file and line of a truncated record", "[tasks][jsonl]") {
  auto path = write_temp("kvbench_truncated.jsonl", "{\"a\": 1}\n{\"a\": 2}\n{\"a\": \"cut off");
  CHECK_THROWS_WITH(kvbench::tasks::read_jsonl(path), Catch::Contains(path.string() + ":3: malformed JSON"));
  std::filesystem::remove(path);
  CHECK_THROWS_WITH(kvbench::tasks::read_jsonl("/nonexistent/x.jsonl"), Catch::Contains("/nonexistent/x.jsonl"));
}

TEST_CASE("string_field names the record and the field", "[tasks][jsonl]") {
  kvbench::tasks::json record = {{"id", 60}, {"answer", "204"}, {"level", kvbench::tasks::json::array()}};
  CHECK(kvbench::tasks::string_field(record, "id", "f:1") == "60");
  CHECK(kvbench::tasks::string_field(record, "answer", "f:1") == "204");
  CHECK_THROWS_WITH(kvbench::tasks::string_field(record, "problem", "f.jsonl:7"),
                    Catch::Contains("f.jsonl:7") && Catch::Contains("missing field \"problem\""));
  CHECK_THROWS_WITH(kvbench::tasks::string_field(record, "level", "f.jsonl:7"),
                    Catch::Contains("\"level\" is not a string"));
}

TEST_CASE("CSV: quoted fields with commas, escaped quotes and line breaks, CRLF", "[tasks][csv]") {
  const std::string text =
      "id,text,n\r\n"
      "1,\"a, b\",x\r\n"
      "2,\"say \"\"hi\"\"\nsecond line\",\"\"\r\n"
      "3,plain,z";  // no final line break
  CsvTable table(text, "t.csv");
  REQUIRE(table.rows() == 3);
  CHECK(table.at(0, table.column("text")) == "a, b");
  CHECK(table.at(1, 1) == "say \"hi\"\nsecond line");
  CHECK(table.at(1, 2) == "");
  CHECK(table.at(2, 2) == "z");
  CHECK(table.where(2) == "t.csv: row 3 (line 5)");  // row 2 spans lines 3-4
  CHECK_THROWS_WITH(table.column("missing"), Catch::Contains("t.csv: missing column \"missing\""));
}

TEST_CASE("CSV errors name the source, row and line but not the contents", "[tasks][csv]") {
  CHECK_THROWS_WITH(CsvTable("a,b\n1,\"secret text never closed\n", "t.csv"),
                    Catch::Contains("t.csv: line 2: quoted field never closed") &&
                        !Catch::Contains("secret"));
  CHECK_THROWS_WITH(CsvTable("a,b\n1,2\n3\n", "t.csv"),
                    Catch::Contains("t.csv: row 2 (line 3): 1 fields, but the header has 2"));
  CHECK_THROWS_WITH(CsvTable("", "t.csv"), Catch::Contains("t.csv: empty CSV"));
}

TEST_CASE("read_zip_member: wrong password, missing member and missing archive", "[tasks][zip]") {
  const auto archive = kvbench::testing::shared_dir() / "datasets/gpqa_diamond/gpqa_diamond.zip";
  KVBENCH_REQUIRE_SHARED("datasets/gpqa_diamond/gpqa_diamond.zip");
  using kvbench::tasks::read_zip_member;
  CHECK_THROWS_WITH(read_zip_member(archive, "dataset/gpqa_diamond.csv", "wrong-password"),
                    Catch::Contains(archive.string() + ": dataset/gpqa_diamond.csv") &&
                        Catch::Contains("password"));
  CHECK_THROWS_WITH(read_zip_member(archive, "dataset/gpqa_diamond.csv"), Catch::Contains("password"));
  CHECK_THROWS_WITH(read_zip_member(archive, "nope.csv", "x"), Catch::Contains("nope.csv: no such member"));
  CHECK_THROWS_WITH(read_zip_member("/nonexistent.zip", "a", "x"), Catch::Contains("/nonexistent.zip: cannot open"));
  // The right password gives the member's exact size (SOURCE.md: 1,373,492 bytes).
  CHECK(read_zip_member(archive, "dataset/gpqa_diamond.csv", "deserted-untie-orchid").size() == 1373492);
}
