// The Brownian model with per-dimension messages in the law proposals and in the race. A
// cluster carries a mean and a variance per dimension (+inf where no leaf below observes it);
// a pair's likelihood covers the dimensions both clusters observe, each with its own offset
// r_j = v_lj + v_rj + (t_l - T) + (t_r - T). Where those offsets coincide (every pair of leaves,
// and most pairs while few entries are missing) the complete-data formulas apply: the truncated
// GIG's mass (single_offset_log_mass) and, for the race, RateOnePair's clocks, skip bounds and
// kill factors. Elsewhere the pair's duration law is a BrownianDurationLaw (an adaptive
// quadrature): PostPost's mass G_C, MPost1's and MPost2's exact weights G_C / q(C), exact draws
// by inversion, and with rate 1 the race's clock law (mass N_C, upper masses S_C).
#include "missing_smc.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <numbers>
#include <vector>

#include "../../model/brownian_duration_law.hpp"
#include "kingman/kernels/fixed_order_bessel.hpp"
#include "kingman/kernels/log_bessel_k.hpp"
#include "kingman/model/brownian_messages.hpp"
#include "kingman/model/coalescent_prior.hpp"
#include "law_proposal_system.hpp"
#include "live_particle_state.hpp"
#include "prior_prior_system.hpp"
#include "race_engine.hpp"
#include "rate_one_pair.hpp"

namespace kingman::detail {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kLogTwoPi = std::log(2.0 * std::numbers::pi);

// One cluster's per-dimension message, immutable once built.
struct MissingClusterNode {
  std::size_t id = 0;
  double time = 0.0;
  std::vector<double> mean;                // d (0 where unobserved)
  std::vector<double> variance;            // d (+inf where unobserved)
  std::uint64_t clock_key = 0;             // the race's (race_engine.hpp)
  mutable std::uint64_t collect_mark = 0;  // ClusterPool's
  // MPost2's fixed pair terms against the partners of smaller id, two per id (filled once by
  // MissingProposalModel::prepare_scores; empty under the other proposals).
  mutable std::once_flag terms_once;
  mutable std::vector<double> terms;

  BrownianClusterView view() const { return {mean.data(), variance.data(), time}; }
};

// What both uses share: the leaves, merges and a pair's dimensions.
class MissingDataModel {
 public:
  using Node = MissingClusterNode;

  MissingDataModel(const WhitenedData& data, double leaf_variance)
      : data_(&data), leaf_variance_(leaf_variance) {}

  std::size_t leaf_count() const { return data_->n; }

  void fill_leaves(std::span<Node> leaves) const {
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      Node& leaf = leaves[i];
      leaf.id = i;
      leaf.mean.resize(data_->d);
      leaf.variance.resize(data_->d);
      const double* row = data_->row(i);
      for (std::size_t j = 0; j < data_->d; ++j) {
        const bool missing = std::isnan(row[j]);
        leaf.mean[j] = missing ? 0.0 : row[j];
        leaf.variance[j] = missing ? kInf : leaf_variance_;
      }
    }
  }

  // A new node per merge: a spare would bring a spent terms_once and stale MPost2 terms.
  static constexpr bool kMergeFillsSpareNodes = false;

  double merge(const Node& a, const Node& b, double t, std::size_t id,
               std::unique_ptr<Node>& merged) const {
    merged = std::make_unique<Node>();
    merged->id = id;
    merged->time = t;
    merged->mean.resize(data_->d);
    merged->variance.resize(data_->d);
    return merge_brownian_clusters(a.view(), b.view(), data_->d, t, data_->log_lambda_diagonal,
                                   merged->mean.data(), merged->variance.data());
  }

  std::size_t dims() const { return data_->d; }
  // merge()'s cost in parallel_for.hpp's units, on the scale of PriorPrior's own system
  // (prior_prior.cpp): 4 per value it reads, a mean and a variance per dimension.
  std::size_t merge_work() const { return 8 * data_->d; }
  const std::vector<double>& log_lambda_diagonal() const { return data_->log_lambda_diagonal; }

  // The pair's shared dimensions at time `time`, into `out`.
  void shared(const Node& a, const Node& b, double time, SharedDimensions& out) const {
    shared_dimensions(a.view(), b.view(), data_->d, time, data_->log_lambda_diagonal, out);
  }

 private:
  const WhitenedData* data_;
  double leaf_variance_;
};

// The Bessel terms of MPost1's and MPost2's scores, log K_p(sqrt(x)) for p = 1 - k/2 with k the
// pair's shared dimensions: one fit (LogBesselKFixedOrder, 1e-13 relative) per order, made the
// first time a pair of that order is scored, from the run's bound on x (outside it the fit
// falls back to log_bessel_k). Shared by the model's copies; the fits depend only on the run.
class BesselTermsByOrder {
 public:
  // Fits over x in [1e-12 largest, largest].
  BesselTermsByOrder(std::size_t dims, double largest)
      : largest_(largest), flags_(dims + 1), fits_(dims + 1) {}

  // log K_p(sqrt(x)), p = 1 - k/2. Where no fit can be made for the order over the
  // run's range (it did not converge for k ~ 2700 over MPost1's range when that started at
  // 1e-12 of its top), log_bessel_k itself.
  double log_k(std::size_t k, double x) const {
    std::call_once(flags_[k], [&] {
      try {
        fits_[k] = std::make_unique<kernels::LogBesselKFixedOrder>(order(k), largest_ * 1e-12,
                                                                   largest_ * 1.0001);
      } catch (const std::exception&) {
        fits_[k].reset();
      }
    });
    if (fits_[k]) return fits_[k]->term(x);
    return kernels::log_bessel_k(order(k), std::sqrt(x));
  }

 private:
  static double order(std::size_t k) { return 1.0 - 0.5 * static_cast<double>(k); }

  double largest_;
  mutable std::vector<std::once_flag> flags_;
  mutable std::vector<std::unique_ptr<kernels::LogBesselKFixedOrder>> fits_;
};

// The law proposals' parts (law_proposal_system.hpp).
class MissingProposalModel : public MissingDataModel {
 public:
  using Law = BrownianDurationLaw;
  struct Scratch {
    SharedDimensions shared;
  };

  // `largest`: a bound on the squared distance of any pair over its shared dimensions, and
  // lambda_max the largest coalescent rate, which fix the range of MPost1's and MPost2's fits.
  MissingProposalModel(const WhitenedData& data, double leaf_variance, double largest,
                       double lambda_max)
      : MissingDataModel(data, leaf_variance),
        mpost1_terms_(std::make_shared<BesselTermsByOrder>(data.d, largest * lambda_max)),
        mpost2_terms_(std::make_shared<BesselTermsByOrder>(data.d, largest)) {}

  // An upper bound on one merged cluster's bytes: its node, mean and variance, and under MPost2
  // its two terms per partner of smaller id (up to 2n ids), with the allocator's overhead.
  std::size_t node_bytes(Algorithm proposal) const {
    const std::size_t n = leaf_count(), d = dims();
    return sizeof(Node) + 2 * d * sizeof(double) +
           (proposal == Algorithm::mpost2 ? 4 * n * sizeof(double) : 0) + 96;
  }

  // log Z_C for a merge at t (PriorPost scores every pair so).
  double log_likelihood(Scratch& /*scratch*/, const Node& a, const Node& b, double t) const {
    return log_local_likelihood(a.view(), b.view(), dims(), t, log_lambda_diagonal());
  }

  void prepare_step(double /*lambda*/) {}

  // MPost2: the live clusters' fixed pair terms (pair_terms), each cluster's row filled the
  // first time a state that lists it is scored. That state lists every partner of smaller id
  // the cluster will ever have (they were all live when it was made, and a state is scored at
  // every step), and std::call_once makes one task write a row before any reads it.
  void prepare_scores(const std::vector<const Node*>& live, Algorithm proposal) const {
    if (proposal != Algorithm::mpost2) return;
    for (const Node* node : live) {
      std::call_once(node->terms_once, [&] {
        node->terms.assign(2 * node->id, std::numeric_limits<double>::quiet_NaN());
        for (const Node* partner : live) {
          if (partner->id < node->id)
            pair_terms(*node, *partner, node->terms[2 * partner->id],
                       node->terms[2 * partner->id + 1]);
        }
      });
    }
  }

  // log G_C: in closed form where the pair's shared dimensions have one offset (every pair of
  // leaves, and most pairs while few entries are missing), else the adaptive law's.
  double log_mass(Scratch& scratch, const Node& a, const Node& b, double lambda, double time,
                  Law& law, bool& built) const {
    shared(a, b, time, scratch.shared);
    const double closed = single_offset_log_mass(scratch.shared, lambda);
    built = std::isnan(closed);
    if (!built) return closed;
    law.assign(scratch.shared, lambda, time);
    return law.log_mass();
  }

  // An upper bound on log G_C for a few operations (log_mass_upper_bound), by which PostPost
  // leaves out the pairs whose masses cannot matter.
  double log_mass_bound(Scratch& scratch, const Node& a, const Node& b, double lambda,
                        double time) const {
    shared(a, b, time, scratch.shared);
    return log_mass_upper_bound(scratch.shared, lambda);
  }

  // Whether the pair's mass needs its law: the shared dimensions' offsets differ (they differ
  // at every start time alike, all moving by the same 2 (T - T')).
  bool needs_law(Scratch& scratch, const Node& a, const Node& b, double time) const {
    shared(a, b, time, scratch.shared);
    return !has_one_offset(scratch.shared);
  }

  void build_law(Scratch& scratch, const Node& a, const Node& b, double lambda, double time,
                 Law& law) const {
    shared(a, b, time, scratch.shared);
    law.assign(scratch.shared, lambda, time);
  }

  // Henao & Lucas's scores on the pair's k shared dimensions (the weight G_C / q(C) is exact
  // whatever they are): the complete-data formulas with the pair's offsets replaced by their
  // mean r = v + (t_a - T) + (t_b - T), v the mean over the shared dimensions of v_aj + v_bj,
  // so for a pair whose dimensions have one offset they are the papers' own.
  //   MPost1: log G_C with the complete GIG integral: c_k + lambda r / 2 + log Z_GIG(p, E, lambda);
  //   MPost2: the same with lambda dropped inside the Bessel term: Z_GIG(p, E, 1), so that
  //           everything but lambda r / 2 is fixed per pair (pair_terms, kept by prepare_scores);
  // with p = 1 - k/2, E the squared distance over the shared dimensions (at least the smallest
  // normal number, so that agreeing clusters of positive variance rank first but stay finite)
  // and c_k = -log 2 - (k/2) log 2 pi - 1/2 sum log Lambda_jj. No shared dimension: 1 / lambda.
  double log_score(Scratch& /*scratch*/, const Node& a, const Node& b, double lambda, double time,
                   Algorithm proposal) const {
    const Node& later = a.id > b.id ? a : b;
    const Node& earlier = a.id > b.id ? b : a;
    double fixed = 0.0, variance = 0.0;
    if (proposal == Algorithm::mpost2 && 2 * earlier.id + 1 < later.terms.size() &&
        !std::isnan(later.terms[2 * earlier.id])) {
      fixed = later.terms[2 * earlier.id];
      variance = later.terms[2 * earlier.id + 1];
    } else {
      pair_terms(later, earlier, fixed, variance, proposal == Algorithm::mpost1 ? lambda : 1.0);
    }
    if (fixed == kInf) return -std::log(lambda);  // no shared dimension
    return fixed + 0.5 * lambda * (variance + (a.time - time) + (b.time - time));
  }

 private:
  // The pair's score less lambda r / 2 (`fixed`; +inf with no shared dimension) and v, for
  // psi = lambda (MPost1) or 1 (MPost2): c_k + log Z_GIG(p, E, psi).
  void pair_terms(const Node& a, const Node& b, double& fixed, double& variance,
                  double psi = 1.0) const {
    double k = 0.0, variances = 0.0, energy = 0.0, log_lambda = 0.0;
    const std::vector<double>& log_lambda_jj = log_lambda_diagonal();
    for (std::size_t j = 0; j < dims(); ++j) {
      if (std::isinf(a.variance[j]) || std::isinf(b.variance[j])) continue;
      const double diff = a.mean[j] - b.mean[j];
      k += 1.0;
      variances += a.variance[j] + b.variance[j];
      energy += diff * diff;
      log_lambda += log_lambda_jj[j];
    }
    if (k == 0.0) {
      fixed = kInf;
      variance = 0.0;
      return;
    }
    energy = std::max(energy, std::numeric_limits<double>::min());
    // log Z_GIG(p, E, psi) = log 2 + (p/2) log(E / psi) + log K_p(sqrt(E psi)) (the 2 cancels
    // against c_k's 1/2).
    const double p = 1.0 - 0.5 * k;
    const double x = energy * psi, log_x = std::log(x);
    const auto order = static_cast<std::size_t>(k);
    const double bessel = (psi == 1.0 ? mpost2_terms_ : mpost1_terms_)->log_k(order, x);
    fixed = -0.5 * k * kLogTwoPi - 0.5 * log_lambda + 0.5 * p * log_x + bessel -
            (psi == 1.0 ? 0.0 : p * std::log(psi));
    variance = variances / k;
  }

  std::shared_ptr<BesselTermsByOrder> mpost1_terms_, mpost2_terms_;
};

// The race's parts (race_engine.hpp). A pair whose k >= 1 shared dimensions have one offset has
// the complete-data clock law with d = k (a truncated GIG, RateOnePair of race.cpp: its clock by
// inversion below a cut and rejection above, its skip bound, its kill factor's cheap tiers);
// other pairs have the adaptive law, built only for the clocks that rows draw: a clock that
// cannot ring before a row's threshold is skipped by a bound on its law's distribution function
// (log_lower_share_upper_bound), and rows rank those pairs by the peak of the bound's density.
class MissingRaceModel : public MissingDataModel {
 public:
  using State = LiveParticleState<Node>;
  struct Law {
    const Node* row;
    const Node* partner;
    double created;
    // With one offset (dims >= 1): the complete-data law's parameters at creation.
    std::size_t dims = 0;
    double eps = 0.0, mode = 0.0, offset = 0.0;
    // With several offsets (dims = 0, shared > 0): their count, squared distance and range.
    std::size_t shared = 0;
    double energy = 0.0, smallest = 0.0, largest = 0.0;
  };

  MissingRaceModel(const WhitenedData& data, double leaf_variance)
      : MissingDataModel(data, leaf_variance) {
    // The log determinant is left out: N_C takes it from single_offset_log_mass, and clocks and
    // kill factors do not depend on it.
    for (std::size_t k = 0; k <= data.d; ++k) rate_one_.emplace_back(k, 0.0);
  }

  Law law(const Node& row_cluster, const Node& partner) const {
    Law law{&row_cluster, &partner, std::min(row_cluster.time, partner.time)};
    thread_local SharedDimensions dims;
    shared(row_cluster, partner, law.created, dims);
    if (one_offset(dims, law.eps)) {
      law.dims = dims.offset.size();
      law.offset = dims.offset.front();
      law.mode = rate_one_[law.dims].mode(law.eps);
      if (law.eps == 0.0 && law.offset == 0.0 && rate_one_[law.dims].shape() <= 0.0)
        single_offset_log_mass(dims, 1.0);  // throws: the density is not integrable
    } else if (!dims.offset.empty()) {
      law.shared = dims.offset.size();
      law.smallest = *std::min_element(dims.offset.begin(), dims.offset.end());
      law.largest = *std::max_element(dims.offset.begin(), dims.offset.end());
      for (const double d2 : dims.squared_delta) law.energy += d2;
    }
    return law;
  }

  // The clock at the GIG mode where known; with several offsets, at the peak of the upper
  // bound's density (log_lower_share_upper_bound); else the creation time.
  double typical(const Law& law) const {
    if (law.dims > 0) return law.created - 0.5 * std::max(0.0, law.mode - law.offset);
    if (law.shared == 0) return law.created;
    const double k = static_cast<double>(law.shared);
    const double reduced = law.energy * (law.smallest / law.largest);
    const double peak = 2.0 * reduced / (k + std::sqrt(k * k + 4.0 * reduced));
    return law.created - 0.5 * std::max(0.0, peak - law.smallest);
  }

  double not_after_threshold(const Law& law, double theta) const {
    if (theta >= law.created) return 0.0;
    if (law.dims == 0) {
      // The clock is created - delta with delta the law's w-quantile: at most theta once the
      // share of the mass below created - theta is at most w.
      if (law.shared == 0) return 1.0;
      const double log_share =
          log_lower_share_upper_bound(static_cast<double>(law.shared), law.energy, law.smallest,
                                      law.largest, 1.0, law.created - theta);
      // e^-700 is below any uniform's resolution (2^-53 steps).
      if (log_share < -700.0) return 0.0;
      return log_share < 0.0 ? std::exp(log_share) : 1.0;
    }
    return rate_one_[law.dims].not_after_threshold(law.eps, law.mode, law.offset, law.created,
                                                   theta);
  }

  template <typename Stream>
  double clock(const Law& law, double w, Stream& stream) const {
    if (law.dims > 0) return rate_one_[law.dims].clock(law.eps, law.offset, law.created, w, stream);
    return law.created - build(*law.row, *law.partner, law.created).draw(w);
  }

  // log N_C: in closed form where the shared dimensions have one offset.
  double log_mass(const Node& a, const Node& b) const {
    const double birth = std::min(a.time, b.time);
    thread_local SharedDimensions dims;
    shared(a, b, birth, dims);
    const double closed = single_offset_log_mass(dims, 1.0);
    return std::isnan(closed) ? build(a, b, birth).log_mass() : closed;
  }

  // log(e^{-(t_C0 - t)} / S_C(t)) = -(t_C0 - t) + log N_C - log(upper mass beyond t_C0 - t).
  double log_kill_factor(const Node& merged, const Node& other, double t) const {
    const double birth = std::min(merged.time, other.time);
    const double delta = birth - t;
    if (!(delta > 0.0)) return 0.0;  // killed when created: S_C = 1
    thread_local SharedDimensions dims;
    shared(merged, other, birth, dims);
    double eps = 0.0;
    if (one_offset(dims, eps)) {
      const double offset = dims.offset.front();
      return rate_one_[dims.offset.size()].log_kill_factor(eps, offset, offset + 2.0 * delta,
                                                           delta);
    }
    // -log(1 - F) with F the law's share below delta: where F <= e^-40 it lies within
    // 5e-18 of 0, below the rounding of the weight it joins, and the law is not built.
    if (!dims.offset.empty()) {
      double energy = 0.0;
      for (const double d2 : dims.squared_delta) energy += d2;
      const auto [smallest, largest] = std::minmax_element(dims.offset.begin(), dims.offset.end());
      if (log_lower_share_upper_bound(static_cast<double>(dims.offset.size()), energy, *smallest,
                                      *largest, 1.0, delta) < -40.0)
        return -delta;
    }
    const BrownianDurationLaw& duration = build(merged, other, birth);
    return -delta + (duration.log_mass() - duration.log_upper(delta));
  }

  std::unique_ptr<Node> merged(const Node& a, const Node& b, double t, std::size_t id,
                               std::uint64_t clock_key) const {
    std::unique_ptr<Node> node;
    merge(a, b, t, id, node);
    node->clock_key = clock_key;
    return node;
  }

  MergeTree tree(const State& state, std::size_t leaf_count) const {
    return live_merge_tree(state, leaf_count);
  }

 private:
  // Whether the pair has shared dimensions, all with one offset; their squared distance in `eps`.
  static bool one_offset(const SharedDimensions& dims, double& eps) {
    if (dims.offset.empty()) return false;
    eps = 0.0;
    for (std::size_t j = 0; j < dims.offset.size(); ++j) {
      if (dims.offset[j] != dims.offset.front()) return false;
      eps += dims.squared_delta[j];
    }
    return true;
  }

  // The pair's clock law (rate 1, from its creation), in per-thread storage.
  const BrownianDurationLaw& build(const Node& a, const Node& b, double created) const {
    thread_local SharedDimensions dims;
    thread_local BrownianDurationLaw duration;
    shared(a, b, created, dims);
    duration.assign(dims, 1.0, created);
    return duration;
  }

  std::vector<race::RateOnePair> rate_one_;  // by shared dimensions k = 0..d
};

}  // namespace

bool handles_missing_entries(Algorithm proposal) {
  return proposal == Algorithm::priorprior || proposal == Algorithm::priorpost ||
         proposal == Algorithm::postpost || proposal == Algorithm::mpost1 ||
         proposal == Algorithm::mpost2 || proposal == Algorithm::race;
}

std::unique_ptr<ParticleSystem> make_missing_data_system(const WhitenedData& data,
                                                         double leaf_variance,
                                                         const SmcOptions& options) {
  if (options.proposal == Algorithm::race) {
    return std::make_unique<race::RaceSystem<MissingRaceModel>>(
        MissingRaceModel(data, leaf_variance), data.n, options);
  }
  // Every pair's squared distance over its shared dimensions is at most the sum over the
  // columns of their squared ranges.
  double largest = 0.0;
  for (std::size_t j = 0; j < data.d; ++j) {
    double low = kInf, high = -kInf;
    for (std::size_t i = 0; i < data.n; ++i) {
      const double v = data.row(i)[j];
      if (std::isnan(v)) continue;
      low = std::min(low, v);
      high = std::max(high, v);
    }
    if (low < high) largest += (high - low) * (high - low);
  }
  largest = std::max(largest, 1e-300);
  if (options.proposal == Algorithm::priorprior) {
    return std::make_unique<PriorPriorSystem<PriorPriorOnLawModel<MissingProposalModel>>>(
        options, data, leaf_variance, largest, coalescent_rate(data.n));
  }
  return std::make_unique<LawProposalSystem<MissingProposalModel>>(
      MissingProposalModel(data, leaf_variance, largest, coalescent_rate(data.n)), options);
}

}  // namespace kingman::detail
