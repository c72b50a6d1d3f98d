// Bending toward a curved rest shape (sim/bending.h's RestBend, SimParams::bendingRest "loaded"):
// the rows that build the quadratic energies, their frames, the force at rest and under rigid
// motions, a bent sheet that keeps its shape under every solver that bends toward it, and compare
// mode's bending energy measured toward the rest shape the simulation bends toward.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>

#include "sim/bending.h"
#include "sim/generators.h"
#include "sim/locking_metrics.h"
#include "sim/metrics.h"
#include "sim/scene.h"
#include "sim/simulation.h"
#include "tests/test_util.h"

namespace clothlab {
namespace {

// Positions x turned by a rotation and moved.
Positions turned(const Positions& x) {
  const Eigen::Matrix3d rotation =
      Eigen::AngleAxisd(2.1, Vec3(0.3, -1, 0.6).normalized()).toRotationMatrix();
  return (x * rotation.transpose()).rowwise() + Eigen::RowVector3d(0.4, -1.5, 2.0);
}

// The edge midpoints of a mesh's positions, indexed by its topology's edges.
Positions midpoints(const Positions& x, const MeshTopology& topology) {
  Positions out(topology.edgeCount(), 3);
  for (int e = 0; e < topology.edgeCount(); ++e)
    out.row(e) = 0.5 * (x.row(topology.edges[e][0]) + x.row(topology.edges[e][1]));
  return out;
}

double largestEntry(const Eigen::MatrixXd& m) { return m.cwiseAbs().maxCoeff(); }

TEST(Bending, RowsBuildTheBendingMatrices) {
  const TriangleMesh mesh = makeIrregularRectangle(1, 1, 400, 4);
  const MeshTopology topology = buildTopology(mesh);
  const SparseMatrix hinge = hingeBendingMatrix(mesh, topology);
  const SparseMatrix fromRows = bendingMatrix(hingeBendingRows(mesh, topology), mesh.vertexCount());
  EXPECT_EQ(largestEntry(Eigen::MatrixXd(hinge - fromRows)), 0.0);
  const SparseMatrix cr = crBendingMatrix(mesh, topology);
  const SparseMatrix crFromRows =
      bendingMatrix(crBendingRows(mesh, topology), topology.edgeCount());
  EXPECT_LT(largestEntry(Eigen::MatrixXd(cr - crFromRows)),
            1e-10 * largestEntry(Eigen::MatrixXd(cr)));
}

// On a flat cloth both sides of every row face the same way (the side whose apex the hinge's
// first triangle holds sets which), so the row's normal is theirs, and its frame is a rotation.
TEST(Bending, RowFramesAreTheirTrianglesOnAFlatCloth) {
  const TriangleMesh mesh = makeIrregularRectangle(1, 1, 300, 9);
  const MeshTopology topology = buildTopology(mesh);
  const Positions mid = midpoints(mesh.positions, topology);
  for (const auto& [rows, x] : {std::pair{hingeBendingRows(mesh, topology), mesh.positions},
                                std::pair{crBendingRows(mesh, topology), mid}}) {
    ASSERT_FALSE(rows.empty());
    for (const BendingRow& row : rows) {
      const Eigen::Matrix3d frame = bendingRowFrame(row, x);
      for (const auto& [p0, p1, p2] : row.sides) {
        const Vec3 side = (x.row(p1) - x.row(p0)).cross(x.row(p2) - x.row(p0)).normalized();
        EXPECT_NEAR(side.dot(frame.col(0)), 1.0, 1e-12);
      }
      EXPECT_NEAR(std::abs(frame.col(0).z()), 1.0, 1e-12);
      EXPECT_NEAR((frame.transpose() * frame - Eigen::Matrix3d::Identity()).norm(), 0.0, 1e-12);
      EXPECT_NEAR(frame.determinant(), 1.0, 1e-12);
    }
  }
}

// The force of a bent rest state cancels Q x there, and wherever the cloth is turned and moved
// to; on a flat rest state there is nothing to keep.
TEST(Bending, TheRestShapesForceCancelsBendingAtRestAndUnderRigidMotions) {
  const TriangleMesh flat = makeIrregularRectangle(0.6, 0.4, 500, 2);
  const MeshTopology topology = buildTopology(flat);
  const Positions curved = test::wrappedOntoCylinder(flat.positions, 0.3);
  TriangleMesh rest = flat;
  rest.positions = curved;
  struct Case {
    const char* name;
    std::vector<BendingRow> rows;
    SparseMatrix q;
    Positions x;
  };
  const Case cases[] = {
      {"hinge", hingeBendingRows(rest, topology), hingeBendingMatrix(rest, topology), curved},
      {"crouzeix-raviart", crBendingRows(rest, topology), crBendingMatrix(rest, topology),
       midpoints(curved, topology)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const RestBend restBend(c.rows, c.x);
    EXPECT_TRUE(restBend.bent());
    const Eigen::MatrixXd qx = c.q * c.x;
    EXPECT_GT(largestEntry(qx), 1.0);  // the bend is there to cancel
    for (const Positions& at : {c.x, turned(c.x)}) {
      Eigen::MatrixXd force = -(c.q * at);
      restBend.addForce(at, 1.0, force);
      EXPECT_LT(largestEntry(force), 1e-9 * largestEntry(qx));
    }
    // Away from rest it pulls back: the force has the sign that lowers |Q x - f|.
    Positions flatter = c.x;
    flatter.col(2) *= 0.5;
    Eigen::MatrixXd force = -(c.q * flatter);
    restBend.addForce(flatter, 1.0, force);
    EXPECT_GT((force.array() * (c.x - flatter).array()).sum(), 0.0);
  }
  const std::vector<BendingRow> flatRows = hingeBendingRows(flat, topology);
  EXPECT_FALSE(RestBend(flatRows, flat.positions).bent());
  EXPECT_FALSE(RestBend(flatRows, turned(flat.positions)).bent());
}

// A quarter of a cylinder (radius 0.25 m, 0.3 m tall) as an OBJ without texture coordinates, laid
// flat by unfolding; `columns` x `rows` vertices.
std::string bentSheetObj(int columns = 13, int rows = 9) {
  std::ostringstream obj;
  obj.precision(12);
  const double radius = 0.25;
  for (int j = 0; j < rows; ++j)
    for (int i = 0; i < columns; ++i) {
      const double angle = std::numbers::pi / 2 * (double(i) / (columns - 1) - 0.5);
      obj << "v " << radius * std::sin(angle) << " " << 0.3 * j / (rows - 1) << " "
          << radius * (1 - std::cos(angle)) << "\n";
    }
  for (int j = 0; j + 1 < rows; ++j)
    for (int i = 0; i + 1 < columns; ++i) {
      const int a = j * columns + i + 1, b = a + 1, c = a + columns, d = c + 1;
      if ((i + j) % 2)
        obj << "f " << a << " " << b << " " << d << "\nf " << a << " " << d << " " << c << "\n";
      else
        obj << "f " << a << " " << b << " " << c << "\nf " << b << " " << d << " " << c << "\n";
    }
  return obj.str();
}

// Floating free without gravity, a bent sheet opens out when it bends toward flat and keeps its
// shape when it bends toward its shape as loaded, under every solver: on the mesh, on its edge
// midpoints (impulse-nc's own energy, or the surface's hinges through B), and on
// strain-limit-remesh's nodes, here refined where the sheet bends (its added nodes take their
// shape as loaded on the chords between the cloth's vertices).
TEST(Bending, ABentSheetKeepsItsShapeWhenItBendsTowardItsLoadedShape) {
  const int columns = 13, rows = 9, middleRow = 4;
  const std::string path = test::writeFile("bent_sheet.obj", bentSheetObj(columns, rows));
  const int left = middleRow * columns, right = left + columns - 1;
  const std::pair<const char*, nlohmann::json> solvers[] = {
      {"impulse-nc", nlohmann::json::object()},
      {"impulse-nc", {{"bending_model", "surface"}}},
      {"conforming", nlohmann::json::object()},
      {"mls-isometry", nlohmann::json::object()},
      {"xpbd", nlohmann::json::object()},
      // Each hinge across the bend turns by 0.13 rad at rest: the remesher splits edges there.
      {"strain-limit-remesh", {{"refine_angle", 0.05}, {"remesh_interval", 4}}}};
  for (const auto& [solver, params] : solvers) {
    const bool remeshes = std::string(solver) == "strain-limit-remesh";
    for (const char* rest : {"flat", "loaded"}) {
      SCOPED_TRACE(std::string(solver) + " " + params.dump() + ", bending toward " + rest);
      Scene scene = sceneForObj(path);
      scene.solverId = solver;
      scene.solverParams = params;
      scene.sim.gravity.setZero();
      scene.sim.bending = 1e-2;
      scene.sim.damping = 1;
      scene.sim.dt = 0.005;
      scene.sim.bendingRest = rest;
      auto sim = test::makeSimulation(scene);
      ASSERT_TRUE(sim);
      const Positions start = sim->surface();
      const double chord = (start.row(right) - start.row(left)).norm();
      int mostNodes = 0;
      for (int step = 0; step < 300; ++step) {
        const auto error = sim->step();
        ASSERT_FALSE(error) << "step " << step + 1 << ": " << *error;
        mostNodes = std::max(mostNodes, sim->solver().counts().particles);
      }
      if (remeshes) {
        EXPECT_GT(mostNodes, columns * (rows + 1));
      }
      const double now = (sim->surface().row(right) - sim->surface().row(left)).norm();
      // Bending toward flat opens the sheet by about 30 mm; toward its shape it stays still.
      if (std::string(rest) == "flat") {
        EXPECT_GT(now - chord, 0.015);
      } else {
        EXPECT_LT(std::abs(now - chord), 0.002);
        EXPECT_LT((sim->surface() - start).rowwise().norm().maxCoeff(), 0.004);
      }
    }
  }
}

// Compare mode's bending_energy is the energy of the bending in use: toward flat, k_b/2 x^T Q x,
// which a bent sheet has at rest; toward the shape as loaded, zero there and after a rigid
// motion, and growing with the bend beyond the shape as loaded.
TEST(Bending, CompareMeasuresTheBendingEnergyTowardTheRestShapeInUse) {
  Scene scene = sceneForObj(test::writeFile("bent_sheet_energy.obj", bentSheetObj()));
  scene.solverId = "xpbd";
  scene.sim.bending = 1e-2;
  auto sim = test::makeSimulation(scene);
  ASSERT_TRUE(sim);
  const MetricProbe probe = makeMetricProbe(*sim);
  const size_t energy = lockingMetricIndex("bending_energy");
  SimParams flat = sim->sim(), loaded = sim->sim();
  ASSERT_EQ(flat.bendingRest, "flat");
  loaded.bendingRest = "loaded";
  auto measure = [&](const Positions& x, const SimParams& params) {
    return measureLockingMetrics(probe, sim->cloth(), x, sim->lastStats(), params, 0)[energy];
  };
  const Positions bent = sim->cloth().mesh.positions;
  const double toFlat = measure(bent, flat);
  EXPECT_GT(toFlat, 1e-3);
  EXPECT_DOUBLE_EQ(toFlat, bendingEnergy(probe.hinge, 1e-2, bent));
  EXPECT_NEAR(measure(turned(bent), flat), toFlat, 1e-9 * toFlat);
  EXPECT_LT(measure(bent, loaded), 1e-12 * toFlat);
  EXPECT_LT(measure(turned(bent), loaded), 1e-12 * toFlat);
  // The sheet grown a times about a point keeps its frames, and each row's bend k_r x grows a
  // times: toward flat a^2 times the energy, toward the shape as loaded (a - 1)^2 times it.
  for (const double a : {0.5, 2.0, 3.0}) {
    const Positions grown = (a * bent).rowwise() + Eigen::RowVector3d(0.1, -0.2, 0.3);
    EXPECT_NEAR(measure(grown, flat), a * a * toFlat, 1e-9 * toFlat);
    EXPECT_NEAR(measure(grown, loaded), (a - 1) * (a - 1) * toFlat, 1e-9 * toFlat);
  }
  // The stiffness scales it.
  loaded.bending = 2e-2;
  EXPECT_NEAR(measure(2 * bent, loaded), 2 * toFlat, 2e-9 * toFlat);
}

TEST(Bending, AnUnknownRestShapeIsRefusedByName) {
  Scene scene = sceneForObj(test::writeFile("bent_sheet_bad.obj", bentSheetObj(4, 3)));
  scene.sim.bendingRest = "curved";
  auto sim = Simulation::create(scene);
  ASSERT_FALSE(sim);
  EXPECT_NE(sim.error().find("bending_rest"), std::string::npos) << sim.error();
}

}  // namespace
}  // namespace clothlab
