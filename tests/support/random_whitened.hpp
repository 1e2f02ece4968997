#pragma once
// Whitened data of independent standard normal entries (Lambda = I), for engine tests that need
// a point cloud but no particular structure.
#include <cstddef>

#include "kingman/model/whitened_data.hpp"

namespace kingman::testing_support {

WhitenedData random_whitened(std::size_t n, std::size_t d, unsigned seed);

}  // namespace kingman::testing_support
