// A zip archive (any bytes; GPQA ships as a password-protected zip) read member by member.
#include "fuzz_support.h"
#include "tasks/zip.h"

using namespace kvbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::write_scratch("archive.zip", fuzz::text(data, size));
  fuzz::expect_clean([&] { (void)tasks::read_zip_member(path, "dataset/gpqa_diamond.csv", "deserted-untie-orchid"); });
  fuzz::expect_clean([&] { (void)tasks::read_zip_member(path, "a.txt"); });
  return 0;
}
