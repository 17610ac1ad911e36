// The job's field table as the command line sees it: every field with an option is offered by `kvbench run`
// and writes what the JSON reader writes for the same value; J is one typed value from the parser on (a token
// count or a compression ratio); values outside a field's choices fail at the option and at resolution.
#include "torch_catch.h"

#include <CLI/CLI.hpp>

#include "api/kvbench.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/error.h"
#include "run/job_fields.h"
#include "run/resolved_job.h"

namespace {

using kvbench::BudgetJ;
using kvbench::JobConfig;
using kvbench::JobField;
using kvbench::json;

// A value of `f`'s type other than its default, as JSON and as the command line writes it.
std::pair<json, std::string> other_value(const JobField& f) {
  const json like = f.default_value();
  if (!f.choices.empty()) {
    for (const std::string& choice : f.choices)
      if (choice != like.get<std::string>() && !choice.empty()) return {choice, choice};
  }
  if (like.is_string()) return {"x/y", "x/y"};
  if (like.is_boolean()) return {true, "true"};
  if (like.is_number_unsigned()) return {7u, "7"};
  if (like.is_number_integer()) return {7, "7"};
  if (like.is_number_float()) return {0.25, "0.25"};
  if (like.is_array()) return {json::array({"s0/1", "s0/2"}), "s0/1,s0/2"};
  FAIL("no test value for " << f.name);
  return {};
}

JobConfig parsed(const std::string& field, const std::vector<std::string>& args) {
  kvbench::cli::JobCliOptions options;
  CLI::App app;
  options.add(&app, field);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  app.parse(reversed);
  return options.job;
}

}  // namespace

TEST_CASE("each job field's option writes what its JSON field writes, and `kvbench run` offers it", "[one-torch]") {
  CLI::App app;
  kvbench::cli::add_run_command(app);
  const CLI::App* run = app.get_subcommand("run");
  for (const JobField& f : kvbench::job_fields()) {
    if (!f.has_option) continue;
    INFO("field " << f.name);
    CHECK(run->get_option_no_throw(f.option_name()) != nullptr);
    const auto [value, text] = other_value(f);
    const JobConfig from_option = parsed(f.name, {f.option_name(), text});
    const JobConfig from_json = kvbench::job_from_json({{f.name, value}}, "test");
    CHECK(kvbench::to_json(from_option)[f.name] == value);
    CHECK(kvbench::to_json(from_option) == kvbench::to_json(from_json));
  }
}

TEST_CASE("J is one value: a token count or a compression ratio, from --J and from the JSON alike", "[one-torch]") {
  const BudgetJ tokens = BudgetJ::parse("64"), ratio = BudgetJ::parse("ratio:0.25");
  CHECK((!tokens.is_ratio() && tokens.token_count() == 64 && tokens.for_prompt(1000) == 64));
  CHECK((ratio.is_ratio() && ratio.token_count() == 0 && ratio.compression_ratio() == 0.25));
  CHECK(ratio.for_prompt(1001) == 750);  // ⌊1001 · 0.75⌋, kvpress's int(n · (1 − R))
  CHECK(BudgetJ::parse("ratio:0.999").for_prompt(10) == 1);  // never below 1
  CHECK((tokens.label() == "J64" && ratio.label() == "ratio0.25" && BudgetJ().table_text() == "no budget"));
  for (const BudgetJ& J : {tokens, ratio, BudgetJ()}) CHECK(BudgetJ::parse(J.text()) == J);
  CHECK((BudgetJ::tokens(4096) < ratio && tokens < BudgetJ::tokens(65) && !(ratio < tokens)));
  for (const char* bad : {"ratio:1", "ratio:0", "ratio:-0.5", "ratio:", "ratio:0.5x", "-3", "64x", "1.5", ""})
    CHECK_THROWS_WITH(BudgetJ::parse(bad), Catch::Contains("token count or ratio:R"));

  // JSON: J and ratio are the same value's two fields; a ratio budget writes J 0.
  JobConfig job;
  job.budget.J = ratio;
  const json written = kvbench::to_json(job);
  CHECK((written.at("J") == 0 && written.at("ratio") == 0.25));
  CHECK(kvbench::job_from_json(written, "test").budget.J == ratio);
  CHECK_FALSE(kvbench::to_json(JobConfig{}).contains("ratio"));
  CHECK_THROWS_WITH(kvbench::job_from_json({{"J", 64}, {"ratio", 0.5}}, "f.json"),
                    Catch::Contains("f.json: field \"ratio\": give J or a ratio, not both"));
  CHECK_THROWS_WITH(kvbench::job_from_json({{"ratio", 1.5}}, "f.json"),
                    Catch::Contains("f.json: field \"ratio\": ratio must be a compression ratio"));
  CHECK_THROWS_WITH(kvbench::job_from_json({{"J", -1}}, "f.json"),
                    Catch::Contains("f.json: field \"J\": J must be a token count"));

  // The command line: --J takes both forms; what it refuses is the option's error.
  CHECK(parsed("J", {"--J", "ratio:0.25"}).budget.J == ratio);
  CHECK(parsed("J", {"--J", "64"}).budget.J == tokens);
  CHECK_THROWS_AS(parsed("J", {"--J", "ratio:1"}), CLI::ValidationError);
}

TEST_CASE("a field's choices bound its option and the resolved job", "[one-torch]") {
  for (const char* field : {"mode", "prompt_mode", "shadow", "profile"}) {
    INFO("field " << field);
    const JobField& f = kvbench::job_field(field);
    REQUIRE_FALSE(f.choices.empty());
    CHECK_THROWS_AS(parsed(field, {f.option_name(), "bogus"}), CLI::ValidationError);
    JobConfig job;
    f.set("bogus", job);
    CHECK_THROWS_WITH(kvbench::check_choices(job),
                      Catch::Contains(std::string(field) + " must be one of"));
  }
  CHECK_NOTHROW(kvbench::check_choices(JobConfig{}));
}
