// _kvbench: the library façade (api/kvbench.h) for Python, and the views a Python policy gets of the cache.
// Structured values cross as JSON text (job configs, results, generation records), tensors as torch tensors.
// The package around it (python/kvbench) gives the calls their Python shape.
#include <torch/extension.h>

#include <filesystem>

#include "api/kvbench.h"
#include "api/machine.h"
#include "api/policy.h"
#include "cli/commands.h"
#include "common/error.h"
#include "python_policy.h"

namespace kvbench::python {

namespace {

json job_json_of(const std::string& job_json, const std::string& where) {
  const json value = json::parse(job_json, nullptr, false);
  if (value.is_discarded()) fail("{}: not JSON", where);
  return value;
}

std::filesystem::path data_root_or_default(const std::string& data_root) {
  return data_root.empty() ? default_data_root() : std::filesystem::path(data_root);
}

json outcome_json(const std::filesystem::path& out, const RunOutcome& outcome) {
  return {{"out", out.string()},
          {"summary", to_json(outcome.summary)},
          {"resumed", outcome.resumed},
          {"already_complete", outcome.already_complete},
          {"held", outcome.held}};
}

// The job's fields as run/job_fields.h tables them: name, meaning, default, choices, command-line option.
std::string job_fields_json() {
  json fields = json::array();
  for (const JobField& f : job_fields())
    fields.push_back({{"name", f.name},
                      {"help", f.help},
                      {"default", f.default_value()},
                      {"choices", f.choices},
                      {"option", f.has_option ? f.option_name() : ""}});
  return fields.dump();
}

std::string results_json(const std::string& path) {
  const Results results = read_results(path);
  json out = {{"info", to_json(results.info)}, {"summary", to_json(results.summary)}, {"rows", json::array()},
              {"refreshes", json::array()}};
  for (const ResultRow& row : results.rows) out["rows"].push_back(to_json(row));
  for (const RefreshTrace& trace : results.refreshes) out["refreshes"].push_back(to_json(trace));
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

// generate: the JSON record of `generate --format json`, and rollout 0's refreshes as tensors.
py::tuple generate(const api::LoadedModel& model, const std::string& text, const std::vector<int64_t>& ids,
                   const std::string& system, bool chat, bool thinking, const std::string& job_json, int64_t top_k,
                   const std::vector<std::string>& stop, py::object policy_object, const std::string& policy_name) {
  api::GenerateRequest request{{text, ids, system, chat, thinking}, job_from_json(job_json_of(job_json, "kvbench.generate"), "kvbench.generate"), top_k, stop};
  std::unique_ptr<PythonPolicy> policy;
  if (!policy_object.is_none()) policy = std::make_unique<PythonPolicy>(policy_object, policy_name);
  api::Generation generation;
  {
    py::gil_scoped_release release;
    generation = api::generate(model, request, policy.get());
  }
  py::list refreshes;
  for (const RefreshRecord& r : generation.result.refreshes) {
    py::dict tensors;
    tensors["positions_before"] = r.positions_before[0];
    tensors["kept_positions"] = r.kept_positions[0];
    tensors["scores"] = r.scores.defined() ? py::cast(r.scores[0]) : py::none();
    refreshes.append(tensors);
  }
  {
    py::gil_scoped_release release;  // the policy's destructor takes the GIL itself
    policy.reset();
  }
  return py::make_tuple(api::generation_json(generation).dump(-1, ' ', false, json::error_handler_t::replace), refreshes);
}

// Ctrl-C in Python stops a job or sweep after the sample that finishes next (journaled, so a rerun resumes):
// the engine runs without the GIL, and Python's signal handler only leaves a note for this check to find.
void stop_on_interrupt() {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() == 0) return;
  PyErr_Clear();
  fail("interrupted: every finished sample is journaled; run the same job again to resume");
}

std::string run(const std::string& job_json, const std::string& out, bool force, bool progress, int64_t batch,
                const std::string& data_root) {
  py::gil_scoped_release release;
  const ResolvedJob job =
      api::resolve(job_json_of(job_json, "kvbench.run job"), "kvbench.run job", data_root_or_default(data_root));
  const api::JobRun done = api::run(job, {out, force, progress, "", batch, stop_on_interrupt});
  return outcome_json(done.out, done.outcome).dump();
}

api::SweepPlan plan(const std::string& config, bool config_is_json, const std::string& out_dir,
                    const std::string& data_root, const std::string& models_dir, const std::vector<std::string>& sets,
                    int64_t limit) {
  const api::SweepRequest request{out_dir, data_root, models_dir, "scorers", sets, limit};
  if (!config_is_json) return api::plan_sweep(std::filesystem::path(config), request);
  const json value = json::parse(config, nullptr, false);
  if (value.is_discarded()) fail("kvbench.sweep config: not JSON");
  return api::plan_sweep(value, "kvbench.sweep config", request);
}

std::string sweep(const std::string& config, bool config_is_json, const std::string& out_dir,
                  const std::string& data_root, const std::string& models_dir, const std::vector<std::string>& sets,
                  int64_t limit, bool force, bool progress, int64_t batch, bool dry_run) {
  py::gil_scoped_release release;
  const api::SweepPlan planned = plan(config, config_is_json, out_dir, data_root, models_dir, sets, limit);
  json jobs = json::array();
  if (dry_run) {
    for (const SweepJob& entry : planned.jobs)
      jobs.push_back({{"label", entry.label}, {"out", entry.out.string()}, {"job", to_json(entry.job)}});
    return jobs.dump();
  }
  api::run_sweep(planned.jobs, {force, progress, batch, stop_on_interrupt},
                 [&](const SweepJob& entry, const std::string&, const RunOutcome& outcome) {
                   json done = outcome_json(entry.out, outcome);
                   done["label"] = entry.label;
                   done["job"] = to_json(entry.job);
                   jobs.push_back(done);
                 });
  return jobs.dump();
}

py::list report_tables(const std::vector<std::string>& files, const std::vector<std::string>& names, const std::string& J,
                       const std::string& h, const std::vector<std::string>& policies) {
  TableFilter filter;
  if (!J.empty()) filter.J = BudgetJ::parse(J);
  filter.h = h;
  filter.policies = policies;
  std::vector<Table> tables;
  {
    py::gil_scoped_release release;
    tables = api::report_tables(std::vector<std::filesystem::path>(files.begin(), files.end()), names, filter);
  }
  py::list out;
  for (const Table& table : tables) out.append(py::make_tuple(table.title, table.header, table.rows));
  return out;
}

int run_cli(const std::vector<std::string>& arguments) {
  std::vector<std::string> words = arguments;
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  py::gil_scoped_release release;
  return cli::main(static_cast<int>(words.size()), argv.data());
}

py::dict config_dict(const ModelConfig& c) {
  py::dict out;
  out["model_type"] = c.model_type;
  out["hidden_size"] = c.hidden_size;
  out["intermediate_size"] = c.intermediate_size;
  out["num_layers"] = c.num_layers;
  out["num_heads"] = c.num_heads;
  out["num_kv_heads"] = c.num_kv_heads;
  out["head_dim"] = c.head_dim;
  out["vocab_size"] = c.vocab_size;
  return out;
}

void bind_policy_views(py::module_& m) {
  py::class_<CacheBudget>(m, "CacheBudget", "The budget a refresh keeps to (read only).")
      .def_readonly("J", &CacheBudget::J)
      .def_readonly("h", &CacheBudget::h)
      .def_readonly("recent", &CacheBudget::recent)
      .def_readonly("frozen", &CacheBudget::frozen)
      .def_readonly("min_gap", &CacheBudget::min_gap)
      .def_readonly("sinks", &CacheBudget::sinks)
      .def_readonly("allocator", &CacheBudget::allocator)
      .def_readonly("ragged", &CacheBudget::ragged);
  py::class_<KvCache>(m, "KvCache", "The batched cache: [B, KV, N, D] keys and values per layer, entries' ids and positions.")
      .def_property_readonly("size", [](const KvCache& c) { return c.size(); })
      .def_property_readonly("batch", &KvCache::batch)
      .def_property_readonly("num_layers", &KvCache::num_layers)
      .def_property_readonly("per_head", &KvCache::per_head)
      .def_property_readonly("ragged", &KvCache::ragged)
      .def("layer_size", [](const KvCache& c, int64_t layer) { return c.size(layer); })
      .def("keys", &KvCache::keys, py::arg("layer"))
      .def("values", &KvCache::values, py::arg("layer"))
      .def("token_ids", &KvCache::token_ids, "[B, N] (token level only)")
      .def("positions", &KvCache::positions, "[B, N] original positions (token level only)")
      .def("head_positions", &KvCache::head_positions, py::arg("layer"), "[B, KV, N_l] original positions, -1 = padding")
      .def("last_layer_input", &KvCache::last_layer_input, "[B, N, hidden] H^(L-1) (needs last_layer_input)");
  py::class_<ScoringContext>(m, "ScoringContext", "What score() sees; valid only during that call.")
      .def_property_readonly("cache", [](const ScoringContext& c) { return &c.cache; }, py::return_value_policy::reference)
      .def_property_readonly("budget", [](const ScoringContext& c) { return &c.budget; }, py::return_value_policy::reference)
      .def_property_readonly("config", [](const ScoringContext& c) { return config_dict(c.model.config()); })
      .def(
          "each_layer",
          [](const ScoringContext& c, const py::function& score_layer) {
            return score_each_layer(c.cache, [&](int64_t layer, const at::Tensor& positions) {
              return score_layer(layer, positions).cast<at::Tensor>();
            });
          },
          py::arg("score_layer"),
          "Per-(layer, KV head) scores [B, L, KV, N] from score_layer(layer, positions [B, KV, N_l]) -> [B, KV, N_l]; "
          "padding slots score 0 and are never ranked");
  py::class_<ForwardResult>(m, "Step", "One causal forward's captures (observe(); valid only during that call).")
      .def_readonly("logits", &ForwardResult::logits)
      .def_readonly("attention", &ForwardResult::attention, "per captured layer [B, H, T, N] float32")
      .def_readonly("queries", &ForwardResult::queries, "per layer [B, H, T, D] before RoPE (needs queries)");
}

}  // namespace
}  // namespace kvbench::python

PYBIND11_MODULE(_kvbench, m) {
  using namespace kvbench;
  using namespace kvbench::python;
  m.doc() = "kvbench's engine: load a model, generate with eviction, run jobs and sweeps, read results.";
  py::register_exception<Error>(m, "Error");
  bind_policy_views(m);

  py::class_<api::LoadedModel, std::shared_ptr<api::LoadedModel>>(m, "Model")
      .def_property_readonly("config", [](const api::LoadedModel& l) { return config_dict(l.model.config()); })
      .def_property_readonly("has_tokenizer", [](const api::LoadedModel& l) { return l.tokenizer.has_value(); })
      .def("encode",
           [](const api::LoadedModel& l, const std::string& text, bool add_special_tokens) {
             if (!l.tokenizer) fail("this model has no tokenizer (no tokenizer.json, not a GGUF)");
             return l.tokenizer->encode(text, add_special_tokens);
           },
           py::arg("text"), py::arg("add_special_tokens") = true)
      .def("decode", [](const api::LoadedModel& l, const std::vector<int64_t>& ids) {
        if (!l.tokenizer) fail("this model has no tokenizer (no tokenizer.json, not a GGUF)");
        return l.tokenizer->decode(ids);
      });
  m.def("load_model", [](const std::string& model, const std::string& device, const std::string& dtype) {
    py::gil_scoped_release release;
    return std::make_shared<api::LoadedModel>(api::load_model({model, device, dtype}));
  });
  m.def("generate", &python::generate);
  m.def("run", &python::run);
  m.def("sweep", &python::sweep);
  m.def("read_results", &results_json);
  m.def("report_table_names", &api::report_table_names);
  m.def("report_tables", &report_tables);
  m.def("register_policy", [](const std::string& name, py::object cls) {
    api::register_policy(name, python_factory(name, std::move(cls)));
  });
  m.def("policy_names", &policy_names);
  m.def("job_fields", &job_fields_json);
  m.def("main", &run_cli);
  m.def("tune_allocator", &api::tune_allocator);
}
