// GPQA Diamond: the official CSV, read in place from the password zip. Decrypted text lives only in
// memory (Sample.inputs); Sample.record holds ids, the permutation and the gold letter.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "tasks/task.h"

namespace kvbench::tasks {

// The shuffle of one record: shown option i (A, B, C, D) is original option permutation[i], where
// 0 = "Correct Answer" and 1..3 = "Incorrect Answer 1..3". Fisher–Yates driven by
// SplitMix64(FNV-1a-64("gpqa:" + record_id)): the same for every run, machine and standard library.
std::vector<int> gpqa_permutation(const std::string& record_id);

// Samples from the CSV text (`source` names it in errors).
std::vector<Sample> gpqa_samples_from_csv(std::string_view csv, const std::string& source);

}  // namespace kvbench::tasks
