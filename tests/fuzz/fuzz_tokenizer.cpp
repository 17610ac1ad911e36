// tokenizer.json (any bytes) loaded as a model directory's tokenizer; what loads must encode and decode.
#include "fuzz_support.h"
#include "tokenizer/tokenizer.h"

using namespace kvbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto dir = fuzz::scratch() / "tokenizer";
  std::filesystem::create_directories(dir);
  fuzz::write_scratch("tokenizer/tokenizer.json", fuzz::text(data, size));
  fuzz::expect_clean([&] {
    const Tokenizer tokenizer = Tokenizer::load(dir);
    const auto ids = tokenizer.encode("Hello, world! 1234 \xc3\xa9t\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 <s>");
    (void)tokenizer.decode(ids);
  });
  return 0;
}
