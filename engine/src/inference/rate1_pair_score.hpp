#pragma once
// The Greedy-Rate1 pair score shared by both Rate1 paths (full pair cache, bounded memory).
#include <cstddef>

#include "kingman/inference/merge_duration.hpp"
#include "kingman/model/brownian_messages.hpp"
#include "kingman/model/whitened_data.hpp"

namespace kingman::detail {

// Unclamped merge height of a pair under rate 1. The optimum merge time does not depend on
// the current time (MODEL.md section 4), so this is fixed once the pair exists.
class Rate1PairScore {
 public:
  Rate1PairScore(const WhitenedData& data, const BrownianMessages& messages)
      : data_(data), messages_(messages), dims_(static_cast<double>(data.d)) {}

  double operator()(std::size_t i, std::size_t j) const {
    if (!messages_.per_dimension()) {
      const double eps = messages_.squared_distance(i, j);
      // linear_mode_duration with offset a_i + a_j measured from time 0 gives -t_C.
      return linear_mode_duration(1.0, dims_, eps, messages_.offset(i) + messages_.offset(j));
    }
    return linear_mode_duration(1.0, shared_dimensions(messages_, i, j, 0.0, data_));
  }

 private:
  const WhitenedData& data_;
  const BrownianMessages& messages_;
  double dims_;
};

}  // namespace kingman::detail
