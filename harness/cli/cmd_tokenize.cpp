// `kvbench tokenize`: token ids of a text or of every line of a JSONL file, from the model directory's
// tokenizer files alone (tokenizer.json [+ tokenizer_config.json, generation_config.json]).
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "api/kvbench.h"
#include "cli/commands.h"
#include "common/error.h"
#include "common/json_file.h"

namespace kvbench::cli {

namespace {

struct TokenizeOptions {
  std::string model;
  std::string text;
  std::string input;
  std::string format = "json";
  bool add_special = false;
};

std::string format_ids(const std::vector<std::int64_t>& ids, const std::string& format) {
  return format == "json" ? json(ids).dump() : fmt::format("{}", fmt::join(ids, " "));
}

// Each line of `path` must be a JSON string; output lines correspond one to one.
std::string tokenize_jsonl(const Tokenizer& tokenizer, const TokenizeOptions& options) {
  std::ifstream in(options.input, std::ios::binary);
  if (!in) fail("{}: cannot open file", options.input);
  std::string out;
  std::size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const json value = json::parse(line, nullptr, false);
    if (!value.is_string()) fail("{}:{}: expected a JSON string", options.input, number);
    try {
      out += format_ids(tokenizer.encode(value.get<std::string>(), options.add_special), options.format) + "\n";
    } catch (const Error& e) {
      fail("{}:{}: {}", options.input, number, e.what());
    }
  }
  return out;
}

void run_tokenize(const TokenizeOptions& options) {
  const auto tokenizer = Tokenizer::load(options.model);
  // Everything is computed before printing, so an error leaves no partial output.
  const std::string out = options.input.empty()
                              ? format_ids(tokenizer.encode(options.text, options.add_special), options.format) + "\n"
                              : tokenize_jsonl(tokenizer, options);
  std::cout << out;
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto options = std::make_shared<TokenizeOptions>();
  auto* command = app.add_subcommand(
      "tokenize",
      "Print the token ids of a text (--text) or of each line of a JSONL file of strings (--input; one output "
      "line per input line). Needs only the tokenizer files of --model.");
  command->add_option("--model", options->model,
                      "Directory with tokenizer.json (a model or tokenizer directory), or a .gguf file")
      ->required()
      ->check(CLI::ExistingPath);
  auto* text = command->add_option("--text", options->text, "Text to tokenize");
  auto* input = command->add_option("--input", options->input, "JSONL file, each line a JSON string")
                    ->check(CLI::ExistingFile);
  text->excludes(input);
  command->add_option("--format", options->format, "json: a JSON array per text; text: space-separated ids")
      ->check(CLI::IsMember({"json", "text"}));
  command->add_flag("--add-special", options->add_special,
                    "Apply tokenizer.json's post_processor (e.g. prepend BOS for Llama 2 / llama2.c models). Off by "
                    "default: ids are those of the text alone (special tokens written in it are still recognised)");
  command->callback([options, text, input] {
    if (text->count() == 0 && input->count() == 0) throw CLI::RequiredError("--text or --input");
    run_tokenize(*options);
  });
}

}  // namespace kvbench::cli
