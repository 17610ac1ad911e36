// The runner joins a model, a task and a policy: it runs one job sample by sample, grades every
// rollout, journals each finished sample (run/journal.h) and finally writes the HDF5 results aside and
// renames them into place. Rerunning the same job resumes; a finished output of the same job is kept; a job
// another process is running is left to it.
#pragma once
#include <filesystem>
#include <functional>
#include <string>

#include "io/results.h"
#include "model/model.h"
#include "run/resolved_job.h"
#include "tasks/task.h"
#include "tokenizer/tokenizer.h"

namespace kvbench {

// The default datasets root: $KVBENCH_DATA, else ~/.cache/kvbench/datasets when it exists, else the
// development setup's ../shared/datasets when it exists, else datasets.
std::filesystem::path default_data_root();

struct EncodedPrompt {
  std::vector<int64_t> ids;
  int64_t system_tokens = 0;    // what `frozen = auto` freezes
  int64_t question_tokens = 0;  // kvpress's pipeline: the last ids, fed after the context's compression
  int64_t query_tokens = 0;     // with compress_questions, for PolicyNeeds::query_window: the question's, before those
  int64_t context_tokens() const { return static_cast<int64_t>(ids.size()) - question_tokens; }
};

// The prompt's token ids: raw (the reference) or through the tokenizer's chat template (prompt_mode chat); with
// kvpress's pipeline (job.pipeline), its context and its question as kvpress/pipeline.py makes and tokenizes
// them, apart (and the question apart from the context when compressed with it, for a policy that `needs` its window).
EncodedPrompt encode_prompt(const tasks::Prompt& prompt, const Tokenizer& tokenizer, const JobConfig& job,
                            const PolicyNeeds& needs = {});

// The samples a job runs: its task's samples of job.data (generated in `tokenizer`'s tokens where the task is
// sized in them), its `samples` ids (all when empty), then the first `limit`.
std::vector<tasks::Sample> job_samples(const ResolvedJob& job, const Tokenizer& tokenizer);

// OUT.partial.jsonl
std::filesystem::path journal_path(const std::filesystem::path& out);

struct RunOutcome {
  Summary summary;
  int64_t resumed = 0;        // samples found finished in the journal
  bool already_complete = false;
  bool held = false;          // another process holds the job (run/job_lock.h): nothing was done
};

struct RunOptions {
  bool force = false;         // replace existing output / journal of any config
  bool progress = true;
  std::string label;          // progress-bar label (default: the job label)
  int64_t batch = 1;          // samples decoded together (results do not depend on it); 0: default_batch
  // Called after each finished sample is journaled; throwing stops the job there, losing nothing finished
  // (the Python module stops on Ctrl-C this way).
  std::function<void()> after_sample;
};

// The model and tokenizer a job runs on, asked for only when the job has samples left to run: a complete
// job, or one another process holds, loads nothing.
struct ModelRef {
  const Model& model;
  const Tokenizer& tokenizer;
};
using ModelLoader = std::function<ModelRef()>;

// The one place a job's output is checked: complete (of this job: kept; of another: an error unless
// force), held by another process, or to be run (resuming its journal).
RunOutcome run_job(const ResolvedJob& job, const std::filesystem::path& out, const ModelLoader& model,
                   const RunOptions& options = {});

// One line: "label: score 0.420 [0.280, 0.560] pred=None 0.100 mean length 31.2, 50 samples × 1 rollouts".
std::string summary_line(const std::string& label, const Summary& summary);

}  // namespace kvbench
