// The F1 normalisers (SQuAD-style for Qasper, stemmed for LoCoMo) and the multiple-choice letter
// extractor on any bytes (prediction \x1f gold).
#include "fuzz_support.h"
#include "tasks/graders/f1.h"
#include "tasks/graders/multiple_choice.h"

using namespace kvbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = fuzz::text(data, size);
  const auto [prediction, gold] = fuzz::split(input);
  (void)graders::squad_f1(prediction, gold);
  (void)graders::best_reference_f1(prediction, {std::string(gold), "unanswerable"});
  for (int category = 1; category <= 5; ++category) (void)graders::locomo_score(category, prediction, gold);
  (void)graders::extract_choice_letter(input, "ABCDE");
  return 0;
}
