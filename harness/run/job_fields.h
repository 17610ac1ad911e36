// A job's fields (JobConfig, run/job.h) in one table: each field's name in the job's JSON, whether the JSON
// always holds it, where it lives in JobConfig, what it means and the values it takes. The JSON form (to_json),
// its reader and schema check (job_from_json), the checks of a resolved job (check_choices), the command
// line's options (cli/options.h: name, type, help, choices) and Python's kvbench.job_fields() all derive from
// the table, so a field is named and explained once.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "run/job.h"

namespace kvbench {

struct JobField {
  // When the job's JSON holds the field. The JSON is the job's identity (results file name, resume key), so
  // a field added after jobs were first written is left out while unset, and every older job keeps its JSON.
  enum class Written { always, unless_default, when_positive };

  std::string name;  // in the JSON, e.g. "min_gap"
  Written written;
  std::string help;  // what the field means: the help of its command-line option
  std::function<json(const JobConfig&)> get;
  std::function<void(const json&, JobConfig&)> set;
  std::vector<std::string> choices = {};  // the values a string field takes (empty: any)
  // From the command line's text, where it is not the JSON value's (J takes "64" or "ratio:0.5"); empty:
  // the option has the JSON value's type. A field without an option (ratio: through J's) says so.
  std::function<void(const std::string&, JobConfig&)> set_text = {};
  bool has_option = true;

  json default_value() const { return get(JobConfig{}); }
  bool written_for(const JobConfig& job) const;
  std::string option_name() const;  // "--min-gap" for min_gap
};

// Every field of a job, in JobConfig's order.
const std::vector<JobField>& job_fields();

// The field called `name` in the JSON; any other name is a programming error (kvbench::Error).
const JobField& job_field(const std::string& name);

// Throws kvbench::Error naming the first field of `job` whose value is not among its choices.
void check_choices(const JobConfig& job);

// The field that holds `name`'s value in today's jobs: `name` itself, or for a field of old job files the
// field it is read into ("pyramid_ratio" → "allocator"). A sweep's grid may still name the old one.
std::string field_holding(const std::string& name);

}  // namespace kvbench
