// Each subcommand lives in its own cli/cmd_*.cpp and registers itself on the root app here.
#pragma once
#include <CLI/CLI.hpp>

namespace kvbench::cli {

// The whole command line (cli/app.cpp): parses argv, runs the subcommand, returns the exit status.
int main(int argc, char** argv);

void add_generate_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_grade_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_sweep_command(CLI::App& app);  // also merge
void add_report_command(CLI::App& app);  // also inspect
void add_train_demo_command(CLI::App& app);
void add_train_scorer_command(CLI::App& app);
void add_duo_patterns_command(CLI::App& app);
void add_datasets_command(CLI::App& app);
void add_models_command(CLI::App& app);
void add_doctor_command(CLI::App& app);
void add_list_command(CLI::App& app);

}  // namespace kvbench::cli
