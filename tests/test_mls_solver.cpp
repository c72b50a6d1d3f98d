// mls-isometry as a solver: flat material coordinates, the CKV19 scenes, and the step invariants
// of methods 5.2 that hold in a benign run (residual below tolerance, v = dx / h, pins, flat start).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/locking_metrics.h"
#include "sim/material.h"
#include "sim/metrics.h"
#include "sim/scene_library.h"
#include "sim/simulation.h"
#include "sim/solvers/mls/mls_solver.h"
#include "tests/test_util.h"

namespace clothlab {
namespace {

std::unique_ptr<Simulation> create(const Scene& scene) { return test::makeSimulation(scene); }

// An OBJ a test wrote, opened as cloth for mls-isometry with the solver parameters `params`.
Result<std::unique_ptr<Simulation>> openForMls(
    const std::string& path, const nlohmann::json& params = nlohmann::json::object()) {
  Scene opened = sceneForObj(path);
  opened.solverId = "mls-isometry";
  opened.solverParams = params;
  return Simulation::create(opened);
}

Scene benignHanging() {
  auto scene = resolveScene("hanging");
  EXPECT_TRUE(scene) << scene.error();
  scene->solverId = "mls-isometry";
  scene->solverParams = {{"tolerance", 0.01}};
  return *scene;
}

TEST(MlsSolver, CkvScenesHaveThePapersSizes) {
  const std::pair<const char*, int> sizes[] = {
      {"ckv-corners", 662},  {"ckv-corners-regular", 625}, {"ckv-corners-fine", 1656},
      {"ckv-drape", 845},    {"ckv-drape-fine", 2716},     {"ckv-cylinder", 979},
      {"ckv-cylinder-fine", 15039}};
  for (const auto& [name, vertices] : sizes) {
    auto scene = resolveScene(name);
    ASSERT_TRUE(scene) << scene.error();
    EXPECT_EQ(scene->solverId, "mls-isometry") << name;
    auto model = buildClothModel(*scene);
    ASSERT_TRUE(model) << model.error();
    EXPECT_NEAR(model->mesh.vertexCount(), vertices, 0.025 * vertices) << name;
  }
}

TEST(MlsSolver, CylinderUsesItsUnrolledPeriodicCoordinates) {
  auto scene = resolveScene("ckv-cylinder");
  ASSERT_TRUE(scene) << scene.error();
  auto model = buildClothModel(*scene);
  ASSERT_TRUE(model) << model.error();
  auto material = flatMaterialCoordinates(*model);
  ASSERT_TRUE(material) << material.error();
  EXPECT_GT(material->wrap.period, 0);
  // Every edge, across the seam too, is as long in the flat state as at rest, up to a column's
  // chord against its arc (1 - sin(a / 2) / (a / 2) for its angle a: 2.0e-4). Before the period
  // was scaled with the coordinates the seam's edges differed by 1e-3.
  for (const auto& e : model->topology.edges) {
    const double rest = (model->mesh.positions.row(e[1]) - model->mesh.positions.row(e[0])).norm();
    EXPECT_NEAR(materialOffset(material->coords, e[0], e[1], material->wrap).norm(), rest,
                3e-4 * rest);
  }
  // The tube at rest is an exact isometric embedding of its unrolled coordinates: every sample
  // satisfies the constraints up to the (h / R)^2 discretization term of methods 2.7 (0.0016;
  // the seam's samples 0.0025 before the period was scaled).
  auto sim = create(*scene);
  const auto& solver = dynamic_cast<const MlsSolver&>(sim->solver());
  EXPECT_LT(solver.maxResidual(), 0.002);
}

// A tube standing on the ground takes its first step without stretching (ckv-cylinder: 90 columns,
// largest edge strain 0.002). With an odd number of columns its alternating diagonals cannot
// alternate all the way round: two like ones meet at the seam, whose 1-ring samples let the edges
// beside it stretch by 0.029 in that step (0.062 with ckv-cylinder-fine's former 167). The scene
// warns of it.
TEST(MlsSolver, ATubeTakesItsFirstStepWithoutStretchingAndAnOddSeamIsWarnedOf) {
  auto scene = resolveScene("ckv-cylinder");
  ASSERT_TRUE(scene) << scene.error();
  auto firstStepStrain = [](const Scene& tube) {
    auto sim = create(tube);
    EXPECT_FALSE(sim->step());
    return maxEdgeStrain(sim->cloth().mesh, sim->cloth().topology, sim->surface());
  };
  EXPECT_TRUE(scene->warnings.empty());
  EXPECT_LT(firstStepStrain(*scene), 0.005);
  nlohmann::json odd = sceneToJson(*scene);
  odd["cloth"]["generator"]["columns"] = 89;
  auto oddScene = parseScene(odd, "odd.json", "");
  ASSERT_TRUE(oddScene) << oddScene.error();
  ASSERT_EQ(oddScene->warnings.size(), 1u);
  EXPECT_NE(oddScene->warnings[0].find("odd.json: cloth.generator.columns: 89 round a tube cannot alternate"),
            std::string::npos)
      << oddScene->warnings[0];
  EXPECT_GT(firstStepStrain(*oddScene), 0.02);
  odd["cloth"]["generator"]["diagonal"] = "same";
  auto same = parseScene(odd, "odd.json", "");
  ASSERT_TRUE(same) << same.error();
  EXPECT_TRUE(same->warnings.empty());
}

// A dome of n x n vertices; with `uv`, one texture coordinate per vertex (x, y), except that the
// first triangle names a copy of its second corner's (a seam) when `seam`, or that the faces after
// the first give none when `partial`.
static std::string domeObj(bool uv, bool seam = false, bool partial = false) {
  std::ostringstream out;
  const int n = 8;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const double x = i / double(n - 1) - 0.5, y = j / double(n - 1) - 0.5;
      out << "v " << x << " " << y << " " << 0.5 * (x * x + y * y) << "\n";
      if (uv) out << "vt " << x << " " << y << "\n";
    }
  // Texture coordinate n * n + 1: vertex 2's in another piece of an atlas.
  if (uv) out << "vt 0.9 0.7\n";
  bool first = true;
  auto corner = [&](int v, bool copy) {
    if (!uv || (partial && !first)) return std::to_string(v);
    return std::to_string(v) + "/" + std::to_string(copy ? n * n + 1 : v);
  };
  for (int j = 0; j + 1 < n; ++j)
    for (int i = 0; i + 1 < n; ++i) {
      const int a = j * n + i + 1;
      out << "f " << corner(a, false) << " " << corner(a + 1, seam && first) << " " << corner(a + n, false) << "\n";
      first = false;
      out << "f " << corner(a + 1, false) << " " << corner(a + n + 1, false) << " " << corner(a + n, false) << "\n";
    }
  return out.str();
}

TEST(MlsSolver, CurvedMeshWithoutFlatteningIsRefusedWithAMessage) {
  auto refusal = [](const std::string& name, const std::string& text) {
    const std::string path = test::writeFile(name, text);
    auto sim = openForMls(path);
    if (sim) return std::string("loaded");
    EXPECT_EQ(sim.error().rfind(path + ": mls-isometry", 0), 0u) << "the message names the OBJ: " << sim.error();
    EXPECT_NE(sim.error().find("flat rest state"), std::string::npos) << sim.error();
    return sim.error();
  };
  EXPECT_NE(refusal("dome.obj", domeObj(false)).find("has no texture coordinates"), std::string::npos);
  // Texture coordinates per corner that differ at a vertex (a UV atlas, Spot's) are not used;
  // the message says so rather than that there are none.
  const std::string seam = refusal("dome_seam.obj", domeObj(true, true));
  EXPECT_NE(seam.find("cut apart at seams (vertex 2 has texture coordinates 65 and 2)"), std::string::npos) << seam;
  EXPECT_EQ(seam.find("no texture coordinates"), std::string::npos) << seam;
  const std::string partial = refusal("dome_partial.obj", domeObj(true, false, true));
  EXPECT_NE(partial.find("some faces give none"), std::string::npos) << partial;
  // One per vertex: used, but the dome's projection is no flattening.
  const std::string projected = refusal("dome_uv.obj", domeObj(true));
  EXPECT_NE(projected.find("its texture coordinates are not a flattening (edge lengths differ by up to"),
            std::string::npos) << projected;
  EXPECT_NE(projected.find("%, most at the edge "), std::string::npos) << projected;
}

// A frame written with its flat rest state as texture coordinates (writeObj, surfaceTexcoords),
// bent without stretching, reads back as a curved cloth that mls-isometry takes with that rest
// state; written without them, it is unfolded (sim/material.h) to the same rest state.
TEST(MlsSolver, AFrameWrittenWithItsFlatteningReadsBackBent) {
  auto scene = resolveScene("ckv-corners");
  ASSERT_TRUE(scene) << scene.error();
  auto model = buildClothModel(*scene);
  ASSERT_TRUE(model) << model.error();
  Positions bent = model->mesh.positions;  // the sheet lies in y = 1.2; rolled round the x axis
  const double radius = 0.4;
  for (int i = 0; i < bent.rows(); ++i) {
    const double angle = bent(i, 2) / radius;
    bent(i, 1) += radius * (1 - std::cos(angle));
    bent(i, 2) = radius * std::sin(angle);
  }
  const std::string with = (test::tempDir() / "bent_uv.obj").string();
  ASSERT_FALSE(writeObj(with, bent, model->mesh.triangles, surfaceTexcoords(*model)));
  auto sim = openForMls(with);
  ASSERT_TRUE(sim) << sim.error();
  // The loader numbers the vertices in the order the triangles first name them.
  double off = 0;
  for (int t = 0; t < model->mesh.triangleCount(); ++t)
    for (int k = 0; k < 3; ++k)
      off = std::max(off, ((*sim)->surface().row((*sim)->cloth().mesh.triangles[t][k]) -
                           bent.row(model->mesh.triangles[t][k])).norm());
  EXPECT_LT(off, 1e-8);
  const auto& solver = dynamic_cast<const MlsSolver&>((*sim)->solver());
  EXPECT_LT(solver.maxResidual(), 0.02);  // the (h / R)^2 of methods 2.7
  const std::string without = (test::tempDir() / "bent.obj").string();
  ASSERT_FALSE(writeObj(without, bent, model->mesh.triangles));
  auto unfolded = openForMls(without);
  ASSERT_TRUE(unfolded) << unfolded.error();
  ASSERT_TRUE((*unfolded)->cloth().flatCoords);
  EXPECT_TRUE((*unfolded)->cloth().flatCoords->unfolded);
  EXPECT_NEAR(dynamic_cast<const MlsSolver&>((*unfolded)->solver()).maxResidual(),
              solver.maxResidual(), 1e-3);
}

// The same for a tube: its frame's texture coordinates wrap round at the seam, and read back
// they give mls-isometry the unrolled tube with its period (before: refused as cut apart).
TEST(MlsSolver, ATubeFrameReadsBackWithItsSeam) {
  auto scene = resolveScene("ckv-cylinder");
  ASSERT_TRUE(scene) << scene.error();
  auto model = buildClothModel(*scene);
  ASSERT_TRUE(model) << model.error();
  Positions lying = model->mesh.positions;  // laid on its side: x, y, z -> y, z, x
  for (int i = 0; i < lying.rows(); ++i)
    lying.row(i) = model->mesh.positions.row(i)(Eigen::Vector3i(2, 0, 1));
  const std::string path = (test::tempDir() / "tube_uv.obj").string();
  ASSERT_FALSE(writeObj(path, lying, model->mesh.triangles, surfaceTexcoords(*model)));
  auto sim = openForMls(path, scene->solverParams);
  ASSERT_TRUE(sim) << sim.error();
  ASSERT_TRUE((*sim)->cloth().flatCoords);
  EXPECT_NEAR((*sim)->cloth().flatCoords->wrap.period, model->flatCoords->wrap.period, 1e-6);
  // The same samples at the same rest state: the residual of the tube at rest (the (h / R)^2 of
  // methods 2.7), whichever way the vertices are numbered.
  auto original = Simulation::create(*scene);
  ASSERT_TRUE(original) << original.error();
  EXPECT_NEAR(dynamic_cast<const MlsSolver&>((*sim)->solver()).maxResidual(),
              dynamic_cast<const MlsSolver&>((*original)->solver()).maxResidual(), 1e-5);
}

TEST(MlsSolver, TiltedFlatMeshIsFlattenedByAPlaneFit) {
  auto scene = resolveScene("ckv-shear");  // rotated about z: flat, but not in the xy plane of its coordinates
  ASSERT_TRUE(scene) << scene.error();
  auto model = buildClothModel(*scene);
  ASSERT_TRUE(model) << model.error();
  model->materialCoords.reset();
  auto material = flatMaterialCoordinates(*model);
  ASSERT_TRUE(material) << material.error();
  for (const auto& e : model->topology.edges) {
    const double rest = (model->mesh.positions.row(e[1]) - model->mesh.positions.row(e[0])).norm();
    EXPECT_NEAR((material->coords.row(e[1]) - material->coords.row(e[0])).norm(), rest,
                1e-9 + 1e-9 * rest);
  }
}

TEST(MlsSolver, BenignStepsKeepTheResidualBelowToleranceAndVelocityIsTheFilteredChange) {
  auto sim = create(benignHanging());
  const auto& solver = dynamic_cast<const MlsSolver&>(sim->solver());
  EXPECT_LT(solver.maxResidual(), 1e-12);  // the flat rest state (where J W J^T is singular)
  const double h = sim->sim().dt;
  int above = 0;
  for (int step = 0; step < 300; ++step) {
    const Positions before = sim->surface();
    ASSERT_FALSE(sim->step());
    const StepStats& stats = sim->lastStats();
    above += stats.extra["max_isometry_residual"].get<double>() > 0.01;
    // v^{n+1} = (x^{n+1} - x^n) / h exactly (methods 5.2 #11).
    const Positions v = sim->solver().surfaceVelocities();
    EXPECT_LT((v - (sim->surface() - before) / h).cwiseAbs().maxCoeff(), 1e-9 * (1 + v.cwiseAbs().maxCoeff()));
    for (const auto& [vertex, target] : sim->pins())
      ASSERT_LT((Vec3(sim->surface().row(vertex)) - target).norm(), 1e-12);
  }
  EXPECT_EQ(above, 0) << "steps ending above the tolerance";
  EXPECT_LT(sim->surface().col(1).minCoeff(), 1.2 - 0.3) << "the cloth did not fall";
}

// ckv-corners-fine at h = 1/60 s. In one solver step per frame the projection lands in states
// whose MLS strain is within tolerance while edges near the pins stretch by 100% and more (modes
// of the 1-ring MLS fit that the constraints barely see), and the residual then runs away (6.2
// after 60 steps). In its 16 sub-steps each projection starts close to the constraints.
TEST(MlsSolver, FineCornersStayConvergedInSubsteps) {
  auto scene = resolveScene("ckv-corners-fine");
  ASSERT_TRUE(scene) << scene.error();
  ASSERT_EQ(scene->sim.substeps, 16);
  auto sim = create(*scene);
  int fallbacks = 0, iterations = 0;
  for (int step = 0; step < 30; ++step) {
    ASSERT_FALSE(sim->step());
    const StepStats& stats = sim->lastStats();
    EXPECT_LE(stats.extra["max_isometry_residual"].get<double>(), 0.01) << "step " << step + 1;
    EXPECT_LT(stats.maxEdgeStrain, 0.5) << "step " << step + 1;
    fallbacks += stats.extra["fallback_used"].get<bool>();
    iterations += stats.positionIterations;
  }
  EXPECT_LE(fallbacks, 2);
  EXPECT_LT(sim->surface().col(1).minCoeff(), 0.9) << "the cloth did not swing down";
  // The two pinned corners' samples take their 2-rings ("lone_pin_rings"): 16.2 Fast Projection
  // iterations per frame, against 24.4 with their 1-rings, where those samples needed one in
  // almost every sub-step.
  EXPECT_LT(iterations / 30.0, 19.0);
}

// A vertex pinned alone (no pinned neighbour) takes its 2-ring: the cloth's weight hangs from it
// through the 2 to 4 neighbours of its 1-ring. Pins in a row keep their 1-rings, and the
// neighbourhoods follow pins added and removed between steps.
TEST(MlsSolver, LonePinsTakeTheirTwoRing) {
  Scene scene = benignHanging();
  auto sim = create(scene);
  const auto& solver = dynamic_cast<const MlsSolver&>(sim->solver());
  const MeshTopology& topology = sim->cloth().topology;
  auto size = [&](int vertex) {
    const auto& n = solver.neighbourhoods();
    return n.start[vertex + 1] - n.start[vertex];
  };
  auto twoRing = [&](int vertex) {
    std::vector<int> ring;
    for (int j : topology.vertexNeighbours[vertex])
      for (int k : topology.vertexNeighbours[j])
        if (k != vertex) ring.push_back(k);
    for (int j : topology.vertexNeighbours[vertex]) ring.push_back(j);
    std::sort(ring.begin(), ring.end());
    return static_cast<int>(std::unique(ring.begin(), ring.end()) - ring.begin());
  };
  ASSERT_EQ(sim->pins().size(), 2u);
  for (const auto& [vertex, target] : sim->pins()) {
    EXPECT_EQ(size(vertex), twoRing(vertex)) << "scene pin " << vertex;
    EXPECT_GT(twoRing(vertex), static_cast<int>(topology.vertexNeighbours[vertex].size()));
  }
  // A pin added in the middle, then its neighbour: alone it takes the 2-ring, side by side
  // neither does; unpinned it is back to its 1-ring.
  const Positions& rest = sim->cloth().mesh.positions;
  const int middle = nearestVertex(rest, rest.colwise().mean().transpose());
  const int next = topology.vertexNeighbours[middle].front();
  ASSERT_FALSE(sim->setPin(middle, sim->surface().row(middle).transpose()));
  ASSERT_FALSE(sim->step());
  EXPECT_EQ(size(middle), twoRing(middle));
  ASSERT_FALSE(sim->setPin(next, sim->surface().row(next).transpose()));
  ASSERT_FALSE(sim->step());
  EXPECT_EQ(size(middle), static_cast<int>(topology.vertexNeighbours[middle].size()));
  EXPECT_EQ(size(next), static_cast<int>(topology.vertexNeighbours[next].size()));
  sim->removePin(next);
  ASSERT_FALSE(sim->step());
  EXPECT_EQ(size(middle), twoRing(middle));
  sim->removePin(middle);
  ASSERT_FALSE(sim->step());
  EXPECT_EQ(size(middle), static_cast<int>(topology.vertexNeighbours[middle].size()));
  EXPECT_LE(sim->lastStats().extra["max_isometry_residual"].get<double>(), 0.01);
  // "lone_pin_rings": 1 gives them their 1-ring.
  scene.solverParams["lone_pin_rings"] = 1;
  auto plain = create(scene);
  const auto& plainSolver = dynamic_cast<const MlsSolver&>(plain->solver());
  for (const auto& [vertex, target] : plain->pins())
    EXPECT_EQ(plainSolver.neighbourhoods().start[vertex + 1] - plainSolver.neighbourhoods().start[vertex],
              static_cast<int>(topology.vertexNeighbours[vertex].size()));
}

// Which lone pins take their 2-ring depends on the state they were pinned in (a 2-ring fit across
// a crease is refused), so a moment keeps the choice; but "lone_pin_rings" changed since the
// moment stays changed, like every edit made since.
TEST(MlsSolver, AMomentGoneBackToKeepsTheLonePinRingsSetSince) {
  auto sim = create(benignHanging());
  const auto& solver = dynamic_cast<const MlsSolver&>(sim->solver());
  auto ringSizes = [&] {
    std::vector<int> sizes;
    for (const auto& [vertex, target] : sim->pins())
      sizes.push_back(solver.neighbourhoods().start[vertex + 1] - solver.neighbourhoods().start[vertex]);
    return sizes;
  };
  const std::vector<int> twoRings = ringSizes();
  for (int i = 0; i < 5; ++i) ASSERT_FALSE(sim->step());
  const auto underTwo = sim->moment();
  ASSERT_FALSE(sim->setSolverParams({{"lone_pin_rings", 1}}));
  const std::vector<int> oneRings = ringSizes();
  ASSERT_NE(oneRings, twoRings);
  for (int i = 0; i < 5; ++i) ASSERT_FALSE(sim->step());
  const auto underOne = sim->moment();
  ASSERT_FALSE(sim->goBack(*underTwo));
  EXPECT_EQ(ringSizes(), oneRings);
  ASSERT_FALSE(sim->setSolverParams({{"lone_pin_rings", 2}}));
  EXPECT_EQ(ringSizes(), twoRings);
  ASSERT_FALSE(sim->goBack(*underOne));
  EXPECT_EQ(ringSizes(), twoRings);
  ASSERT_FALSE(sim->step());
  EXPECT_EQ(ringSizes(), twoRings);
  EXPECT_LE(sim->lastStats().extra["max_isometry_residual"].get<double>(), 0.01);
}

TEST(MlsSolver, BadParametersNameTheKey) {
  Scene scene = benignHanging();
  scene.solverParams = {{"neighbourhood", "3-ring"}};
  auto sim = Simulation::create(scene);
  ASSERT_FALSE(sim);
  EXPECT_NE(sim.error().find("solver.neighbourhood"), std::string::npos) << sim.error();
  scene.solverParams = {{"neighbourhood", "radius"}, {"radius", -0.1}};
  sim = Simulation::create(scene);
  ASSERT_FALSE(sim);
  EXPECT_NE(sim.error().find("solver.radius"), std::string::npos) << sim.error();
  scene.solverParams = {{"projection_rows", "trace-shear"}};
  sim = Simulation::create(scene);
  ASSERT_FALSE(sim);
  EXPECT_NE(sim.error().find("solver.projection_rows"), std::string::npos) << sim.error();
  scene.solverParams = {{"shear_gap_softening", -0.1}};
  sim = Simulation::create(scene);
  ASSERT_FALSE(sim);
  EXPECT_NE(sim.error().find("solver.shear_gap_softening"), std::string::npos) << sim.error();
  scene.solverParams = {{"edge_strain_limit", 1.5}};
  sim = Simulation::create(scene);
  ASSERT_FALSE(sim);
  EXPECT_NE(sim.error().find("solver.edge_strain_limit"), std::string::npos) << sim.error();
  scene.solverParams = {{"lone_pin_rings", 3}};
  sim = Simulation::create(scene);
  ASSERT_FALSE(sim);
  EXPECT_NE(sim.error().find("solver.lone_pin_rings"), std::string::npos) << sim.error();
}

// Without the diagonal shift J W J^T is singular at the flat start: the step that meets it is
// reported with the reason and the way out, and the state stays the last good one.
TEST(MlsSolver, NoRegularizationIsReportedAtTheFlatStateWithItsReason) {
  Scene scene = benignHanging();
  scene.solverParams = {{"regularization", 0.0}};
  auto sim = create(scene);
  const auto error = test::stepUntilError(*sim, 50).first;
  ASSERT_TRUE(error) << "regularization 0 converged";
  EXPECT_NE(error->find("factorization of J W J^T failed"), std::string::npos) << *error;
  EXPECT_NE(error->find("singular wherever the cloth is flat"), std::string::npos) << *error;
  EXPECT_TRUE(sim->surface().allFinite());
}

// The trace/determinant pair bounds a pure shear (principal values 1 + d, 1 - d of F^T F) only by
// |c_det| = d^2. On ckv-shear every step ends with |c| <= 0.01 while principal strains reach 0.14;
// stop_on = principal-strain bounds them by the tolerance itself (steps the fallback cannot
// bring there are reported as not converged).
TEST(MlsSolver, PrincipalStrainStoppingBoundsTheShearThePairLetsThrough) {
  auto largestStrain = [](const Scene& scene, int* converged) {
    auto sim = create(scene);
    double worst = 0, worstConverged = 0;
    *converged = 0;
    for (int i = 0; i < 10; ++i) {
      EXPECT_FALSE(sim->step().has_value());
      const StepStats& st = sim->lastStats();
      const double strain = st.extra.at("max_principal_strain").get<double>();
      worst = std::max(worst, strain);
      if (st.converged) {
        ++*converged;
        worstConverged = std::max(worstConverged, strain);
      }
    }
    return std::make_pair(worst, worstConverged);
  };
  Scene scene = test::builtinScene("ckv-shear", "mls-isometry");
  scene.solverParams["projection_rows"] = "trace-determinant";  // the pair, as the paper projects it
  int converged = 0;
  const auto [paperRule, paperConverged] = largestStrain(scene, &converged);
  EXPECT_EQ(converged, 10);
  EXPECT_GT(paperRule, 0.08) << "the shear the constraint pair lets through";
  scene.solverParams["stop_on"] = "principal-strain";
  scene.solverParams["tolerance"] = 0.02;
  const auto [strainRule, strainConverged] = largestStrain(scene, &converged);
  std::printf("ckv-shear, 10 steps: largest principal strain %.3f (constraints rule), %.3f (principal-strain "
              "rule, %d of 10 converged, %.4f on those)\n",
              paperRule, strainRule, converged, strainConverged);
  EXPECT_GE(converged, 3);
  EXPECT_LE(strainConverged, 0.02 + 1e-12);
  EXPECT_LT(strainRule, 0.25 * paperRule);
  scene.solverParams["stop_on"] = "strain";
  auto bad = Simulation::create(scene);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("solver.stop_on"), std::string::npos) << bad.error();
}

// CKV19's shear test. Gravity lies in ckv-shear's plane, so an inextensible sheet carries the
// point mass without deforming; the paper reports that distances from the top-left corner grow
// by less than 1%. The scene projects on the trace and shear-gap rows (the same constraints and
// tolerance): Fast Projection then removes the shear that the determinant row, whose zero is a
// double root, only halves per iteration. With the paper's rows the converged steps keep a shear
// of up to 10% (|c_det| = d^2 <= 0.01) and the distances grow by 0.7 to 2.7% after 3 s (the
// figure swings with the moment, and so with the floating-point kernels of the machine: OpenBLAS's
// Cooper Lake, Haswell and Sandy Bridge ones, glibc's without FMA and AVX2), several times what
// the shipped rows let through (0.07 to 0.19%).
TEST(MlsSolver, CkvShearDistancesGrowByLessThanOnePercent) {
  auto distanceIncrease = [](const std::string& rows, int* above) {
    Scene scene = test::builtinScene("ckv-shear", "mls-isometry");
    EXPECT_EQ(scene.solverParams.value("projection_rows", ""), "trace-shear-gap");
    scene.solverParams["projection_rows"] = rows;
    auto sim = create(scene);
    const MetricProbe probe = makeMetricProbe(*sim);
    *above = 0;
    for (int i = 0; i < 180; ++i) {
      EXPECT_FALSE(sim->step().has_value());
      *above += !sim->lastStats().converged;
    }
    return maxDistanceIncrease(probe.referenceDistance, sim->surface(), probe.reference);
  };
  int abovePair = 0, aboveGap = 0;
  const double pair = distanceIncrease("trace-determinant", &abovePair);
  const double gap = distanceIncrease("trace-shear-gap", &aboveGap);
  std::printf("ckv-shear, 3 s: distances grow by %.3f%% (trace and shear gap), %.3f%% (the paper's pair)\n",
              100 * gap, 100 * pair);
  EXPECT_EQ(aboveGap, 0);
  EXPECT_EQ(abovePair, 0);
  EXPECT_LT(gap, 0.01);
  EXPECT_GT(pair, 2 * gap);
}

// Whichever rows Fast Projection linearizes, the residual it stops on and reports is the
// largest |c_tr|, |c_det| (recovered from the trace and the softened gap on the gap rows).
TEST(MlsSolver, TheReportedResidualIsThePairsWhateverTheProjectionRows) {
  for (const auto& [rows, softening] :
       {std::pair{"trace-determinant", 0.0}, std::pair{"trace-shear-gap", 0.0}, std::pair{"trace-shear-gap", 0.1}}) {
    Scene scene = test::builtinScene("ckv-shear", "mls-isometry");
    scene.solverParams["projection_rows"] = rows;
    scene.solverParams["shear_gap_softening"] = softening;
    scene.sim.substeps = 1;  // the stats of a frame report its sub-steps' largest residual
    auto sim = create(scene);
    const auto& solver = dynamic_cast<const MlsSolver&>(sim->solver());
    for (int i = 0; i < 5; ++i) {
      ASSERT_FALSE(sim->step().has_value());
      const double reported = sim->lastStats().extra.at("max_isometry_residual").get<double>();
      EXPECT_GT(reported, 1e-4) << rows << " " << softening << ", step " << i + 1;
      EXPECT_NEAR(reported, solver.maxResidual(), 1e-12) << rows << " " << softening << ", step " << i + 1;
    }
  }
}

// A user drags the free lower corner of ckv-corners out of the sheet at 1 m/s. When the grab was
// three rows held to 1e-9 m, Fast Projection iterated on long after the constraints were met (54
// iterations per frame instead of 17; 0.5 s after the drag edges were still strained by 0.84
// instead of 0.22); with the grabbed corner weighted instead it takes 16.9, and 0.5 s after the
// drag edges are strained by up to 0.20.
TEST(MlsSolver, DraggingACornerCostsFewIterationsMoreThanHanging) {
  auto sim = create(test::builtinScene("ckv-corners", "mls-isometry"));
  for (int i = 0; i < 30; ++i) ASSERT_FALSE(sim->step().has_value());
  int corner = 0;  // the lowest, then the farthest along -x
  for (int v = 1; v < sim->surface().rows(); ++v)
    if (sim->surface()(v, 1) - sim->surface()(v, 0) < sim->surface()(corner, 1) - sim->surface()(corner, 0))
      corner = v;
  Grab grab = test::grabAtVertex(*sim, corner);
  const Vec3 from = sim->surface().row(corner).transpose(), to = from + Vec3(-0.3, 0.3, 0.6);
  const int frames = 45;  // 0.75 s: 1 m/s
  int iterations = 0;
  for (int i = 0; i < frames + 30; ++i) {
    grab.target = from + std::min(1.0, (i + 1.0) / frames) * (to - from);
    ASSERT_FALSE(sim->setGrab(grab).has_value());
    ASSERT_FALSE(sim->step().has_value()) << "frame " << i + 1;
    const StepStats& st = sim->lastStats();
    EXPECT_LE(st.extra.at("max_isometry_residual").get<double>(), 0.01) << "frame " << i + 1;
    iterations += st.extra.at("fp_iterations").get<int>();
  }
  const double strain = sim->lastStats().maxEdgeStrain;
  const double miss = (Vec3(sim->surface().row(corner).transpose()) - to).norm();
  std::printf("ckv-corners, a corner dragged at 1 m/s: %.1f Fast Projection iterations per frame, %.4f m from the "
              "cursor and edges strained by up to %.2f after 0.5 s at rest\n",
              double(iterations) / (frames + 30), miss, strain);
  EXPECT_LT(miss, 0.01);
  EXPECT_LE(iterations, 25 * (frames + 30));
  EXPECT_LT(strain, 0.5);
}

// ckv-corners (with the given edge strain limit) hanging for 0.5 s, then its middle dragged by
// `offset` over `frames` frames and held there for `hold` more.
test::MiddleDrag dragTheMiddle(double edgeStrainLimit, const Vec3& offset, int frames, int hold) {
  Scene scene = test::builtinScene("ckv-corners", "mls-isometry");
  scene.solverParams["edge_strain_limit"] = edgeStrainLimit;
  return test::dragTheMiddle(scene, 30, offset, frames, hold);
}

// The 1-ring fits do not see every motion of their vertices: without the edge strain limit a
// point in the middle of ckv-corners dragged by 0.22 m (within reach) crumples the cloth around it,
// edges stretched by up to 2.8 (to 3.8 times their length; 1.8 while the grabbed corners weighed
// 100 times their own mass instead of the cloth's) while every constraint is within the
// tolerance. With the limit (0.2) edges stay within it and the point follows the cursor.
TEST(MlsSolver, DraggingTheMiddleKeepsEdgesWithinTheStrainLimit) {
  const Vec3 offset(0, 0.1, 0.2);
  const test::MiddleDrag limited = dragTheMiddle(0.2, offset, 45, 15);
  const test::MiddleDrag free = dragTheMiddle(0, offset, 45, 15);
  std::printf("the middle of ckv-corners dragged by 0.22 m: edges stretched by up to %.2f with the limit 0.2, "
              "%.2f without; the grabbed point %.4f m from the cursor\n",
              limited.stretch, free.stretch, limited.miss);
  // The limit and the 3 tolerances accepted beyond it; a projection that stalls once every sample
  // is within the tolerance ends there, and may leave an edge about a tolerance beyond that
  // (0.241 with OpenBLAS's Sandy Bridge kernels, 0.23 with its Haswell and Cooper Lake ones).
  EXPECT_LE(limited.stretch, 0.2 + 0.03 + 0.02);
  EXPECT_LT(limited.miss, 0.01);
  EXPECT_GT(free.stretch, 1.0);
}

// Dragged out of the far pin's reach, the grabbed point stays behind the cursor and the cloth
// does not stretch to follow it. As rows that had to be met, the grab and the constraints had no
// common solution there and edges stretched tenfold. Pulled taut between the pin and the grab,
// the cloth is where Fast Projection converges worst: with the grab pushing it beyond its reach
// at the full rate every sub-step it ran 104 iterations per frame and edges stretched by up to
// 0.40, with the back-off of the push alone 55 and 0.23. The grab's target is now brought within
// the pins' reach first (sim/grab.h): 21 iterations, and the point ends where the cloth pulled
// taut puts it (the cursor moves 0.73 m in 0.5 s, then stays).
TEST(MlsSolver, DraggingOutOfReachLeavesTheGrabBehindNotTheCloth) {
  const test::MiddleDrag drag = dragTheMiddle(0.2, Vec3(-0.3, 0.3, 0.6), 30, 10);
  std::printf("the middle of ckv-corners dragged out of reach: edges stretched by up to %.2f, the point %.3f m "
              "from the cursor and %.3f m from the far pin (%.3f m at rest), %.1f Fast Projection "
              "iterations per frame\n",
              drag.stretch, drag.miss, drag.fromFarPin, drag.reach, drag.iterations);
  EXPECT_LT(drag.stretch, 0.3);
  EXPECT_GT(drag.miss, 0.1);
  EXPECT_LT(drag.fromFarPin, 1.02 * drag.reach);
  EXPECT_GT(drag.fromFarPin, 0.95 * drag.reach);
  EXPECT_LT(drag.iterations, 35);
}

// A pin dragged 1 m farther from the other than the cloth between them is long: the pin stops
// where the cloth pulled taut reaches (sim/grab.h), and every frame ends within the tolerance.
// Held at the dragged target instead, the constraints could not be met: residuals up to 114,
// edges stretched eightfold and 2.7 s per frame in the fallback.
TEST(MlsSolver, APinDraggedOutOfReachStopsWhereTheClothReaches) {
  auto sim = create(test::builtinScene("ckv-corners", "mls-isometry"));
  for (int i = 0; i < 30; ++i) ASSERT_FALSE(sim->step().has_value());
  const auto [vertex, from] = sim->pins()[0];
  const auto [otherVertex, other] = sim->pins()[1];
  const Positions& rest = sim->cloth().mesh.positions;
  const double apart = (rest.row(vertex) - rest.row(otherVertex)).norm();
  const Vec3 away = (from - other).normalized();
  int above = 0;
  for (int i = 0; i < 60; ++i) {
    ASSERT_FALSE(sim->setPin(vertex, from + (i + 1) / 60.0 * away).has_value());
    ASSERT_FALSE(sim->step().has_value()) << "frame " << i + 1;
    above += !sim->lastStats().converged;
  }
  const Vec3 at = sim->surface().row(vertex).transpose();
  std::printf("a pin of ckv-corners dragged 1 m out of reach: %d of 60 frames above the tolerance, the vertex "
              "%.4f m from the other pin (%.4f m at rest)\n", above, (at - other).norm(), apart);
  EXPECT_EQ(above, 0);
  EXPECT_NEAR((at - other).norm(), apart, 0.01 * apart);
}

// The limit is a live parameter: a cloth crumpled by a drag without it straightens when it is
// turned on, and turning it off again drops its rows. How far it straightens depends on the
// crumple, and the crumple on the machine's floating-point kernels: 0.5 s after the limit is
// turned on edges are stretched by 0.20 to 0.22 with OpenBLAS's Cooper Lake, Haswell or Sandy
// Bridge kernels (0.25 to 0.46 where it stays off), but with glibc's maths without FMA and AVX2 and
// the Haswell kernels the drag folds the cloth so that 150 to 220 edges stay held at about 0.45
// with every sample within the tolerance, frame after frame (0.51 where it stays off; Fast
// Projection stalls there, and the augmented-Lagrangian fallback run on the edges' excess as well
// did not get them out either). So the test compares with the same cloth left without the limit.
// Since edges are held from the limit on (stop 64) that variant ends at 0.513 against 0.509 and the
// test fails there (scripts/kernels.sh, 2026-11-30); no machine runs it: Haswell's kernels need the
// AVX2 and FMA that it takes from glibc's maths.
TEST(MlsSolver, TheEdgeStrainLimitCanBeTurnedOnAndOffWhileDragging) {
  // ckv-corners without the limit, its middle dragged; then 0.5 s with `limit`. The largest edge
  // stretch during the drag and at the end.
  auto crumpleThenLimit = [](double limit) -> std::pair<double, double> {
    Scene scene = test::builtinScene("ckv-corners", "mls-isometry");
    scene.solverParams["edge_strain_limit"] = 0;
    auto sim = create(scene);
    for (int i = 0; i < 30; ++i) EXPECT_FALSE(sim->step().has_value());
    Grab grab = test::grabTheMiddle(*sim);
    const Vec3 from = test::triangleMiddle(*sim, sim->surface(), grab.triangle);
    double crumpled = 0;
    for (int i = 0; i < 45; ++i) {
      grab.target = from + (i + 1.0) / 45 * Vec3(0, 0.1, 0.2);
      EXPECT_FALSE(sim->setGrab(grab).has_value());
      EXPECT_FALSE(sim->step().has_value());
      crumpled = std::max(crumpled, test::largestStretch(*sim));
    }
    EXPECT_FALSE(sim->setSolverParams({{"edge_strain_limit", limit}}).has_value());
    for (int i = 0; i < 30; ++i) EXPECT_FALSE(sim->step().has_value()) << "frame " << i + 1;
    const double straightened = test::largestStretch(*sim);
    EXPECT_EQ(sim->lastStats().extra.at("max_edges_held").get<int>() > 0, limit > 0);
    if (limit > 0) {
      EXPECT_FALSE(sim->setSolverParams({{"edge_strain_limit", 0}}).has_value());
      EXPECT_FALSE(sim->step().has_value());
      EXPECT_EQ(sim->lastStats().extra.at("max_edges_held").get<int>(), 0);
    }
    return {crumpled, straightened};
  };
  const auto [crumpled, straightened] = crumpleThenLimit(0.2);
  const double unlimited = crumpleThenLimit(0).second;
  std::printf("crumpled by a drag without the limit: edges stretched by up to %.2f; 0.5 s after turning it on, "
              "%.2f (%.2f where it stays off)\n", crumpled, straightened, unlimited);
  EXPECT_GT(crumpled, 1.0);
  EXPECT_LT(straightened, unlimited);
}

// The augmented-Lagrangian fallback hands on the best state it saw, Fast Projection's to begin
// with: on ckv-shear in single steps under the principal-strain rule its own result is sometimes
// worse than where Fast Projection stopped (steps 4, 5 and 14 here), and then that is kept.
TEST(MlsSolver, TheFallbackNeverHandsOnAWorseState) {
  Scene scene = test::builtinScene("ckv-shear", "mls-isometry");
  scene.solverParams["projection_rows"] = "trace-determinant";
  scene.sim.substeps = 1;
  scene.solverParams["stop_on"] = "principal-strain";
  scene.solverParams["tolerance"] = 0.02;
  auto sim = create(scene);
  int fallbacks = 0;
  for (int i = 0; i < 20; ++i) {
    ASSERT_FALSE(sim->step().has_value());
    const StepStats& st = sim->lastStats();
    if (!st.extra.at("fallback_used").get<bool>()) continue;
    ++fallbacks;
    ASSERT_EQ(st.contacts, 0);  // nothing moves the state after the fallback
    EXPECT_LE(st.extra.at("max_principal_strain").get<double>(),
              st.extra.at("max_residual_before_fallback").get<double>() + 1e-12)
        << "step " << i + 1;
  }
  EXPECT_GE(fallbacks, 10);
}

// With a single Fast Projection iteration per step the constraints of ckv-corners' first steps
// are not met, and the augmented-Lagrangian fallback must take them the rest of the way, with the
// pins and the cloth's motion intact.
TEST(MlsSolver, TheFallbackBringsAnUnfinishedProjectionWithinTheTolerance) {
  Scene scene = test::builtinScene("ckv-corners", "mls-isometry");
  scene.solverParams["max_iterations"] = 1;
  auto sim = create(scene);
  const double lowest = sim->surface().col(1).minCoeff();
  int fallbacks = 0;
  for (int i = 0; i < 10; ++i) {
    ASSERT_FALSE(sim->step().has_value());
    const StepStats& st = sim->lastStats();
    if (!st.extra.at("fallback_used").get<bool>()) continue;
    ++fallbacks;
    EXPECT_GT(st.extra.at("max_residual_before_fallback").get<double>(), 0.01) << "step " << i + 1;
    EXPECT_LE(st.extra.at("max_isometry_residual").get<double>(), 0.01) << "step " << i + 1;
    EXPECT_LT(st.maxPositionError, 1e-9) << "step " << i + 1;  // pins
  }
  EXPECT_GE(fallbacks, 3);
  EXPECT_LT(sim->surface().col(1).minCoeff(), lowest - 0.05) << "the cloth did not swing down";
}

TEST(MlsSolver, NeighbourhoodOptionsRebuildLive) {
  auto sim = create(benignHanging());
  const auto& solver = dynamic_cast<const MlsSolver&>(sim->solver());
  const size_t oneRing = solver.neighbourhoods().neighbour.size();
  ASSERT_FALSE(sim->setSolverParams({{"neighbourhood", "2-ring"}}));
  EXPECT_GT(solver.neighbourhoods().neighbour.size(), 2 * oneRing);
  ASSERT_FALSE(sim->setSolverParams({{"neighbourhood", "radius"}, {"radius", 0.08}}));
  EXPECT_GT(solver.neighbourhoods().neighbour.size(), oneRing);
  // 'radius' without one (as the panel's choice alone sends it): twice the mean edge length
  // (0.098 m on this sheet: 13 neighbours per sample), between the 1-ring and the 2-ring.
  ASSERT_FALSE(sim->setSolverParams({{"radius", 0.0}}));
  const double perSample = double(solver.neighbourhoods().neighbour.size()) / solver.neighbourhoods().sampleCount();
  EXPECT_GT(solver.neighbourhoods().neighbour.size(), oneRing);
  EXPECT_GT(perSample, 8);
  EXPECT_LT(perSample, 24);
  ASSERT_FALSE(sim->setSolverParams({{"radius", 0.08}}));
  // A radius too small to span the plane is refused and the previous neighbourhoods stay.
  const size_t before = solver.neighbourhoods().neighbour.size();
  EXPECT_TRUE(sim->setSolverParams({{"radius", 1e-4}}));
  EXPECT_EQ(solver.neighbourhoods().neighbour.size(), before);
  ASSERT_FALSE(sim->step());
}

// A radius that spans most of the sheet is refused, naming it, before its J W J^T takes the
// memory: on the 558-vertex sheet 0.57 m would need 1.07e8 products per assembly (the pattern
// alone about 0.9 GB), 1 m the whole sheet in every neighbourhood (the build stops early).
// The neighbourhoods in use stay.
TEST(MlsSolver, NeighbourhoodsTooLargeToAssembleAreRefused) {
  auto sim = create(benignHanging());
  const auto& solver = dynamic_cast<const MlsSolver&>(sim->solver());
  ASSERT_FALSE(sim->setSolverParams({{"neighbourhood", "radius"}, {"radius", 0.3}}));
  const size_t before = solver.neighbourhoods().neighbour.size();
  const std::pair<double, const char*> cases[] = {
      {0.57, "solver.radius: 0.57 m gives each sample 298 neighbours on average, too many: one assembly of J W J^T "
             "would walk 1.073e+08 products (at most 1e+08"},
      {1.0, "solver.radius: a material radius of 1 m gives the samples more than 167032 neighbours in all"},
  };
  for (const auto& [radius, message] : cases) {
    const auto refused = sim->setSolverParams({{"radius", radius}});
    ASSERT_TRUE(refused) << radius;
    EXPECT_NE(refused->find(message), std::string::npos) << *refused;
    EXPECT_EQ(solver.neighbourhoods().neighbour.size(), before);
    EXPECT_EQ(sim->solver().params().at("radius").get<double>(), 0.3);
  }
  ASSERT_FALSE(sim->step());
  Scene scene = benignHanging();
  scene.solverParams = {{"neighbourhood", "radius"}, {"radius", 1.0}};
  const auto refused = Simulation::create(scene);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("solver.radius: a material radius of 1 m"), std::string::npos) << refused.error();
}

}  // namespace
}  // namespace clothlab
