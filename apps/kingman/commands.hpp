#pragma once
// The kingman subcommands. Each registers its options on a CLI11 app and returns the action to
// run after parsing.
#include <CLI/CLI.hpp>
#include <functional>

namespace kingman::cli {

using Action = std::function<void()>;

Action add_fit_command(CLI::App& app);
Action add_generate_command(CLI::App& app);
Action add_score_command(CLI::App& app);

}  // namespace kingman::cli
