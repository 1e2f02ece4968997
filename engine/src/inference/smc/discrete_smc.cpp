// SMC for the binary / multinomial model: the proposals of MODEL.md section 5 on the messages of
// section 7 (law_proposal_system.hpp, with this model's parts below) and the race
// (race_discrete.cpp), run by the shared SMC loop (smc_loop.hpp). PostPost's pair mass G_C is
// the mass of the pair's DiscreteDurationLaw; with one mutation rate a Gauss-Jacobi sum
// (discrete_pair_mass.hpp).
#include "kingman/inference/discrete_smc.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../../model/discrete_duration_law.hpp"
#include "../../model/discrete_pair_mass.hpp"
#include "../../scheduler/run_arena.hpp"
#include "discrete_particle_state.hpp"
#include "kingman/error.hpp"
#include "law_proposal_system.hpp"
#include "prior_prior_system.hpp"
#include "race_discrete.hpp"
#include "smc_loop.hpp"

namespace kingman {

namespace detail {

void fill_discrete_leaves(const DiscreteData& data, std::span<DiscreteClusterNode> leaves) {
  const DiscreteMessages messages(data);
  const std::size_t width = data.d * data.categories;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    DiscreteClusterNode& leaf = leaves[i];
    const DiscreteClusterView view = messages.cluster(i);
    leaf.id = i;
    leaf.time = view.time;
    leaf.message.assign(view.message, view.message + width);
    leaf.observed.assign(view.observed, view.observed + data.d);
  }
}

}  // namespace detail

namespace {

using detail::DiscreteClusterNode;

void check(const DiscreteData& data, const SmcOptions& options) {
  const Algorithm a = options.proposal;
  if (a != Algorithm::priorprior && a != Algorithm::priorpost && a != Algorithm::postpost &&
      a != Algorithm::race) {
    std::string message = "algorithm ";
    message += to_string(a);
    message +=
        " is not available for the binary or multinomial likelihood; use priorprior, priorpost, "
        "postpost or race";
    throw OptionError(message);
  }
  if (options.particles < 1) throw OptionError("--particles must be at least 1");
  if (!(options.ess_threshold >= 0.0 && options.ess_threshold <= 1.0))
    throw OptionError("--ess-threshold must be in [0, 1]");
  if (data.n < 2) throw InputError("SMC needs at least two points");
}

// The binary / multinomial model's parts of the law proposals. With one mutation rate every
// pair's mass is a Gauss-Jacobi sum with the step's rule (discrete_pair_mass.hpp); the adaptive
// law is then built only for the chosen pairs.
class DiscreteProposalModel {
 public:
  using Node = DiscreteClusterNode;
  using Law = DiscreteDurationLaw;
  struct Scratch {
    DiscretePair pair;
  };

  explicit DiscreteProposalModel(const DiscreteData& data)
      : data_(&data),
        common_mutation_rate_(
            std::all_of(data.mutation_rate.begin(), data.mutation_rate.end(),
                        [&](double rate) { return rate == data.mutation_rate.front(); })) {}

  std::size_t leaf_count() const { return data_->n; }
  void fill_leaves(std::span<Node> leaves) const { detail::fill_discrete_leaves(*data_, leaves); }

  // merge() fills the node it is handed when there is one (a spare of PriorPrior's pool, whose
  // buffers keep their size): every field it reads is written, and the message and observed
  // flags entry by entry. (A new node and its two buffers per merge were ~12 % of a binary
  // PriorPrior run in malloc and free: bench/RESULTS.md, Engine: SMC, twenty-eighth session.)
  static constexpr bool kMergeFillsSpareNodes = true;

  double merge(const Node& a, const Node& b, double t, std::size_t id,
               std::unique_ptr<Node>& merged) const {
    if (!merged) merged = std::make_unique<Node>();
    merged->id = id;
    merged->time = t;
    merged->message.resize(data_->d * data_->categories);
    merged->observed.resize(data_->d);
    return merge_discrete_clusters(*data_, a.view(), b.view(), t, merged->message.data(),
                                   merged->observed.data());
  }

  // merge()'s cost in parallel_for.hpp's units, on the scale of PriorPrior's own system
  // (prior_prior.cpp: 4 per value a draw reads), by which a binary PriorPrior step at d = 20
  // splits only from ~1 600 particles. (At 40 per value, the large steps of 64 particles at
  // n = 2 000 split on 2 threads and saved 12 % of the wall time for 23 % more CPU time:
  // bench/RESULTS.md, Engine: SMC, twenty-seventh session.)
  std::size_t merge_work() const { return 4 * data_->d * data_->categories; }

  double log_likelihood(Scratch& scratch, const Node& a, const Node& b, double t) const {
    scratch.pair.assign(*data_, a.view(), b.view());
    return scratch.pair.log_local_likelihood(t);
  }
  // log_likelihood, or with `deferred` set Z_C(t) itself, whose log the caller takes for many
  // pairs at once (PriorPost, law_proposal_system.hpp).
  double likelihood_or_log(Scratch& scratch, const Node& a, const Node& b, double t,
                           bool& deferred) const {
    scratch.pair.assign(*data_, a.view(), b.view());
    double value;
    deferred = scratch.pair.local_likelihood_product(t, value);
    return value;
  }

  void prepare_step(double lambda) {
    masses_.reset();
    if (common_mutation_rate_ && DiscretePairMasses::supports(lambda, data_->mutation_rate.front()))
      masses_.emplace(lambda, data_->mutation_rate.front(), data_->d);
  }

  // log G_C: the exact Gauss-Jacobi sum where the step's rule covers the pair, else the adaptive
  // quadrature of its law (built into `law`). The two agree to ~1e-13
  // (tests/engine/discrete_pair_mass_test.cpp).
  double log_mass(Scratch& scratch, const Node& a, const Node& b, double lambda, double time,
                  Law& law, bool& built) const {
    scratch.pair.assign(*data_, a.view(), b.view());
    built = !(masses_ && masses_->handles(scratch.pair));
    if (!built) return masses_->log_mass(scratch.pair, time);
    law.assign(scratch.pair, lambda, time);
    return law.log_mass();
  }

  // log_mass, except that where the pair's mass is a Gauss-Jacobi sum formed directly, the sum
  // itself is returned with `deferred` set: its log plus deferred_log_offset() is log G_C, which
  // the caller takes for many pairs at once (law_proposal_system.hpp).
  double log_mass_or_sum(Scratch& scratch, const Node& a, const Node& b, double lambda, double time,
                         Law& law, bool& built, bool& deferred) const {
    scratch.pair.assign(*data_, a.view(), b.view());
    built = !(masses_ && masses_->handles(scratch.pair));
    deferred = false;
    if (!built) {
      double value;
      deferred = masses_->mass_sum(scratch.pair, time, value);
      return value;
    }
    law.assign(scratch.pair, lambda, time);
    return law.log_mass();
  }
  double deferred_log_offset() const { return masses_ ? masses_->log_scale() : 0.0; }

  // Where the step has a Gauss-Jacobi rule it covers nearly every pair (those of at most 512
  // varying columns), so sharing laws among the states would only cost its bookkeeping.
  bool shares_pair_laws() const { return !masses_; }

  // Whether the pair's mass needs its law (the step's Gauss-Jacobi rule does not cover it).
  bool needs_law(Scratch& scratch, const Node& a, const Node& b, double /*time*/) const {
    scratch.pair.assign(*data_, a.view(), b.view());
    return !(masses_ && masses_->handles(scratch.pair));
  }

  void build_law(Scratch& scratch, const Node& a, const Node& b, double lambda, double time,
                 Law& law) const {
    scratch.pair.assign(*data_, a.view(), b.view());
    law.assign(scratch.pair, lambda, time);
  }

 private:
  const DiscreteData* data_;
  bool common_mutation_rate_;                 // one rate for every column
  std::optional<DiscretePairMasses> masses_;  // this step's (PostPost)
};

}  // namespace

SmcResult run_smc(const DiscreteData& data, const SmcOptions& options) {
  check(data, options);
  const auto start = std::chrono::steady_clock::now();
  detail::RunArena arena(options.threads, options.pin_threads);

  SmcResult result;
  result.threads = arena.threads();
  arena.execute([&] {
    if (options.proposal == Algorithm::race) {
      const auto system = detail::make_discrete_race_system(data, options);
      detail::run_smc_loop(*system, data.n, options, start, result);
    } else if (options.proposal == Algorithm::priorprior) {
      detail::PriorPriorSystem<detail::PriorPriorOnLawModel<DiscreteProposalModel>> system(options,
                                                                                           data);
      detail::run_smc_loop(system, data.n, options, start, result);
    } else {
      detail::LawProposalSystem<DiscreteProposalModel> system(DiscreteProposalModel(data), options);
      detail::run_smc_loop(system, data.n, options, start, result);
    }
  });
  // The loop estimates p(x) / prod q_{d, x_id} (normalized messages): add the base term.
  const double base = data.log_base_term();
  result.log_evidence += base;
  for (SmcParticle& particle : result.particles) particle.log_weight += base;
  return result;
}

}  // namespace kingman
