#include "kingman/data/table.hpp"

#include <algorithm>
#include <cmath>

namespace kingman {

bool Table::has_missing() const {
  return std::any_of(values.begin(), values.end(), [](double value) { return std::isnan(value); });
}

}  // namespace kingman
