// A policy written in Python (a kvbench.Policy subclass, python/kvbench/policy.py) as a kvbench Policy: the
// engine calls it like any other, and each call takes the GIL and hands the cache over as torch tensors
// (no copies). Whatever the Python code raises comes back as a kvbench::Error naming the policy and method.
#pragma once
#include <torch/extension.h>

#include <string>

#include "api/policy.h"

namespace kvbench::python {

namespace py = pybind11;

class PythonPolicy final : public Policy {
 public:
  // `instance`: the Python object; `name`: what results record (its registered name, or its class's).
  PythonPolicy(py::object instance, std::string name);
  ~PythonPolicy() override;

  std::string name() const override { return name_; }
  std::string summary() const override { return summary_; }
  PolicyNeeds needs() const override { return needs_; }
  KeepRule keep_rule(const CacheBudget& budget) const override;
  int64_t default_recent(int64_t J) const override;
  ScoreKind score_kind() const override { return score_kind_; }
  at::Tensor score(const ScoringContext& context) override;
  void observe(const ForwardResult& step, const KvCache& cache) override;
  void on_compact(const at::Tensor& keep) override;
  void expand_batch(int64_t batch) override;
  void reset() override;

 private:
  // Calls the instance's `method` under the GIL and reads its result there (`invoke`); a Python exception
  // becomes a kvbench::Error.
  template <class Result>
  Result call(const char* method, const std::function<Result(py::object&)>& invoke) const;

  // `scores` when they have the shape the granularity promises for `cache` ([B, N] or [B, L, KV, N]).
  at::Tensor with_expected_shape(const at::Tensor& scores, const KvCache& cache) const;

  py::object instance_;
  std::string name_, summary_;
  PolicyNeeds needs_;
  ScoreKind score_kind_ = ScoreKind::PerToken;
  Granularity granularity_ = Granularity::Token;
  bool keep_lowest_ = false;
};

// A factory for kvbench's policy registry that makes a new instance of the Python class `cls` for every
// policy made from `name`, passing the spec's knobs as keyword arguments (numbers, true/false, else text).
PolicyFactory python_factory(const std::string& name, py::object cls);

}  // namespace kvbench::python
