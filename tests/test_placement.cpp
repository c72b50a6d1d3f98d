// Placing a scene's cloth anew (sim/placement.h): about its centre, with its pins and point
// masses, lifted out of the ground, laid flat.
#include <gtest/gtest.h>

#include "sim/generators.h"
#include "sim/metrics.h"
#include "sim/placement.h"
#include "sim/simulation.h"
#include "test_util.h"

using namespace clothlab;
using clothlab::test::hangingScene;

namespace {

// The 1 m square of hanging, 1 m up, over a ground plane.
Scene squareOverGround() {
  Scene scene = hangingScene(ClothSource::Kind::IrregularRectangle, 9, "impulse-nc");
  Obstacle ground;
  ground.point = Vec3::Zero();
  ground.normal = Vec3::UnitY();
  scene.obstacles.push_back(ground);
  return scene;
}

Positions restOf(const Scene& scene) {
  auto model = buildClothModel(scene);
  EXPECT_TRUE(model.ok()) << model.error();
  return model.ok() ? model->mesh.positions : Positions();
}

Vec3 centreOf(const Positions& p) {
  return 0.5 * (p.colwise().minCoeff() + p.colwise().maxCoeff()).transpose();
}
Vec3 extentOf(const Positions& p) {
  return (p.colwise().maxCoeff() - p.colwise().minCoeff()).transpose();
}

Scene placed(const Scene& scene, const ClothPlacement& placement) {
  auto result = placeCloth(scene, restOf(scene), placement);
  EXPECT_TRUE(result.ok()) << result.error();
  return result.ok() ? *result : scene;
}

// squareOverGround with the viewer's pins, as Simulation::currentScene gives them: every one
// with its target. One at its vertex (3), one dragged 0.1 m off it (40), and a point mass given
// by position (at vertex 25).
Scene pinnedSquare() {
  Scene scene = squareOverGround();
  const Positions rest = restOf(scene);
  PinSpec still, dragged;
  still.vertex = 3;
  still.target = rest.row(3).transpose();
  dragged.vertex = 40;
  dragged.target = rest.row(40).transpose() + Vec3(0.1, 0, 0);
  scene.pins = {still, dragged};
  Scene::PointMass weight;
  weight.where.kind = PinSpec::Kind::Near;
  weight.where.point = rest.row(25).transpose();
  weight.mass = 0.05;
  scene.pointMasses = {weight};
  return scene;
}

}  // namespace

TEST(Placement, TurnsAndScalesAboutTheClothsCentre) {
  const Scene scene = squareOverGround();
  const Positions before = restOf(scene);
  // Stood up (no rotation: the generator's x-y plane) at twice the size: 2 m tall about 1 m up
  // would reach below the ground, so at 1.5 times.
  const Positions after = restOf(placed(scene, {Vec3(0, 0, 0), 1.5, Vec3::Zero()}));
  EXPECT_LT((centreOf(after) - centreOf(before)).norm(), 1e-12);
  EXPECT_NEAR(extentOf(after).y(), 1.5, 1e-9);
  EXPECT_NEAR(extentOf(after).z(), 0, 1e-9);
  const MeshTopology topology = buildTopology(buildClothModel(scene)->mesh);
  for (const auto& e : topology.edges)
    EXPECT_NEAR((after.row(e[1]) - after.row(e[0])).norm(),
                1.5 * (before.row(e[1]) - before.row(e[0])).norm(), 1e-12);
  // A move moves the centre by as much.
  const Positions moved = restOf(placed(scene, {Vec3(-90, 0, 0), 1, Vec3(0.3, 0.5, -0.2)}));
  EXPECT_LT((centreOf(moved) - centreOf(before) - Vec3(0.3, 0.5, -0.2)).norm(), 1e-12);
}

TEST(Placement, PinsAndPointMassesMoveWithTheCloth) {
  const Scene scene = pinnedSquare();
  const Positions rest = restOf(scene);
  const PinSpec dragged = scene.pins[1];

  const Scene turned = placed(scene, {Vec3(-60, 35, 10), 2, Vec3(0, 0.5, 0)});
  auto model = buildClothModel(turned);
  ASSERT_TRUE(model.ok()) << model.error();
  const Positions& after = model->mesh.positions;
  ASSERT_EQ(model->pins.size(), 2u);
  EXPECT_EQ(model->pins[0].first, 3);
  EXPECT_LT((model->pins[0].second - after.row(3).transpose()).norm(),
            1e-15);  // still at its vertex
  EXPECT_FALSE(turned.pins[0].target.has_value());
  // The dragged pin keeps its place relative to the cloth: 0.2 m off (scaled), as far from the
  // still pin's vertex as before, times two.
  EXPECT_NEAR((model->pins[1].second - after.row(40).transpose()).norm(), 0.2, 1e-12);
  EXPECT_NEAR((model->pins[1].second - after.row(3).transpose()).norm(),
              2 * (*dragged.target - rest.row(3).transpose()).norm(), 1e-12);
  ASSERT_EQ(model->pointMasses.size(), 1u);
  EXPECT_EQ(model->pointMasses[0].first, 25);
}

TEST(Placement, AClothPlacedThroughTheGroundIsLiftedOntoIt) {
  const Scene scene = squareOverGround();
  // Stood up 3 m tall about its centre 1 m up: 0.5 m of it would be under the ground.
  const Scene standing = placed(scene, {Vec3(0, 0, 0), 3, Vec3::Zero()});
  const Positions after = restOf(standing);
  EXPECT_NEAR(after.col(1).minCoeff(), scene.sim.thickness, 1e-12);
  EXPECT_NEAR(extentOf(after).y(), 3, 1e-9);
  EXPECT_TRUE(Simulation::create(standing).ok());
  // Without the ground it stays where it was put.
  Scene noGround = scene;
  noGround.obstacles.clear();
  EXPECT_NEAR(restOf(placed(noGround, {Vec3(0, 0, 0), 3, Vec3::Zero()})).col(1).minCoeff(), 1 - 1.5,
              1e-9);
  // Another obstacle is not moved round: the cloth is refused inside it, saying so.
  Scene ball = noGround;
  ball.obstacles.push_back(test::sphereObstacle(Vec3(0, 1, 0), 0.2));
  auto inside = Simulation::create(placed(ball, {Vec3(0, 0, 0), 1, Vec3::Zero()}));
  ASSERT_FALSE(inside.ok());
  EXPECT_NE(inside.error().find("obstacles[0] (sphere)"), std::string::npos) << inside.error();
}

TEST(Placement, LayFlatTurnsAStandingOrTiltedSheetLevel) {
  for (const Vec3& tilt : {Vec3(0, 0, 0), Vec3(17, 40, -65), Vec3(-90, 0, 0), Vec3(90, 0, 0)}) {
    Scene scene = squareOverGround();
    scene.transform.rotateDeg = tilt;
    scene.transform.translate = Vec3(0, 2, 0);  // clear of the ground at any turn
    const Positions rest = restOf(scene);
    auto rotation = layFlatRotation(scene, rest);
    if (tilt == Vec3(-90, 0, 0) || tilt == Vec3(90, 0, 0)) {
      // Already level (face up or down): refused, since the placement would only restart it.
      ASSERT_FALSE(rotation.ok()) << "tilted by " << tilt.transpose();
      EXPECT_NE(rotation.error().find(
                    "the cloth already lies level (within 0.01 degrees of across gravity)"),
                std::string::npos)
          << rotation.error();
      continue;
    }
    ASSERT_TRUE(rotation.ok()) << rotation.error();
    const Positions after = restOf(placed(scene, {*rotation, 1, Vec3::Zero()}));
    EXPECT_LT(extentOf(after).y(), 1e-9) << "tilted by " << tilt.transpose();
    EXPECT_LT((centreOf(after) - centreOf(rest)).norm(), 1e-12);
    // Laid flat, it is level: a second lay flat is refused.
    EXPECT_FALSE(layFlatRotation(scene, after).ok()) << "tilted by " << tilt.transpose();
  }
  // A tilt of a tenth of a degree is still laid flat.
  Scene slight = squareOverGround();
  slight.transform.rotateDeg = Vec3(-90.1, 0, 0);
  slight.transform.translate = Vec3(0, 2, 0);
  EXPECT_TRUE(layFlatRotation(slight, restOf(slight)).ok());
  // Level means across gravity, wherever it points.
  Scene sideways = squareOverGround();
  sideways.obstacles.clear();
  sideways.sim.gravity = Vec3(9.81, 0, 0);
  auto rotation = layFlatRotation(sideways, restOf(sideways));
  ASSERT_TRUE(rotation.ok());
  EXPECT_LT(extentOf(restOf(placed(sideways, {*rotation, 1, Vec3::Zero()}))).x(), 1e-9);
}

TEST(Placement, ACurvedClothIsNotLaidFlat) {
  Scene tube = squareOverGround();
  tube.cloth.kind = ClothSource::Kind::Cylinder;
  tube.cloth.radius = 0.2;
  tube.cloth.height = 0.5;
  tube.cloth.columns = 12;
  tube.cloth.rows = 5;
  tube.pins.clear();
  tube.transform = Transform{};
  tube.transform.translate = Vec3(0, 0.5, 0);
  auto rotation = layFlatRotation(tube, restOf(tube));
  ASSERT_FALSE(rotation.ok());
  EXPECT_NE(rotation.error().find("the cloth is not flat (up to 0.2 m off its best-fit plane"),
            std::string::npos)
      << rotation.error();
}

// The viewer's undo of a placement: placeClothAt with the transform the cloth had before puts the
// cloth, its pins (one dragged off its vertex) and its point masses back where they were, lift
// and all; a bad transform is refused, naming the value.
TEST(Placement, APlacementPutBackRestoresTheClothAndWhatMovesWithIt) {
  const Scene scene = pinnedSquare();
  const Positions rest = restOf(scene);
  const PinSpec dragged = scene.pins[1];
  const Scene::PointMass weight = scene.pointMasses[0];

  // Stood up 3 m tall: lifted onto the ground, so not a plain turn about the centre.
  const Scene standing = placed(scene, {Vec3(0, 0, 0), 3, Vec3(0.2, 0, 0)});
  const Positions standingRest = restOf(standing);
  auto back = placeClothAt(standing, standingRest, scene.transform);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_LT((restOf(*back) - rest).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((back->transform.translate - scene.transform.translate).norm(), 1e-15);
  ASSERT_EQ(back->pins.size(), 2u);
  EXPECT_FALSE(back->pins[0].target.has_value());  // at its vertex, wherever that is
  ASSERT_TRUE(back->pins[1].target.has_value());
  EXPECT_LT((*back->pins[1].target - *dragged.target).norm(), 1e-12);
  EXPECT_LT((back->pointMasses[0].where.point - weight.where.point).norm(), 1e-12);
  // And forward again: the same as the placement itself.
  auto again = placeClothAt(*back, restOf(*back), standing.transform);
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_LT((restOf(*again) - standingRest).cwiseAbs().maxCoeff(), 1e-12);

  Transform bad = scene.transform;
  bad.translate.y() = std::nan("");
  auto refused = placeClothAt(standing, standingRest, bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(), "translate[1] is not a finite number");
}

TEST(Placement, BadValuesAreRefusedNamingThem) {
  const Scene scene = squareOverGround();
  const Positions rest = restOf(scene);
  auto error = [&](const ClothPlacement& p) {
    auto result = placeCloth(scene, rest, p);
    return result.ok() ? std::string() : result.error();
  };
  EXPECT_EQ(error({Vec3::Zero(), 0, Vec3::Zero()}), "scale must be between 1e-06 and 1e+06, got 0");
  EXPECT_NE(error({Vec3::Zero(), std::nan(""), Vec3::Zero()}).find("scale"), std::string::npos);
  EXPECT_EQ(error({Vec3(0, INFINITY, 0), 1, Vec3::Zero()}), "rotate_deg[1] is not a finite number");
  EXPECT_EQ(error({Vec3::Zero(), 1, Vec3(0, 0, std::nan(""))}), "move[2] is not a finite number");
}

TEST(Placement, ASavedSceneReadsBackPlacedTheSame) {
  const Scene scene =
      placed(test::builtinScene("hanging", "impulse-nc"), {Vec3(10, 20, 30), 0.7, Vec3(0.1, 0, 0)});
  auto reread = parseScene(sceneToJson(scene), "saved.json", "");
  ASSERT_TRUE(reread.ok()) << reread.error();
  EXPECT_LT((restOf(*reread) - restOf(scene)).cwiseAbs().maxCoeff(), 1e-12);
}

// An OBJ written in the x-y plane and opened as it is stands on edge under gravity along -y:
// unpinned, it gets a warning naming the file and the way to lay it flat; laid flat, pinned, or
// tilted well away from standing, it gets none. standsOnEdge itself: a curved cloth or no
// gravity never stands on edge.
TEST(Placement, AnUnpinnedClothStandingOnEdgeIsWarnedOf) {
  std::string obj;
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 4; ++i)
      obj += "v " + std::to_string(0.3 * i) + " " + std::to_string(0.3 * j) + " 0\n";
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) {
      const int a = 4 * j + i + 1, b = a + 1, c = a + 4, d = a + 5;
      obj += "f " + std::to_string(a) + " " + std::to_string(b) + " " + std::to_string(d) + "\n";
      obj += "f " + std::to_string(a) + " " + std::to_string(d) + " " + std::to_string(c) + "\n";
    }
  const std::string path = test::writeFile("standing_square.obj", obj);
  const auto warned = [](const Scene& scene) {
    auto model = buildClothModel(scene);
    EXPECT_TRUE(model.ok()) << model.error();
    for (const std::string& w : model->warnings)
      if (w.find("stands on edge") != std::string::npos) return w;
    return std::string();
  };
  Scene opened = sceneForObj(path);
  const std::string warning = warned(opened);
  EXPECT_NE(warning.find(path), std::string::npos) << warning;
  EXPECT_NE(warning.find("lay flat"), std::string::npos) << warning;

  Scene flat = opened;
  flat.transform.rotateDeg = Vec3(-90, 0, 0);
  EXPECT_EQ(warned(flat), "");
  Scene tilted = opened;
  tilted.transform.rotateDeg = Vec3(-45, 0, 0);
  EXPECT_EQ(warned(tilted), "");
  Scene pinned = opened;
  pinned.pins.push_back({});  // vertex 0
  EXPECT_EQ(warned(pinned), "");

  const Positions standing = restOf(opened);
  EXPECT_TRUE(standsOnEdge(standing, Vec3(0, -9.81, 0)));
  EXPECT_FALSE(standsOnEdge(standing, Vec3::Zero()));
  EXPECT_FALSE(standsOnEdge(standing, Vec3(0, 0, -9.81)));  // gravity across it: lying flat
  Positions bent = standing;
  for (int i = 0; i < bent.rows(); ++i) bent(i, 2) = 0.3 * bent(i, 0) * bent(i, 0);
  EXPECT_FALSE(standsOnEdge(bent, Vec3(0, -9.81, 0)));
}

namespace {

// A shape in its own units and place, as OBJs come: an ellipsoid `radii` across, 50 units up.
ObjToPlace objOf(const Vec3& radii, const std::string& name) {
  TriangleMesh mesh = makeEllipsoid(radii, 24, 12);
  mesh.positions.rowwise() += Eigen::RowVector3d(7, 50, -3);
  return {std::move(mesh), name};
}

Eigen::AlignedBox3d boundsOf(const Obstacle& obstacle) {
  auto box = obstacleBounds(obstacle);
  EXPECT_TRUE(box.has_value());
  return box.value_or(Eigen::AlignedBox3d());
}

// Each of `placed` against every other and every one of `others`: apart by at least `gap` along
// some axis.
void expectApart(const std::vector<Eigen::AlignedBox3d>& boxes, double gap) {
  for (size_t i = 0; i < boxes.size(); ++i)
    for (size_t j = i + 1; j < boxes.size(); ++j) {
      double apart = -1e300;
      for (int d = 0; d < 3; ++d)
        apart = std::max(
            {apart, boxes[j].min()[d] - boxes[i].max()[d], boxes[i].min()[d] - boxes[j].max()[d]});
      EXPECT_GE(apart, gap - 1e-9) << "boxes " << i << " and " << j;
    }
}

const Vec3 kClothLo(-0.5, 1.0, -0.25), kClothHi(0.5, 1.0, 0.25);  // 1 m along x, 0.5 m along z

}  // namespace

TEST(ObstaclesUnderCloth, OneIsScaledTo60PercentAndCentredUnderTheCloth) {
  auto placed =
      meshObstaclesUnderCloth({objOf(Vec3(10, 4, 6), "a.obj")}, kClothLo, kClothHi, 0.4, {}, false);
  ASSERT_EQ(placed.size(), 1u);
  const Eigen::AlignedBox3d box = boundsOf(placed[0].obstacle);
  EXPECT_NEAR(box.sizes().maxCoeff(), 0.6, 1e-9);  // 60% of the cloth's 1 m
  EXPECT_NEAR(placed[0].scale, 0.03, 1e-9);        // 20 units across
  EXPECT_NEAR(box.center().x(), 0, 1e-9);
  EXPECT_NEAR(box.center().z(), 0, 1e-9);
  EXPECT_NEAR(box.max().y(), 0.98, 1e-9);  // its top 2 cm below the cloth
  EXPECT_EQ(placed[0].obstacle.friction, 0.4);
  EXPECT_EQ(placed[0].obstacle.meshSpec["transform"]["scale"], placed[0].scale);
}

TEST(ObstaclesUnderCloth, SeveralStandInARowAlongTheClothsLongerSide) {
  for (bool alongZ : {false, true}) {
    SCOPED_TRACE(alongZ ? "the cloth longer along z" : "the cloth longer along x");
    Vec3 lo = kClothLo, hi = kClothHi;
    if (alongZ) std::swap(lo.x(), lo.z()), std::swap(hi.x(), hi.z());
    const int along = alongZ ? 2 : 0, across = alongZ ? 0 : 2;
    auto placed =
        meshObstaclesUnderCloth({objOf(Vec3(10, 4, 6), "a.obj"), objOf(Vec3(1, 3, 1), "b.obj"),
                                 objOf(Vec3(5, 5, 5), "c.obj")},
                                lo, hi, 0.3, {}, false);
    ASSERT_EQ(placed.size(), 3u);
    std::vector<Eigen::AlignedBox3d> boxes;
    for (const PlacedObstacle& p : placed) boxes.push_back(boundsOf(p.obstacle));
    for (size_t i = 0; i < boxes.size(); ++i) {
      EXPECT_NEAR(boxes[i].sizes().maxCoeff(), 0.2, 1e-9);  // 60% of a third of the cloth
      EXPECT_NEAR(boxes[i].max().y(), 0.98, 1e-9);
      EXPECT_NEAR(boxes[i].center()[across], 0, 1e-9);
      // Under the cloth, in the order given.
      EXPECT_GE(boxes[i].min()[along], lo[along]);
      EXPECT_LE(boxes[i].max()[along], hi[along]);
      if (i > 0) {
        EXPECT_GT(boxes[i].center()[along], boxes[i - 1].center()[along]);
      }
    }
    expectApart(boxes, 0.02);
  }
}

TEST(ObstaclesUnderCloth, OneAddedWhereAnotherStandsGoesBesideIt) {
  Obstacle ground;  // a plane has no side to stand beside: it is passed by (both stand on it)
  std::vector<Obstacle> present;
  present.push_back(meshObstaclesUnderCloth({objOf(Vec3(10, 4, 6), "a.obj")}, kClothLo, kClothHi,
                                            0.3, {ground}, false)[0]
                        .obstacle);
  present.push_back(ground);
  Obstacle far;  // nowhere near: passed by
  far.type = Obstacle::Type::Sphere;
  far.point = Vec3(30, 0, 0);
  far.radius = 1;
  present.push_back(far);
  auto placed = meshObstaclesUnderCloth({objOf(Vec3(5, 5, 5), "b.obj")}, kClothLo, kClothHi, 0.3,
                                        present, false);
  ASSERT_EQ(placed.size(), 1u);
  const Eigen::AlignedBox3d first = boundsOf(present[0]), added = boundsOf(placed[0].obstacle);
  EXPECT_NEAR(added.sizes().maxCoeff(), 0.6, 1e-9);  // the size it would have alone
  EXPECT_NEAR(added.min().y(), 0, 1e-9);             // on the ground, as the first one
  EXPECT_NEAR(first.min().y(), 0, 1e-9);
  EXPECT_NEAR(added.center().z(), 0, 1e-9);
  // Beside it along the cloth's longer side, 2 cm away: the least move that clears it.
  const double gapRight = added.min().x() - first.max().x();
  const double gapLeft = first.min().x() - added.max().x();
  EXPECT_NEAR(std::max(gapRight, gapLeft), 0.02, 1e-9);
  // A table under the cloth: the OBJ stands beside it rather than inside it.
  Obstacle table;
  table.type = Obstacle::Type::Box;
  table.point = Vec3(0.1, 0.6, 0);
  table.halfExtents = Vec3(0.4, 0.39, 0.3);
  auto besideTable = meshObstaclesUnderCloth({objOf(Vec3(5, 5, 5), "b.obj")}, kClothLo, kClothHi,
                                             0.3, {table}, false);
  const Eigen::AlignedBox3d box = boundsOf(besideTable[0].obstacle);
  EXPECT_NEAR(box.max().x(), table.point.x() - table.halfExtents.x() - 0.02,
              1e-9);  // the nearer side
  EXPECT_FALSE(box.intersects(*obstacleBounds(table)));
}

// An OBJ put under a free cloth over a ground stands on it: a bare OBJ's ground lies half the
// cloth's diagonal below it, and a mesh put 2 cm below the cloth stood 9 cm above that ground on a
// 1 m square. Only planes facing up count, and a ground that would cut the mesh leaves it in
// place. Under a pinned cloth, which may hang clear of the ground (`hanging`'s did, with the mesh
// on the ground), it stays 2 cm below the cloth.
TEST(ObstaclesUnderCloth, OneStandsOnTheGroundBelowIt) {
  Obstacle ground;
  ground.point = Vec3(0, 0.1, 0);
  Obstacle lower = ground;  // a lower ground is not the one it stands on
  lower.point.y() = -1;
  Obstacle slope;  // tilted by 30 degrees: not a ground
  slope.point = Vec3(0, 0.35, 0);
  slope.normal = Vec3(0.5, std::sqrt(0.75), 0);
  auto placed =
      meshObstaclesUnderCloth({objOf(Vec3(10, 4, 6), "a.obj"), objOf(Vec3(1, 3, 1), "b.obj")},
                              kClothLo, kClothHi, 0.3, {lower, ground, slope}, false);
  ASSERT_EQ(placed.size(), 2u);
  const double lowest[] = {50 - 4, 50 - 3};  // the ellipsoids' lowest points in their own units
  for (size_t i = 0; i < placed.size(); ++i) {
    const PlacedObstacle& p = placed[i];
    const Eigen::AlignedBox3d box = boundsOf(p.obstacle);
    EXPECT_NEAR(box.min().y(), 0.1, 1e-9);
    EXPECT_NEAR(box.sizes().maxCoeff(), 0.3, 1e-9);  // 60% of half the cloth, as without it
    // A saved scene puts it in the same place.
    EXPECT_NEAR(p.obstacle.meshSpec["transform"]["translate"][1].get<double>(),
                0.1 - p.scale * lowest[i], 1e-9);
  }
  // A ground 0.5 m up would cut a 0.6 m mesh put 2 cm under the cloth: it stays there.
  Obstacle high = ground;
  high.point.y() = 0.5;
  const Eigen::AlignedBox3d cut =
      boundsOf(meshObstaclesUnderCloth({objOf(Vec3(5, 5, 5), "c.obj")}, kClothLo, kClothHi, 0.3,
                                       {high}, false)[0]
                   .obstacle);
  EXPECT_NEAR(cut.max().y(), 0.98, 1e-9);
  const Eigen::AlignedBox3d underPinned =
      boundsOf(meshObstaclesUnderCloth({objOf(Vec3(5, 5, 5), "c.obj")}, kClothLo, kClothHi, 0.3,
                                       {ground}, true)[0]
                   .obstacle);
  EXPECT_NEAR(underPinned.max().y(), 0.98, 1e-9);
}
