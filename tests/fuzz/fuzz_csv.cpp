// RFC 4180 CSV (GPQA's format) on any bytes.
#include "fuzz_support.h"
#include "tasks/csv.h"

using namespace kvbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::expect_clean([&] {
    const tasks::CsvTable table(fuzz::text(data, size), "fuzz.csv");
    const size_t column = table.column("Question");
    for (size_t row = 0; row < table.rows(); ++row) (void)table.at(row, column);
  });
  return 0;
}
