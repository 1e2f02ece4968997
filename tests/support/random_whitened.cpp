#include "random_whitened.hpp"

#include <random>

namespace kingman::testing_support {

WhitenedData random_whitened(std::size_t n, std::size_t d, unsigned seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal;
  WhitenedData w;
  w.n = n;
  w.d = d;
  w.log_lambda_diagonal.assign(d, 0.0);
  for (std::size_t k = 0; k < n * d; ++k) w.x.push_back(normal(engine));
  return w;
}

}  // namespace kingman::testing_support
