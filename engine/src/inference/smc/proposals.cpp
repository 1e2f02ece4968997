// The proposals of MODEL.md section 5. Every proposal carries its exact incremental weight:
// PriorPrior and PriorPost by construction, PostPost with the exact pair masses G_C, and the
// cheaper MPost1/MPost2 pair scores q(C) with alpha = G_C / q(C) for the chosen pair. Merge
// durations of the posterior proposals are exact truncated-GIG draws.
#include "proposals.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <tuple>
#include <vector>

#include "kingman/error.hpp"
#include "kingman/kernels/gig.hpp"
#include "kingman/kernels/log_sum_exp.hpp"
#include "kingman/model/coalescent_prior.hpp"

namespace kingman::detail {

namespace {

const double kLogTwoPi = std::log(2.0 * std::numbers::pi);

// Turns log scores into relative weights exp(score - max) and sums them per block of kBlock
// pairs; the blocks let a draw skip most of the weights without a serial prefix sum over all
// of them. (glibc's exp, dispatched to FMA code at run time, beats Eigen's SSE2 exp here.)
// Returns log sum exp(scores).
double proposal_weights(const std::vector<double>& log_scores, ProposalWeights& out) {
  double maximum = -std::numeric_limits<double>::infinity();
  for (double s : log_scores) maximum = std::max(maximum, s);
  if (!std::isfinite(maximum)) {
    throw NumericalError("every candidate pair has zero or undefined proposal mass");
  }
  const std::size_t size = log_scores.size();
  out.weights.resize(size);
  for (std::size_t i = 0; i < size; ++i) out.weights[i] = std::exp(log_scores[i] - maximum);
  const std::size_t block = static_cast<std::size_t>(kBlock);
  out.block_sums.resize((size + block - 1) / block);
  double total = 0.0;
  for (std::size_t b = 0; b < out.block_sums.size(); ++b) {
    double sum = 0.0;
    for (std::size_t i = b * block, end = std::min(size, i + block); i < end; ++i)
      sum += out.weights[i];
    out.block_sums[b] = sum;
    total += sum;
  }
  out.total = total;
  return maximum + std::log(total);
}

// Index i drawn with probability weights[i] / total: the first index whose running sum
// (blocks first, then within the block) exceeds u * total.
std::size_t draw_index(const ProposalWeights& w, kernels::RandomStream& stream) {
  const double target = stream.uniform() * w.total;
  double running = 0.0;
  std::size_t block = 0;
  while (block + 1 < w.block_sums.size() && !(target < running + w.block_sums[block]))
    running += w.block_sums[block++];
  const std::size_t begin = block * static_cast<std::size_t>(kBlock);
  const std::size_t end = std::min(w.weights.size(), begin + static_cast<std::size_t>(kBlock));
  for (std::size_t i = begin; i < end; ++i) {
    running += w.weights[i];
    if (target < running) return i;
  }
  // Rounding left the target at the block's end: take its last pair of positive weight.
  std::size_t i = end;
  while (i > begin + 1 && !(w.weights[i - 1] > 0.0)) --i;
  return i - 1;
}

class PairDensities {
 public:
  explicit PairDensities(const StepContext& context)
      : dims_(static_cast<double>(context.dims)),
        shape_(1.0 - 0.5 * dims_),
        constant_(-std::log(2.0) - 0.5 * dims_ * kLogTwoPi - 0.5 * context.log_det_lambda),
        half_log_det_(0.5 * context.log_det_lambda) {}

  double shape() const { return shape_; }

  // log Z_C(delta) = log N(eps; 0, s Lambda), s = r + 2 delta.
  double log_likelihood(double eps, double offset, double duration) const {
    const double s = offset + 2.0 * duration;
    return -0.5 * dims_ * (kLogTwoPi + std::log(s)) - eps / (2.0 * s) - half_log_det_;
  }

  // log G_C = log int_0^inf exp(-lambda delta) Z_C(delta) d delta, exact (incomplete GIG).
  double log_pair_mass(double eps, double offset, double lambda) const {
    if (offset > 0.0) {
      return constant_ + shape_ * std::log(offset) - eps / (2.0 * offset) +
             kernels::log_gig_upper_integral_scaled(shape_, eps, lambda, offset);
    }
    return constant_ + kernels::log_gig_normalizer(shape_, eps, lambda);
  }

  // MPost1's score: G_C with the complete integral I(0) in place of I(r_C).
  double log_mpost1_score(double eps, double offset, double lambda) const {
    return constant_ + 0.5 * lambda * offset + kernels::log_gig_normalizer(shape_, eps, lambda);
  }

 private:
  double dims_, shape_, constant_, half_log_det_;
};

}  // namespace

void build_candidates(const ParticleState& state, const StepContext& context,
                      PairCandidates& candidates) {
  const LeafPairCache& cache = *context.cache;
  const std::size_t m = state.live.size();
  const std::size_t count = m * (m - 1) / 2;
  const Algorithm proposal = context.proposal;
  // Per-cluster part of r_C = a_l + a_r - 2T, gathered once.
  thread_local std::vector<double> offsets;
  offsets.resize(m);
  for (std::size_t x = 0; x < m; ++x) offsets[x] = state.live[x]->offset() - state.time;

  if (proposal == Algorithm::priorprior || proposal == Algorithm::priorpost) {
    // Scores depend on each particle's own duration: share only the pair list.
    candidates.offset.resize(count);
    candidates.eps.resize(count);
    std::size_t at = 0;
    for (std::size_t x = 0; x < m; ++x)
      for (std::size_t y = x + 1; y < m; ++y, ++at) {
        candidates.offset[at] = offsets[x] + offsets[y];
        candidates.eps[at] = cache.eps(*state.live[x], *state.live[y]);
      }
    return;
  }
  const PairDensities density(context);
  const double lambda = coalescent_rate(m);
  candidates.log_score.resize(count);
  std::size_t at = 0;
  for (std::size_t x = 0; x < m; ++x) {
    const ClusterNode& a = *state.live[x];
    for (std::size_t y = x + 1; y < m; ++y, ++at) {
      const ClusterNode& b = *state.live[y];
      const double offset = offsets[x] + offsets[y];
      switch (proposal) {
        case Algorithm::postpost:
          candidates.log_score[at] = density.log_pair_mass(cache.eps(a, b), offset, lambda);
          break;
        case Algorithm::mpost1:
          // As for MPost2 (pair_cache.hpp): identical points get the smallest normal distance
          // so that the complete integral stays finite; only the choice uses it.
          candidates.log_score[at] = density.log_mpost1_score(
              std::max(cache.eps(a, b), std::numeric_limits<double>::min()), offset, lambda);
          break;
        default:  // MPost2: lambda enters only through exp(lambda r_C / 2)
          candidates.log_score[at] = 0.5 * lambda * offset + cache.log_bessel(a, b);
      }
    }
  }
  candidates.log_total = proposal_weights(candidates.log_score, candidates.weights);
}

namespace {

// Live positions (x < y) of pair number `index` in build_candidates' order.
std::pair<std::size_t, std::size_t> unrank_pair(std::size_t index, std::size_t m) {
  std::size_t x = 0;
  while (index >= m - 1 - x) {
    index -= m - 1 - x;
    ++x;
  }
  return {x, x + 1 + index};
}

}  // namespace

double draw_and_merge(ParticleState& state, const PairCandidates& pairs, std::size_t step,
                      const StepContext& context, kernels::RandomStream& stream,
                      ChosenPairCache& chosen_pairs) {
  thread_local std::vector<double> scores;
  thread_local ProposalWeights prior_post_weights;
  const PairDensities density(context);
  const std::size_t m = state.live.size();
  const double lambda = coalescent_rate(m);
  const std::size_t count = m * (m - 1) / 2;

  std::size_t chosen = 0;
  double duration = 0.0, log_alpha = 0.0;
  // The chosen pair's positions, r_C and eps (recomputed: deterministic proposals keep only
  // their scores per pair).
  std::size_t x = 0, y = 0;
  double eps = 0.0, offset = 0.0;
  auto locate = [&](std::size_t c) {
    std::tie(x, y) = unrank_pair(c, m);
    const ClusterNode& a = *state.live[x];
    const ClusterNode& b = *state.live[y];
    offset = a.offset() + b.offset() - 2.0 * state.time;
    eps = context.cache->eps(a, b);
  };
  // The exact pair mass (when `with_mass`) and the duration draw of the chosen pair, reusing
  // what an earlier particle of the same state computed for it.
  auto exact_merge = [&](std::size_t c, bool with_mass, double& log_mass) {
    const ChosenPairCache::Entry* entry = chosen_pairs.find(c);
    if (!entry) {
      entry =
          &chosen_pairs.add({c, with_mass ? density.log_pair_mass(eps, offset, lambda) : 0.0,
                             kernels::TruncatedGigSampler(density.shape(), eps, lambda, offset)});
    }
    log_mass = entry->log_mass;
    const double s = entry->sampler(stream);
    return std::max(0.0, 0.5 * (s - offset));
  };
  switch (context.proposal) {
    case Algorithm::priorprior: {
      duration = stream.exponential() / lambda;
      chosen = static_cast<std::size_t>(stream.below(count));
      locate(chosen);
      log_alpha = density.log_likelihood(eps, offset, duration);
      break;
    }
    case Algorithm::priorpost: {
      duration = stream.exponential() / lambda;
      scores.resize(count);
      for (std::size_t c = 0; c < count; ++c)
        scores[c] = density.log_likelihood(pairs.eps[c], pairs.offset[c], duration);
      const double log_total = proposal_weights(scores, prior_post_weights);
      chosen = draw_index(prior_post_weights, stream);
      locate(chosen);
      log_alpha = log_total - std::log(lambda);  // mean of Z_C(delta) over the lambda pairs
      break;
    }
    case Algorithm::postpost: {
      chosen = draw_index(pairs.weights, stream);
      locate(chosen);
      log_alpha = pairs.log_total;  // alpha = sum_C G_C
      double unused;
      duration = exact_merge(chosen, false, unused);
      break;
    }
    case Algorithm::mpost1:
    case Algorithm::mpost2: {
      chosen = draw_index(pairs.weights, stream);
      locate(chosen);
      const double log_q = pairs.log_score[chosen] - pairs.log_total;
      // Exact weight for the approximate pair choice: alpha = G_C / q(C).
      double log_mass;
      duration = exact_merge(chosen, true, log_mass);
      log_alpha = log_mass - log_q;
      break;
    }
    default:
      throw OptionError(to_string(context.proposal) + " is not an SMC proposal");
  }

  // Merge the chosen pair at t = T - delta (MODEL.md section 3).
  const ClusterNode& a = *state.live[x];
  const ClusterNode& b = *state.live[y];
  const double t = state.time - duration;
  auto merged = std::make_shared<ClusterNode>();
  merged->id = context.leaf_count + step;
  merged->time = t;
  const double sigma_a = a.variance + a.time - t;
  const double sigma_b = b.variance + b.time - t;
  const double s = sigma_a + sigma_b;
  merged->variance = sigma_a * sigma_b / s;
  merged->mean.resize(context.dims);
  for (std::size_t j = 0; j < context.dims; ++j)
    merged->mean[j] = (sigma_b / s) * a.mean[j] + (sigma_a / s) * b.mean[j];
  // Its pair row: one-vs-all distances to every other live cluster.
  const bool bessel = context.proposal == Algorithm::mpost2;
  merged->eps_row.assign(merged->id, std::numeric_limits<double>::quiet_NaN());
  if (bessel) merged->log_bessel_row.assign(merged->id, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t z = 0; z < m; ++z) {
    if (z == x || z == y) continue;
    const ClusterNode& other = *state.live[z];
    double sum = 0.0;
    for (std::size_t j = 0; j < context.dims; ++j) {
      const double diff = merged->mean[j] - other.mean[j];
      sum += diff * diff;
    }
    merged->eps_row[other.id] = sum;
    if (bessel) merged->log_bessel_row[other.id] = context.cache->mpost2_term(sum);
  }
  state.history = std::make_shared<const HistoryNode>(
      HistoryNode{Merge{std::min(a.id, b.id), std::max(a.id, b.id), -t}, state.history});
  state.live[x] = std::move(merged);
  state.live.erase(state.live.begin() + static_cast<std::ptrdiff_t>(y));
  state.time = t;
  if (std::isnan(log_alpha) || log_alpha == std::numeric_limits<double>::infinity()) {
    throw NumericalError("step " + std::to_string(step + 1) + ": the incremental weight of " +
                         to_string(context.proposal) + " is not finite");
  }
  return log_alpha;
}

}  // namespace kingman::detail
