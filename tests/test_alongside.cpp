// Work offered to a second thread (sim/alongside.h): run by a helper that begins it, or taken
// back by the thread that offered it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "sim/alongside.h"
#include "test_util.h"

using namespace clothlab;

TEST(Alongside, GivesTheTasksResultOrItsException) {
  Alongside<int> answer([] { return 42; });
  ASSERT_TRUE(answer.valid());
  EXPECT_EQ(42, answer.get());
  EXPECT_FALSE(answer.valid());
  Alongside<int> failing([]() -> int { throw std::runtime_error("no"); });
  EXPECT_THROW(failing.get(), std::runtime_error);
}

// A task not offered runs on the thread that asks for its result.
TEST(Alongside, ATaskNotOfferedRunsInGet) {
  std::thread::id ranOn;
  Alongside<int> here(
      [&] {
        ranOn = std::this_thread::get_id();
        return 5;
      },
      false);
  EXPECT_FALSE(here.offered());
  EXPECT_EQ(5, here.get());
  EXPECT_EQ(std::this_thread::get_id(), ranOn);
  EXPECT_FALSE(here.ranByHelper());
}

// With every helper busy, get() does not wait for one: the calling thread runs the task.
TEST(Alongside, ATaskNoHelperHasBegunRunsOnTheThreadThatAsks) {
  test::BusyHelpers busy;
  ASSERT_TRUE(busy.ready());
  std::thread::id ranOn;
  Alongside<void> task([&] { ranOn = std::this_thread::get_id(); });
  ASSERT_TRUE(task.valid());
  task.get();
  EXPECT_EQ(std::this_thread::get_id(), ranOn);
  EXPECT_FALSE(task.ranByHelper());
}

// A task a helper has begun is waited for, and its result is the helper's.
TEST(Alongside, ATaskAHelperHasBegunIsWaitedFor) {
  std::atomic<bool> begun{false};
  std::thread::id ranOn;
  Alongside<int> task([&] {
    ranOn = std::this_thread::get_id();
    begun = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return 7;
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!begun && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_TRUE(begun) << "no helper began the task within 10 s";
  EXPECT_EQ(7, task.get());
  EXPECT_TRUE(task.ranByHelper());
  EXPECT_NE(std::this_thread::get_id(), ranOn);
}

// A task given up (destroyed without get) before a helper began it never runs: it may refer to
// the giver's locals, which are gone by then.
TEST(Alongside, ATaskGivenUpBeforeAHelperBeginsItNeverRuns) {
  std::atomic<bool> ran{false};
  {
    test::BusyHelpers busy;
    ASSERT_TRUE(busy.ready());
    Alongside<void> task([&] { ran = true; });
    ASSERT_TRUE(task.valid());
  }  // the task is given up first, then the helpers are let go and find it in their queue
  // A task offered after it is begun by a helper only once the given-up one has left the queue.
  std::atomic<bool> begun{false};
  Alongside<void> later([&] { begun = true; });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!begun && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  later.get();
  EXPECT_TRUE(later.ranByHelper());
  EXPECT_FALSE(ran);
}
