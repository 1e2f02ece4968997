// PriorPrior's particle system (prior_prior_system.hpp) on the Brownian model with complete
// data: pair distances from the leaf cache where both clusters are leaves, merged nodes reused
// from the pool's spares.
#include "prior_prior.hpp"

#include <memory>
#include <span>

#include "pair_cache.hpp"
#include "particle_state.hpp"
#include "prior_prior_system.hpp"
#include "proposals.hpp"

namespace kingman::detail {

namespace {

class BrownianPriorPriorModel {
 public:
  using Node = ClusterNode;
  static constexpr bool kReusesNodes = true;

  BrownianPriorPriorModel(const WhitenedData& data, double leaf_variance)
      : data_(&data),
        leaf_variance_(leaf_variance),
        cache_(data, LeafPairs::on_demand),
        context_{Algorithm::priorprior, data.n, data.d, data.log_det_lambda, &cache_} {}
  // context_ points into the model.
  BrownianPriorPriorModel(const BrownianPriorPriorModel&) = delete;
  BrownianPriorPriorModel& operator=(const BrownianPriorPriorModel&) = delete;

  std::size_t leaf_count() const { return data_->n; }
  void fill_leaves(std::span<Node> leaves) const {
    detail::fill_leaves(*data_, leaf_variance_, leaves);
  }
  // A draw reads two means and writes one: 4 per dimension.
  std::size_t merge_work() const { return 4 * data_->d; }

  // As draw_and_merge's PriorPrior case (proposals.cpp).
  double merge(const Node& a, const Node& b, double time, double duration, std::size_t id,
               std::unique_ptr<Node>& merged) const {
    const double offset = a.offset() + b.offset() - 2.0 * time;
    const double log_alpha = log_pair_likelihood(context_, cache_.eps(a, b), offset, duration);
    if (!merged) merged = std::make_unique<Node>();
    merge_clusters(a, b, time - duration, id, context_.dims, *merged);
    return log_alpha;
  }

 private:
  const WhitenedData* data_;
  double leaf_variance_;
  LeafPairCache cache_;
  StepContext context_;
};

}  // namespace

std::unique_ptr<ParticleSystem> make_prior_prior_system(const WhitenedData& data,
                                                        double leaf_variance,
                                                        const SmcOptions& options) {
  return std::make_unique<PriorPriorSystem<BrownianPriorPriorModel>>(options, data, leaf_variance);
}

}  // namespace kingman::detail
