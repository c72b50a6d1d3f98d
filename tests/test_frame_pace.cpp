// The window's frame rate while nobody touches it (app/viewer/frame_pace.h).
#include <gtest/gtest.h>

#include "app/viewer/frame_pace.h"

namespace clothlab {
namespace {

using Pace = FramePace::Pace;

TEST(FramePace, ALaggingSimulationLeftAloneGetsFewerFramesUntilTheNextInput) {
  FramePace pace;
  // Input within the last second: the full rate, lagging or not.
  EXPECT_EQ(pace.cap(240, 30, 10, 0.2, true, true), 240);
  EXPECT_EQ(pace.pace, Pace::Full);
  // Quiet, but the simulation keeps up: the full rate.
  EXPECT_EQ(pace.cap(240, 30, 10, 5.0, true, false), 240);
  EXPECT_EQ(pace.pace, Pace::Full);
  // Quiet and lagging: paced.
  EXPECT_EQ(pace.cap(240, 30, 10, 1.5, true, true), 30);
  EXPECT_EQ(pace.pace, Pace::Lagging);
  EXPECT_EQ(pace.pacedRate(30, 10), 30);
  // It stays paced when the simulation catches up with the time it was given...
  EXPECT_EQ(pace.cap(240, 30, 10, 2.0, true, false), 30);
  EXPECT_EQ(pace.cap(240, 30, 10, 9.0, true, false), 30);
  // ...until the next input.
  EXPECT_EQ(pace.cap(240, 30, 10, 0.0, true, false), 240);
  EXPECT_EQ(pace.pace, Pace::Full);
  EXPECT_EQ(pace.pacedRate(30, 10), 0);
  EXPECT_EQ(pace.cap(240, 30, 10, 0.5, true, true), 240);
  // A lower --max-fps stays the cap, and none (0) becomes the lagging rate.
  EXPECT_EQ(pace.cap(20, 30, 10, 3.0, true, true), 20);
  EXPECT_EQ(pace.cap(0, 30, 10, 3.0, true, true), 30);
  // --lagging-fps 0: never paced while running.
  FramePace off;
  EXPECT_EQ(off.cap(240, 0, 10, 3.0, true, true), 240);
  EXPECT_EQ(off.pace, Pace::Full);
  EXPECT_EQ(off.cap(0, 0, 10, 3.0, true, true), 0);
}

TEST(FramePace, NothingRunningAndNothingTouchedDrawsAtTheIdleRate) {
  FramePace pace;
  // Paused (nothing runs), touched just now: the full rate; left alone: the idle rate.
  EXPECT_EQ(pace.cap(240, 30, 10, 0.3, false, false), 240);
  EXPECT_EQ(pace.cap(240, 30, 10, 1.2, false, false), 10);
  EXPECT_EQ(pace.pace, Pace::Idle);
  EXPECT_EQ(pace.pacedRate(30, 10), 10);
  // Running again without an input (a load's simulation swapped in): idle ends; lagging, it is
  // paced as lagging, else the full rate.
  EXPECT_EQ(pace.cap(240, 30, 10, 4.0, true, true), 30);
  EXPECT_EQ(pace.pace, Pace::Lagging);
  EXPECT_EQ(pace.cap(240, 30, 10, 5.0, false, false), 10);  // paused again: idle
  EXPECT_EQ(pace.cap(240, 30, 10, 6.0, true, false), 240);
  EXPECT_EQ(pace.pace, Pace::Full);
  // --idle-fps 0: never idle-paced.
  FramePace off;
  EXPECT_EQ(off.cap(240, 30, 0, 3.0, false, false), 240);
  EXPECT_EQ(off.pace, Pace::Full);
  EXPECT_STREQ(FramePace::name(Pace::Idle), "idle");
  EXPECT_STREQ(FramePace::name(Pace::Lagging), "lagging");
  EXPECT_STREQ(FramePace::name(Pace::Full), "full");
}

TEST(FramePace, ASimulationLagsBelowNineTenthsOfItsSpeed) {
  EXPECT_TRUE(FramePace::runsBehind(0.5, 1.0));
  EXPECT_TRUE(FramePace::runsBehind(0.0, 1.0));  // a step of seconds: none finished in the window
  EXPECT_FALSE(FramePace::runsBehind(0.95, 1.0));
  EXPECT_FALSE(FramePace::runsBehind(0.2, 0.2));  // slowed down on purpose, and keeping up
  EXPECT_TRUE(FramePace::runsBehind(1.0, 2.0));
}

}  // namespace
}  // namespace clothlab
