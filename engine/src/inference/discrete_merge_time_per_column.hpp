#pragma once
// The optimal merge time of a pair whose shared columns have different mutation rates.
#include "kingman/model/discrete_messages.hpp"

namespace kingman::detail {

// argmax over t <= pair.latest_time() of rate * t + log Z_C(t), for any rates (see the .cpp).
double per_column_rate_optimum(const DiscretePair& pair, double rate);

}  // namespace kingman::detail
