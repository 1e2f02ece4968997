// StateGroups (state_groups.hpp) must give the grouping that a first-appearance map gives:
// groups numbered by their first particle, members in particle order, whatever the keys'
// addresses (null among them, and many more keys than the table's first size); and a reused object
// must give the same answer as a fresh one.
#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <random>
#include <span>
#include <vector>

#include "../../engine/src/inference/smc/state_groups.hpp"

namespace kingman::detail {
namespace {

struct Key {
  int unused = 0;
};

// The reference: a map from key to group number, filled in particle order.
void expect_first_appearance_grouping(const StateGroups& groups,
                                      const std::vector<const Key*>& keys) {
  std::map<const Key*, std::size_t> number;
  std::vector<std::vector<std::size_t>> expected;
  for (std::size_t s = 0; s < keys.size(); ++s) {
    const auto [it, added] = number.emplace(keys[s], expected.size());
    if (added) expected.emplace_back();
    expected[it->second].push_back(s);
  }
  ASSERT_EQ(groups.size(), expected.size());
  for (std::size_t g = 0; g < expected.size(); ++g) {
    EXPECT_EQ(groups.leader(g), expected[g].front());
    const std::size_t begin = groups.member_begin(g), end = groups.member_begin(g + 1);
    ASSERT_EQ(end - begin, expected[g].size());
    for (std::size_t k = begin; k < end; ++k) {
      EXPECT_EQ(groups.members()[k], expected[g][k - begin]);
      EXPECT_EQ(groups.group_of(groups.members()[k]), g);
    }
  }
}

TEST(StateGroups, MatchesFirstAppearanceOrderForShuffledAndRepeatedKeys) {
  // Keys at addresses that do not follow the particle order (a shuffled pool of states).
  std::vector<Key> states(40);
  std::mt19937_64 engine(11);
  StateGroups reused;
  for (std::size_t count : {1u, 2u, 5u, 64u, 100u}) {
    for (std::size_t distinct : {std::size_t{1}, std::size_t{3}, count}) {
      std::vector<const Key*> keys(count);
      std::uniform_int_distribution<std::size_t> pick(0, std::min(distinct, states.size()) - 1);
      for (auto& key : keys) key = &states[states.size() - 1 - pick(engine)];
      reused.assign(std::span<const Key* const>(keys));
      expect_first_appearance_grouping(reused, keys);
      StateGroups fresh;
      fresh.assign(std::span<const Key* const>(keys));
      expect_first_appearance_grouping(fresh, keys);
    }
  }
}

TEST(StateGroups, NullKeysAndThousandsOfKeys) {
  // Keys 4 KiB apart (equal in their low address bits), up to thousands of them (the table
  // starts with 16 slots and probes on collisions), and null: the first step's key (no history).
  std::vector<Key> pages(1 << 20);
  const std::size_t stride = 4096 / sizeof(Key);
  std::mt19937_64 engine(5);
  StateGroups reused;
  for (std::size_t count : {1u, 3u, 16u, 17u, 300u, 5000u}) {
    for (std::size_t distinct : {std::size_t{1}, std::size_t{7}, count}) {
      std::vector<const Key*> keys(count);
      std::uniform_int_distribution<std::size_t> pick(0, distinct);
      for (auto& key : keys) {
        const std::size_t k = pick(engine);
        key = k == distinct ? nullptr : &pages[(k * stride) % pages.size()];
      }
      reused.assign(std::span<const Key* const>(keys));
      expect_first_appearance_grouping(reused, keys);
    }
  }
  const std::vector<const Key*> all_null(10, nullptr);
  StateGroups groups;
  groups.assign(std::span<const Key* const>(all_null));
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups.member_begin(1), 10u);
}

TEST(StateGroups, CopiesAfterResamplingFormOneGroupEach) {
  std::vector<Key> states(3);
  // Particles 0, 2, 5 share a state; 1 and 4 another; 3 is alone.
  const std::vector<const Key*> keys = {&states[2], &states[0], &states[2],
                                        &states[1], &states[0], &states[2]};
  StateGroups groups;
  groups.assign(std::span<const Key* const>(keys));
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups.leader(0), 0u);
  EXPECT_EQ(groups.leader(1), 1u);
  EXPECT_EQ(groups.leader(2), 3u);
  const std::vector<std::size_t> members = {0, 2, 5, 1, 4, 3};
  EXPECT_EQ(groups.members(), members);
  EXPECT_EQ(groups.member_begin(3), 6u);
}

}  // namespace
}  // namespace kingman::detail
