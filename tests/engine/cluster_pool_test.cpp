// The particle systems' cluster owner (cluster_pool.hpp) and the cost-aware parallel loop
// (parallel_for.hpp, run_arena.hpp): a sweep frees exactly the clusters no live list names and
// keeps the rest intact (or, with reuse, keeps the freed ones as spares), sweeps run only when the
// pool has doubled, the loop visits every index once whether it splits or runs inline, and no two
// threads of a loop hold one thread slot at once.
#include <gtest/gtest.h>

#include <tbb/task_arena.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "../../engine/src/inference/smc/cluster_pool.hpp"
#include "../../engine/src/scheduler/parallel_for.hpp"
#include "../../engine/src/scheduler/run_arena.hpp"

namespace kingman::detail {
namespace {

struct CountedNode {
  explicit CountedNode(int* alive_count, int value) : alive(alive_count), id(value) { ++*alive; }
  CountedNode() = default;  // a block's, counted once filled in (count_as)
  ~CountedNode() {
    if (alive) --*alive;
  }
  CountedNode(const CountedNode&) = delete;  // like a node holding a std::once_flag
  CountedNode& operator=(const CountedNode&) = delete;
  void count_as(int* alive_count, int value) {
    alive = alive_count;
    id = value;
    ++*alive;
  }
  int* alive = nullptr;
  int id = 0;
  mutable std::uint64_t collect_mark = 0;
};

using Lists = std::vector<std::vector<const CountedNode*>>;

// collect_if_due's live_of for particles whose live lists are `lists`.
auto live_of(const Lists& lists) {
  return [&lists](std::size_t s) -> const std::vector<const CountedNode*>& { return lists[s]; };
}

TEST(ClusterPool, SweepFreesExactlyTheUnlistedClusters) {
  int alive = 0;
  ClusterPool<CountedNode> pool;
  const CountedNode* leaf =
      &pool.keep_block(1, [&](std::span<CountedNode> block) { block[0].count_as(&alive, -1); })[0];
  std::vector<const CountedNode*> made;
  for (int i = 0; i < 10; ++i) made.push_back(pool.adopt(std::make_unique<CountedNode>(&alive, i)));
  ASSERT_EQ(alive, 11);
  // Two particles list clusters 2, 5 (shared) and 7; the leaf is listed by nobody but is kept.
  const Lists lists = {{made[2], made[5]}, {made[5], made[7]}};
  pool.collect_if_due(1, lists.size(), live_of(lists));  // 10 >= 2 * 0 + 1: due
  EXPECT_EQ(alive, 4);
  EXPECT_EQ(pool.size(), 4u);
  std::set<int> ids;
  for (const auto& list : lists)
    for (const CountedNode* node : list) ids.insert(node->id);  // still readable
  EXPECT_EQ(ids, (std::set<int>{2, 5, 7}));
  EXPECT_EQ(leaf->id, -1);
}

// With a cap (limit), a step that could pass it makes the pool sweep early, even before it has
// doubled, and let go of its spares; where the clusters still listed leave no room for the
// step's new ones, collect_if_due throws ResourceError, and the listed clusters stay intact.
TEST(ClusterPool, CapSweepsEarlyFreesSparesAndRefusesWhatCannotFit) {
  int alive = 0;
  ClusterPool<CountedNode> pool(/*reuse=*/true);
  pool.limit(/*node_bytes=*/100, /*budget=*/1000);  // room for 10 clusters
  std::vector<const CountedNode*> made;
  for (int i = 0; i < 4; ++i) made.push_back(pool.adopt(std::make_unique<CountedNode>(&alive, i)));
  Lists lists = {{made[0], made[1], made[2], made[3]}};
  // 4 held + 2 new: within the cap, and not due by the doubling rule after a first sweep.
  pool.collect_if_due(2, lists.size(), live_of(lists));  // due (4 >= 2 * 0 + 2): keeps 4
  ASSERT_EQ(pool.size(), 4u);
  for (int i = 4; i < 8; ++i) made.push_back(pool.adopt(std::make_unique<CountedNode>(&alive, i)));
  lists = {{made[0], made[4], made[5]}};
  // 8 held + 3 new = 11 > 10: swept early (8 < 2 * 4 + 3), 5 freed as spares; 3 listed + 5
  // spares + 3 = 11 still over, so the spares go too.
  pool.collect_if_due(3, lists.size(), live_of(lists));
  EXPECT_EQ(pool.size(), 3u);
  EXPECT_EQ(pool.spare_count(), 0u);
  EXPECT_EQ(alive, 3);
  // 9 listed + 2 new = 11: no room even after a sweep.
  for (int i = 8; i < 14; ++i) made.push_back(pool.adopt(std::make_unique<CountedNode>(&alive, i)));
  lists = {{made[0], made[4], made[5], made[8], made[9], made[10], made[11], made[12], made[13]}};
  EXPECT_THROW(pool.collect_if_due(2, lists.size(), live_of(lists)), ResourceError);
  EXPECT_EQ(pool.size(), 9u);
  for (const CountedNode* node : lists[0]) EXPECT_GE(node->id, 0);  // still readable
  // Without a cap the same pool would simply have kept them.
  pool.limit(100, 0);
  EXPECT_NO_THROW(pool.collect_if_due(2, lists.size(), live_of(lists)));
}

// Block-kept clusters (the leaves) are filled in place, so that nodes that cannot be moved or
// copied can be kept, and recognised by address: a sweep never reads or marks them, however
// many particles list them, and never frees them.
TEST(ClusterPool, SweepPassesOverTheKeptBlockWithoutTouchingIt) {
  int alive = 0;
  ClusterPool<CountedNode> pool;
  const std::span<const CountedNode> block = pool.keep_block(3, [&](std::span<CountedNode> nodes) {
    for (int i = 0; i < 3; ++i) nodes[static_cast<std::size_t>(i)].count_as(&alive, -1 - i);
  });
  ASSERT_EQ(block.size(), 3u);
  EXPECT_EQ(pool.size(), 3u);
  std::vector<const CountedNode*> made;
  for (int i = 0; i < 4; ++i) made.push_back(pool.adopt(std::make_unique<CountedNode>(&alive, i)));
  const Lists lists = {{&block[0], &block[2], made[1]}, {&block[1], made[3]}};
  pool.collect_if_due(1, lists.size(), live_of(lists));
  EXPECT_EQ(pool.size(), 5u);  // the block, made[1] and made[3]
  for (const CountedNode& node : block) EXPECT_EQ(node.collect_mark, 0u);
  EXPECT_NE(made[1]->collect_mark, 0u);
  EXPECT_EQ(block[1].id, -2);
  EXPECT_EQ(alive, 5);  // the block and the two listed clusters
  EXPECT_THROW(pool.keep_block(1, [](std::span<CountedNode>) {}), std::logic_error);
}

TEST(ClusterPool, SweepsOnlyWhenThePoolHasDoubled) {
  int alive = 0;
  ClusterPool<CountedNode> pool;
  std::vector<const CountedNode*> made;
  for (int i = 0; i < 4; ++i) made.push_back(pool.adopt(std::make_unique<CountedNode>(&alive, i)));
  Lists lists = {{made[0], made[1], made[2], made[3]}};
  pool.collect_if_due(2, lists.size(), live_of(lists));  // keeps all 4
  EXPECT_EQ(alive, 4);
  // Nobody lists the next ones, but 4 + 5 < 2 * 4 + 2: not yet due.
  for (int i = 0; i < 5; ++i) pool.adopt(std::make_unique<CountedNode>(&alive, 10 + i));
  pool.collect_if_due(2, lists.size(), live_of(lists));
  EXPECT_EQ(alive, 9);
  pool.adopt(std::make_unique<CountedNode>(&alive, 20));  // 10 >= 10: due
  pool.collect_if_due(2, lists.size(), live_of(lists));
  EXPECT_EQ(alive, 4);
}

TEST(ClusterPool, WithReuseASweepKeepsTheFreedClustersAsSpares) {
  int alive = 0;
  ClusterPool<CountedNode> pool(/*reuse=*/true);
  EXPECT_EQ(pool.take_spare(), nullptr);
  std::vector<const CountedNode*> made;
  for (int i = 0; i < 6; ++i) made.push_back(pool.adopt(std::make_unique<CountedNode>(&alive, i)));
  const Lists lists = {{made[1], made[4]}};
  pool.collect_if_due(1, lists.size(), live_of(lists));
  EXPECT_EQ(alive, 6);  // nothing destroyed: four spares
  EXPECT_EQ(pool.size(), 2u);
  EXPECT_EQ(pool.spare_count(), 4u);
  std::set<int> spare_ids;
  while (std::unique_ptr<CountedNode> spare = pool.take_spare()) {
    spare_ids.insert(spare->id);
    pool.adopt(std::move(spare));
  }
  EXPECT_EQ(spare_ids, (std::set<int>{0, 2, 3, 5}));
  EXPECT_EQ(pool.size(), 6u);
  EXPECT_EQ(made[1]->id, 1);  // the listed ones untouched
  EXPECT_EQ(made[4]->id, 4);
}

// Marking runs in parallel when the lists are long: the sweep must keep exactly the listed
// clusters, shared ones included, whatever the thread count.
TEST(ClusterPool, ParallelMarkingKeepsExactlyTheListedClusters) {
  for (int threads : {1, 2, 4}) {
    tbb::task_arena arena(threads);
    arena.execute([&] {
      int alive = 0;
      ClusterPool<CountedNode> pool;
      std::vector<const CountedNode*> made;
      for (int i = 0; i < 4000; ++i)
        made.push_back(pool.adopt(std::make_unique<CountedNode>(&alive, i)));
      // 64 particles of 1000 clusters each: all list the multiples of 7 below 1000 (shared),
      // the rest overlap in part; clusters 3000 and up are listed by nobody.
      Lists lists(64);
      std::set<int> listed;
      for (std::size_t s = 0; s < lists.size(); ++s) {
        for (int i = 0; i < 1000; ++i) {
          const int id =
              i % 7 == 0 ? i : static_cast<int>((s * 37 + static_cast<std::size_t>(i)) % 3000);
          lists[s].push_back(made[static_cast<std::size_t>(id)]);
          listed.insert(id);
        }
      }
      pool.collect_if_due(1, lists.size(), live_of(lists));
      EXPECT_EQ(alive, static_cast<int>(listed.size())) << threads << " threads";
      std::set<int> kept;
      for (const auto& list : lists)
        for (const CountedNode* node : list) kept.insert(node->id);
      EXPECT_EQ(kept, listed);
    });
  }
}

TEST(ClusterPool, DestroysEverythingWithThePool) {
  int alive = 0;
  {
    ClusterPool<CountedNode> pool;
    pool.keep_block(1, [&](std::span<CountedNode> block) { block[0].count_as(&alive, 0); });
    pool.adopt(std::make_unique<CountedNode>(&alive, 1));
    EXPECT_EQ(alive, 2);
  }
  EXPECT_EQ(alive, 0);
}

TEST(ParallelForWork, VisitsEveryIndexOnceInlineOrSplit) {
  tbb::task_arena arena(2);
  for (const std::size_t work_per_item : {std::size_t{1}, std::size_t{1000}, kMinLoopWork * 4}) {
    for (const std::size_t count :
         {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{5000}}) {
      std::vector<std::atomic<int>> visits(count);
      std::atomic<int> ranges{0};
      arena.execute([&] {
        parallel_for_work(0, count, work_per_item, [&](const auto& range) {
          ++ranges;
          for (std::size_t i = range.begin(); i != range.end(); ++i) ++visits[i];
        });
      });
      for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(visits[i].load(), 1) << i;
      // Below kMinLoopWork in all: one inline call.
      if (count > 0 && count * work_per_item <= kMinLoopWork) {
        EXPECT_EQ(ranges.load(), 1);
      }
      if (count == 0) {
        EXPECT_EQ(ranges.load(), 0);
      }
    }
  }
}

// A RunArena runs its function on the calling thread outside oneTBB. With one thread every
// loop runs inline there (one call with the whole range, even far above kMinLoopWork, and for
// parallel_for_range). With two, small loops still run inline, and a loop that splits runs
// inside the arena, where nested loops see the arena itself. Both leave the thread as they
// found it, also on a throw.
TEST(RunArena, RunsOnTheCallingThreadAndEntersTheArenaOnlyToSplit) {
  const std::thread::id caller = std::this_thread::get_id();
  RunArena one(1);
  EXPECT_EQ(one.threads(), 1);
  one.execute([&] {
    EXPECT_EQ(pending_arena, &one);
    int calls = 0;
    parallel_for_work(0, 5000, kMinLoopWork, [&](const auto& range) {
      ++calls;
      EXPECT_EQ(range.size(), 5000u);
      EXPECT_EQ(std::this_thread::get_id(), caller);
    });
    parallel_for_range(3, 900, [&](const auto& range) {
      ++calls;
      EXPECT_EQ(range.begin(), 3u);
      EXPECT_EQ(range.end(), 900u);
    });
    EXPECT_EQ(calls, 2);
  });
  EXPECT_EQ(pending_arena, nullptr);
  EXPECT_THROW(one.execute([] { throw std::runtime_error("x"); }), std::runtime_error);
  EXPECT_EQ(pending_arena, nullptr);

  RunArena two(2);
  two.execute([&] {
    int small_calls = 0;
    parallel_for_work(0, 10, 1, [&](const auto&) {
      ++small_calls;
      EXPECT_EQ(pending_arena, &two);  // not entered
    });
    EXPECT_EQ(small_calls, 1);
    std::vector<std::atomic<int>> visits(4000);
    std::atomic<int> outside{0};
    parallel_for_work(0, visits.size(), kMinLoopWork, [&](const auto& range) {
      if (pending_arena != nullptr || tbb::this_task_arena::max_concurrency() != 2) ++outside;
      for (std::size_t i = range.begin(); i != range.end(); ++i) ++visits[i];
    });
    EXPECT_EQ(outside.load(), 0);
    for (const auto& v : visits) ASSERT_EQ(v.load(), 1);
    EXPECT_EQ(pending_arena, &two);
    EXPECT_THROW(parallel_for_range(0, 100,
                                    [](const auto& range) {
                                      if (range.begin() == 0) throw std::runtime_error("y");
                                    }),
                 std::runtime_error);
    EXPECT_EQ(pending_arena, &two);
  });
  EXPECT_EQ(pending_arena, nullptr);
}

// A loop alone in its run (no other will split) starts the run's workers only from
// kMinStartWork: below it, where no earlier loop started them, it runs inline in one call,
// though an ordinary loop of its size would split; where they are started it splits like any
// loop. Every index is visited once either way.
TEST(RunArena, ALoopAloneStartsTheWorkersOnlyWhenItIsLarge) {
  const std::size_t items = 64;
  auto run_loop = [&](std::size_t work_per_item, LoopPlace place) {
    std::vector<std::atomic<int>> visits(items);
    std::atomic<int> calls{0}, entered{0};
    parallel_for_work(
        0, items, work_per_item,
        [&](const auto& range) {
          ++calls;
          if (pending_arena == nullptr) ++entered;
          for (std::size_t i = range.begin(); i != range.end(); ++i) ++visits[i];
        },
        kTasksPerThread, place);
    for (const auto& v : visits) EXPECT_EQ(v.load(), 1);
    return std::pair{calls.load(), entered.load()};
  };
  const std::size_t below = kMinStartWork / (2 * items), above = 2 * kMinStartWork / items;
  ASSERT_GT(below * items, kMinLoopWork);  // an ordinary loop of this size splits

  RunArena fresh(2);
  fresh.execute([&] {
    EXPECT_EQ(run_loop(below, LoopPlace::alone), std::pair(1, 0));
    EXPECT_FALSE(fresh.started());
    const auto [calls, entered] = run_loop(above, LoopPlace::alone);
    EXPECT_GT(calls, 1);
    EXPECT_EQ(entered, calls);
    EXPECT_TRUE(fresh.started());
  });

  RunArena busy(2);
  busy.execute([&] {
    EXPECT_GT(run_loop(below, LoopPlace::among_others).first, 1);
    EXPECT_TRUE(busy.started());
    const auto [calls, entered] = run_loop(below, LoopPlace::alone);
    EXPECT_GT(calls, 1);
    EXPECT_EQ(entered, calls);
  });
}

// Scratch kept per thread slot (ProposalSystem's pair candidates) relies on current_thread_slot:
// while a thread runs a loop's body (split or nested) no other thread holds its slot, and every
// slot is below loop_thread_count(), also with more threads than cores; a loop that runs
// inline, and code outside any run, get a slot below the count as well. (A worker that leaves
// the arena between tasks may come back in another slot, so only overlapping bodies are
// compared.)
TEST(ThreadSlot, NoTwoThreadsHoldOneSlotAtOnceAndAllAreBelowTheCount) {
  for (const int threads : {1, 2, 4}) {
    RunArena arena(threads);
    arena.execute([&] {
      EXPECT_EQ(loop_thread_count(), static_cast<std::size_t>(threads));
      EXPECT_LT(current_thread_slot(), loop_thread_count());
      std::vector<std::atomic<std::thread::id>> holder(static_cast<std::size_t>(threads));
      std::atomic<int> beyond{0}, shared{0};
      // Takes the calling thread's slot (true), or finds it already held by this thread (a
      // nested body: false); another holder is a clash.
      auto take = [&](std::size_t& slot) {
        slot = current_thread_slot();
        if (slot >= holder.size()) {
          ++beyond;
          return false;
        }
        std::thread::id expected{};
        if (holder[slot].compare_exchange_strong(expected, std::this_thread::get_id())) return true;
        if (expected != std::this_thread::get_id()) ++shared;
        return false;
      };
      std::atomic<double> sink{0.0};
      parallel_for_range(0, 64, [&](const auto& range) {
        std::size_t slot = 0;
        const bool taken = take(slot);
        for (std::size_t i = range.begin(); i != range.end(); ++i) {
          double x = 1.0;  // enough work per index for the other threads to take some
          for (int k = 0; k < 20000; ++k) x = x * 0.999999 + 1e-9;
          sink = sink + x;
          parallel_for_range(0, 4, [&](const auto&) {  // nested
            std::size_t inner = 0;
            if (take(inner)) holder[inner].store(std::thread::id{});
          });
        }
        if (taken) holder[slot].store(std::thread::id{});
      });
      EXPECT_EQ(beyond.load(), 0);
      EXPECT_EQ(shared.load(), 0);
    });
  }
  EXPECT_LT(current_thread_slot(), loop_thread_count());  // outside any run
}

}  // namespace
}  // namespace kingman::detail
