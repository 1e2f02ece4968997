// libFuzzer target: read_table on any bytes, with the header, id-column and delimiter modes
// taken from the first byte. Documented errors (InputError, OptionError) are fine; a crash, a
// sanitizer report, another exception type, or an accepted table that is not rectangular or
// holds an infinity is a bug.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "kingman/data/table_reader.hpp"
#include "kingman/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t mode = data[0];
  kingman::TableReadOptions options;
  options.header = static_cast<kingman::HeaderMode>(mode % 3);
  options.id_column = static_cast<kingman::IdColumnMode>((mode / 3) % 3);
  switch ((mode / 9) % 4) {
    case 1:
      options.delimiter = ',';
      break;
    case 2:
      options.delimiter = '\t';
      break;
    case 3:
      options.delimiter = ' ';
      break;
    default:
      break;
  }
  std::istringstream in(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
  try {
    const kingman::Table table = kingman::read_table(in, "fuzz", options);
    if (table.values.size() != table.rows * table.cols || table.rows < 2) std::abort();
    for (const double v : table.values)
      if (std::isinf(v)) std::abort();
  } catch (const kingman::InputError&) {
  } catch (const kingman::OptionError&) {
  }
  return 0;
}
