#include "python_policy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"

namespace kvbench::python {

namespace {

// The class attribute `needs`: which of a causal step's captures the policy reads (kvbench.Policy documents them).
PolicyNeeds parse_needs(const py::object& instance, const std::string& name) {
  PolicyNeeds needs;
  for (const py::handle item : instance.attr("needs")) {
    const std::string need = py::str(item);
    if (need == "last_layer_input") needs.last_layer_input = true;
    else if (need == "attention") needs.step_attention = AttentionCapture::AllLayers;
    else if (need == "last_layer_attention") needs.step_attention = AttentionCapture::LastLayer;
    else if (need == "queries") needs.step_queries = true;
    else if (need == "every_refresh_point") needs.every_refresh_point = true;
    else
      fail("python policy \"{}\": needs \"{}\" is not one of last_layer_input, attention, last_layer_attention, "
           "queries, every_refresh_point",
           name, need);
  }
  return needs;
}

// A knob's text as the Python value it reads as: an integer, a number, true/false, or the text itself.
py::object knob_value(const std::string& text) {
  try {
    size_t used = 0;
    const long long integer = std::stoll(text, &used);
    if (used == text.size()) return py::int_(integer);
  } catch (const std::exception&) {
  }
  try {
    size_t used = 0;
    const double number = std::stod(text, &used);
    if (used == text.size()) return py::float_(number);
  } catch (const std::exception&) {
  }
  if (text == "true" || text == "false") return py::bool_(text == "true");
  return py::str(text);
}

// The first line of the class's own docstring: what `kvbench list policies` says of it.
std::string first_doc_line(const py::object& instance) {
  const py::object cls = instance.attr("__class__");
  const py::object doc = cls.attr("__doc__");
  const std::string text =
      doc.is_none() ? "" : py::module_::import("inspect").attr("cleandoc")(doc).cast<std::string>();
  const size_t end = text.find('\n');
  const std::string line = text.substr(0, end);
  return line.empty() ? fmt::format("Python policy {}", py::str(cls.attr("__qualname__")).cast<std::string>()) : line;
}

}  // namespace

PythonPolicy::PythonPolicy(py::object instance, std::string name) : instance_(std::move(instance)), name_(std::move(name)) {
  py::gil_scoped_acquire gil;
  try {
    needs_ = parse_needs(instance_, name_);
    const std::string granularity = py::str(instance_.attr("granularity"));
    if (granularity == "per_head") {
      granularity_ = Granularity::PerKvHead;
      score_kind_ = ScoreKind::PerKvHead;
    } else if (granularity != "token") {
      fail("python policy \"{}\": granularity \"{}\" is not token or per_head", name_, granularity);
    }
    keep_lowest_ = instance_.attr("keep_lowest").cast<bool>();
    summary_ = first_doc_line(instance_);
  } catch (const py::error_already_set& e) {
    fail("python policy \"{}\": {}", name_, e.what());
  }
}

PythonPolicy::~PythonPolicy() {
  py::gil_scoped_acquire gil;
  instance_ = py::object();
}

template <class Result>
Result PythonPolicy::call(const char* method, const std::function<Result(py::object&)>& invoke) const {
  py::gil_scoped_acquire gil;
  try {
    py::object bound = instance_.attr(method);
    return invoke(bound);
  } catch (py::error_already_set& e) {
    fail("python policy \"{}\": {}() raised {}", name_, method, e.what());
  } catch (const py::cast_error& e) {
    fail("python policy \"{}\": {}() returned what kvbench cannot read ({})", name_, method, e.what());
  }
}

KeepRule PythonPolicy::keep_rule(const CacheBudget& budget) const {
  return {keep_lowest_, budget.recent, granularity_};
}

int64_t PythonPolicy::default_recent(int64_t J) const {
  return call<int64_t>("default_recent", [&](py::object& f) { return f(J).cast<int64_t>(); });
}

at::Tensor PythonPolicy::score(const ScoringContext& context) {
  return call<at::Tensor>("score", [&](py::object& f) {
    const py::object scores = f(py::cast(&context, py::return_value_policy::reference));
    if (scores.is_none()) return at::Tensor();
    if (!THPVariable_Check(scores.ptr()))
      fail("python policy \"{}\": score() returned a {}, not a torch.Tensor (or None)", name_,
           std::string(py::str(py::type::of(scores).attr("__name__"))));
    return with_expected_shape(scores.cast<at::Tensor>(), context.cache);
  });
}

at::Tensor PythonPolicy::with_expected_shape(const at::Tensor& scores, const KvCache& cache) const {
  const std::vector<int64_t> expected =
      granularity_ == Granularity::Token ? std::vector<int64_t>{cache.batch(), cache.size()}
                                         : std::vector<int64_t>{cache.batch(), cache.num_layers(),
                                                                cache.keys(0).size(1), cache.size()};
  if (scores.sizes().vec() != expected || !at::isFloatingType(scores.scalar_type()))
    fail("python policy \"{}\": score() returned a {} tensor of shape {}; a {} policy gives float scores of shape "
         "{}",
         name_, c10::toString(scores.scalar_type()), fmt::format("{}", fmt::join(scores.sizes(), "x")),
         granularity_ == Granularity::Token ? "token" : "per_head",
         fmt::format("{}", fmt::join(expected, "x")));
  return scores;
}

void PythonPolicy::observe(const ForwardResult& step, const KvCache& cache) {
  call<void>("observe", [&](py::object& f) {
    f(py::cast(&step, py::return_value_policy::reference), py::cast(&cache, py::return_value_policy::reference));
  });
}

void PythonPolicy::on_compact(const at::Tensor& keep) {
  call<void>("on_compact", [&](py::object& f) { f(keep); });
}

void PythonPolicy::expand_batch(int64_t batch) {
  call<void>("expand_batch", [&](py::object& f) { f(batch); });
}

void PythonPolicy::reset() {
  call<void>("reset", [&](py::object& f) { f(); });
}

PolicyFactory python_factory(const std::string& name, py::object cls) {
  // The class lives as long as the process: the registry outlives the interpreter's teardown, when a
  // reference could no longer be dropped.
  py::handle held = cls.release();
  return [name, held](const PolicyOptions& options) -> std::unique_ptr<Policy> {
    py::gil_scoped_acquire gil;
    py::dict knobs;
    for (const auto& [key, value] : options.knobs.items()) {
      options.knobs.text(key);  // read: the class's constructor accepts or refuses it
      knobs[py::str(key)] = knob_value(value);
    }
    try {
      return std::make_unique<PythonPolicy>(held(**knobs), name);
    } catch (py::error_already_set& e) {
      fail("python policy \"{}\": making it from {} raised {}", name, options.knobs.context(), e.what());
    }
  };
}

}  // namespace kvbench::python
