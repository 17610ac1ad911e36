// Math answer extraction, normalisation and equivalence on any bytes (prediction \x1f gold).
#include "fuzz_support.h"
#include "tasks/graders/math.h"

using namespace kvbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = fuzz::text(data, size);
  const auto [prediction, gold] = fuzz::split(input);
  (void)graders::extract_math_answer(input);
  (void)graders::has_complete_boxed(input);
  (void)graders::normalize_math_answer(prediction);
  (void)graders::math_equal(prediction, gold);
  (void)graders::integer_equal(prediction, gold);
  return 0;
}
