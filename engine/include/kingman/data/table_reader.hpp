#pragma once
// Reading numeric tables: comma, tab or whitespace separated; optional header; optional id
// column; empty, NA or NaN cells are missing. Errors name the file, row and column.
#include <istream>
#include <optional>
#include <string>

#include "kingman/data/table.hpp"

namespace kingman {

enum class HeaderMode { automatic, present, absent };
enum class IdColumnMode { automatic, present, absent };

struct TableReadOptions {
  HeaderMode header = HeaderMode::automatic;         // first row is column names?
  IdColumnMode id_column = IdColumnMode::automatic;  // first column holds row names?
  std::optional<char> delimiter;  // ',', '\t' or ' ' (any run of blanks); unset: detected
};

// Throws InputError (empty input, ragged row, non-numeric cell, inf, fewer than two rows).
Table read_table(const std::string& path, const TableReadOptions& options = {});
Table read_table(std::istream& in, const std::string& source_name,
                 const TableReadOptions& options = {});

}  // namespace kingman
