// Training through the façade: the demo model (`kvbench train-demo`) and KVpop retention scorers
// (`kvbench train-scorer`). The option structs of train/ (DemoSettings, ScorerTrainingOptions, FutureMassSpec)
// are part of this vocabulary, so their headers come with it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "api/kvbench.h"
#include "train/demo.h"
#include "train/kvpop_training.h"

namespace kvbench::api {

struct TrainDemoRequest {
  std::string out;  // the model directory written
  DemoSettings settings;
  int eval_samples = 50;                     // held-out rare-fact samples (seed 0) per length; 0 = no evaluation
  std::vector<int> eval_words = {150, 300};  // filler lengths of the held-out evaluation
};

struct DemoRecall {
  int words = 0;
  double recall = 0.0;  // full cache, greedy
};
struct DemoEvaluation {
  int samples = 0;                  // per length
  std::vector<DemoRecall> recall;   // per TrainDemoRequest::eval_words
  FillerLoss filler;                // at the first length, against a bigram counted on training stories
};

// Trains and writes the demo model; its held-out evaluation unless request.eval_samples is 0.
std::optional<DemoEvaluation> train_demo(const TrainDemoRequest& request);

struct TrainScorerRequest {
  ModelSource model;                     // needs its tokenizer
  std::string data;                      // a generated task's spec or a JSONL file of {"text": ...}
  std::string eval_data;                 // held-out texts in the same forms; empty = no recall evaluation
  std::string out;                       // the scorer's safetensors file
  std::string kind = "linear";           // linear, mlp or mlstm (parse_scorer_kind)
  ScorerTrainingOptions training;        // its shape's kind and delay are set from `kind` and `no_delay`
  FutureMassSpec mass;                   // its window and gamma are set from the budget and `gamma`
  double gamma = 1.0;
  int64_t max_tokens = 1024;             // texts are truncated to this many tokens
  int64_t recall_stride = 4;             // evaluate every n-th decoding step
  bool no_delay = false;                 // mlstm ablation: read each token's score at insertion
};

// Trains a scorer on the model's full-cache passes over request.data and writes it to request.out with its
// settings (and the held-out recall) as metadata. Returns the recall on request.eval_data, if given.
std::optional<RecallReport> train_scorer(const TrainScorerRequest& request);

// DuoAttention's head patterns estimated on the fly (train/duo_patterns.h): the model's mean queries and keys over
// the first `samples` texts of `data`, written to the directory `out` for --allocator duo:patterns=OUT.
struct DuoPatternsRequest {
  ModelSource model;         // needs its tokenizer
  std::string data;          // a generated task's spec or a JSONL file of {"text": ...}, as train_scorer reads
  std::string out;
  int64_t samples = 50;      // kvpress: 50 BookSum chapters (drawn with seed 42 from the hub's kmfoda/booksum)
  int64_t length = 500;      // positions the mean query and key are repeated over (kvpress's q_len)
};

// Scores [layer][KV head], also written.
std::vector<std::vector<double>> duo_patterns(const DuoPatternsRequest& request);

}  // namespace kvbench::api
