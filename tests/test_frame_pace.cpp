// The window's frame rate while the simulation lags (app/viewer/frame_pace.h).
#include <gtest/gtest.h>

#include "app/viewer/frame_pace.h"

namespace clothlab {
namespace {

TEST(FramePace, ALaggingSimulationLeftAloneGetsFewerFramesUntilTheNextInput) {
  FramePace pace;
  // Input within the last second: the full rate, lagging or not.
  EXPECT_EQ(pace.cap(240, 30, 0.2, true), 240);
  EXPECT_FALSE(pace.paced);
  // Quiet, but the simulation keeps up: the full rate.
  EXPECT_EQ(pace.cap(240, 30, 5.0, false), 240);
  EXPECT_FALSE(pace.paced);
  // Quiet and lagging: paced.
  EXPECT_EQ(pace.cap(240, 30, 1.5, true), 30);
  EXPECT_TRUE(pace.paced);
  // It stays paced when the simulation catches up with the time it was given...
  EXPECT_EQ(pace.cap(240, 30, 2.0, false), 30);
  EXPECT_EQ(pace.cap(240, 30, 9.0, false), 30);
  // ...until the next input.
  EXPECT_EQ(pace.cap(240, 30, 0.0, false), 240);
  EXPECT_FALSE(pace.paced);
  EXPECT_EQ(pace.cap(240, 30, 0.5, true), 240);
  // A lower --max-fps stays the cap, and none (0) becomes the lagging rate.
  EXPECT_EQ(pace.cap(20, 30, 3.0, true), 20);
  EXPECT_EQ(pace.cap(0, 30, 3.0, true), 30);
  // --lagging-fps 0: never paced.
  FramePace off;
  EXPECT_EQ(off.cap(240, 0, 3.0, true), 240);
  EXPECT_FALSE(off.paced);
  EXPECT_EQ(off.cap(0, 0, 3.0, true), 0);
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
