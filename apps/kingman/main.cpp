// kingman: Bayesian hierarchical clustering with Kingman's coalescent, from the command line.
// Exit status: 0 success, 2 usage error, 3 bad input, 1 anything else. Errors are one line on
// stderr; no output file is left behind by a failed run.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "commands.hpp"
#include "kingman/error.hpp"
#include "kingman/kernels/simd_level.hpp"

int main(int argc, char** argv) {
  CLI::App app{"kingman: Bayesian hierarchical clustering with Kingman's coalescent", "kingman"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kingman 0.1.0");
  kingman::cli::Action fit = kingman::cli::add_fit_command(app);
  kingman::cli::Action generate = kingman::cli::add_generate_command(app);
  kingman::cli::Action score = kingman::cli::add_score_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "kingman: " << e.what() << " (see kingman --help)\n";
    return 2;
  }
  try {
    kingman::kernels::apply_simd_level_from_environment();
  } catch (const std::invalid_argument& e) {
    std::cerr << "kingman: " << e.what() << "\n";
    return 2;
  }
  try {
    if (app.got_subcommand("fit")) fit();
    if (app.got_subcommand("generate")) generate();
    if (app.got_subcommand("score")) score();
  } catch (const kingman::OptionError& e) {
    std::cerr << "kingman: " << e.what() << "\n";
    return 2;
  } catch (const kingman::InputError& e) {
    std::cerr << "kingman: " << e.what() << "\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "kingman: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
