// The proposals of MODEL.md section 5. Every proposal carries its exact incremental weight:
// PriorPrior and PriorPost by construction, PostPost with the exact pair masses G_C, and the
// cheaper MPost1/MPost2 pair scores q(C) with alpha = G_C / q(C) for the chosen pair. Merge
// durations of the posterior proposals are exact truncated-GIG draws.
#include "proposals.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "../../model/brownian_duration_law.hpp"
#include "kingman/error.hpp"
#include "kingman/kernels/gig.hpp"
#include "kingman/kernels/log_sum_exp.hpp"
#include "kingman/kernels/pair_kernels.hpp"
#include "kingman/kernels/vector_math.hpp"
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

  // An upper bound on log G_C for a few operations (log_mass_upper_bound with one offset; in
  // delta's measure the constant is constant_ + log 2): +inf where r_C = 0.
  double log_mass_bound(double eps, double offset, double lambda) const {
    return constant_ + std::numbers::ln2 + log_mass_upper_bound(dims_, eps, offset, offset, lambda);
  }

  // MPost1's score: G_C with the complete integral I(0) in place of I(r_C).
  double log_mpost1_score(double eps, double offset, double lambda) const {
    return constant_ + 0.5 * lambda * offset + kernels::log_gig_normalizer(shape_, eps, lambda);
  }

  // The same two with the pair's kernel (shape, eps, lambda) given: the same bits.
  double log_pair_mass(double eps, double offset, const kernels::GigUpperTail& tail) const {
    if (offset > 0.0) {
      const double log_offset = std::log(offset);
      return constant_ + shape_ * log_offset - eps / (2.0 * offset) +
             tail.log_scaled(offset, log_offset);
    }
    return constant_ + tail.log_normalizer();
  }
  double log_mpost1_score(double offset, double lambda, const kernels::GigUpperTail& tail) const {
    return constant_ + 0.5 * lambda * offset + tail.log_normalizer();
  }

 private:
  double dims_, shape_, constant_, half_log_det_;
};

// The factored MPost2 weights are used only when their total is at least kSmallestFactoredTotal.
// With factors f = exp(exponent - Phi) <= 1 and E <= 1, a weight that rounds to 0 (or that
// holds a stored or flushed 0, below kSmallestPairWeight = 2^-1022) is below 2^-1022, so with
// the total above 2^-200 such a pair would have proposal probability below 2^-822 ~ e^-570
// under the exact scores: the same negligible tail that exp(score - max) drops by underflowing
// below e^-745. (That the pair then has q(C) = 0 where G_C > 0 biases the evidence by at most
// that relative amount times G_C / q(C) of those pairs.)
// A smaller total means that Phi overestimates the best pair (its cluster's best partner at
// creation has merged since): the factors are then recomputed once with Phi lowered by half the
// log of that total, which brings the total to ~1. Factors may now exceed 1 (by at most
// total^-1/2), so a zero weight only bounds the exact one by 2^-1022 / total: with that first
// total above kSmallestRescaledTotal = 2^-600, below 2^-422 ~ e^-292 of the new total of ~1,
// still far beyond anything a proposal resolves. Below that the step scores pairs one by one.
constexpr double kSmallestFactoredTotal = 0x1p-200;
constexpr double kSmallestRescaledTotal = 0x1p-600;

// What MPost2's scoring reads of each live cluster, gathered in one pass over the (scattered)
// cluster nodes.
struct LiveClusters {
  std::vector<std::size_t> id;
  std::vector<double> offset;  // a - T
  std::vector<double> scale;   // sigma
  std::vector<const double*> mean, weight_row;

  void gather(const ParticleState& state, const LeafPairCache& cache) {
    const std::size_t m = state.live.size();
    id.resize(m);
    offset.resize(m);
    scale.resize(m);
    mean.resize(m);
    weight_row.resize(m);
    for (std::size_t x = 0; x < m; ++x) {
      const ClusterNode& c = *state.live[x];
      id[x] = c.id;
      offset[x] = c.offset() - state.time;
      scale[x] = cache.weight_scale(c);
      mean[x] = c.mean.data();
      weight_row[x] = cache.pair_weight_row(c);
    }
  }
};

// Recomputes the leaf row sum of the cluster at live position z in full, over the live leaves
// before it with a stored weight, from log(E_zy e^{sigma_y}) (stored weights are normal
// numbers, so their logs are finite).
void recompute_leaf_sum(std::size_t z, const LiveClusters& live, const LeafPairCache& cache,
                        std::size_t leaf_count, LeafRowSums& sums) {
  thread_local std::vector<double> logs;
  thread_local std::vector<std::size_t> leaves;
  logs.clear();
  leaves.clear();
  const double* row = live.weight_row[z];
  for (std::size_t y = 0; y < live.id.size(); ++y) {
    const std::size_t id = live.id[y];
    if (id < leaf_count && id < live.id[z] && row[id] > 0.0) {
      leaves.push_back(id);
      logs.push_back(row[id]);
    }
  }
  kernels::log_array(logs.data(), logs.data(), logs.size());
  for (std::size_t k = 0; k < logs.size(); ++k) logs[k] += cache.leaf_scale(leaves[k]);
  sum_from_logs(logs.data(), logs.size(), sums.tau[z], sums.scaled[z]);
}

// Gives the MPost2 cluster at live position `x` its pair weights against the other live
// clusters: E = exp(L - sigma_new - sigma_other) with sigma_new the largest L - sigma_other, so
// that E <= 1 with equality for the best partner (pair_cache.hpp); and its leaf row sum in
// `sums`. A cluster's partners are the clusters live when it was created, which are all still
// live in the first state that contains it; so computing its row when that state reaches
// build_candidates gives the values it would have had at creation, and is done only for states
// that survived resampling. Only the state's newest cluster can lack its row, and only that
// state (one group: copies of a state share its history) holds it then, so exactly one task
// writes the row, before any task reads it.
void complete_pair_weights(const ParticleState& state, std::size_t x, const LeafPairCache& cache,
                           std::size_t dims, std::size_t leaf_count, LiveClusters& live,
                           LeafRowSums* sums) {
  // Built non-const by draw_and_merge; only its row and scale are filled in, once.
  auto& cluster =
      const_cast<Mpost2ClusterNode&>(static_cast<const Mpost2ClusterNode&>(*state.live[x]));
  thread_local std::vector<const double*> other_means;
  thread_local std::vector<double> terms, leaf_logs;
  const std::size_t m = live.id.size();
  const std::size_t others = m - 1;
  other_means.resize(others);
  std::copy(live.mean.begin(), live.mean.begin() + static_cast<std::ptrdiff_t>(x),
            other_means.begin());
  std::copy(live.mean.begin() + static_cast<std::ptrdiff_t>(x) + 1, live.mean.end(),
            other_means.begin() + static_cast<std::ptrdiff_t>(x));
  terms.resize(others);
  kernels::squared_distances_to_rows(cluster.mean.data(), other_means.data(), others, dims,
                                     terms.data());
  cache.mpost2_terms(terms.data(), terms.data(), others);
  double scale = -std::numeric_limits<double>::infinity();
  for (std::size_t z = 0, k = 0; z < m; ++z) {
    if (z == x) continue;
    terms[k] -= live.scale[z];
    scale = std::max(scale, terms[k++]);
  }
  for (double& term : terms) term -= scale;  // log E
  if (sums) leaf_logs.assign(terms.begin(), terms.end());
  kernels::exp_array(terms.data(), terms.data(), others);
  cluster.weight_scale = scale;
  // Rows grow with the node id; a spare node's row (pool reuse) gets the longest row's capacity
  // once, so that reuse never reallocates.
  if (cluster.pair_weight_row.capacity() < cluster.id)
    cluster.pair_weight_row.reserve(2 * cache.leaf_count() - 1);
  cluster.pair_weight_row.assign(cluster.id, 0.0);
  for (std::size_t z = 0, k = 0; z < m; ++z) {
    if (z == x) continue;
    const double weight = terms[k++];
    cluster.pair_weight_row[live.id[z]] = weight >= kSmallestPairWeight ? weight : 0.0;
  }
  if (sums) {
    // The leaf row sum over the stored weights, from the logs: log(E e^{sigma_y}).
    for (std::size_t z = 0, k = 0; z < m; ++z) {
      if (z == x) continue;
      const bool leaf_term = cluster.pair_weight_row[live.id[z]] > 0.0 && live.id[z] < leaf_count;
      leaf_logs[k] =
          leaf_term ? leaf_logs[k] + live.scale[z] : -std::numeric_limits<double>::infinity();
      ++k;
    }
    sum_from_logs(leaf_logs.data(), others, sums->tau[x], sums->scaled[x]);
  }
  live.scale[x] = scale;
  live.weight_row[x] = cluster.pair_weight_row.data();
}

// `from` without its entry at `skip`, into `to`.
void copy_without(const std::vector<double>& from, std::size_t skip, std::vector<double>& to) {
  to.resize(from.size() - 1);
  std::copy(from.begin(), from.begin() + static_cast<std::ptrdiff_t>(skip), to.begin());
  std::copy(from.begin() + static_cast<std::ptrdiff_t>(skip) + 1, from.end(),
            to.begin() + static_cast<std::ptrdiff_t>(skip));
}

// This state's leaf row sums from its parent's (ParticleState::leaf_sums): the leaves merged
// by the last merge leave every later row, and the newest cluster's sum is computed with its
// row (complete_pair_weights). A sum computed in full is scaled to 1 (tau absorbs it), and each
// subtraction rounds by at most 2^-53 of that 1; a sum that falls below 2^-20 is computed in
// full again. So after k subtractions a sum is within k 2^-33 of the exact one, relative.
void update_leaf_sums(const ParticleState& state, const LeafPairCache& cache,
                      std::size_t leaf_count, const LiveClusters& live, LeafRowSums& sums) {
  if (!state.history) return;
  constexpr double kLargestCancellation = 0x1p-20;
  const std::size_t merged[2] = {state.history->merge.left, state.history->merge.right};
  // Per row that holds a merged leaf, its terms E_zd e^{sigma_d - tau_z}: tau_z is at least
  // log(E_zd e^{sigma_d}) (the leaf was live when tau_z was set), so no term overflows.
  thread_local std::vector<double> exponents_buffer, weights_buffer;
  thread_local std::vector<std::size_t> rows_buffer;
  const std::size_t m = live.id.size();
  // At most two terms per row; filled by index (push_back reloaded the thread-local vectors'
  // ends after every store).
  exponents_buffer.resize(2 * m);
  weights_buffer.resize(2 * m);
  rows_buffer.resize(2 * m);
  double* exponents = exponents_buffer.data();
  double* weights = weights_buffer.data();
  std::size_t* rows = rows_buffer.data();
  std::size_t terms = 0;
  const double* columns[2] = {merged[0] < leaf_count ? cache.leaf_column(merged[0]) : nullptr,
                              merged[1] < leaf_count ? cache.leaf_column(merged[1]) : nullptr};
  // Merged clusters' rows lie anywhere: request their merged-leaf entries all at once, so that
  // the cache misses overlap instead of each waiting for the one before.
  for (std::size_t z = 0; z < m; ++z) {
    const double* row = live.weight_row[z];
    if (!row || live.id[z] < leaf_count) continue;
    for (const std::size_t leaf : merged)
      if (leaf < leaf_count) __builtin_prefetch(row + leaf);
  }
  for (std::size_t z = 0; z < m; ++z) {
    const double* row = live.weight_row[z];
    if (!row) continue;
    const std::size_t id = live.id[z];
    for (std::size_t k = 0; k < 2; ++k) {
      const std::size_t leaf = merged[k];
      if (leaf >= leaf_count || leaf >= id) continue;
      // A live leaf's term from the merged leaf's column (contiguous), not from its own row.
      const double weight = id < leaf_count ? columns[k][id - leaf - 1] : row[leaf];
      if (weight > 0.0) {
        rows[terms] = z;
        weights[terms] = weight;
        exponents[terms] = cache.leaf_scale(leaf) - sums.tau[z];
        ++terms;
      }
    }
  }
  kernels::exp_array(exponents, exponents, terms);
  for (std::size_t k = 0; k < terms;) {
    // A row's one or two terms leave its sum together.
    const std::size_t z = rows[k];
    double removed = 0.0;
    for (; k < terms && rows[k] == z; ++k) removed += weights[k] * exponents[k];
    const double after = sums.scaled[z] - removed;
    if (after >= kLargestCancellation) {
      sums.scaled[z] = after;
    } else {
      recompute_leaf_sum(z, live, cache, leaf_count, sums);
    }
  }
}

// The merged partners' parts of the rows of the merged clusters at live positions `merged_at`
// from the step's shared sums (shared_row_sums.hpp), into `sums`. Kept out of line: inlined,
// it made GCC compile build_factored_mpost2's scoring as a separate function, 4 % slower at
// n = 400 even where nothing is shared.
__attribute__((noinline)) void shared_merged_sums(const SharedRowSums& shared,
                                                  const ParticleState& state, double lambda,
                                                  double shift, const double* factor,
                                                  const std::vector<std::size_t>& merged_at,
                                                  std::vector<double>& sums) {
  thread_local SharedRowSums::StateView view;
  view.assign(shared, lambda, state.time, shift, factor);
  for (std::size_t k = 0; k < merged_at.size(); ++k)
    sums[k] = view.row_sum(static_cast<const Mpost2ClusterNode&>(*state.live[merged_at[k]]));
}

// MPost2's factored scores of `state` (pair_cache.hpp), and in `sums` (storage other than the
// parent's, state.leaf_sums) its leaf row sums when the cache keeps leaf sums; false when the
// scores cannot be trusted (kSmallestFactoredTotal), and the caller scores pairs one by one
// instead.
bool build_factored_mpost2(const ParticleState& state, const LeafPairCache& cache,
                           std::size_t leaf_count, std::size_t dims, double lambda,
                           const SharedRowSums* shared, FactoredScores& out, LeafRowSums* sums) {
  thread_local LiveClusters live;
  live.gather(state, cache);
  const std::size_t m = state.live.size();
  const bool with_leaf_sums = cache.uses_leaf_sums();
  if (with_leaf_sums) {
    if (!sums || sums == state.leaf_sums)
      throw std::logic_error("MPost2: no storage of its own for a state's leaf row sums");
    if (!state.history) {
      *sums = *cache.initial_leaf_sums();
    } else {
      // The parent's sums by its live positions: this state lists the same clusters less the
      // one at erased_at, with its new cluster at merged_at (complete_pair_weights sums it).
      copy_without(state.leaf_sums->tau, state.erased_at, sums->tau);
      copy_without(state.leaf_sums->scaled, state.erased_at, sums->scaled);
    }
  }
  for (std::size_t x = 0; x < m; ++x)
    if (live.id[x] >= leaf_count && !live.weight_row[x])
      complete_pair_weights(state, x, cache, dims, leaf_count, live,
                            with_leaf_sums ? sums : nullptr);
  if (with_leaf_sums) update_leaf_sums(state, cache, leaf_count, live, *sums);
  const std::size_t ids = 2 * leaf_count - m;  // n leaves and n - m merged clusters so far
  thread_local std::vector<double> exponent;
  exponent.resize(m);
  double leaf_offset = 0.0;  // a - T of every leaf (one leaf variance, one time)
  for (std::size_t x = 0; x < m; ++x) {
    exponent[x] = live.scale[x] + 0.5 * lambda * live.offset[x];
    if (live.id[x] < leaf_count) leaf_offset = live.offset[x];
  }
  const double largest = kernels::max_array(exponent.data(), m);
  out.exact_row_sums = !with_leaf_sums;
  if (!std::isfinite(largest)) return false;
  out.factor.resize(ids);
  out.position.resize(ids);
  out.row_sum.resize(m);
  out.owner_weight.resize(m);
  // The merged clusters' rows from the first merged id on: their merged partners' part.
  thread_local std::vector<const double*> merged_rows;
  thread_local std::vector<std::size_t> merged_lengths, merged_at;
  thread_local std::vector<double> merged_sums, factors, leaf_parts;
  merged_rows.clear();
  merged_lengths.clear();
  merged_at.clear();
  for (std::size_t z = 0; z < m && with_leaf_sums; ++z) {
    if (live.id[z] < leaf_count) continue;
    merged_rows.push_back(live.weight_row[z] + leaf_count);
    merged_lengths.push_back(live.id[z] - leaf_count);
    merged_at.push_back(z);
  }
  merged_sums.resize(merged_rows.size());
  factors.resize(m);
  leaf_parts.resize(m);
  // Row sums below this are taken as 0 (their owner is never drawn): a positive one then has a
  // term above 2^-1001, whose factor is far above the flushing threshold 2^-1022, so the exact
  // sum of the chosen row is positive too. Such a row's pairs have weights below m 2^-1000,
  // under 2^-790 of a total above kSmallestFactoredTotal: a tail as negligible as the flushed
  // weights'.
  const double smallest_row_sum = static_cast<double>(m) * 0x1p-1000;
  // The factors exp(exponent - shift), the rows' sums and the total.
  auto score = [&](double shift) {
    for (std::size_t x = 0; x < m; ++x) factors[x] = exponent[x] - shift;
    kernels::exp_array(factors.data(), factors.data(), m);
    std::fill(out.factor.begin(), out.factor.end(), 0.0);
    for (std::size_t x = 0; x < m; ++x) {
      out.factor[live.id[x]] = factors[x] >= kSmallestPairWeight ? factors[x] : 0.0;
      out.position[live.id[x]] = x;
    }
    if (!with_leaf_sums) {
      // Row z holds the pairs with every earlier node id, i.e. its first id[z] entries.
      kernels::dots_with(live.weight_row.data(), live.id.data(), m, out.factor.data(),
                         out.row_sum.data());
    } else {
      // Leaf parts: every leaf's factor is e^{sigma_y} exp(lambda (a - T) / 2 - shift), so the
      // part is exp(tau_z + lambda (a - T) / 2 - shift) * scaled_z; then the merged partners.
      const LeafRowSums& leaf_sums = *sums;
      for (std::size_t z = 0; z < m; ++z)
        leaf_parts[z] = leaf_sums.tau[z] + 0.5 * lambda * leaf_offset - shift;
      kernels::exp_array(leaf_parts.data(), leaf_parts.data(), m);
      if (shared) {
        shared_merged_sums(*shared, state, lambda, shift, out.factor.data(), merged_at,
                           merged_sums);
      } else {
        kernels::dots_with(merged_rows.data(), merged_lengths.data(), merged_rows.size(),
                           out.factor.data() + leaf_count, merged_sums.data());
      }
      // An empty leaf part (no live leaf partner) is 0 whatever its stale tau gives.
      for (std::size_t z = 0; z < m; ++z) {
        const double scaled = leaf_sums.scaled[z];
        out.row_sum[z] = scaled > 0.0 ? leaf_parts[z] * scaled : 0.0;
      }
      for (std::size_t k = 0; k < merged_at.size(); ++k)
        out.row_sum[merged_at[k]] += merged_sums[k];
      for (std::size_t z = 0; z < m; ++z)
        if (!(out.row_sum[z] >= smallest_row_sum)) out.row_sum[z] = 0.0;
    }
    double total = 0.0;
    for (std::size_t z = 0; z < m; ++z) {
      out.owner_weight[z] = out.factor[live.id[z]] * out.row_sum[z];
      total += out.owner_weight[z];
    }
    return total;
  };
  double total = score(largest);
  if (total < kSmallestFactoredTotal && total >= kSmallestRescaledTotal) {
    total = score(largest + 0.5 * std::log(total));
  }
  out.total = total;
  return total >= kSmallestFactoredTotal && std::isfinite(total);
}

// Index of the entry (of count > 0, weights from `weight`, summing to about total > 0) that a
// uniform draw lands on when the running sum is compared with u * total: whole blocks of eight
// entries are skipped by their sums first. Rounding that leaves the target past the end takes
// the last entry of positive weight.
template <typename Weight>
std::size_t draw_linear(std::size_t count, double total, const Weight& weight,
                        kernels::RandomStream& stream) {
  constexpr std::size_t kSkip = 8;
  const double target = stream.uniform() * total;
  double running = 0.0;
  std::size_t i = 0;
  for (; i + kSkip <= count; i += kSkip) {
    double block = 0.0;
    for (std::size_t l = 0; l < kSkip; ++l) block += weight(i + l);
    if (target < running + block) break;
    running += block;
  }
  for (; i < count; ++i) {
    const double w = weight(i);
    running += w;
    if (w > 0.0 && target < running) return i;
  }
  std::size_t last = count - 1;
  while (last > 0 && !(weight(last) > 0.0)) --last;
  return last;
}

// A pair drawn from the factored scores: its live positions (owner, partner) and log q(C).
struct FactoredDraw {
  std::size_t owner, partner;
  double log_q;
};

FactoredDraw draw_factored(const FactoredScores& scores, const ParticleState& state,
                           const LeafPairCache& cache, kernels::RandomStream& stream) {
  const std::size_t z = draw_linear(
      state.live.size(), scores.total, [&](std::size_t x) { return scores.owner_weight[x]; },
      stream);
  const ClusterNode& owner = *state.live[z];
  const double* row = cache.pair_weight_row(owner);
  auto weight = [&](std::size_t id) { return row[id] * scores.factor[id]; };
  if (scores.exact_row_sums) {
    const std::size_t partner = draw_linear(owner.id, scores.row_sum[z], weight, stream);
    // q(C) = (f_z S_z / total) (E_C f_y / S_z): the probability of both stages, S_z cancelling.
    const double log_q =
        std::log(scores.factor[owner.id]) + std::log(weight(partner)) - std::log(scores.total);
    return {z, scores.position[partner], log_q};
  }
  // The chosen row's exact sum (every other row's was only needed to choose the owner).
  double row_sum;
  kernels::dots_with(&row, &owner.id, 1, scores.factor.data(), &row_sum);
  if (!(row_sum > 0.0)) {
    throw NumericalError("MPost2: the chosen cluster's pairs have no proposal mass");
  }
  const std::size_t partner = draw_linear(owner.id, row_sum, weight, stream);
  // q(C) = (f_z S~_z / total) (E_C f_y / S_z): the probabilities of the two stages.
  const double log_q = std::log(scores.owner_weight[z]) - std::log(scores.total) +
                       std::log(weight(partner)) - std::log(row_sum);
  return {z, scores.position[partner], log_q};
}

}  // namespace

void merge_clusters(const ClusterNode& a, const ClusterNode& b, double t, std::size_t id,
                    std::size_t dims, ClusterNode& merged) {
  merged.eps_row.clear();
  merged.clock_key = 0;
  merged.id = id;
  merged.time = t;
  const double sigma_a = a.variance + a.time - t;
  const double sigma_b = b.variance + b.time - t;
  const double s = sigma_a + sigma_b;
  merged.variance = sigma_a * sigma_b / s;
  merged.mean.resize(dims);
  // The merged node is never one of its children, so the means do not overlap.
  kernels::weighted_sum(sigma_b / s, a.mean.data(), sigma_a / s, b.mean.data(), merged.mean.data(),
                        dims);
}

double log_pair_likelihood(const StepContext& context, double eps, double offset, double duration) {
  return PairDensities(context).log_likelihood(eps, offset, duration);
}

void build_candidates(const ParticleState& state, const StepContext& context,
                      PairCandidates& candidates) {
  const LeafPairCache& cache = *context.cache;
  const std::size_t m = state.live.size();
  const std::size_t count = m * (m - 1) / 2;
  const Algorithm proposal = context.proposal;
  candidates.is_factored =
      proposal == Algorithm::mpost2 &&
      build_factored_mpost2(state, cache, context.leaf_count, context.dims, coalescent_rate(m),
                            context.shared_row_sums, candidates.factored, candidates.leaf_sums);
  if (candidates.is_factored) return;
  // PriorPrior draws its pair uniformly and looks up that one pair's distance: nothing to share.
  if (proposal == Algorithm::priorprior) return;
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
  // Pairs of clusters that other states of the step list too take their kernel from the
  // step's table (step_pair_tails.hpp); the others compute it here. Same values either way.
  const StepPairTails* const tails = context.pair_tails;
  thread_local std::vector<std::uint32_t> tail_index;
  tail_index.assign(m, StepPairTails::kNoIndex);
  if (tails)
    for (std::size_t x = 0; x < m; ++x) tail_index[x] = tails->index_of(*state.live[x]);
  auto postpost_mass = [&](std::size_t x, std::size_t y, double eps, double offset) {
    const bool shared =
        tail_index[x] != StepPairTails::kNoIndex && tail_index[y] != StepPairTails::kNoIndex;
    return shared
               ? density.log_pair_mass(eps, offset, tails->tail(tail_index[x], tail_index[y], eps))
               : density.log_pair_mass(eps, offset, lambda);
  };
  // PostPost: the pairs whose masses cannot matter are left out (mass 0). With L the exact mass
  // of the pair of largest bound, a pair whose bound lies below L - 46 - log(pairs) has a mass
  // below e^-46 / (pair count) of the total, so those left out sum to at most e^-46 ~ 1e-20 of
  // it, far below its rounding, and such a pair would have been drawn with probability below
  // 1e-20. The bound costs a sqrt and two logs, the mass an incomplete GIG integral.
  thread_local std::vector<double> bounds;
  double cutoff = -std::numeric_limits<double>::infinity();
  if (proposal == Algorithm::postpost && context.skip_negligible_pairs) {
    bounds.resize(count);
    std::size_t best = 0, best_x = 0, best_y = 1;
    for (std::size_t x = 0, at = 0; x < m; ++x) {
      for (std::size_t y = x + 1; y < m; ++y, ++at) {
        bounds[at] = density.log_mass_bound(cache.eps(*state.live[x], *state.live[y]),
                                            offsets[x] + offsets[y], lambda);
        if (bounds[at] > bounds[best]) {
          best = at;
          best_x = x;
          best_y = y;
        }
      }
    }
    cutoff = postpost_mass(best_x, best_y, cache.eps(*state.live[best_x], *state.live[best_y]),
                           offsets[best_x] + offsets[best_y]) -
             46.0 - std::log(static_cast<double>(count));
  }
  std::size_t at = 0;
  for (std::size_t x = 0; x < m; ++x) {
    const ClusterNode& a = *state.live[x];
    for (std::size_t y = x + 1; y < m; ++y, ++at) {
      const ClusterNode& b = *state.live[y];
      const double offset = offsets[x] + offsets[y];
      const bool shared =
          tail_index[x] != StepPairTails::kNoIndex && tail_index[y] != StepPairTails::kNoIndex;
      switch (proposal) {
        case Algorithm::postpost: {
          candidates.log_score[at] = bounds.size() == count && bounds[at] < cutoff
                                         ? -std::numeric_limits<double>::infinity()
                                         : postpost_mass(x, y, cache.eps(a, b), offset);
          break;
        }
        case Algorithm::mpost1: {
          // As for MPost2 (pair_cache.hpp): identical points get the smallest normal distance
          // so that the complete integral stays finite; only the choice uses it.
          const double eps = std::max(cache.eps(a, b), std::numeric_limits<double>::min());
          candidates.log_score[at] =
              shared ? density.log_mpost1_score(offset, lambda,
                                                tails->tail(tail_index[x], tail_index[y], eps))
                     : density.log_mpost1_score(eps, offset, lambda);
          break;
        }
        default:  // MPost2: lambda enters only through exp(lambda r_C / 2)
          candidates.log_score[at] = 0.5 * lambda * offset + cache.mpost2_term(cache.eps(a, b));
      }
    }
  }
  candidates.log_total = proposal_weights(candidates.log_score, candidates.weights);
}

double draw_and_merge(ParticleState& state, const PairCandidates& pairs, std::size_t step,
                      const StepContext& context, kernels::RandomStream& stream,
                      ChosenPairCache& chosen_pairs, std::unique_ptr<ClusterNode>& created,
                      HistoryNode& recorded) {
  return draw_and_merge(state, state, pairs, step, context, stream, chosen_pairs, created,
                        recorded);
}

double draw_and_merge(const ParticleState& state, ParticleState& next, const PairCandidates& pairs,
                      std::size_t step, const StepContext& context, kernels::RandomStream& stream,
                      ChosenPairCache& chosen_pairs, std::unique_ptr<ClusterNode>& created,
                      HistoryNode& recorded) {
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
  auto locate_positions = [&](std::size_t first, std::size_t second) {
    x = std::min(first, second);
    y = std::max(first, second);
    const ClusterNode& a = *state.live[x];
    const ClusterNode& b = *state.live[y];
    offset = a.offset() + b.offset() - 2.0 * state.time;
    eps = context.cache->eps(a, b);
  };
  auto locate = [&](std::size_t c) {
    const auto [first, second] = unrank_pair(c, m);
    locate_positions(first, second);
  };
  // The exact pair mass (when `with_mass`) and the duration draw of the chosen pair, reusing
  // what an earlier particle of the same state computed for it.
  auto exact_merge = [&](std::size_t c, bool with_mass, double& log_mass) {
    const ChosenPairCache::Entry* entry = chosen_pairs.find(c);
    if (!entry) {
      entry = &chosen_pairs.add(
          {c, with_mass ? density.log_pair_mass(eps, offset, lambda) : 0.0,
           kernels::QuickTruncatedGigSampler(density.shape(), eps, lambda, offset)});
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
      double log_q;
      if (pairs.is_factored) {
        const FactoredDraw draw = draw_factored(pairs.factored, state, *context.cache, stream);
        locate_positions(draw.owner, draw.partner);
        chosen = x * m + y;  // the chosen-pair cache's key: unique within the state
        log_q = draw.log_q;
      } else {
        chosen = draw_index(pairs.weights, stream);
        locate(chosen);
        log_q = pairs.log_score[chosen] - pairs.log_total;
      }
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
  const bool mpost2 = context.proposal == Algorithm::mpost2;
  // A spare node from the pool is of this run's kind: every merged cluster of a run is.
  std::unique_ptr<ClusterNode> merged = std::move(created);
  if (!merged) {
    if (mpost2) {
      merged = std::make_unique<Mpost2ClusterNode>();
    } else {
      merged = std::make_unique<ClusterNode>();
    }
  }
  Mpost2ClusterNode* scored = nullptr;  // `merged` as an MPost2 cluster
  if (mpost2) {
    scored = static_cast<Mpost2ClusterNode*>(merged.get());
    scored->pair_weight_row.clear();  // empty until complete_pair_weights fills it in
    scored->weight_scale = 0.0;
    scored->shared_stamp = 0;
  }
  merge_clusters(a, b, t, context.leaf_count + step, context.dims, *merged);
  // Its pair row: one-vs-all distances to every other live cluster. (MPost2 clusters get their
  // pair weights instead, once their state survives to the next step: complete_pair_weights.
  // PriorPrior reads one distance per step, which LeafPairCache::eps computes from the means:
  // O(d) per step instead of O(m d) for a row.)
  if (!scored && context.proposal != Algorithm::priorprior) {
    thread_local std::vector<const double*> other_means;
    thread_local std::vector<double> distances;
    other_means.clear();
    for (std::size_t z = 0; z < m; ++z)
      if (z != x && z != y) other_means.push_back(state.live[z]->mean.data());
    distances.resize(other_means.size());
    kernels::squared_distances_to_rows(merged->mean.data(), other_means.data(), other_means.size(),
                                       context.dims, distances.data());
    merged->eps_row.assign(merged->id, std::numeric_limits<double>::quiet_NaN());
    std::size_t k = 0;
    for (std::size_t z = 0; z < m; ++z)
      if (z != x && z != y) merged->eps_row[state.live[z]->id] = distances[k++];
  }
  // The extended state: `next` is `state` (updated in place), or a resampled copy that takes
  // `state` with the merge applied, its live list copied around position y in one pass.
  const Merge merge{std::min(a.id, b.id), std::max(a.id, b.id), -t};
  const auto at_y = state.live.begin() + static_cast<std::ptrdiff_t>(y);
  if (&next == &state) {
    next.live[x] = merged.get();
    next.live.erase(next.live.begin() + static_cast<std::ptrdiff_t>(y));
  } else {
    next.live.assign(state.live.begin(), at_y);
    next.live.insert(next.live.end(), at_y + 1, state.live.end());
    next.live[x] = merged.get();
  }
  created = std::move(merged);
  // MPost2 with leaf sums: this state's, the next state's parent's.
  next.leaf_sums = mpost2 && context.cache->uses_leaf_sums() ? pairs.leaf_sums : nullptr;
  next.history = state.history;  // `next` may be a copy
  append_merge(next.history, recorded, merge);
  next.time = t;
  next.merged_at = x;
  next.erased_at = y;
  if (std::isnan(log_alpha) || log_alpha == std::numeric_limits<double>::infinity()) {
    throw NumericalError("step " + std::to_string(step + 1) + ": the incremental weight of " +
                         to_string(context.proposal) + " is not finite");
  }
  return log_alpha;
}

}  // namespace kingman::detail
