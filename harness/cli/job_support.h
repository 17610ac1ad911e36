// What `run` and `sweep` share: loading a job's model and tokenizer.
#pragma once
#include "model/model.h"
#include "run/job.h"
#include "tokenizer/tokenizer.h"

namespace kvbench::cli {

struct LoadedModel {
  Model model;
  Tokenizer tokenizer;
};

// Throws kvbench::Error when the model directory has no tokenizer.json (tasks need text).
LoadedModel load_job_model(const JobConfig& job);

}  // namespace kvbench::cli
