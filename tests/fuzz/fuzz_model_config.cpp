// A model directory's config.json (any bytes) read into a ModelConfig.
#include "fuzz_support.h"
#include "model/config.h"

using namespace kvbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto dir = fuzz::scratch() / "model";
  std::filesystem::create_directories(dir);
  fuzz::write_scratch("model/config.json", fuzz::text(data, size));
  fuzz::expect_clean([&] { (void)load_model_config(dir); });
  return 0;
}
