// What the camera frames when a scene opens (app/viewer/framing.h): the scene's bounds, and
// where its cloth is going.
#include <gtest/gtest.h>

#include "app/viewer/framing.h"

namespace clothlab {
namespace {

// A 1 m square cloth, level at height y (lying) or upright in the x-y plane from y up (standing),
// over a ground at height 0.
Snapshot square(double y, bool standing) {
  Snapshot s;
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 2; ++i) {
      const double a = i - 0.5, b = j;
      s.positions.insert(s.positions.end(),
                         {float(a), float(standing ? y + b : y), float(standing ? 0 : b - 0.5)});
    }
  Obstacle ground;
  s.obstacles.push_back(ground);
  return s;
}

TEST(Framing, AClothLyingOverTheGroundAloneIsFramedWithWhereItLands) {
  const auto [lo, hi] = framedBounds(square(1.0, false), true);
  EXPECT_DOUBLE_EQ(lo.y(), 0.0);
  EXPECT_NEAR(hi.y(), 1.0, 1e-6);
  EXPECT_NEAR(lo.x(), -0.5, 1e-6);
  EXPECT_NEAR(hi.x(), 0.5, 1e-6);
  // Far above the ground: down to three times its width only.
  EXPECT_NEAR(framedBounds(square(10.0, false), true).first.y(), 7.0, 1e-6);
  // F (not a new scene) frames what is there now.
  EXPECT_NEAR(framedBounds(square(1.0, false), false).first.y(), 1.0, 1e-6);
}

TEST(Framing, AClothOverSomethingElseIsFramedWithThatAlone) {
  Snapshot s = square(1.0, false);
  Obstacle ball;
  ball.type = Obstacle::Type::Sphere;
  ball.point = Vec3(0, 0.6, 0);
  ball.radius = 0.2;
  s.obstacles.push_back(ball);
  const auto [lo, hi] = framedBounds(s, true);
  EXPECT_NEAR(lo.y(), 0.4, 1e-6);  // the ball's bottom, not the ground
}

TEST(Framing, StandingAndPinnedClothsAsBefore) {
  // Standing: the ground round it, half its height out.
  const auto [lo, hi] = framedBounds(square(0.5, true), true);
  EXPECT_DOUBLE_EQ(lo.y(), 0.0);
  EXPECT_NEAR(lo.x(), -1.0, 1e-6);
  EXPECT_NEAR(hi.z(), 0.5, 1e-6);
  // Pinned: the room below it, as far as it is wide.
  Snapshot pinned = square(2.0, false);
  pinned.pinVertices = {0};
  EXPECT_NEAR(framedBounds(pinned, true).first.y(), 1.0, 1e-6);
}

}  // namespace
}  // namespace clothlab
