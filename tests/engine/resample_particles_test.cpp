// resample_particles (smc_loop.hpp) hands an ancestor's state to one offspring by a swap and
// copies it for the others in parallel: the new generation must equal the one plain copies
// give, for every pattern of offspring counts and any thread count, and the scratch vector
// must stay usable for the next call.
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <cstddef>
#include <random>
#include <vector>

#include "../../engine/src/inference/smc/smc_loop.hpp"

namespace kingman::detail {
namespace {

// A particle with a heap buffer, as the real ones have (live lists, rows).
using Particle = std::vector<int>;

std::vector<Particle> generation(std::size_t count, int tag) {
  std::vector<Particle> particles(count);
  for (std::size_t s = 0; s < count; ++s)
    particles[s] = Particle(s % 5 + 1, tag + static_cast<int>(s));
  return particles;
}

void check_resampling() {
  std::mt19937_64 engine(3);
  for (std::size_t count : {1u, 2u, 7u, 64u}) {
    std::vector<Particle> particles = generation(count, 100);
    std::vector<Particle> next = generation(count, -1000);  // stale scratch, as after a run
    for (int round = 0; round < 20; ++round) {
      std::vector<std::size_t> ancestors(count);
      std::uniform_int_distribution<std::size_t> pick(0, count - 1);
      if (round == 0) {
        for (std::size_t s = 0; s < count; ++s) ancestors[s] = s;  // every particle once
      } else if (round == 1) {
        for (std::size_t& a : ancestors) a = count - 1;  // one ancestor for all
      } else {
        for (std::size_t& a : ancestors) a = pick(engine);
      }
      std::vector<Particle> expected(count);
      for (std::size_t s = 0; s < count; ++s) expected[s] = particles[ancestors[s]];
      resample_particles(particles, next, ancestors, /*copy_work=*/1 << 20);  // parallel
      ASSERT_EQ(particles, expected) << "count " << count << " round " << round;
      ASSERT_EQ(next.size(), count);
      // Extend every particle, as a step would, so the next round starts from new values.
      for (Particle& p : particles) p.push_back(round);
    }
  }
}

TEST(ResampleParticles, EqualsPlainCopiesForAnyAncestors) {
  for (int threads : {1, 2, 4}) {
    tbb::task_arena arena(threads);
    arena.execute([&] { check_resampling(); });
  }
}

}  // namespace
}  // namespace kingman::detail
