// What `run` and `sweep` share: loading a job's model and tokenizer.
#pragma once
#include <CLI/CLI.hpp>

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

// --batch N: samples decoded together (0 = default_batch for the model and device).
void add_batch_option(CLI::App* command, int64_t& batch);
int64_t batch_size(int64_t requested, const Model& model);

}  // namespace kvbench::cli
