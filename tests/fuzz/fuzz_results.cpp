// A results file (any bytes) through the HDF5 reader: the seal check, then every group and column.
#include "fuzz_support.h"
#include "io/results.h"

using namespace kvbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::write_scratch("results.h5", fuzz::text(data, size));
  fuzz::expect_clean([&] { (void)read_results(path); });
  return 0;
}
