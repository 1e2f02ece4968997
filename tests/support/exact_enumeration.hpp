#pragma once
// Test oracle: exact evidence and posteriors of Kingman's coalescent for tiny n (MODEL.md
// section 9). Every ranked history (ordered sequence of pair merges) is enumerated and the
// durations delta_1..delta_{n-1} in [0, inf) of prod_k exp(-lambda_k delta_k) * p(x | history,
// times) are integrated by nested double-exponential quadrature (trapezoid rule in t with
// delta = c * exp(t - exp(-t)), refined until successive levels agree; c is the history's
// mode in log-duration space). Written from MODEL.md, sharing no code with the engine.
//
// Conventions (MODEL.md section 1): node ids follow scipy (leaves 0..n-1, merge k forms n+k);
// merge times are t_k <= 0 with 0 > t_1 > ... > t_{n-1}; heights are -t.
//
// Cost is the product over levels of the points per level (~50-150): single-threaded, n = 3
// takes milliseconds, n = 4 0.2-1 s (up to ~5 s for tight clusters inside tight clusters),
// n = 5 about 100 s (EnumerationOptions::threads splits the histories).
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kingman/tree/merge_tree.hpp"

namespace kingman::oracle {

// Merge k joins node ids history[k].first < history[k].second and forms node n + k.
using History = std::vector<std::pair<int, int>>;

// log p(x | history, merge_times); merge_times[k] is the (negative) time of merge k.
// May return -inf (zero likelihood); +inf or NaN make enumerate_exact throw.
using LogLikelihood = std::function<double(const History& history_node_pairs,
                                           const std::vector<double>& merge_times)>;

struct EnumerationOptions {
  // Per-level stop rule: two successive trapezoid refinements agree to rel_tol (relative; for
  // nested levels also an absolute floor scaled to the outer sum). Measured errors of p(x) at
  // 1e-7: <= 6e-10 on n = 2 closed forms (d 1..8, eps 1e-6..1e3), <= 4e-11 on 60 random n = 3
  // sets against rel_tol 1e-11. 1e-6 is ~1.5x faster (<= 1e-9 seen); 1e-5 is not safe (an
  // early accidental agreement gave 6e-6).
  double rel_tol = 1e-7;
  int max_refinements = 10;  // halvings of the trapezoid step at each level (h0 = 1/2)
  unsigned threads = 1;      // histories integrated in parallel, each with a copy of the
                             // LogLikelihood (which must then be safe to copy and call so)
};

struct HistoryMass {
  History merges;        // the ranked history
  std::string topology;  // canonical_topology of it
  double log_mass;       // log of the integral of p(x, history, durations) over durations
};

struct Enumeration {
  std::size_t n = 0;
  double log_evidence = 0.0;                                    // log p(x)
  std::vector<HistoryMass> histories;                           // all ranked histories, in order
  std::map<std::pair<int, int>, double> first_merge_posterior;  // leaf pair (i < j) -> P
  std::map<std::string, double> topology_posterior;             // canonical topology -> P
  std::size_t likelihood_evaluations = 0;                       // calls of the LogLikelihood
};

// Every ranked history of n leaves (n!(n-1)!/2^(n-1) of them), pairs in (a < b) order of the
// live node ids, deterministic order. n in [1, 6].
std::vector<History> all_histories(std::size_t n);

// Canonical string of the unranked topology: leaves "i", internal nodes "(A,B)" with the two
// children ordered by their smallest leaf id, e.g. "((0,1),(2,3))", "(0,(1,2))". n = 1: "0".
std::string canonical_topology(std::size_t n, const History& history);
std::string canonical_topology(const MergeTree& tree);

// Converts between a MergeTree and (history, merge times); the tree's merges must be complete.
History history_of(const MergeTree& tree);
std::vector<double> merge_times_of(const MergeTree& tree);

// log of the coalescent prior density sum_k -lambda_{m_k} delta_k for the given merge times
// (pair choice included: each pair has rate 1). Throws if the times increase.
double log_prior_density(std::size_t n, const std::vector<double>& merge_times);

// log p(x, tree) = log prior density + log p(x | tree) for a complete tree.
double log_joint(const MergeTree& tree, const LogLikelihood& loglik);

// Exact enumeration; n in [1, 5]. Throws std::invalid_argument on a NaN/+inf likelihood.
Enumeration enumerate_exact(std::size_t n, const LogLikelihood& loglik,
                            const EnumerationOptions& options = {});

// Brownian diffusion likelihood (MODEL.md section 3) with Lambda = I on the given (whitened)
// data, leaf variance v0 >= 0 in every dimension, per-dimension message variances; a NaN entry
// is missing (infinite variance in that dimension: it contributes nothing, MODEL.md 3.4).
// The returned object keeps scratch buffers: do not call one object from two threads at once.
LogLikelihood brownian_log_likelihood(std::vector<double> x_row_major, std::size_t n, std::size_t d,
                                      double v0);

// enumerate_exact with brownian_log_likelihood. With v0 = 0, two identical rows in d >= 2
// observed dimensions make the evidence infinite (MODEL.md 3.3): throws std::invalid_argument.
Enumeration enumerate_brownian(const std::vector<double>& x_row_major, std::size_t n, std::size_t d,
                               double v0, const EnumerationOptions& options = {});

// Closed form for n = 2, Lambda = I, v0 = 0 (MODEL.md section 9):
// log[(4 pi)^(-d/2) 2 (eps/4)^(p/2) K_p(sqrt(eps))], p = 1 - d/2, eps = squared distance > 0.
double log_evidence_two_points(double eps, std::size_t d);

}  // namespace kingman::oracle
