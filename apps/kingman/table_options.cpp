#include "table_options.hpp"

namespace kingman::cli {

void add_table_options(CLI::App& command, TableArguments& arguments) {
  command.add_option("--header", arguments.header, "first row is a header: auto | yes | no")
      ->check(CLI::IsMember({"auto", "yes", "no"}))
      ->capture_default_str();
  command
      .add_option("--id-column", arguments.id_column,
                  "first column holds row names (Newick leaf names): auto | yes | no")
      ->check(CLI::IsMember({"auto", "yes", "no"}))
      ->capture_default_str();
  command.add_option("--delimiter", arguments.delimiter, "auto | comma | tab | space")
      ->check(CLI::IsMember({"auto", "comma", "tab", "space"}))
      ->capture_default_str();
}

TableReadOptions table_read_options(const TableArguments& arguments) {
  TableReadOptions options;
  if (arguments.header == "yes") options.header = HeaderMode::present;
  if (arguments.header == "no") options.header = HeaderMode::absent;
  if (arguments.id_column == "yes") options.id_column = IdColumnMode::present;
  if (arguments.id_column == "no") options.id_column = IdColumnMode::absent;
  if (arguments.delimiter == "comma") options.delimiter = ',';
  if (arguments.delimiter == "tab") options.delimiter = '\t';
  if (arguments.delimiter == "space") options.delimiter = ' ';
  return options;
}

}  // namespace kingman::cli
