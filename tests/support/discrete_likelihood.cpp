#include "discrete_likelihood.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace kingman::oracle {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

class PruningLikelihood {
 public:
  explicit PruningLikelihood(DiscreteModel model) : model_(std::move(model)) {}

  double operator()(const History& history, const std::vector<double>& times) const {
    const std::size_t n = model_.n, d = model_.d, kk = model_.categories;
    if (history.size() != times.size() || history.size() >= n)
      throw std::invalid_argument("discrete likelihood: history and times must match, < n");
    const std::size_t nodes = n + history.size();
    std::vector<char> is_root(nodes, 1);
    std::vector<double> time(nodes, 0.0);
    for (std::size_t k = 0; k < history.size(); ++k) {
      const auto [a, b] = history[k];
      if (a < 0 || b < 0 || a >= static_cast<int>(n + k) || b >= static_cast<int>(n + k) ||
          a == b || !is_root[a] || !is_root[b])
        throw std::invalid_argument("discrete likelihood: bad merge " + std::to_string(k));
      is_root[a] = is_root[b] = 0;
      time[n + k] = times[k];
      if (!(times[k] <= time[a] && times[k] <= time[b]))
        throw std::invalid_argument("discrete likelihood: merge " + std::to_string(k) +
                                    " is later than a child");
    }
    double log_p = 0.0;
    std::vector<double> m(nodes * kk), scale(nodes), up_a(kk), up_b(kk), transition(kk * kk);
    for (std::size_t col = 0; col < d; ++col) {
      const double* q = model_.equilibrium.data() + col * kk;
      const double lambda = model_.rates[col];
      for (std::size_t i = 0; i < n; ++i) {
        const int v = model_.values[i * d + col];
        for (std::size_t k = 0; k < kk; ++k)
          m[i * kk + k] = v < 0 ? 1.0 : (static_cast<int>(k) == v ? 1.0 : 0.0);
        scale[i] = 0.0;
      }
      // up[i] = sum_j P_ij(s) m_child(j), with P(s) built entry by entry.
      auto upward = [&](std::size_t child, double branch, std::vector<double>& up) {
        const double stay = std::exp(-lambda * branch);
        for (std::size_t i = 0; i < kk; ++i)
          for (std::size_t j = 0; j < kk; ++j)
            transition[i * kk + j] = (i == j ? stay : 0.0) + (1.0 - stay) * q[j];
        for (std::size_t i = 0; i < kk; ++i) {
          double sum = 0.0;
          for (std::size_t j = 0; j < kk; ++j) sum += transition[i * kk + j] * m[child * kk + j];
          up[i] = sum;
        }
      };
      for (std::size_t k = 0; k < history.size(); ++k) {
        const auto a = static_cast<std::size_t>(history[k].first);
        const auto b = static_cast<std::size_t>(history[k].second);
        const std::size_t c = n + k;
        upward(a, time[a] - time[c], up_a);
        upward(b, time[b] - time[c], up_b);
        double largest = 0.0;
        for (std::size_t i = 0; i < kk; ++i) {
          m[c * kk + i] = up_a[i] * up_b[i];
          largest = std::max(largest, m[c * kk + i]);
        }
        if (!(largest > 0.0)) return -kInf;
        for (std::size_t i = 0; i < kk; ++i) m[c * kk + i] /= largest;
        scale[c] = scale[a] + scale[b] + std::log(largest);
      }
      for (std::size_t node = 0; node < nodes; ++node) {
        if (!is_root[node]) continue;
        double root = 0.0;
        for (std::size_t k = 0; k < kk; ++k) root += q[k] * m[node * kk + k];
        log_p += scale[node] + std::log(root);
      }
    }
    return log_p;
  }

 private:
  DiscreteModel model_;
};

}  // namespace

LogLikelihood discrete_log_likelihood(DiscreteModel model) {
  if (model.n == 0 || model.d == 0 || model.categories < 1)
    throw std::invalid_argument("discrete_log_likelihood: n, d, K must be >= 1");
  if (model.values.size() != model.n * model.d ||
      model.equilibrium.size() != model.d * model.categories || model.rates.size() != model.d)
    throw std::invalid_argument("discrete_log_likelihood: sizes do not match n, d, K");
  for (int v : model.values)
    if (v < -1 || v >= static_cast<int>(model.categories))
      throw std::invalid_argument("discrete_log_likelihood: value outside 0..K-1");
  return PruningLikelihood(std::move(model));
}

Enumeration enumerate_discrete(const DiscreteModel& model, const EnumerationOptions& options) {
  return enumerate_exact(model.n, discrete_log_likelihood(model), options);
}

}  // namespace kingman::oracle
