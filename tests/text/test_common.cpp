#include <catch2/catch.hpp>
#include <fstream>

#include "common/error.h"
#include "common/json_file.h"
#include "test_support.h"

TEST_CASE("read_json_file names the file and byte offset of a parse error") {
  auto path = kvbench::testing::scratch_path("bad.json");
  std::ofstream(path) << "{\"a\": 1,";
  try {
    kvbench::read_json_file(path);
    FAIL("expected an error");
  } catch (const kvbench::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains(path.string()) && Catch::Contains("byte"));
  }
  std::filesystem::remove(path);
}

TEST_CASE("require_field names the missing field") {
  kvbench::json j = {{"a", 1}};
  CHECK_THROWS_WITH(kvbench::require_field(j, "b", "x.json"), Catch::Contains("x.json") && Catch::Contains("\"b\""));
}
