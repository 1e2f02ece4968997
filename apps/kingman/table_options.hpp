#pragma once
// Table-reading options shared by the subcommands that read data.
#include <CLI/CLI.hpp>
#include <string>

#include "kingman/data/table_reader.hpp"

namespace kingman::cli {

struct TableArguments {
  std::string header = "auto";     // auto | yes | no
  std::string id_column = "auto";  // auto | yes | no
  std::string delimiter = "auto";  // auto | comma | tab | space
};

void add_table_options(CLI::App& command, TableArguments& arguments);
TableReadOptions table_read_options(const TableArguments& arguments);

}  // namespace kingman::cli
