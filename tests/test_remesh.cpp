// strain-limit-remesh: the strain limits' math (methods 5.3), the remesher's invariants, and the
// solver in scenes.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "sim/generators.h"
#include "sim/grab.h"
#include "sim/material.h"
#include "sim/metrics.h"
#include "sim/obj_io.h"
#include "sim/scene_library.h"
#include "sim/self_collision.h"
#include "sim/snapshot.h"
#include "sim/solvers/remesh/adaptive_mesh.h"
#include "sim/solvers/remesh/remesh_solver.h"
#include "sim/solvers/remesh/strain_limit.h"
#include "test_util.h"

namespace clothlab {
namespace {

FaceRest someFace() { return faceRest({0.1, 0.01}, {0.03, 0.08}); }

TEST(StrainLimit, ARigidlyMovedTriangleHasUnitStretches) {
  const FaceRest rest = someFace();
  const Eigen::Matrix3d R = Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized()).toRotationMatrix();
  const Vec3 shift(0.3, -1, 2);
  auto place = [&](const Eigen::Vector2d& u) { return Vec3(R * Vec3(u.x(), u.y(), 0) + shift); };
  const FaceStrain strain =
      faceStrain(rest, place({0, 0}), place({0.1, 0.01}), place({0.03, 0.08}));
  for (int direction = 0; direction < 4; ++direction)
    EXPECT_NEAR(strain.stretch(direction), 1, 1e-12);
  EXPECT_EQ(faceLimitViolation(strain, StrainLimits{}), 0);
  EXPECT_NEAR(rest.area, 0.5 * (0.1 * 0.08 - 0.01 * 0.03), 1e-15);
}

// A stretched and sheared face.
std::array<Vec3, 3> deformedCorners() {
  return {Vec3(0, 0, 0), Vec3(0.107, 0.02, 0.01), Vec3(0.025, 0.083, -0.004)};
}

// The rows' gradients +-sqrt(a) c_n u and the stretch's curvature c_n c_m (I - u u^T) / |F d|
// (strain_limit.h) against central differences of the values and of those gradients.
TEST(StrainLimit, GradientsAndCurvaturesMatchFiniteDifferences) {
  const FaceRest rest = someFace();
  const StrainLimits limits{-0.01, 0.02, -0.03, 0.04, -0.05, 0.06};
  const auto corners = deformedCorners();
  const double root = std::sqrt(rest.area);
  auto directionsAt = [&](const std::array<Vec3, 3>& at) {
    std::array<LimitDirection, 4> out;
    faceLimitDirections(rest, faceStrain(rest, at[0], at[1], at[2]), limits, out);
    return out;
  };
  // d |F d| / dx_n, from the closed form.
  auto lengthGradient = [](const LimitDirection& limit, int n) {
    return Vec3(limit.along(n) * limit.unit);
  };
  const auto directions = directionsAt(corners);
  const double step = 1e-7;
  double worstGradient = 0, largestGradient = 0, worstCurvature = 0, largestCurvature = 0;
  for (int m = 0; m < 3; ++m)
    for (int c = 0; c < 3; ++c) {
      auto up = corners, down = corners;
      up[m][c] += step;
      down[m][c] -= step;
      const auto plus = directionsAt(up), minus = directionsAt(down);
      for (int d = 0; d < 4; ++d) {
        const Vec3 gradient = root * lengthGradient(directions[d], m);
        const double upper = (plus[d].upper - minus[d].upper) / (2 * step);
        const double lower = (plus[d].lower - minus[d].lower) / (2 * step);
        worstGradient =
            std::max({worstGradient, std::abs(upper - gradient(c)), std::abs(lower + gradient(c))});
        largestGradient = std::max(largestGradient, std::abs(upper));
        // Column (m, c) of the curvature, block (n, m), from the gradients' differences.
        const Eigen::Matrix3d across =
            (Eigen::Matrix3d::Identity() - directions[d].unit * directions[d].unit.transpose()) /
            directions[d].length;
        for (int n = 0; n < 3; ++n) {
          const Vec3 numeric =
              (lengthGradient(plus[d], n) - lengthGradient(minus[d], n)) / (2 * step);
          const Vec3 closed = directions[d].along(n) * directions[d].along(m) * across.col(c);
          worstCurvature = std::max(worstCurvature, (numeric - closed).cwiseAbs().maxCoeff());
          largestCurvature = std::max(largestCurvature, numeric.cwiseAbs().maxCoeff());
        }
      }
    }
  EXPECT_GT(largestGradient, 0.01);
  EXPECT_LT(worstGradient, 1e-6 * largestGradient);
  EXPECT_GT(largestCurvature, 1);
  EXPECT_LT(worstCurvature, 1e-5 * largestCurvature);
}

// The line search's values alone are the directions' rows' values, upper then lower.
TEST(StrainLimit, ValuesAloneAreTheRowsValues) {
  const FaceRest rest = someFace();
  const StrainLimits limits{-0.01, 0.02, -0.03, 0.04, -0.05, 0.06};
  const auto corners = deformedCorners();
  const FaceStrain strain = faceStrain(rest, corners[0], corners[1], corners[2]);
  std::array<LimitDirection, 4> directions;
  faceLimitDirections(rest, strain, limits, directions);
  std::array<double, 8> values;
  faceLimitValues(rest, strain, limits, values);
  for (int d = 0; d < 4; ++d) {
    EXPECT_DOUBLE_EQ(values[2 * d], directions[d].upper) << "direction " << d;
    EXPECT_DOUBLE_EQ(values[2 * d + 1], directions[d].lower) << "direction " << d;
    EXPECT_NEAR(directions[d].length, strain.stretch(d), 1e-15) << "direction " << d;
  }
  EXPECT_GT(*std::max_element(values.begin(), values.end()), 0);  // some limit is exceeded
}

// A row's penalty: max(0, s)^2 / 2 without a band; with one, zero below it, the square's value
// (plus a constant) and slope above it, and in between a cubic whose value, slope and curvature
// meet both ends, with its slope the derivative of its value and its curvature that of its slope.
TEST(StrainLimit, TheRowPenaltyIsTheSquareOfThePullSmoothedOverItsBand) {
  for (double s : {-0.3, -1e-9, 0.0, 1e-9, 0.2, 3.0}) {
    const RowPenalty plain = rowPenalty(s, 0);
    EXPECT_DOUBLE_EQ(plain.value, s > 0 ? 0.5 * s * s : 0) << s;
    EXPECT_DOUBLE_EQ(plain.slope, std::max(s, 0.0)) << s;
    EXPECT_DOUBLE_EQ(plain.curvature, s > 0 ? 1 : 0) << s;
  }
  const double band = 0.25;
  const RowPenalty below = rowPenalty(-band - 1e-3, band), above = rowPenalty(band + 0.5, band);
  EXPECT_EQ(below.value + below.slope + below.curvature, 0);
  EXPECT_DOUBLE_EQ(above.slope, band + 0.5);
  EXPECT_DOUBLE_EQ(above.curvature, 1);
  EXPECT_NEAR(above.value - rowPenalty(band + 0.5, 0).value, band * band / 6, 1e-15);
  for (double end : {-band, band}) {
    const RowPenalty in = rowPenalty(end * (1 - 1e-9), band),
                     out = rowPenalty(end * (1 + 1e-9), band);
    EXPECT_NEAR(in.value, out.value, 1e-9) << end;
    EXPECT_NEAR(in.slope, out.slope, 1e-8) << end;
    EXPECT_NEAR(in.curvature, out.curvature, 1e-8) << end;
  }
  const double h = 1e-6;
  for (int k = -9; k <= 9; ++k) {
    const double s = 0.1 * k * band;
    const RowPenalty at = rowPenalty(s, band), up = rowPenalty(s + h, band),
                     down = rowPenalty(s - h, band);
    EXPECT_NEAR(at.slope, (up.value - down.value) / (2 * h), 1e-8) << s;
    EXPECT_NEAR(at.curvature, (up.slope - down.slope) / (2 * h), 1e-7) << s;
    EXPECT_GT(at.curvature, 0) << "the model sees the row coming before it pulls: " << s;
  }
}

// Methods 5.3's check 4: no directional stretch lies outside the principal stretches (the
// singular values of F).
TEST(StrainLimit, DirectionalStretchesLieBetweenThePrincipalOnes) {
  std::mt19937 random(3);
  std::uniform_real_distribution<double> jitter(-0.03, 0.03);
  const FaceRest rest = someFace();
  for (int trial = 0; trial < 50; ++trial) {
    auto corners = deformedCorners();
    for (auto& corner : corners)
      for (int c = 0; c < 3; ++c) corner[c] += jitter(random);
    const FaceStrain strain = faceStrain(rest, corners[0], corners[1], corners[2]);
    const Eigen::Vector2d s =
        Eigen::JacobiSVD<Eigen::Matrix<double, 3, 2>>(strain.F).singularValues();
    for (int direction = 0; direction < 4; ++direction) {
      EXPECT_LE(s(1), strain.stretch(direction) + 1e-12);
      EXPECT_GE(s(0), strain.stretch(direction) - 1e-12);
    }
  }
}

TEST(StrainLimit, EachLimitHoldsItsOwnDirection) {
  // A face stretched by 3% along the warp only: the warp's limit of 1% binds, the weft's not,
  // and the bias sees half of it.
  const FaceRest rest = faceRest({0.1, 0}, {0, 0.1});
  const FaceStrain strain = faceStrain(rest, Vec3(0, 0, 0), Vec3(0.103, 0, 0), Vec3(0, 0.1, 0));
  EXPECT_NEAR(faceLimitViolation(strain, {-0.01, 0.01, -0.5, 0.5, -0.5, 0.5}), 0.02, 1e-9);
  EXPECT_NEAR(faceLimitViolation(strain, {-0.5, 0.5, -0.01, 0.01, -0.5, 0.5}), 0, 1e-9);
  EXPECT_NEAR(faceLimitViolation(strain, {-0.5, 0.5, -0.5, 0.5, -0.005, 0.005}),
              std::sqrt((1.03 * 1.03 + 1) / 2) - 1 - 0.005, 1e-9);
  // Compressed by 3% along the weft: its lower limit binds.
  const FaceStrain squeezed = faceStrain(rest, Vec3(0, 0, 0), Vec3(0.1, 0, 0), Vec3(0, 0.097, 0));
  EXPECT_NEAR(faceLimitViolation(squeezed, {-0.5, 0.5, -0.01, 0.01, -0.5, 0.5}), 0.02, 1e-9);
}

// A flat sheet's adaptive mesh (a regular grid, so that the test can bend it cleanly).
struct Sheet {
  ClothModel cloth;
  AdaptiveMesh mesh;
};
Sheet sheet(int columns = 9) {
  Scene scene = test::hangingScene(ClothSource::Kind::Grid, columns, "strain-limit-remesh");
  auto cloth = buildClothModel(scene);
  EXPECT_TRUE(cloth.ok()) << cloth.error();
  auto mesh = AdaptiveMesh::fromCloth(cloth->mesh, *cloth->flatCoords);
  EXPECT_TRUE(mesh.ok()) << mesh.error();
  return {std::move(*cloth), std::move(*mesh)};
}

double materialArea(const AdaptiveMesh& mesh) {
  double sum = 0;
  for (const FaceRest& face : mesh.faceRests()) sum += face.area;
  return sum;
}

// The mesh is valid: every face has positive material area, every node is used, every edge has
// one or two faces, and its Euler characteristic is `euler`.
void expectValid(const AdaptiveMesh& mesh, int euler) {
  std::vector<int> used(mesh.nodeCount(), 0);
  for (int f = 0; f < mesh.faceCount(); ++f) {
    EXPECT_GT(mesh.faceRests()[f].area, 0) << "face " << f;
    for (int k : mesh.restMesh().triangles[f]) ++used[k];
  }
  for (int i = 0; i < mesh.nodeCount(); ++i) EXPECT_GT(used[i], 0) << "node " << i;
  const MeshTopology& topology = mesh.topology();
  EXPECT_EQ(topology.nonManifoldEdgeCount, 0);
  EXPECT_EQ(mesh.nodeCount() - topology.edgeCount() + mesh.faceCount(), euler);
}

// The sheet laid out by its material coordinates in the plane z = 0 and folded by `angle` out of
// it along the line across its middle (u_x = the mean u_x), the crease.
double creaseAt(const AdaptiveMesh& mesh) { return mesh.material().col(0).mean(); }
Positions folded(const AdaptiveMesh& mesh, double angle) {
  const double crease = creaseAt(mesh);
  Positions x(mesh.nodeCount(), 3);
  for (int i = 0; i < x.rows(); ++i) {
    const double across = mesh.material()(i, 0) - crease;
    x.row(i) = across > 0 ? Eigen::RowVector3d(crease + across * std::cos(angle),
                                               mesh.material()(i, 1), across * std::sin(angle))
                          : Eigen::RowVector3d(mesh.material()(i, 0), mesh.material()(i, 1), 0);
  }
  return x;
}

TEST(Remesh, RefinesAFoldAndKeepsTheMeshValid) {
  Sheet s = sheet();
  const AdaptiveMesh& base = s.mesh;
  const int euler = base.nodeCount() - base.topology().edgeCount() + base.faceCount();
  Positions x = folded(base, 1.2);
  Positions v = Positions::Zero(x.rows(), 3);
  RemeshSizing sizing;
  sizing.minEdge = 0.02;
  RemeshCounts counts;
  const AdaptiveMesh refined = base.remeshed(x, v, sizing, counts);
  EXPECT_GT(counts.splits, 10);
  EXPECT_GT(refined.nodeCount(), base.nodeCount());
  EXPECT_EQ(x.rows(), refined.nodeCount());
  expectValid(refined, euler);
  EXPECT_NEAR(materialArea(refined), materialArea(base), 1e-12);
  // The cloth's vertices keep their rows and material coordinates.
  EXPECT_EQ(refined.preservedCount(), base.nodeCount());
  EXPECT_TRUE(refined.material().topRows(base.nodeCount()).isApprox(base.material()));
  EXPECT_TRUE(x.topRows(base.nodeCount()).isApprox(folded(base, 1.2)));
  // The new nodes lie along the crease, within two of the sheet's edges of it.
  const double spacing = 1.0 / 8;
  int nearCrease = 0;
  for (int i = base.nodeCount(); i < refined.nodeCount(); ++i)
    nearCrease += std::abs(refined.material()(i, 0) - creaseAt(base)) < 2 * spacing;
  EXPECT_GT(nearCrease, 0.8 * (refined.nodeCount() - base.nodeCount()));
}

TEST(Remesh, CoarsensBackToTheClothsMeshOnceFlat) {
  Sheet s = sheet();
  const AdaptiveMesh& base = s.mesh;
  Positions x = folded(base, 1.2), v = Positions::Zero(base.nodeCount(), 3);
  RemeshSizing sizing;
  RemeshCounts counts;
  const AdaptiveMesh refined = base.remeshed(x, v, sizing, counts);
  ASSERT_GT(refined.nodeCount(), base.nodeCount());
  // Unfolded: the added nodes go again.
  Positions flat = folded(refined, 0), still = Positions::Zero(refined.nodeCount(), 3);
  RemeshCounts back;
  const AdaptiveMesh coarse = refined.remeshed(flat, still, sizing, back);
  EXPECT_GT(back.collapses, 0);
  EXPECT_EQ(coarse.nodeCount(), base.nodeCount());
  EXPECT_EQ(coarse.faceCount(), base.faceCount());
  EXPECT_NEAR(materialArea(coarse), materialArea(base), 1e-12);
}

// The sheet folded by 2.5 rad along a line between two columns of the grid's vertices (grid of
// 9 columns), through the midpoints of the edges that cross it, where the refinement puts its
// nodes.
Positions sharplyFolded(const AdaptiveMesh& mesh, const AdaptiveMesh& base) {
  const double crease = base.material().col(0).minCoeff() + 4.5 / 8;
  Positions x(mesh.nodeCount(), 3);
  for (int i = 0; i < x.rows(); ++i) {
    const double across = mesh.material()(i, 0) - crease;
    x.row(i) << std::min(across, 0.0) + crease + std::max(across, 0.0) * std::cos(2.5),
        mesh.material()(i, 1), std::max(across, 0.0) * std::sin(2.5);
  }
  return x;
}

TEST(Remesh, EdgeStrainIsMeasuredOnTheRefinedMeshsEdges) {
  Sheet s = sheet();
  const AdaptiveMesh& base = s.mesh;
  EXPECT_LT(base.fineMesh().maxEdgeStrain(folded(base, 0)), 1e-12);
  Positions x = sharplyFolded(base, base), v = Positions::Zero(base.nodeCount(), 3);
  RemeshCounts counts;
  const AdaptiveMesh refined = base.remeshed(x, v, RemeshSizing{}, counts);
  ASSERT_GT(counts.splits, 0);
  // Folding is an isometry: every edge of the refined mesh keeps its length. The cloth's own
  // edges across the crease are no edges of it, and their chords are up to two thirds shorter.
  x = sharplyFolded(refined, base);
  EXPECT_LT(refined.fineMesh().maxEdgeStrain(x), 1e-12);
  const Positions surface = x.topRows(refined.preservedCount());
  EXPECT_GT(maxEdgeStrain(s.cloth.mesh, s.cloth.topology, surface), 0.3);
  // Stretched by 2% along the world's x axis (the unfolded half's warp): its edges by up to 2%.
  x.col(0) *= 1.02;
  EXPECT_NEAR(refined.fineMesh().maxEdgeStrain(x), 0.02, 1e-3);
}

TEST(Remesh, CollapsesDoNotCutAcrossAFold) {
  Sheet s = sheet();
  const AdaptiveMesh& base = s.mesh;
  Positions x = sharplyFolded(base, base), v = Positions::Zero(base.nodeCount(), 3);
  RemeshCounts counts;
  const AdaptiveMesh refined = base.remeshed(x, v, RemeshSizing{}, counts);
  // The fold stays, but the sizing no longer asks for it to be refined.
  RemeshSizing coarser;
  coarser.refineAngle = 3.1;
  const auto coarsened = [&](double maxViolation, double& strain) {
    coarser.maxNewFaceViolation = maxViolation;
    Positions y = sharplyFolded(refined, base), w = Positions::Zero(y.rows(), 3);
    RemeshCounts back;
    const AdaptiveMesh out = refined.remeshed(y, w, coarser, back);
    EXPECT_GT(back.collapses, 0);
    strain = out.fineMesh().maxEdgeStrain(y);
    return out.nodeCount();
  };
  double held = 0, free = 0;
  const int heldNodes = coarsened(1e-3, held),
            freeNodes = coarsened(std::numeric_limits<double>::infinity(), free);
  // The nodes along the crease stay, and every face keeps its shape.
  EXPECT_LT(held, 1e-3);
  EXPECT_GT(heldNodes, freeNodes);
  // Without the bound, faces cut across the crease: edges up to two thirds shorter.
  EXPECT_GT(free, 0.3);
}

TEST(Remesh, StopsSplittingAtTheNodeCap) {
  Sheet s = sheet();
  Positions x = folded(s.mesh, 1.5), v = Positions::Zero(s.mesh.nodeCount(), 3);
  RemeshSizing sizing;
  sizing.minEdge = 1e-3;
  sizing.maxNodes = s.mesh.nodeCount() + 20;
  RemeshCounts counts;
  const AdaptiveMesh refined = s.mesh.remeshed(x, v, sizing, counts);
  EXPECT_TRUE(counts.capped);
  EXPECT_LE(refined.nodeCount(), sizing.maxNodes);
}

// The solver in scenes.

// A 0.6 m square of 13 x 13 vertices pinned at its top corners, remeshed every `interval` steps.
Scene remeshHanging(int interval = 8) {
  Scene scene = test::hangingScene(ClothSource::Kind::Grid, 13, "strain-limit-remesh");
  scene.cloth.width = scene.cloth.height = 0.6;
  scene.solverParams = {{"remesh_interval", interval}};
  return scene;
}

// remeshHanging's sheet unpinned and dropped from 0.6 m in steps of `dt` onto a sphere (centre
// kDrapeCentre, radius kDrapeRadius), its mesh refined down to edges of `minEdge`.
const Vec3 kDrapeCentre(0, 0.3, 0);
constexpr double kDrapeRadius = 0.15;
Scene remeshSphereDrape(double dt, double minEdge) {
  Scene scene = remeshHanging();
  scene.pins.clear();
  scene.transform.translate = Vec3(0, 0.6, 0);
  scene.sim.dt = dt;
  scene.obstacles.push_back(test::sphereObstacle(kDrapeCentre, kDrapeRadius));
  scene.solverParams = {{"min_edge", minEdge}};
  return scene;
}

TEST(RemeshSolver, AHangingSheetHoldsItsLimitsWhileItsMeshAdapts) {
  auto simulation = test::makeSimulation(remeshHanging());
  ASSERT_TRUE(simulation);
  const auto& solver = dynamic_cast<const RemeshSolver&>(simulation->solver());
  const int base = simulation->cloth().mesh.vertexCount();
  const double tolerance = solver.params()["tolerance"].get<double>();
  int most = base, above = 0, collapses = 0;
  for (int step = 0; step < 400; ++step) {
    ASSERT_FALSE(simulation->step()) << "step " << step;
    const StepStats& stats = simulation->lastStats();
    above += stats.converged ? 0 : 1;
    EXPECT_NEAR(reportedConstraintError(stats), stats.maxPositionError, 0);
    most = std::max(most, solver.mesh().nodeCount());
    collapses += stats.extra["collapses"].get<int>();
    EXPECT_EQ(stats.maxEdgeStrain, solver.mesh().fineMesh().maxEdgeStrain(solver.nodes()));
    // The surface is the cloth's vertices, the first of the nodes.
    ASSERT_EQ(simulation->surface().rows(), base);
    ASSERT_TRUE(simulation->surface().isApprox(solver.nodes().topRows(base)));
    for (const auto& [vertex, target] : simulation->pins())
      ASSERT_LT((simulation->surface().row(vertex) - target.transpose()).norm(), 1e-12);
  }
  EXPECT_LE(above, 8) << "of 400 steps above the tolerance " << tolerance;
  EXPECT_GT(most, base + 20) << "the swinging sheet's folds were refined";
  EXPECT_GT(collapses, 0) << "and coarsened again";
  // Within the limits (1% along warp and weft, 5% along the bias), every edge keeps its length
  // within about the bias limit.
  EXPECT_LT(
      maxEdgeStrain(simulation->cloth().mesh, simulation->cloth().topology, simulation->surface()),
      0.06);
}

// What the viewer draws (sim/solver.h FineMesh, Snapshot::fine): the adaptive mesh, its nodes
// where the solver has them, the cloth's vertices first; each node's place in the cloth's flat
// rest state; its edges' strain against their material lengths, as the stats report it. One
// object per mesh: the same while the mesh stays, a new one after a remesh changes it.
TEST(RemeshSolver, ItsFineMeshIsTheAdaptiveMeshInTheClothsFlatCoordinates) {
  auto simulation = test::makeSimulation(remeshHanging(4));
  ASSERT_TRUE(simulation);
  const auto& solver = dynamic_cast<const RemeshSolver&>(simulation->solver());
  const ClothModel& cloth = simulation->cloth();
  const int base = cloth.mesh.vertexCount();
  Positions nodes;
  std::shared_ptr<const FineMesh> fine = solver.fineMesh(nodes), last = fine;
  ASSERT_TRUE(fine);
  int kept = 0, renewed = 0;
  for (int step = 0; step < 300 && fine->nodeCount() <= base + 20; ++step) {
    ASSERT_FALSE(simulation->step());
    fine = solver.fineMesh(nodes);
    const bool same = solver.mesh().restMesh().triangles == last->triangles;
    (fine == last ? kept : renewed) += 1;
    if (fine != last) {
      EXPECT_FALSE(same && fine->nodeCount() == last->nodeCount()) << step;
    }
    last = fine;
  }
  ASSERT_GT(fine->nodeCount(), base + 20) << "the sheet's folds were refined";
  EXPECT_GT(kept, 0);
  EXPECT_GT(renewed, 0);
  EXPECT_EQ(nodes, solver.nodes());
  EXPECT_EQ(fine->triangles, solver.mesh().restMesh().triangles);
  ASSERT_EQ(fine->flat.rows(), nodes.rows());
  ASSERT_EQ(fine->rest.rows(), nodes.rows());
  EXPECT_EQ(fine->flat.topRows(base), cloth.flatCoords->coords);
  // The added nodes lie inside the sheet's flat rest state, on its rest plane.
  const Eigen::RowVector2d lo = cloth.flatCoords->coords.colwise().minCoeff(),
                           hi = cloth.flatCoords->coords.colwise().maxCoeff();
  for (int i = base; i < fine->nodeCount(); ++i) {
    EXPECT_TRUE((fine->flat.row(i).array() >= lo.array() - 1e-12).all() &&
                (fine->flat.row(i).array() <= hi.array() + 1e-12).all())
        << "node " << i;
  }
  const StepStats& stats = simulation->lastStats();
  EXPECT_EQ(fine->maxEdgeStrain(nodes), stats.maxEdgeStrain);
  EXPECT_EQ(fine->maxEdgeStrain(nodes), solver.mesh().fineMesh().maxEdgeStrain(nodes));
  EXPECT_EQ(fine->nodeStrain(nodes).maxCoeff(), stats.maxEdgeStrain);

  // The snapshot carries it, with the nodes' positions, normals and strain; the surface stays
  // the cloth's vertices.
  const Snapshot snapshot = makeSnapshot(*simulation, false);
  EXPECT_EQ(snapshot.fine, fine);
  EXPECT_EQ(snapshot.vertexCount(), base);
  ASSERT_EQ(snapshot.finePositions.size(), 3u * nodes.rows());
  ASSERT_EQ(snapshot.fineNormals.size(), 3u * nodes.rows());
  ASSERT_EQ(snapshot.fineStrain.size(), static_cast<size_t>(nodes.rows()));
  for (Eigen::Index i = 0; i < nodes.rows(); i += 7)
    EXPECT_EQ(snapshot.finePositions[3 * i + 2], static_cast<float>(nodes(i, 2)));
  EXPECT_FLOAT_EQ(*std::max_element(snapshot.fineStrain.begin(), snapshot.fineStrain.end()),
                  static_cast<float>(stats.maxEdgeStrain));
  // Written as drawn (the viewer's Export OBJ): the adaptive mesh, textured by the flat rest state.
  const std::string path = ::testing::TempDir() + "clothlab_fine_mesh.obj";
  ASSERT_FALSE(writeDrawnSurface(snapshot, path));
  auto written = loadObj(path);
  ASSERT_TRUE(written) << written.error();
  ASSERT_EQ(written->mesh.vertexCount(), nodes.rows());
  // The loader numbers vertices by their first use: each read back at its node's place.
  std::vector<int> nodeOf(nodes.rows(), -1);
  for (Eigen::Index i = 0; i < nodes.rows(); ++i)
    for (Eigen::Index j = 0; j < nodes.rows(); ++j)
      if ((written->mesh.positions.row(i) - nodes.row(j)).cwiseAbs().maxCoeff() < 1e-6)
        nodeOf[i] = static_cast<int>(j);
  ASSERT_EQ(std::count(nodeOf.begin(), nodeOf.end(), -1), 0);
  ASSERT_EQ(written->mesh.triangles.size(), fine->triangles.size());
  for (size_t f = 0; f < fine->triangles.size(); ++f)
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(nodeOf[written->mesh.triangles[f][k]], fine->triangles[f][k]) << f;
  ASSERT_TRUE(written->texcoords) << written->texcoordsDropped;
  const double size = (hi - lo).maxCoeff();
  for (Eigen::Index i = 0; i < nodes.rows(); ++i)
    EXPECT_LT(((written->texcoords->row(i) * size + lo) - fine->flat.row(nodeOf[i])).norm(), 1e-7)
        << i;
  // A solver on the cloth's own mesh has none.
  Scene other = remeshHanging();
  other.solverId = "xpbd";
  other.solverParams = nlohmann::json::object();
  auto plain = test::makeSimulation(other);
  ASSERT_TRUE(plain);
  const Snapshot plainSnapshot = makeSnapshot(*plain, false);
  EXPECT_FALSE(plainSnapshot.fine);
  EXPECT_TRUE(plainSnapshot.finePositions.empty());
  ASSERT_FALSE(writeDrawnSurface(plainSnapshot, path));
  written = loadObj(path);
  ASSERT_TRUE(written) << written.error();
  EXPECT_EQ(written->mesh.vertexCount(), base);
  std::remove(path.c_str());
}

// A grab named by its place in the cloth (a cloth triangle, as a click names it) pulls, and the
// snapshot marks, the adaptive mesh's point at that place: a fold refined within a cloth triangle
// lies off the chord between its corners, which the grab used to pull and mark.
TEST(RemeshSolver, AGrabPullsAndMarksThePointOfTheAdaptiveMesh) {
  auto simulation = test::makeSimulation(remeshHanging(4));
  ASSERT_TRUE(simulation);
  const auto& solver = dynamic_cast<const RemeshSolver&>(simulation->solver());
  const ClothModel& cloth = simulation->cloth();
  const FlatRest& flat = *cloth.flatCoords;
  // The swinging sheet's adaptive mesh, and the face whose centre lies farthest from the chord
  // of the cloth triangle it lies in.
  Positions nodes;
  std::shared_ptr<const FineMesh> fine;
  const Vec3 centre(1.0 / 3, 1.0 / 3, 1.0 / 3);
  Grab grab;
  double gap = 0;
  Vec3 drawn = Vec3::Zero();
  for (int step = 0; step < 400 && gap < 4e-3; ++step) {
    ASSERT_FALSE(simulation->step());
    fine = solver.fineMesh(nodes);
    gap = 0;
    for (size_t f = 0; f < fine->triangles.size(); ++f) {
      const Tri& face = fine->triangles[f];
      const auto [t, b] = locateFlatPoint(cloth.mesh.triangles, flat.coords, flat.wrap,
                                          flatPointAt(face, fine->flat, flat.wrap, centre));
      const Vec3 onFace = grabbedPoint(Grab{0, centre}, face, nodes);
      const Vec3 onChord = grabbedPoint(Grab{0, b}, cloth.mesh.triangles[t], simulation->surface());
      if ((onFace - onChord).norm() > gap) {
        gap = (onFace - onChord).norm();
        grab = Grab{t, b};
        drawn = onFace;
      }
    }
  }
  ASSERT_GE(gap, 4e-3) << "a fold within a cloth triangle";
  // Found again in the adaptive mesh: the face's centre.
  const auto onFine = grabOnFineMesh(cloth, *fine, grab);
  ASSERT_TRUE(onFine);
  EXPECT_LT((grabbedPoint(*onFine, fine->triangles[onFine->triangle], nodes) - drawn).norm(),
            1e-12);
  // Pulled 5 cm off the cloth, across the fold: the drawn point follows.
  const Tri& face = fine->triangles[onFine->triangle];
  const Vec3 normal = (nodes.row(face[1]) - nodes.row(face[0]))
                          .cross(nodes.row(face[2]) - nodes.row(face[0]))
                          .normalized()
                          .transpose();
  grab.target = drawn + 0.05 * normal;
  ASSERT_FALSE(simulation->setGrab(grab));
  Snapshot snapshot = makeSnapshot(*simulation, false);
  EXPECT_LT((snapshot.grabPoint - drawn).norm(), 1e-12) << "the marker is on the drawn surface";
  // It reaches the target and stays there while a fold stays beside it: from the 80th step the
  // point is within 3.3 mm of the target, and the cloth triangle's chord up to 16 mm off. (Pulled
  // by the chord, at 100 times its corners' mass, the chord came within 5 mm and the drawn point
  // wandered up to 12 mm off.)
  double lastDrawn = 0, farthestLate = 0, chordLate = 0;
  for (int step = 0; step < 100; ++step) {
    ASSERT_FALSE(simulation->step()) << step;
    snapshot = makeSnapshot(*simulation, false);
    lastDrawn = (snapshot.grabPoint - grab.target).norm();
    if (step >= 80) {
      farthestLate = std::max(farthestLate, lastDrawn);
      chordLate = std::max(
          chordLate, (snapshot.surfacePoint(grab.triangle, grab.barycentric) - grab.target).norm());
    }
  }
  EXPECT_LT(farthestLate, 6e-3);
  EXPECT_LT(lastDrawn, 4e-3);
  RecordProperty("chord_gap_at_grab_mm", std::to_string(1e3 * gap));
  RecordProperty("drawn_point_late_farthest_mm", std::to_string(1e3 * farthestLate));
  RecordProperty("chord_point_late_farthest_mm", std::to_string(1e3 * chordLate));
}

// A flattening that winds the other way round is mirrored inside the adaptive mesh (fromCloth),
// and given back in the cloth's own frame.
TEST(Remesh, TheFineMeshGivesAMirroredFlatteningBackAsTheClothHasIt) {
  Sheet s = sheet();
  TriangleMesh turned = s.cloth.mesh;
  for (Tri& t : turned.triangles) std::swap(t[1], t[2]);
  auto mesh = AdaptiveMesh::fromCloth(turned, *s.cloth.flatCoords);
  ASSERT_TRUE(mesh.ok()) << mesh.error();
  EXPECT_EQ(mesh->material().col(1), -s.cloth.flatCoords->coords.col(1)) << "mirrored inside";
  const FineMesh fine = mesh->fineMesh();
  EXPECT_EQ(fine.flat, s.cloth.flatCoords->coords);
  EXPECT_EQ(fine.triangles, turned.triangles);
  EXPECT_EQ(fine.edges.size(), mesh->topology().edges.size());
  for (size_t k = 0; k < fine.edges.size(); ++k) {
    const auto& e = fine.edges[k];
    EXPECT_NEAR(
        fine.edgeLengths[static_cast<Eigen::Index>(k)],
        (s.cloth.flatCoords->coords.row(e[1]) - s.cloth.flatCoords->coords.row(e[0])).norm(),
        1e-15);
  }
  EXPECT_EQ(fine.maxEdgeStrain(turned.positions), 0);
}

TEST(RemeshSolver, VelocityIsThePositionChangeOverTheStep) {
  auto simulation = test::makeSimulation(remeshHanging(1000));
  ASSERT_TRUE(simulation);
  for (int step = 0; step < 50; ++step) ASSERT_FALSE(simulation->step());
  const Positions before = simulation->surface();
  ASSERT_FALSE(simulation->step());
  const Positions expected = (simulation->surface() - before) / simulation->sim().dt;
  EXPECT_LT((simulation->solver().surfaceVelocities() - expected).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_GT(expected.cwiseAbs().maxCoeff(), 0.01);
}

TEST(RemeshSolver, AStepTakenAgainFromItsStateRemeshesTheSameWay) {
  auto simulation = test::makeSimulation(remeshHanging(4));
  ASSERT_TRUE(simulation);
  auto& solver = dynamic_cast<RemeshSolver&>(simulation->solver());
  // Run until a remesh changes the node count, keeping the state before each step.
  SolverState before;
  int nodesBefore = 0;
  bool changed = false;
  for (int step = 0; step < 600 && !changed; ++step) {
    before = solver.state();
    nodesBefore = solver.mesh().nodeCount();
    ASSERT_FALSE(simulation->step());
    changed = solver.mesh().nodeCount() != nodesBefore;
  }
  ASSERT_TRUE(changed);
  const Positions after = solver.nodes();
  const int nodesAfter = solver.mesh().nodeCount();
  solver.setState(before);
  EXPECT_EQ(solver.mesh().nodeCount(), nodesBefore);
  EXPECT_EQ(solver.surface().rows(), simulation->cloth().mesh.vertexCount());
  ASSERT_FALSE(simulation->step());
  EXPECT_EQ(solver.mesh().nodeCount(), nodesAfter);
  EXPECT_LT((solver.nodes() - after).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(RemeshSolver, DrapesOverASphereWithoutGoingThroughIt) {
  const Vec3& centre = kDrapeCentre;
  const double radius = kDrapeRadius;
  auto simulation = test::makeSimulation(remeshSphereDrape(2e-3, 0.035));
  ASSERT_TRUE(simulation);
  const auto& solver = dynamic_cast<const RemeshSolver&>(simulation->solver());
  int most = 0;
  // The cloth's sides swing after it lands (its lowest point between 0.14 and 0.30 m over steps
  // 150 to 250), so their height is averaged over those steps.
  const int steps = 250, landed = 150;
  double lowestMean = 0;
  for (int step = 0; step < steps; ++step) {
    ASSERT_FALSE(simulation->step()) << "step " << step;
    most = std::max(most, solver.mesh().nodeCount());
    if (step >= landed) lowestMean += simulation->surface().col(1).minCoeff() / (steps - landed);
  }
  double deepest = 1;
  for (int i = 0; i < solver.nodes().rows(); ++i)
    deepest = std::min(deepest, (solver.nodes().row(i).transpose() - centre).norm() - radius);
  EXPECT_GT(deepest, 0) << "every node, the added ones too, stays outside the sphere";
  EXPECT_GT(most, simulation->cloth().mesh.vertexCount() + 20) << "the drape's folds were refined";
  EXPECT_GT(simulation->surface().col(1).minCoeff(), -0.1) << "and it stays on the sphere";
  EXPECT_LT(lowestMean, centre.y()) << "hanging over its sides";
}

// The contacts a projection's result brings (the nodes it pushed onto the sphere) are projected
// in a round with solves of its own. When the rounds shared the step's solves, the first
// projection of a step in contact often spent them all; the friction pass then pushed out the
// nodes left on the sphere's far side of their contact rows, stretching the faces round them.
// With the rounds sharing, this drape ended 62 of its 120 steps above the tolerance, with
// violations of up to 0.58 and edges strained by up to 0.53.
TEST(RemeshSolver, ContactsFoundAtAProjectionsResultAreProjectedInSolvesOfTheirOwn) {
  auto simulation = test::makeSimulation(remeshSphereDrape(5e-3, 0.02));
  ASSERT_TRUE(simulation);
  const int firstSolves = simulation->solver().params()["iterations"].get<int>();
  int above = 0, moreThanTheFirst = 0;
  double worst = 0, edgeStrain = 0;
  const int steps = 120;
  for (int step = 0; step < steps; ++step) {
    ASSERT_FALSE(simulation->step()) << "step " << step;
    const StepStats& stats = simulation->lastStats();
    above += stats.converged ? 0 : 1;
    worst = std::max(worst, stats.maxPositionError);
    edgeStrain = std::max(edgeStrain, stats.maxEdgeStrain);
    moreThanTheFirst += stats.positionIterations > firstSolves ? 1 : 0;
  }
  EXPECT_GT(moreThanTheFirst, 0) << "steps whose later rounds took solves beyond the first's";
  EXPECT_LE(above, steps / 20) << "steps above the tolerance; the largest violation " << worst;
  EXPECT_LT(worst, 0.02);
  EXPECT_LT(edgeStrain, 0.06) << "the bias limit is 0.05";
}

// A sheet hanging from two corners settles smoothly. When the projection was skipped in every
// step whose limits all held, the smoothing band's pull acted only now and then: beside each pin
// a node fell freely for about ten steps, was pulled back by up to 0.16 mm in one, and swung
// about that for good (docs/measurements.md). Here, 2 s in, the cloth still swings slowly, but no
// vertex's move changes by more than 0.6 um from one step to the next; with the band's pull
// skipped, by 0.6 mm.
TEST(RemeshSolver, AHangingSheetSettlesSmoothly) {
  Scene scene = remeshHanging();
  scene.sim.damping = 5;
  auto simulation = test::makeSimulation(scene);
  ASSERT_TRUE(simulation);
  const int steps = 2000, watched = 100;
  // The largest change of a cloth vertex's move from one step to the next over the last
  // `watched` steps [m]: a swing changes its moves smoothly, a jolt does not.
  double jolt = 0;
  Positions before = simulation->surface(), last = before;
  for (int step = 0; step < steps; ++step) {
    ASSERT_FALSE(simulation->step()) << "step " << step;
    const Positions& now = simulation->surface();
    if (step >= steps - watched)
      jolt = std::max(jolt, (now - 2 * last + before).rowwise().norm().maxCoeff());
    before = last;
    last = now;
  }
  EXPECT_LT(jolt, 1e-5);
}

// The built-in scene of this solver: a woven square, its warp and weft along the grid, hung from
// two corners. Its warp and weft hold their 1%, its bias gives more, and the mesh refines.
TEST(RemeshSolver, TheWovenHangSceneStretchesAlongTheBiasMoreThanAlongWarpAndWeft) {
  const auto scene = resolveScene("woven-hang");
  ASSERT_TRUE(scene.ok()) << scene.error();
  EXPECT_EQ(scene->solverId, "strain-limit-remesh");
  auto simulation = test::makeSimulation(*scene);
  ASSERT_TRUE(simulation);
  const auto& solver = dynamic_cast<const RemeshSolver&>(simulation->solver());
  const int base = simulation->cloth().mesh.vertexCount();
  int most = base, above = 0;
  const int steps = 300;
  for (int step = 0; step < steps; ++step) {
    ASSERT_FALSE(simulation->step()) << "step " << step;
    above += simulation->lastStats().converged ? 0 : 1;
    most = std::max(most, solver.mesh().nodeCount());
  }
  double warpWeft = 0, bias = 0;  // the largest stretches over the adaptive mesh's faces
  const auto& tris = solver.mesh().restMesh().triangles;
  for (size_t f = 0; f < tris.size(); ++f) {
    const Tri& t = tris[f];
    const FaceStrain strain = faceStrain(solver.mesh().faceRests()[f], solver.nodes().row(t[0]),
                                         solver.nodes().row(t[1]), solver.nodes().row(t[2]));
    warpWeft = std::max({warpWeft, strain.stretch(0), strain.stretch(1)});
    bias = std::max({bias, strain.stretch(2), strain.stretch(3)});
  }
  EXPECT_LE(above, steps / 20);
  EXPECT_LT(warpWeft, 1.01 + 2e-3);
  EXPECT_GT(bias, 1.02) << "the bias takes the give that warp and weft refuse";
  EXPECT_LT(bias, 1.05 + 2e-3);
  EXPECT_GT(most, base + 50) << "the folds were refined";
}

// A sheet dropped on a box, its mesh refined round the box's edges: with the penalty smoothed
// (the default limit_smoothing) the method of multipliers holds the limits on nearly every step;
// with the plain max(0, s)^2 its Gauss-Newton solves, blind to the rows a step runs into, ran out
// on a quarter of them (docs/measurements.md).
TEST(RemeshSolver, ASheetDrapedOverABoxHoldsItsLimits) {
  const auto stepsAbove = [](double smoothing, double& worst) {
    Scene scene = remeshHanging();
    scene.pins.clear();
    scene.transform.rotateDeg = Vec3(-90, 3, 0);
    scene.transform.translate = Vec3(0, 0.6, 0);
    scene.sim.dt = 2e-3;
    // Frictionless: the sheet slides over the box's edges, where the solves meet rows coming
    // (5 and 18 of the 200 steps above the tolerance, smoothed and plain). With friction 0.3,
    // since friction acts where the projection runs, it holds on the box's top and both meet
    // the limits more often (6 and 15).
    scene.obstacles.push_back(test::boxObstacle(Vec3(0, 0.15, 0), Vec3(0.15, 0.1, 0.15)));
    scene.obstacles.back().friction = 0;
    scene.solverParams["limit_smoothing"] = smoothing;
    auto simulation = test::makeSimulation(scene);
    int above = 0;
    worst = 0;
    for (int step = 0; simulation && step < 200; ++step) {
      EXPECT_FALSE(simulation->step()) << "step " << step;
      above += simulation->lastStats().converged ? 0 : 1;
      worst = std::max(worst, simulation->lastStats().maxPositionError);
    }
    return above;
  };
  double worst = 0, plainWorst = 0;
  const int smoothed = stepsAbove(0.01, worst), plain = stepsAbove(0, plainWorst);
  EXPECT_LE(smoothed, 12) << "of 200 steps above the tolerance; the largest violation " << worst;
  EXPECT_LT(worst, 0.05);
  EXPECT_GE(plain, std::max(3 * smoothed, smoothed + 10))
      << "the plain penalty; the largest violation " << plainWorst;
}

// fold-drop's pile: where the cloth's layers meet, the self-collision pairs are held in the
// strain limiting's projection, and elements that lie near each other along the cloth (the refined
// folds' small faces) are no pairs (sim/self_collision.h FlatNearness). Pushed apart after the
// projection alone, faces 5 mm across were stretched by pushes of 2 to 4 mm: over steps 140 to
// 200 the largest violation of a step was 0.92 in the median and 1.9 at most, and edges were
// strained by up to 0.92. Held in the projection but with the contact rounds sharing one budget of
// solves, the pairs and contacts found at the first projection's result went unprojected: 53 of
// those 60 steps ended above the tolerance, the median at 0.053, the largest at 0.19, with edges
// strained by up to 0.12.
TEST(RemeshSolver, AFoldedPileKeepsItsLimitsWhereItsLayersMeet) {
  auto simulation = test::makeSimulation(test::builtinScene("fold-drop", "strain-limit-remesh"));
  ASSERT_TRUE(simulation);
  const auto& solver = dynamic_cast<const RemeshSolver&>(simulation->solver());
  std::vector<double> violations;
  double edgeStrain = 0;
  int candidates = 0;
  for (int step = 0; step < 200; ++step) {
    ASSERT_FALSE(simulation->step()) << "step " << step;
    if (step < 140) continue;
    const StepStats& stats = simulation->lastStats();
    violations.push_back(stats.maxPositionError);
    edgeStrain = std::max(edgeStrain, stats.maxEdgeStrain);
    candidates = std::max(candidates, stats.extra["self_candidates"].get<int>());
  }
  EXPECT_GT(candidates, 1000) << "the layers meet";
  const double tolerance = solver.params()["tolerance"].get<double>();
  std::sort(violations.begin(), violations.end());
  const auto above =
      violations.end() - std::upper_bound(violations.begin(), violations.end(), tolerance);
  EXPECT_LE(above, 15) << "of 60 steps above the tolerance";
  EXPECT_LT(violations.back(), 0.1);
  EXPECT_LT(edgeStrain, 0.09);
  EXPECT_EQ(countSelfIntersections(solver.mesh().restMesh(), solver.nodes()), 0);
}

TEST(RemeshSolver, BadParametersAndAClothWithoutAFlatRestStateAreRefused) {
  Scene scene = remeshHanging();
  scene.solverParams = {{"warp_max", 2.0}};
  auto bad = Simulation::create(scene);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("warp_max"), std::string::npos) << bad.error();
  scene.solverParams = {{"refine_angel", 0.3}};
  bad = Simulation::create(scene);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("refine_angel"), std::string::npos) << bad.error();

  auto cloth = buildClothModel(remeshHanging());
  ASSERT_TRUE(cloth.ok());
  cloth->flatCoords = Error{"the mesh is curved"};
  RemeshSolver solver;
  const auto error = solver.reset(std::make_shared<const ClothModel>(std::move(*cloth)),
                                  SimParams{}, nlohmann::json::object());
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("flat rest state: the mesh is curved"), std::string::npos) << *error;
}

}  // namespace
}  // namespace clothlab
