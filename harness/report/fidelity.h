// Task-free fidelity from files run with `--shadow full` (engine/shadow.h): how far each policy's next-token
// distribution strays from the full cache's, teacher-forced on the policy's own tokens.
#pragma once
#include <vector>

#include "report/tables.h"

namespace kvbench {

// Per model × task: rows policies, columns J; a cell is the mean KL(full ‖ policy) per chosen token and the
// share of chosen tokens whose argmax agrees with the full cache's, both pooled over every row's tokens.
// Throws kvbench::Error when no file holds shadow data.
std::vector<Table> fidelity_tables(const std::vector<JobResults>& jobs);

}  // namespace kvbench
