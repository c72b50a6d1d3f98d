// X-less render tests of render/: an EGL surfaceless context (Mesa), an FBO, real draws of real
// snapshots, and checks on the pixels read back.
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <glad/gl.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>

#include "render/camera.h"
#include "render/pattern.h"
#include "render/picking.h"
#include "render/renderer.h"
#include "sim/generators.h"
#include "sim/grab.h"
#include "sim/obstacles.h"
#include "sim/scene_library.h"
#include "sim/simulation.h"

namespace clothlab {
namespace {

constexpr int kWidth = 480, kHeight = 360;

std::array<int, 3> pixel(const std::vector<unsigned char>& px, int x, int y) {
  const size_t i = (static_cast<size_t>(y) * kWidth + x) * 4;
  return {px[i], px[i + 1], px[i + 2]};
}
// The cloth's orange-red front (lit), not the sky, the ground or an obstacle's grey-blue.
bool clothFront(const std::array<int, 3>& c) { return c[0] > c[1] + 40 && c[0] > c[2] + 40; }

// Cloth triangles that cut into an obstacle, and how many of them show something other than the
// cloth at their deepest point (RenderTest::settledCuts).
struct Cuts {
  int cut = 0, showing = 0;
};

class RenderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto getPlatformDisplay =
        reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    if (!getPlatformDisplay) return;
    display_ = getPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    EGLint major = 0, minor = 0;
    if (display_ == EGL_NO_DISPLAY || !eglInitialize(display_, &major, &minor)) return;
    eglBindAPI(EGL_OPENGL_API);
    const EGLint configAttributes[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                                       EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_NONE};
    EGLConfig config;
    EGLint count = 0;
    if (!eglChooseConfig(display_, configAttributes, &config, 1, &count) || count == 0) return;
    const EGLint contextAttributes[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                                        EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                        EGL_NONE};
    context_ = eglCreateContext(display_, config, EGL_NO_CONTEXT, contextAttributes);
    if (context_ == EGL_NO_CONTEXT || !eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, context_)) return;
    if (!gladLoadGL(reinterpret_cast<GLADloadfunc>(eglGetProcAddress))) return;
    // The default framebuffer does not exist: draw into our own, with a stencil for shadows.
    GLuint fbo, color, depth;
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glGenRenderbuffers(1, &color);
    glBindRenderbuffer(GL_RENDERBUFFER, color);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, kWidth, kHeight);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color);
    glGenRenderbuffers(1, &depth);
    glBindRenderbuffer(GL_RENDERBUFFER, depth);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH24_STENCIL8, kWidth, kHeight);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_STENCIL_ATTACHMENT, GL_RENDERBUFFER, depth);
    ready_ = glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
  }
  static void TearDownTestSuite() {
    if (context_ != EGL_NO_CONTEXT) eglDestroyContext(display_, context_);
    if (display_ != EGL_NO_DISPLAY) eglTerminate(display_);
  }
  void SetUp() override {
    if (!ready_) GTEST_SKIP() << "no EGL surfaceless OpenGL 3.3 context (Mesa's libegl-mesa0 missing?)";
  }

  // Draws `snapshot` framed by the camera and returns RGBA pixels, top row first.
  std::vector<unsigned char> draw(Renderer& renderer, const Snapshot& snapshot, const RenderOptions& options,
                                  Camera& camera) {
    renderer.draw(snapshot, camera, options, 0, 0, kWidth, kHeight);
    glFinish();
    return readPixels(kWidth, kHeight);
  }
  // The snapshot drawn without the ground's grid, then with it (no markers).
  std::pair<std::vector<unsigned char>, std::vector<unsigned char>> drawWithoutAndWithGrid(
      Renderer& renderer, const Snapshot& snapshot, Camera& camera) {
    RenderOptions options;
    options.markers = false;
    options.grid = false;
    auto without = draw(renderer, snapshot, options, camera);
    options.grid = true;
    return {std::move(without), draw(renderer, snapshot, options, camera)};
  }
  // Built-in `scene` after `steps` steps (the cloth's thickness changed to `thickness` where that
  // is not negative), drawn framed (written to `png` in the test output): the cloth triangles that
  // cut more than `depth` [m] into its first obstacle of `type`.
  Cuts settledCuts(const std::string& scene, int steps, Obstacle::Type type, double depth, const std::string& png,
                   double thickness = -1);

  static inline EGLDisplay display_ = EGL_NO_DISPLAY;
  static inline EGLContext context_ = EGL_NO_CONTEXT;
  static inline bool ready_ = false;
};

// A built-in scene's simulation after `steps` steps (with the cloth's thickness changed to
// `thickness` where that is not negative).
std::unique_ptr<Simulation> builtin(const std::string& name, int steps = 0, double thickness = -1) {
  auto scene = resolveScene(name);
  EXPECT_TRUE(scene) << scene.error();
  if (thickness >= 0) scene->sim.thickness = thickness;
  auto sim = Simulation::create(*scene);
  EXPECT_TRUE(sim) << sim.error();
  for (int i = 0; i < steps; ++i) EXPECT_FALSE((*sim)->step());
  return std::move(*sim);
}

Camera framed(const Snapshot& s) {
  Vec3 lo, hi;
  s.bounds(lo, hi);
  Camera camera;
  camera.fit({lo.x(), lo.y(), lo.z()}, {hi.x(), hi.y(), hi.z()});
  return camera;
}

// Every 7th vertex of the snapshot's cloth that projects inside the picture: how many land on a
// pixel that `isCloth` takes for the cloth, and how many were sampled.
template <typename IsCloth>
std::pair<int, int> verticesShowing(const Snapshot& s, const Camera& camera,
                                    const std::vector<unsigned char>& px, IsCloth isCloth) {
  int shown = 0, sampled = 0;
  for (int v = 0; v < s.vertexCount(); v += 7) {
    const glm::dvec2 q =
        camera.project({s.vertex(v).x(), s.vertex(v).y(), s.vertex(v).z()}, kWidth, kHeight);
    const int x = static_cast<int>(q.x), y = static_cast<int>(q.y);
    if (x < 3 || y < 3 || x >= kWidth - 3 || y >= kHeight - 3) continue;
    ++sampled;
    shown += isCloth(pixel(px, x, y));
  }
  return {shown, sampled};
}

TEST_F(RenderTest, DrawsTheClothLitOverTheBackground) {
  Renderer renderer;
  ASSERT_FALSE(renderer.init());
  auto sim = builtin("hanging", 500);  // swinging down: curved, so the lighting varies
  const Snapshot s = makeSnapshot(*sim, false);
  Camera camera = framed(s);
  RenderOptions options;
  options.markers = false;
  const auto px = draw(renderer, s, options, camera);
  ASSERT_FALSE(writePng((std::filesystem::path(CLOTHLAB_TEST_OUTPUT) / "render_hanging.png").string(), kWidth,
                        kHeight, px));

  // The top corners are sky: the background colour.
  const auto corner = pixel(px, 2, 2);
  EXPECT_NEAR(corner[0], 0.78 * 255, 2);
  EXPECT_NEAR(corner[2], 0.87 * 255, 2);
  // Pixels where surface vertices project are cloth: orange-red (front) or blue-grey (back),
  // not background; count them.
  const auto [cloth, sampled] = verticesShowing(s, camera, px, [](const std::array<int, 3>& c) {
    return clothFront(c) || c[2] > c[0] + 20;  // the front or the blue-grey back
  });
  ASSERT_GT(sampled, 40);
  EXPECT_GT(cloth, 0.85 * sampled)  // boundary vertices may land on a half-covered pixel
      << cloth << " of " << sampled;

  // Lighting varies over the hanging cloth: many distinct shades.
  std::set<int> shades;
  for (size_t i = 0; i < px.size(); i += 4) shades.insert(px[i] << 16 | px[i + 1] << 8 | px[i + 2]);
  EXPECT_GT(shades.size(), 100u);
}

// A sheet of `vertices` x `vertices` (12 x 12 over 1 m by default) lying face up on the ground,
// every vertex 2 mm above it (within the thickness).
std::unique_ptr<Simulation> sheetOnTheGround(int vertices = 12, double width = 1.0) {
  auto json = nlohmann::json::parse(R"({
      "cloth": {"generator": {"type": "grid"},
                "transform": {"rotate_deg": [-90, 0, 0], "translate": [0, 0.002, 0]}},
      "simulation": {"thickness": 0.004},
      "obstacles": [{"type": "plane", "point": [0, 0, 0], "normal": [0, 1, 0]}]})");
  json["cloth"]["generator"].update(
      {{"columns", vertices}, {"rows", vertices}, {"width", width}, {"height", width}});
  auto scene = parseScene(json, "ground", "");
  EXPECT_TRUE(scene) << scene.error();
  auto sim = Simulation::create(*scene);
  EXPECT_TRUE(sim) << sim.error();
  return std::move(*sim);
}

TEST_F(RenderTest, ContactVerticesAreMarkedWhenAsked) {
  auto sim = sheetOnTheGround();
  const Snapshot plain = makeSnapshot(*sim, false);
  const Snapshot marked = makeSnapshot(*sim, false, nullptr, true);
  EXPECT_TRUE(plain.contactVertices.empty());
  EXPECT_EQ(static_cast<int>(marked.contactVertices.size()), plain.vertexCount());
  Renderer renderer;
  ASSERT_FALSE(renderer.init());
  Camera camera = framed(plain);
  RenderOptions options;
  options.markers = false;
  const auto base = draw(renderer, marked, options, camera);
  options.contacts = true;
  const auto px = draw(renderer, marked, options, camera);
  int cyan = 0;
  for (size_t i = 0; i < px.size(); i += 4) cyan += px[i + 2] > 200 && px[i + 1] > 150 && px[i] < 80 && base[i] > 80;
  EXPECT_GT(cyan, 100) << "contact points drawn";
}

TEST_F(RenderTest, TheGroundGridDoesNotShowThroughClothLyingOnTheGround) {
  // The grid's lines lie on the ground plane; cloth resting millimetres above it must hide them
  // (they showed through fold-drop's cloth when the lines were pulled toward the eye by a fixed
  // clip-space depth, several centimetres at a viewing distance of a few metres).
  auto sim = sheetOnTheGround();
  const Snapshot s = makeSnapshot(*sim, false);
  Renderer renderer;
  ASSERT_FALSE(renderer.init());
  for (const double distance : {1.0, 4.0}) {
    Camera camera = framed(s);
    camera.distance *= distance;
    const auto [without, with] = drawWithoutAndWithGrid(renderer, s, camera);
    int cloth = 0, changed = 0, ground = 0;
    for (size_t i = 0; i < with.size(); i += 4) {
      const std::array<int, 3> c{without[i], without[i + 1], without[i + 2]};
      const bool differs = c != std::array<int, 3>{with[i], with[i + 1], with[i + 2]};
      if (clothFront(c)) {
        ++cloth;
        changed += differs;
      } else {
        ground += differs;
      }
    }
    std::printf("camera %.2f m away: %d cloth pixels, %d changed by the grid; %d other pixels changed\n",
                camera.distance, cloth, changed, ground);
    ASSERT_GT(cloth, 1000);
    EXPECT_GT(ground, 200) << "the grid is drawn around the cloth";
    EXPECT_EQ(changed, 0) << "grid lines over the cloth";
  }
}

// Orbited below the ground, the camera looks up at the cloth through the ground's grid. The ground
// is a half-space's face and is filled only seen from above: its back hid the whole cloth.
TEST_F(RenderTest, FromBelowTheGroundTheClothIsSeenThroughItsGrid) {
  auto sim = builtin("hanging", 300);
  const Snapshot s = makeSnapshot(*sim, false);
  const std::optional<double> ground = groundHeight(s.obstacles);
  ASSERT_TRUE(ground) << "hanging has a ground";
  Camera camera = framed(s);
  camera.pitch = -0.7;  // below the horizon
  ASSERT_LT(camera.eye().y, *ground - 0.1) << "the eye is below the ground";
  Renderer renderer;
  ASSERT_FALSE(renderer.init());
  const auto [without, px] = drawWithoutAndWithGrid(renderer, s, camera);
  ASSERT_FALSE(
      writePng((std::filesystem::path(CLOTHLAB_TEST_OUTPUT) / "render_from_below.png").string(),
               kWidth, kHeight, px));
  // The front, or the blue-grey back lit by the light mirrored in the ground: bluer than the
  // sky behind it, and brighter than the flat shade the sun above would leave it in.
  int lit = 0;
  const auto [cloth, sampled] =
      verticesShowing(s, camera, without, [&lit](const std::array<int, 3>& c) {
        const bool back = c[2] > c[0] + 40;
        lit += back && c[0] + c[1] + c[2] > 400;
        return clothFront(c) || back;
      });
  ASSERT_GT(sampled, 40);
  EXPECT_GT(cloth, 0.85 * sampled) << cloth << " of " << sampled << " vertices show the cloth";
  EXPECT_GT(lit, 0.75 * sampled) << lit << " of " << sampled << " vertices show a lit back";
  int grid = 0;
  for (size_t i = 0; i < px.size(); i += 4)
    grid += px[i] != without[i] || px[i + 2] != without[i + 2];
  EXPECT_GT(grid, 200) << "the grid is drawn";
}

TEST_F(RenderTest, HeatMapWireframeOverlayAndMarkersChangeThePicture) {
  Renderer renderer;
  ASSERT_FALSE(renderer.init());
  auto sim = builtin("hanging", 50);
  const Snapshot plain = makeSnapshot(*sim, false);
  const Snapshot withOverlay = makeSnapshot(*sim, true);
  ASSERT_FALSE(withOverlay.overlayPoints.empty());
  Camera camera = framed(plain);
  RenderOptions options;
  options.markers = false;
  const auto base = draw(renderer, plain, options, camera);
  auto differing = [&](const std::vector<unsigned char>& other) {
    int n = 0;
    for (size_t i = 0; i < base.size(); i += 4)
      n += std::abs(base[i] - other[i]) + std::abs(base[i + 1] - other[i + 1]) + std::abs(base[i + 2] - other[i + 2]) > 30;
    return n;
  };
  RenderOptions heat = options;
  heat.heatMap = true;
  heat.heatMax = 1e-6f;  // every strained vertex saturates
  EXPECT_GT(differing(draw(renderer, plain, heat, camera)), 2000);
  RenderOptions wire = options;
  wire.wireframe = true;
  EXPECT_GT(differing(draw(renderer, plain, wire, camera)), 2000);
  RenderOptions overlay = options;
  overlay.overlay = true;
  EXPECT_GT(differing(draw(renderer, withOverlay, overlay, camera)), 2000);
  // The pins are drawn red where their vertices project.
  RenderOptions markers = options;
  markers.markers = true;
  const auto px = draw(renderer, plain, markers, camera);
  ASSERT_FALSE(plain.pinVertices.empty());
  for (int v : plain.pinVertices) {
    const Vec3 p = plain.vertex(v);
    const glm::dvec2 q = camera.project({p.x(), p.y(), p.z()}, kWidth, kHeight);
    const auto c = pixel(px, static_cast<int>(q.x), static_cast<int>(q.y));
    EXPECT_GT(c[0], 180) << "pin " << v;
    EXPECT_LT(c[1], 80) << "pin " << v;
  }
}

// The brightness of each of `samples`' pixels with the pattern over the same pixel without it.
std::vector<double> patternRatios(const std::vector<unsigned char>& with,
                                  const std::vector<unsigned char>& without,
                                  const std::vector<glm::dvec2>& samples) {
  std::vector<double> out;
  for (const glm::dvec2& q : samples) {
    const auto a = pixel(with, static_cast<int>(q.x), static_cast<int>(q.y));
    const auto b = pixel(without, static_cast<int>(q.x), static_cast<int>(q.y));
    out.push_back(double(a[0] + a[1] + a[2]) / std::max(1, b[0] + b[1] + b[2]));
  }
  return out;
}

// For the pattern's tests: a 1.2 m sheet of 12 x 12 grid cells lying on the ground (flat
// coordinates from -0.6 to 0.6 m), and the options that draw it without and with `pattern` in
// cells of 0.2 m (two grid cells).
struct PatternSheet {
  static constexpr double kSize = 0.2;
  std::unique_ptr<Simulation> sim = sheetOnTheGround(13, 1.2);
  Snapshot s = makeSnapshot(*sim, false);
  RenderOptions plain, patterned;
  explicit PatternSheet(ClothPattern pattern) {
    plain.markers = plain.shadows = plain.grid = false;
    patterned = plain;
    patterned.pattern = pattern;
    patterned.patternSize = static_cast<float>(kSize);
  }
};

TEST_F(RenderTest, TheChecksArePrintedInTheClothsOwnCoordinatesAndGoWhereItGoes) {
  // The vertices with odd indices in both directions are the checks' centres, light where the
  // checks' indices (floor(u / size) + floor(v / size)) are even, dark where they are odd.
  PatternSheet sheet(ClothPattern::Checks);
  Snapshot& s = sheet.s;
  ASSERT_TRUE(s.cloth && s.cloth->flatCoords);
  const Eigen::MatrixX2d& u = s.cloth->flatCoords->coords;
  const double size = PatternSheet::kSize;
  Renderer renderer;
  ASSERT_FALSE(renderer.init());
  Camera camera = framed(s);
  const RenderOptions &plain = sheet.plain, &checks = sheet.patterned;
  auto centres = [&](int parity) {
    std::vector<glm::dvec2> out;
    for (int v = 0; v < s.vertexCount(); ++v) {
      const double a = u(v, 0) / size, b = u(v, 1) / size;
      if (std::abs(a - std::floor(a) - 0.5) > 0.01 || std::abs(b - std::floor(b) - 0.5) > 0.01)
        continue;
      if (((static_cast<long>(std::floor(a)) + static_cast<long>(std::floor(b))) & 1) != parity)
        continue;
      const Vec3 p = s.vertex(v);
      out.push_back(camera.project({p.x(), p.y(), p.z()}, kWidth, kHeight));
    }
    return out;
  };
  auto expectChecks = [&](const char* what) {
    const auto without = draw(renderer, s, plain, camera), with = draw(renderer, s, checks, camera);
    const auto light = patternRatios(with, without, centres(0)),
               dark = patternRatios(with, without, centres(1));
    ASSERT_EQ(light.size(), 18u);
    ASSERT_EQ(dark.size(), 18u);
    for (double r : light) EXPECT_GT(r, 0.97) << what;
    for (double r : dark) EXPECT_LT(r, 0.85) << what;
  };
  expectChecks("at rest");
  ASSERT_FALSE(
      writePng((std::filesystem::path(CLOTHLAB_TEST_OUTPUT) / "render_checks.png").string(), kWidth,
               kHeight, draw(renderer, s, checks, camera)));
  // The same cloth sheared by 0.48 m along x over its depth and moved by a third of a check:
  // printed in the world, the checks would stay where they were and the centres would land on other
  // checks and on their edges.
  for (int v = 0; v < s.vertexCount(); ++v)
    s.positions[3 * v] += 0.4f * s.positions[3 * v + 2] + 0.067f;
  expectChecks("sheared and moved");
  // A pattern asked for on a snapshot whose cloth it does not fit (another vertex count) is left
  // off.
  Snapshot odd = s;
  odd.positions.resize(odd.positions.size() - 3);
  odd.normals.resize(odd.normals.size() - 3);
  odd.strain.resize(odd.strain.size() - 1);
  auto t = std::make_shared<std::vector<std::uint32_t>>();
  for (size_t i = 0; i + 2 < s.triangles->size(); i += 3)
    if (std::max({(*s.triangles)[i], (*s.triangles)[i + 1], (*s.triangles)[i + 2]}) <
        odd.positions.size() / 3)
      t->insert(t->end(), s.triangles->begin() + i, s.triangles->begin() + i + 3);
  odd.triangles = t;
  EXPECT_EQ(draw(renderer, odd, checks, camera), draw(renderer, odd, plain, camera));
}

// On a cone (the skirt) the checks are those of its unrolled sector: the vertices at the cells'
// centres on the side facing the camera show light or dark checks by their cells' parity in the
// sector's own flat coordinates. (Printed in space, as before, they would fall on other checks.)
TEST_F(RenderTest, TheChecksOnAConeAreThoseOfItsUnrolledSector) {
  auto sim = builtin("skirt");
  const Snapshot s = makeSnapshot(*sim, false);
  ASSERT_TRUE(s.cloth && s.cloth->flatCoords);
  const Eigen::MatrixX2d& u = s.cloth->flatCoords->coords;
  const PatternCoordinates pattern = patternCoordinates(*s.cloth);
  ASSERT_EQ(pattern.rounds.size(), 1u);
  const double size = 0.1;
  Renderer renderer;
  ASSERT_FALSE(renderer.init());
  Camera camera = framed(s);
  RenderOptions plain;
  plain.markers = plain.shadows = plain.grid = false;
  RenderOptions checks = plain;
  checks.pattern = ClothPattern::Checks;
  checks.patternSize = static_cast<float>(size);
  const glm::dvec3 eye = camera.eye();
  Vec3 lo, hi;
  s.bounds(lo, hi);
  std::vector<glm::dvec2> centres[2];
  for (int v = 0; v < s.vertexCount(); ++v) {
    // Not on the cut, where the print breaks.
    double turn =
        std::atan2(pattern.coords[4 * v + 1], pattern.coords[4 * v]) / (2 * std::numbers::pi);
    turn -= std::floor(turn);
    if (turn < 0.05 || turn > 0.93) continue;
    const double a = u(v, 0) / size, b = u(v, 1) / size;
    if (std::abs(a - std::floor(a) - 0.5) > 0.15 || std::abs(b - std::floor(b) - 0.5) > 0.15)
      continue;
    // On the near side of the skirt (round the y axis), away from its outline: not on the hem
    // or the waist.
    const Vec3 p = s.vertex(v);
    if (p.y() < lo.y() + 0.01 || p.y() > hi.y() - 0.01) continue;
    const glm::dvec3 out = glm::normalize(glm::dvec3(p.x(), 0, p.z())),
                     toEye = glm::normalize(glm::dvec3(eye.x - p.x(), 0, eye.z - p.z()));
    if (glm::dot(out, toEye) < 0.5) continue;
    const long parity = (static_cast<long>(std::floor(a)) + static_cast<long>(std::floor(b))) & 1;
    centres[parity].push_back(camera.project({p.x(), p.y(), p.z()}, kWidth, kHeight));
  }
  ASSERT_GE(centres[0].size(), 8u);
  ASSERT_GE(centres[1].size(), 8u);
  const auto without = draw(renderer, s, plain, camera), with = draw(renderer, s, checks, camera);
  ASSERT_FALSE(
      writePng((std::filesystem::path(CLOTHLAB_TEST_OUTPUT) / "render_cone_checks.png").string(),
               kWidth, kHeight, with));
  for (double r : patternRatios(with, without, centres[0])) EXPECT_GT(r, 0.97);
  for (double r : patternRatios(with, without, centres[1])) EXPECT_LT(r, 0.85);
}

TEST_F(RenderTest, GridLinesRunAlongTheCellsEdges) {
  PatternSheet sheet(ClothPattern::Lines);
  const Snapshot& s = sheet.s;
  const Eigen::MatrixX2d& u = s.cloth->flatCoords->coords;
  const double size = PatternSheet::kSize;
  Renderer renderer;
  ASSERT_FALSE(renderer.init());
  Camera camera = framed(s);
  const RenderOptions& plain = sheet.plain;
  RenderOptions lines = sheet.patterned;
  // Where two lines cross (both coordinates multiples of the size, inside the sheet) and the cells'
  // centres.
  std::vector<glm::dvec2> crossings, centres;
  for (int v = 0; v < s.vertexCount(); ++v) {
    const double a = u(v, 0) / size, b = u(v, 1) / size;
    const Vec3 p = s.vertex(v);
    const glm::dvec2 q = camera.project({p.x(), p.y(), p.z()}, kWidth, kHeight);
    const double fa = a - std::floor(a), fb = b - std::floor(b);
    if (std::abs(fa - 0.5) < 0.01 && std::abs(fb - 0.5) < 0.01) centres.push_back(q);
    const bool onA = std::min(fa, 1 - fa) < 0.01, onB = std::min(fb, 1 - fb) < 0.01;
    const bool inside = std::abs(u(v, 0)) < 0.55 && std::abs(u(v, 1)) < 0.55;
    if (onA && onB && inside) crossings.push_back(q);
  }
  ASSERT_EQ(centres.size(), 36u);
  ASSERT_EQ(crossings.size(), 25u);
  const auto without = draw(renderer, s, plain, camera), with = draw(renderer, s, lines, camera);
  for (double r : patternRatios(with, without, centres)) EXPECT_GT(r, 0.97);
  for (double r : patternRatios(with, without, crossings)) EXPECT_LT(r, 0.7);
  // Cells smaller than a few pixels draw no lines (no moire): a millimetre's cells here.
  lines.patternSize = 0.001f;
  EXPECT_EQ(draw(renderer, s, lines, camera), without);
}

// Where the shader prints vertex v's pattern (mesh.frag patternShade): its flat coordinates as
// the pattern's four floats give them back.
Eigen::Vector2d printedAt(const PatternCoordinates& p, int v) {
  const double x = p.coords[4 * v], y = p.coords[4 * v + 1], z = p.coords[4 * v + 2];
  const int round = static_cast<int>(p.coords[4 * v + 3]);
  if (round == 0) return {x, y};
  const PatternRound& r = p.rounds[round - 1];
  if (r.period > 0) return {r.period / (2 * std::numbers::pi) * std::atan2(z, x), y};
  const double turn = std::atan2(y, x) / (2 * std::numbers::pi);
  const double a = r.angle * (turn - std::floor(turn));
  return r.apex + std::hypot(x, y) * Eigen::Vector2d(std::cos(r.from + a), std::sin(r.from + a));
}

// Whether `printed` is the flat point `u`, or `u` once round its wrap either way (a vertex on a
// cone's cut may print on the other side of it; a tube's are taken back within one period).
bool printsAt(const Eigen::Vector2d& printed, const Eigen::Vector2d& u, const MaterialWrap& wrap,
              double tolerance) {
  for (int k : {0, -1, 1})
    if ((printed - wrap.image(u, k)).norm() < tolerance) return true;
  return false;
}

TEST(Pattern, TheCoordinatesAreTheFlatRestStateTheTubesCircleOrTheRestShape) {
  // A flat sheet: its flat rest state, z = 0, in no round.
  auto flat = resolveScene("hanging");
  ASSERT_TRUE(flat) << flat.error();
  auto sheet = buildClothModel(*flat);
  ASSERT_TRUE(sheet) << sheet.error();
  PatternCoordinates p = patternCoordinates(*sheet);
  EXPECT_EQ(p.kind, PatternCoordinates::Kind::Flat);
  EXPECT_TRUE(p.rounds.empty());
  ASSERT_EQ(p.coords.size(), 4u * sheet->mesh.vertexCount());
  for (int v = 0; v < sheet->mesh.vertexCount(); ++v) {
    EXPECT_FLOAT_EQ(p.coords[4 * v], static_cast<float>(sheet->flatCoords->coords(v, 0)));
    EXPECT_FLOAT_EQ(p.coords[4 * v + 1], static_cast<float>(sheet->flatCoords->coords(v, 1)));
    EXPECT_EQ(p.coords[4 * v + 2], 0.0f);
    EXPECT_EQ(p.coords[4 * v + 3], 0.0f);
  }
  EXPECT_NEAR(patternExtent(*sheet), 1.0, 1e-9);

  // A closed tube: on the circle of its period, the first coordinate back as R atan2.
  auto tubeScene = resolveScene("ckv-cylinder");
  ASSERT_TRUE(tubeScene) << tubeScene.error();
  auto tube = buildClothModel(*tubeScene);
  ASSERT_TRUE(tube) << tube.error();
  ASSERT_TRUE(tube->flatCoords && tube->flatCoords->wrap.period > 0);
  p = patternCoordinates(*tube);
  EXPECT_EQ(p.kind, PatternCoordinates::Kind::Flat);
  ASSERT_EQ(p.rounds.size(), 1u);
  const double period = tube->flatCoords->wrap.period;
  EXPECT_DOUBLE_EQ(p.rounds[0].period, period);
  const double radius = period / (2 * std::numbers::pi);
  for (int v = 0; v < tube->mesh.vertexCount(); v += 17) {
    EXPECT_EQ(p.coords[4 * v + 3], 1.0f);
    EXPECT_NEAR(std::hypot(p.coords[4 * v], p.coords[4 * v + 2]), radius, 1e-6);
    const Eigen::Vector2d u = tube->flatCoords->coords.row(v).transpose(), back = printedAt(p, v);
    const double turns = (u.x() - back.x()) / period;
    EXPECT_NEAR(turns, std::round(turns), 1e-5) << "vertex " << v;
    EXPECT_NEAR(back.y(), u.y(), 1e-6);
  }
  // Cells that fit round it an even number of times, the nearest to the size asked for.
  for (double asked : {0.01, 0.05, 0.07, 0.2, 10.0}) {
    const double drawn = drawnPatternSize(asked, p.rounds[0]), cells = period / drawn;
    EXPECT_NEAR(cells, 2 * std::round(cells / 2), 1e-9) << asked;
    EXPECT_GE(cells, 2 - 1e-9);
    if (asked < period / 4) {  // n = P / asked cells asked for, n +- 1 drawn at worst
      EXPECT_LE(std::abs(drawn - asked), asked / (period / asked - 1) + 1e-12) << asked;
    }
  }

  // A curved cloth without a flattening: its rest positions (a pattern in space).
  ClothModel bent;
  bent.mesh.positions.resize(4, 3);
  bent.mesh.positions << 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1;
  bent.mesh.triangles = {{0, 1, 2}, {0, 2, 3}, {0, 3, 1}};
  p = patternCoordinates(bent);
  EXPECT_EQ(p.kind, PatternCoordinates::Kind::Solid);
  for (int v = 0; v < 4; ++v) {
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(p.coords[4 * v + k], static_cast<float>(bent.mesh.positions(v, k)));
    EXPECT_EQ(p.coords[4 * v + 3], 0.0f);
  }
  EXPECT_DOUBLE_EQ(patternExtent(bent), 1.0);
}

// A cone (the skirt): each vertex in its sector, r (cos phi, sin phi) about the apex with phi a
// whole turn across the sector, so that a triangle across the cut interpolates without a jump;
// printed back at its flat coordinates (or once round, on the cut). Its cells are the size asked
// for, and the pattern's size is the skirt's, not its sector's.
TEST(Pattern, AConesVerticesGoRoundItsApexOnceAcrossItsSector) {
  auto scene = resolveScene("skirt");
  ASSERT_TRUE(scene) << scene.error();
  auto skirt = buildClothModel(*scene);
  ASSERT_TRUE(skirt) << skirt.error();
  ASSERT_TRUE(skirt->flatCoords) << skirt->flatCoords.error();
  const MaterialWrap& wrap = skirt->flatCoords->wrap;
  ASSERT_NE(wrap.angle, 0);
  const PatternCoordinates p = patternCoordinates(*skirt);
  EXPECT_EQ(p.kind, PatternCoordinates::Kind::Flat);
  ASSERT_EQ(p.rounds.size(), 1u);
  const PatternRound& round = p.rounds[0];
  EXPECT_DOUBLE_EQ(round.angle, std::abs(wrap.angle));
  EXPECT_EQ(round.apex, wrap.apex);
  double lowest = 10, highest = -10;  // phi over the vertices, in turns from the first side
  for (int v = 0; v < skirt->mesh.vertexCount(); ++v) {
    const Eigen::Vector2d u = skirt->flatCoords->coords.row(v).transpose();
    EXPECT_EQ(p.coords[4 * v + 3], 1.0f);
    EXPECT_NEAR(std::hypot(p.coords[4 * v], p.coords[4 * v + 1]), (u - wrap.apex).norm(), 1e-5);
    EXPECT_TRUE(printsAt(printedAt(p, v), u, wrap, 1e-5)) << "vertex " << v;
    double turn = std::atan2(p.coords[4 * v + 1], p.coords[4 * v]) / (2 * std::numbers::pi);
    turn -= std::floor(turn);
    lowest = std::min(lowest, turn);
    highest = std::max(highest, turn);
  }
  // The sector from its first side to its last: phi from 0 to a whole turn.
  EXPECT_NEAR(lowest, 0, 1e-12);
  EXPECT_NEAR(highest, 1, 0.05);
  EXPECT_DOUBLE_EQ(drawnPatternSize(0.07, round), 0.07);
  EXPECT_NEAR(patternExtent(*skirt), 0.9, 1e-6);  // the hem's diameter
}

// Several pieces that close round (two tubes and a cone among flat panels, laid apart as
// unfoldRestMesh lays them): each vertex in its own piece's round, printed back at its flat
// coordinates; more pieces than the shader takes are printed in space.
TEST(Pattern, EachPieceThatClosesRoundIsPrintedInItsOwnRound) {
  ClothModel cloth;
  FlatRest flat;
  std::vector<Eigen::Vector2d> u;
  // A flat panel about (0, 10), tubes about v = 0 and v = 4, a cone about (20, 0).
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) {
      u.emplace_back(0.2 * i, 10 + 0.2 * j);
      u.emplace_back(0.3 * i, 0.25 * j - 0.4);
      u.emplace_back(0.1 * i, 4 + 0.25 * j - 0.4);
      const double a = 0.3 + 0.25 * i, r = 0.5 + 0.2 * j;
      u.emplace_back(20 + r * std::cos(a), r * std::sin(a));
    }
  const int n = static_cast<int>(u.size());
  flat.coords.resize(n, 2);
  for (int i = 0; i < n; ++i) flat.coords.row(i) = u[i].transpose();
  flat.wrap = MaterialWrap::cylinder(1.5);
  flat.wrap.reach = 1;
  MaterialWrap narrow = MaterialWrap::cylinder(0.5);
  narrow.reach = 1;
  narrow.middle = 4;
  MaterialWrap cone;
  cone.angle = -1.25;
  cone.apex = Eigen::Vector2d(20, 0);
  cone.cut = -1.0;
  cone.reach = 2;
  flat.wrap.others = {narrow, cone};
  cloth.mesh.positions = Positions::Random(n, 3);
  cloth.flatCoords = flat;
  const PatternCoordinates p = patternCoordinates(cloth);
  ASSERT_EQ(p.kind, PatternCoordinates::Kind::Flat);
  ASSERT_EQ(p.rounds.size(), 3u);
  EXPECT_EQ(p.rounds[0].period, 1.5);
  EXPECT_EQ(p.rounds[1].period, 0.5);
  EXPECT_EQ(p.rounds[2].angle, 1.25);
  EXPECT_NEAR(p.rounds[2].from, 0.3, 1e-12);  // the cone's first side, its vertices' least angle
  for (int v = 0; v < n; ++v) {
    EXPECT_EQ(p.coords[4 * v + 3], static_cast<float>(v % 4)) << "vertex " << v;
    const Eigen::Vector2d back = printedAt(p, v);
    if (v % 4 == 1 || v % 4 == 2) {  // a tube's: its first coordinate within one period
      const double period = p.rounds[v % 4 - 1].period;
      const double turns = (u[v].x() - back.x()) / period;
      EXPECT_NEAR(turns, std::round(turns), 1e-5) << "vertex " << v;
      EXPECT_NEAR(back.y(), u[v].y(), 1e-6) << "vertex " << v;
    } else {
      EXPECT_TRUE(printsAt(back, u[v], flat.wrap, 1e-5)) << "vertex " << v;
    }
  }
  // Every tube's cells fit round it, each its own.
  EXPECT_NEAR(drawnPatternSize(0.2, p.rounds[0]), 1.5 / 8, 1e-12);
  EXPECT_NEAR(drawnPatternSize(0.2, p.rounds[1]), 0.5 / 2, 1e-12);
  // The rest shape's size: the pieces lie apart in the plane.
  EXPECT_NEAR(
      patternExtent(cloth),
      (cloth.mesh.positions.colwise().maxCoeff() - cloth.mesh.positions.colwise().minCoeff())
          .maxCoeff(),
      1e-12);

  // Nine pieces that close round: more than the shader takes.
  for (int k = 0; k < kMaxPatternRounds - 2; ++k) {
    MaterialWrap far = MaterialWrap::cylinder(1);
    far.reach = 0.5;
    far.middle = 100 + 10 * k;
    flat.wrap.others.push_back(far);
  }
  cloth.flatCoords = flat;
  const PatternCoordinates solid = patternCoordinates(cloth);
  EXPECT_EQ(solid.kind, PatternCoordinates::Kind::Solid);
  EXPECT_TRUE(solid.rounds.empty());
  EXPECT_EQ(solid.coords[4 * 5 + 2], static_cast<float>(cloth.mesh.positions(5, 2)));
}

// The skirt (a cone) under strain-limit-remesh, until its adaptive mesh has at least ten nodes
// more than the cloth; the simulation is kept in `sim`.
Snapshot refinedSkirt(std::unique_ptr<Simulation>& sim) {
  auto scene = resolveScene("skirt");
  EXPECT_TRUE(scene) << scene.error();
  scene->solverId = "strain-limit-remesh";
  scene->solverParams = {{"remesh_interval", 2}};
  auto created = Simulation::create(*scene);
  EXPECT_TRUE(created) << created.error();
  sim = std::move(*created);
  const int base = sim->cloth().mesh.vertexCount();
  Snapshot s;
  for (int step = 0; step < 60 && (!s.fine || s.fine->nodeCount() < base + 10); ++step) {
    EXPECT_FALSE(sim->step());
    s = makeSnapshot(*sim, false);
  }
  return s;
}

// The refined skirt: the pattern on its adaptive mesh (Snapshot::fine) gives the cloth's vertices
// what the cloth's own pattern gives them, and prints every added node at its place in the flat
// rest state, also those added across the cone's cut.
TEST(Pattern, AFineMeshsNodesArePrintedWhereTheyLieInTheCloth) {
  std::unique_ptr<Simulation> sim;
  const Snapshot s = refinedSkirt(sim);
  const ClothModel& cloth = sim->cloth();
  const int base = cloth.mesh.vertexCount();
  ASSERT_TRUE(s.fine);
  ASSERT_GE(s.fine->nodeCount(), base + 10) << "the skirt's folds were refined";
  const PatternCoordinates own = patternCoordinates(cloth),
                           fine = patternCoordinates(cloth, *s.fine);
  EXPECT_EQ(fine.kind, PatternCoordinates::Kind::Flat);
  ASSERT_EQ(fine.rounds.size(), 1u);
  EXPECT_EQ(fine.rounds[0].from, own.rounds[0].from);
  ASSERT_EQ(fine.coords.size(), 4u * s.fine->nodeCount());
  EXPECT_TRUE(std::equal(own.coords.begin(), own.coords.end(), fine.coords.begin()));
  const MaterialWrap& wrap = cloth.flatCoords->wrap;
  int acrossTheCut = 0;
  for (int i = base; i < s.fine->nodeCount(); ++i) {
    const Eigen::Vector2d u = s.fine->flat.row(i).transpose();
    EXPECT_EQ(fine.coords[4 * i + 3], 1.0f) << "node " << i;
    EXPECT_TRUE(printsAt(printedAt(fine, i), u, wrap, 1e-5)) << "node " << i;
    acrossTheCut += (printedAt(fine, i) - u).norm() > 1e-3;
  }
  RecordProperty("nodes_added", s.fine->nodeCount() - base);
  RecordProperty("added_beyond_the_cut", acrossTheCut);
}

// A cloth in several pieces takes its default cell from its largest piece, not from all of them
// as they lie apart.
TEST(Pattern, SeveralPiecesAreSizedByTheLargest) {
  ClothModel cloth;
  const TriangleMesh small = makeGrid(0.4, 0.3, 5, 4, DiagonalPattern::Same),
                     large = makeGrid(1.2, 0.5, 7, 4, DiagonalPattern::Same);
  cloth.mesh.positions.resize(small.vertexCount() + large.vertexCount(), 3);
  cloth.mesh.positions << small.positions, large.positions.rowwise() + Eigen::RowVector3d(5, 0, 0);
  cloth.mesh.triangles = small.triangles;
  for (Tri t : large.triangles) {
    for (int& v : t) v += small.vertexCount();
    cloth.mesh.triangles.push_back(t);
  }
  cloth.topology = buildTopology(cloth.mesh);
  ASSERT_EQ(cloth.topology.componentCount, 2);
  EXPECT_NEAR(patternExtent(cloth), 1.2, 1e-12);
  EXPECT_DOUBLE_EQ(defaultPatternSize(patternExtent(cloth)), 0.1);
  // In one piece, the whole.
  ClothModel one;
  one.mesh = large;
  one.topology = buildTopology(one.mesh);
  EXPECT_NEAR(patternExtent(one), 1.2, 1e-12);
}

TEST(Pattern, TheDefaultCellIsATenthOfTheClothRoundedDownAndTheNamesGoBothWays) {
  EXPECT_DOUBLE_EQ(defaultPatternSize(1.0), 0.1);
  EXPECT_DOUBLE_EQ(defaultPatternSize(0.6), 0.05);
  EXPECT_DOUBLE_EQ(defaultPatternSize(3.0), 0.2);
  EXPECT_DOUBLE_EQ(defaultPatternSize(14.0), 1.0);
  EXPECT_DOUBLE_EQ(defaultPatternSize(0.019), 0.001);
  EXPECT_DOUBLE_EQ(defaultPatternSize(0.0), 0.1);
  EXPECT_DOUBLE_EQ(defaultPatternSize(std::nan("")), 0.1);
  EXPECT_STREQ(patternName(ClothPattern::Checks), "checks");
  EXPECT_STREQ(patternName(ClothPattern::Lines), "lines");
  EXPECT_STREQ(patternName(ClothPattern::None), "none");
  for (ClothPattern p : {ClothPattern::None, ClothPattern::Checks, ClothPattern::Lines})
    EXPECT_EQ(patternNamed(patternName(p)), p);
  EXPECT_FALSE(patternNamed("dots"));
  EXPECT_FALSE(patternNamed("Checks"));
}

// Two layers of cloth: on top a square of two triangles folded into a valley along its diagonal
// (its other corners 0.7 m higher), 6 mm (fold-drop's thickness) above a fine flat 12 x 12 grid.
Snapshot twoLayers() {
  Snapshot s;
  auto vertex = [&](float x, float y, float z) {
    s.positions.insert(s.positions.end(), {x, y, z});
    s.normals.insert(s.normals.end(), {0, 1, 0});
  };
  auto triangles = std::make_shared<std::vector<std::uint32_t>>();
  for (const auto& [x, y, z] : {std::tuple{-0.5f, 0.006f, -0.5f}, {0.5f, 0.706f, -0.5f}, {0.5f, 0.006f, 0.5f},
                                {-0.5f, 0.706f, 0.5f}})
    vertex(x, y, z);
  triangles->insert(triangles->end(), {0, 2, 1, 0, 3, 2});
  const int n = 12;
  for (int i = 0; i <= n; ++i)
    for (int j = 0; j <= n; ++j) vertex(-0.4f + 0.8f * i / n, 0, -0.4f + 0.8f * j / n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const std::uint32_t a = 4 + i * (n + 1) + j, b = a + n + 1;
      triangles->insert(triangles->end(), {a, a + 1, b, b, a + 1, b + 1});
    }
  s.triangles = triangles;
  s.strain.assign(s.positions.size() / 3, 0);
  return s;
}

// Distance in pixels from (x, y) to the segment a-b.
double pixelsToSegment(const glm::dvec2& p, const glm::dvec2& a, const glm::dvec2& b) {
  const glm::dvec2 ab = b - a;
  const double t = std::clamp(glm::dot(p - a, ab) / glm::dot(ab, ab), 0.0, 1.0);
  return glm::length(p - (a + t * ab));
}

TEST_F(RenderTest, TheWireframeShowsTheFrontLayersEdgesWholeAndNoneBehindIt) {
  // The wireframe once was lines pulled toward the eye by a fixed depth: about 1% of the viewing
  // distance, so a fold's lower layer showed its edges through the upper one (175 pixels here).
  // With a 50 times smaller pull the lines lost to their own triangles along the valley and were
  // drawn broken (at 130 of 216 points).
  const Snapshot s = twoLayers();
  Renderer renderer;
  ASSERT_FALSE(renderer.init());
  Camera camera = framed(s);
  camera.pitch = 1.2;  // from above, a little slanted: into the valley
  RenderOptions options;
  options.markers = false;
  options.shadows = false;
  const auto plain = draw(renderer, s, options, camera);
  options.wireframe = true;
  const auto wired = draw(renderer, s, options, camera);
  auto at = [&](int v) {
    const Vec3 p = s.vertex(v);
    return camera.project({p.x(), p.y(), p.z()}, kWidth, kHeight);
  };
  const glm::dvec2 corner[4] = {at(0), at(1), at(2), at(3)};
  auto darker = [&](int x, int y) {
    const size_t i = (static_cast<size_t>(y) * kWidth + x) * 4;
    return wired[i] + wired[i + 1] + wired[i + 2] + 30 < plain[i] + plain[i + 1] + plain[i + 2];
  };
  // Nothing darkened farther than 2 pixels from the top layer's edges and diagonal, inside it.
  int behind = 0, inside = 0;
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x) {
      const glm::dvec2 p(x + 0.5, y + 0.5);
      double nearest = pixelsToSegment(p, corner[0], corner[2]);
      for (int k = 0; k < 4; ++k) nearest = std::min(nearest, pixelsToSegment(p, corner[k], corner[(k + 1) % 4]));
      if (nearest < 2 || !clothFront(pixel(plain, x, y))) continue;
      ++inside;
      behind += darker(x, y);
    }
  // Every pixel along the diagonal is darkened (within a pixel of it).
  int along = 0, drawn = 0;
  const int samples = static_cast<int>(glm::length(corner[2] - corner[0]));  // about one per pixel
  for (int k = samples / 20; k <= samples - samples / 20; ++k) {
    const glm::dvec2 p = corner[0] + (corner[2] - corner[0]) * (static_cast<double>(k) / samples);
    bool hit = false;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) hit = hit || darker(static_cast<int>(p.x) + dx, static_cast<int>(p.y) + dy);
    ++along;
    drawn += hit;
  }
  std::printf("%d of %d pixels inside the top layer darkened; the diagonal drawn at %d of %d points\n", behind,
              inside, drawn, along);
  ASSERT_GT(inside, 5000);
  EXPECT_EQ(behind, 0) << "the lower layer's edges show through";
  EXPECT_EQ(drawn, along) << "the top layer's diagonal is broken";
}

// Where the solver simulates on a finer mesh (Snapshot::fine), that mesh is drawn: here the
// sheet's own triangles with its middle vertex raised into a tent, which the cloth's own surface
// (flat on the ground) does not have. Seen from low over the ground, the tent's side shows the
// cloth where, drawn without it, the sky or the ground shows.
TEST_F(RenderTest, TheFinerMeshASolverSimulatesOnIsDrawn) {
  auto sim = sheetOnTheGround(13);
  Snapshot flat = makeSnapshot(*sim, false);
  ASSERT_FALSE(flat.fine) << "xpbd simulates on the cloth's own mesh";
  const ClothModel& cloth = sim->cloth();
  auto fine = std::make_shared<FineMesh>();
  fine->triangles = cloth.mesh.triangles;
  fine->flat = cloth.flatCoords->coords;
  fine->rest = cloth.mesh.positions;
  fine->edges = cloth.topology.edges;
  fine->edgeLengths = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(fine->edges.size()));
  const int middle = 6 * 13 + 6;
  Positions nodes = sim->surface();
  nodes(middle, 1) += 0.4;
  Snapshot tent = flat;
  tent.fine = fine;
  for (Eigen::Index i = 0; i < nodes.rows(); ++i)
    for (int k = 0; k < 3; ++k) tent.finePositions.push_back(static_cast<float>(nodes(i, k)));
  const Positions normals = vertexNormals(nodes, fine->triangles);
  for (Eigen::Index i = 0; i < nodes.rows(); ++i)
    for (int k = 0; k < 3; ++k) tent.fineNormals.push_back(static_cast<float>(normals(i, k)));
  tent.fineStrain.assign(nodes.rows(), 0.0f);
  Vec3 lo, hi;
  tent.clothBounds(lo, hi);
  EXPECT_NEAR(hi.y(), nodes(middle, 1), 1e-6) << "the tent is in the cloth's bounds";

  Camera camera = framed(tent);
  camera.pitch = 0.12;
  Renderer renderer;
  ASSERT_FALSE(renderer.init());
  RenderOptions options;
  options.markers = false;
  options.shadows = false;
  const auto withTent = draw(renderer, tent, options, camera);
  ASSERT_FALSE(
      writePng((std::filesystem::path(CLOTHLAB_TEST_OUTPUT) / "render_fine_mesh.png").string(),
               kWidth, kHeight, withTent));
  const auto without = draw(renderer, flat, options, camera);
  // Points on the tent's faces, two thirds of the way up from their base edges.
  auto isCloth = [](const std::array<int, 3>& c) { return clothFront(c) || c[2] > c[0] + 20; };
  int shown = 0, hidden = 0, sampled = 0;
  for (const Tri& t : fine->triangles) {
    const int* at = std::find(t.begin(), t.end(), middle);
    if (at == t.end()) continue;
    Vec3 p = Vec3::Zero();
    for (int k : t) p += (k == middle ? 0.7 : 0.15) * nodes.row(k).transpose();
    const glm::dvec2 q = camera.project({p.x(), p.y(), p.z()}, kWidth, kHeight);
    ++sampled;
    shown += isCloth(pixel(withTent, static_cast<int>(q.x), static_cast<int>(q.y)));
    hidden += !isCloth(pixel(without, static_cast<int>(q.x), static_cast<int>(q.y)));
  }
  ASSERT_GE(sampled, 6);
  EXPECT_GE(shown, sampled - 1) << "of the tent's " << sampled << " faces, drawn";
  EXPECT_GE(hidden, sampled - 1) << "of the same points off the cloth drawn without it";

  // A click there picks the tent, and names the point by the cloth triangle it lies in (here the
  // tent's face itself, whose flat coordinates are the cloth's) and its place in it.
  int picked = 0;
  for (size_t t = 0; t < fine->triangles.size(); ++t) {
    const Tri& face = fine->triangles[t];
    const int corner = static_cast<int>(std::find(face.begin(), face.end(), middle) - face.begin());
    if (corner == 3) continue;
    Vec3 weights = Vec3::Constant(0.15);
    weights[corner] = 0.7;
    Vec3 p = Vec3::Zero();
    for (int k = 0; k < 3; ++k) p += weights[k] * nodes.row(face[k]).transpose();
    const glm::dvec2 q = camera.project({p.x(), p.y(), p.z()}, kWidth, kHeight);
    const Ray ray = camera.ray(q.x, q.y, kWidth, kHeight);
    const auto hit = pickSurface(tent, ray);
    if (!hit || (hit->point - p).norm() > 1e-5) continue;  // another face of the tent in front
    ++picked;
    EXPECT_EQ(hit->triangle, static_cast<int>(t));
    EXPECT_LT((hit->barycentric - weights).cwiseAbs().maxCoeff(), 1e-5);  // float positions
    EXPECT_EQ(hit->nearestVertex, middle);
    const auto below = pickSurface(flat, ray);
    EXPECT_TRUE(!below || (below->point - p).norm() > 0.1) << "the flat sheet is not there";
  }
  EXPECT_GE(picked, 3) << "of the tent's faces facing the camera";
}

// A scene's point masses are drawn as large dark dots where their vertices project.
TEST_F(RenderTest, PointMassesAreMarked) {
  Renderer renderer;
  ASSERT_FALSE(renderer.init());
  const Snapshot s = makeSnapshot(*builtin("ckv-shear"), false);
  ASSERT_EQ(s.pointMasses.size(), 1u);
  Camera camera = framed(s);
  RenderOptions options;
  const auto px = draw(renderer, s, options, camera);
  const Vec3 p = s.vertex(s.pointMasses[0].first);
  const glm::dvec2 q = camera.project({p.x(), p.y(), p.z()}, kWidth, kHeight);
  for (const auto& [dx, dy] : {std::pair{0, 0}, {5, 0}, {-5, 0}, {0, 5}, {0, -5}}) {
    const auto c = pixel(px, static_cast<int>(q.x) + dx, static_cast<int>(q.y) + dy);
    EXPECT_LT(c[0] + c[1] + c[2], 120) << "dark at (" << dx << ", " << dy << ") from the point mass";
  }
  options.markers = false;
  const auto c = pixel(draw(renderer, s, options, camera), static_cast<int>(q.x) + 5, static_cast<int>(q.y));
  EXPECT_GT(c[0] + c[1] + c[2], 120) << "without markers the cloth or the background shows there";
}

// A garment's open seams are drawn as threads from each sewn vertex to the point it is sewn to,
// with the markers; a closed stitch draws none.
TEST_F(RenderTest, OpenStitchesAreDrawnAsThreads) {
  Renderer renderer;
  ASSERT_FALSE(renderer.init());
  Snapshot s = makeSnapshot(*builtin("pillow"), false);
  ASSERT_EQ(s.cloth->stitches.size(), 80u);
  Camera camera = framed(s);
  RenderOptions options;
  const auto threads = draw(renderer, s, options, camera);
  options.markers = false;
  const auto bare = draw(renderer, s, options, camera);
  // Each thread's middle, halfway between the panels, where it is in view (not behind the ball).
  int dark = 0, seen = 0;
  for (const Stitch& stitch : s.cloth->stitches) {
    const Vec3 to = (1 - stitch.t) * s.vertex(stitch.a) + stitch.t * s.vertex(stitch.b);
    const Vec3 mid = 0.5 * (s.vertex(stitch.vertex) + to);
    const glm::dvec2 q = camera.project({mid.x(), mid.y(), mid.z()}, kWidth, kHeight);
    const auto c = pixel(bare, static_cast<int>(q.x), static_cast<int>(q.y));
    if (c[0] + c[1] + c[2] < 500) continue;  // the ball or the cloth is in front of it
    ++seen;
    const auto t = pixel(threads, static_cast<int>(q.x), static_cast<int>(q.y));
    dark += t[0] + t[1] + t[2] < 250;
  }
  EXPECT_GT(seen, 10);
  EXPECT_GT(dark, 0.8 * seen) << dark << " of " << seen;
  // Sewn shut (the upper panel moved onto the lower), no thread is drawn.
  for (const Stitch& stitch : s.cloth->stitches)
    for (int k = 0; k < 3; ++k) s.positions[3 * stitch.vertex + k] = s.positions[3 * stitch.a + k];
  options.markers = true;
  const auto shut = draw(renderer, s, options, camera);
  options.markers = false;
  EXPECT_EQ(shut, draw(renderer, s, options, camera));
}

TEST_F(RenderTest, ObstaclesAndShadowsAreDrawn) {
  Renderer renderer;
  ASSERT_FALSE(renderer.init());
  const Snapshot s = makeSnapshot(*builtin("sphere-drop"), false);
  Camera camera = framed(s);
  camera.pitch = 0.2;  // low enough to see the sphere under the cloth
  RenderOptions options;
  const auto with = draw(renderer, s, options, camera);
  options.shadows = false;
  const auto without = draw(renderer, s, options, camera);
  int darker = 0;
  for (size_t i = 0; i < with.size(); i += 4) darker += with[i] + 20 < without[i];
  EXPECT_GT(darker, 1000) << "no shadow on the ground";
  // The sphere's centre projects onto grey-blue obstacle colour or the cloth, not the sky.
  const Obstacle* sphere = nullptr;
  for (const auto& o : s.obstacles)
    if (o.type == Obstacle::Type::Sphere) sphere = &o;
  ASSERT_TRUE(sphere);
  const glm::dvec2 q = camera.project({sphere->point.x(), sphere->point.y() - 0.5 * sphere->radius, sphere->point.z()},
                                      kWidth, kHeight);
  const auto c = pixel(with, static_cast<int>(q.x), static_cast<int>(q.y));
  EXPECT_FALSE(std::abs(c[0] - 199) < 3 && std::abs(c[2] - 222) < 3) << "sky where the sphere should be";
  ASSERT_FALSE(writePng((std::filesystem::path(CLOTHLAB_TEST_OUTPUT) / "render_sphere.png").string(), kWidth,
                        kHeight, with));
}

// Cloth triangles that cut more than `depth` [m] into `obstacle` (their corners are held outside,
// their middles are not), and how many of them show something other than the cloth at their deepest
// point (8 x 8 samples per triangle) in `px`, drawn by `camera`.
Cuts cutsShowing(const Snapshot& s, const Obstacle& obstacle, const Camera& camera,
                 const std::vector<unsigned char>& px, double depth) {
  Cuts r;
  const auto& t = *s.triangles;
  for (size_t i = 0; i + 2 < t.size(); i += 3) {
    const Vec3 a = s.vertex(t[i]), b = s.vertex(t[i + 1]), c = s.vertex(t[i + 2]);
    double deepest = -depth;
    Vec3 where = Vec3::Zero();
    for (int u = 0; u <= 8; ++u)
      for (int v = 0; u + v <= 8; ++v) {
        const Vec3 p = (u * a + v * b + (8 - u - v) * c) / 8.0;
        Vec3 outward;
        const double distance = signedDistance(obstacle, p, &outward);
        if (distance < deepest) {
          deepest = distance;
          where = p;
        }
      }
    if (deepest >= -depth) continue;
    // Triangles seen nearly edge-on lie on the cloth's outline, where a pixel may be either side.
    const Vec3 normal = (b - a).cross(c - a).normalized();
    const glm::dvec3 eye = camera.eye();
    if (std::abs(normal.dot((Vec3(eye.x, eye.y, eye.z) - where).normalized())) < 0.3) continue;
    const glm::dvec2 q = camera.project({where.x(), where.y(), where.z()}, kWidth, kHeight);
    const int x = static_cast<int>(q.x), y = static_cast<int>(q.y);
    if (x < 0 || y < 0 || x >= kWidth || y >= kHeight) continue;
    ++r.cut;
    r.showing += !clothFront(pixel(px, x, y));
  }
  return r;
}

Cuts RenderTest::settledCuts(const std::string& scene, int steps, Obstacle::Type type, double depth,
                             const std::string& png, double thickness) {
  Renderer renderer;
  EXPECT_FALSE(renderer.init());
  auto sim = builtin(scene, steps, thickness);
  const Snapshot s = makeSnapshot(*sim, false);
  const Obstacle* obstacle = nullptr;
  for (const auto& o : s.obstacles)
    if (o.type == type && !obstacle) obstacle = &o;
  EXPECT_TRUE(obstacle) << scene;
  if (!obstacle) return {};
  Camera camera = framed(s);
  const auto px = draw(renderer, s, RenderOptions{}, camera);
  EXPECT_FALSE(writePng((std::filesystem::path(CLOTHLAB_TEST_OUTPUT) / png).string(), kWidth, kHeight, px));
  return cutsShowing(s, *obstacle, camera, px, depth);
}

TEST_F(RenderTest, TableEdgesDoNotShowThroughTheCloth) {
  // `tablecloth` settled on its table: where cloth triangles span the table's edges and cut into
  // it, the pixel must show the cloth, not the edge.
  const Cuts cuts = settledCuts("tablecloth", 400, Obstacle::Type::Box, 0.002, "render_tablecloth.png");
  std::printf("%d cloth triangles cut more than 2 mm into the table; %d of their pixels show something else\n",
              cuts.cut, cuts.showing);
  ASSERT_GT(cuts.cut, 20);
  EXPECT_LE(cuts.showing, cuts.cut / 20);
}

TEST_F(RenderTest, ASmoothMeshObstacleDoesNotShowThroughTheCloth) {
  // `torus-drape` settled on its torus, which has no sharp feature: the cloth's vertices are held
  // outside it, but a flat triangle across the curved tube sags into it by the chord's depth.
  // At the scene's 4 mm thickness that is rarely deeper than the gap (0 to 6 triangles, as the
  // drape settled a few bits differently), so the cloth is held 2 mm out instead: about 100
  // triangles cut in, and without mesh obstacles drawn receded 55 to 80 of them showed the torus.
  const Cuts cuts = settledCuts("torus-drape", 2500, Obstacle::Type::Mesh, 0, "render_torus.png", 0.002);
  std::printf("%d cloth triangles cut into the torus; %d of their pixels show something else\n", cuts.cut,
              cuts.showing);
  ASSERT_GT(cuts.cut, 20);
  EXPECT_LE(cuts.showing, cuts.cut / 20);
}

// `clothlab --screenshot PATH` is refused before the run when no PNG could be written there.
TEST(Png, WhereAPngCannotBeWrittenIsFoundBeforehand) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(CLOTHLAB_TEST_OUTPUT) / "png_writable";
  fs::remove_all(dir);
  fs::create_directories(dir);
  { std::ofstream(dir / "file.txt") << "not a folder"; }
  const std::string underFile = (dir / "file.txt" / "x.png").string();
  const auto e = checkPngWritable(underFile);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->rfind(underFile + ": cannot write the PNG", 0), 0u) << *e;
  const auto folder = checkPngWritable(dir.string());
  ASSERT_TRUE(folder.has_value());
  EXPECT_NE(folder->find("is a directory"), std::string::npos) << *folder;
  // A new folder is made, as writePng makes it, and nothing is left behind.
  const fs::path fresh = dir / "new" / "x.png";
  EXPECT_FALSE(checkPngWritable(fresh.string()).has_value());
  EXPECT_TRUE(fs::is_directory(dir / "new"));
  EXPECT_TRUE(fs::is_empty(dir / "new"));
}

TEST(Picking, RayThroughAProjectedPointHitsTheSurfaceThere) {
  auto sim = builtin("hanging", 20);
  const Snapshot s = makeSnapshot(*sim, false);
  Camera camera = framed(s);
  int hits = 0;
  for (int t = 0; t < s.triangleCount(); t += 37) {
    const Vec3 p = s.surfacePoint(t, Vec3(0.2, 0.3, 0.5));
    const glm::dvec2 q = camera.project({p.x(), p.y(), p.z()}, 800, 600);
    const auto hit = pickSurface(s, camera.ray(q.x, q.y, 800, 600));
    ASSERT_TRUE(hit);
    // The first surface along the ray: at p, or in front of it where the cloth folds over.
    EXPECT_LE(hit->distance, (p - Vec3(camera.eye().x, camera.eye().y, camera.eye().z)).norm() + 1e-6);
    hits += (hit->point - p).norm() < 1e-6;
    EXPECT_NEAR(hit->barycentric.sum(), 1.0, 1e-12);
  }
  EXPECT_GT(hits, 0);
  EXPECT_FALSE(pickSurface(s, Ray{{0, 100, 0}, {0, 1, 0}}));  // pointing away from everything
}

// A click on the refined skirt (Snapshot::fine) names the point it meets by the cloth triangle
// it lies in: that triangle's corners, weighed by the hit's barycentric coordinates, give back
// the point's place in the flat rest state (once round the cone at most, across its cut), the
// corner named nearest is one of them, and a grab so named lies where the click met the mesh.
TEST(Picking, AHitOnTheFinerMeshIsNamedByItsPlaceInTheCloth) {
  std::unique_ptr<Simulation> sim;
  const Snapshot s = refinedSkirt(sim);
  ASSERT_TRUE(s.fine);
  const ClothModel& cloth = sim->cloth();
  const MaterialWrap& wrap = cloth.flatCoords->wrap;
  const Eigen::MatrixX2d& u = cloth.flatCoords->coords;
  Camera camera = framed(s);
  auto node = [&s](int i) {
    return Vec3(s.finePositions[3 * i], s.finePositions[3 * i + 1], s.finePositions[3 * i + 2]);
  };
  const Positions nodes = pointRows(s.finePositions);
  int checked = 0, added = 0;
  for (size_t f = 0; f < s.fine->triangles.size(); f += 3) {
    const Tri& face = s.fine->triangles[f];
    const Vec3 centre = (node(face[0]) + node(face[1]) + node(face[2])) / 3;
    const glm::dvec2 q = camera.project({centre.x(), centre.y(), centre.z()}, kWidth, kHeight);
    const auto hit = pickSurface(s, camera.ray(q.x, q.y, kWidth, kHeight));
    ASSERT_TRUE(hit);
    if ((hit->point - centre).norm() > 1e-5) continue;  // another part of the skirt in front
    ++checked;
    added += *std::max_element(face.begin(), face.end()) >= cloth.mesh.vertexCount();
    const Eigen::Vector2d f0 = s.fine->flat.row(face[0]).transpose();
    const Eigen::Vector2d m = f0 + (wrap.offset(f0, s.fine->flat.row(face[1]).transpose()) +
                                    wrap.offset(f0, s.fine->flat.row(face[2]).transpose())) /
                                       3;
    const Tri& tri = cloth.mesh.triangles[hit->triangle];
    const Eigen::Vector2d c0 = u.row(tri[0]).transpose();
    const Eigen::Vector2d named = c0 +
                                  hit->barycentric[1] * wrap.offset(c0, u.row(tri[1]).transpose()) +
                                  hit->barycentric[2] * wrap.offset(c0, u.row(tri[2]).transpose());
    EXPECT_TRUE(printsAt(named, m, wrap, 1e-6) || printsAt(m, named, wrap, 1e-6))
        << "face " << f << ": (" << m.transpose() << ") named (" << named.transpose() << ")";
    EXPECT_GE(hit->barycentric.minCoeff(), 0);
    EXPECT_NEAR(hit->barycentric.sum(), 1, 1e-12);
    EXPECT_NE(std::find(tri.begin(), tri.end(), hit->nearestVertex), tri.end());
    // Grabbed there, the grab lies on the finer mesh where the click met it.
    const auto onFine = grabOnFineMesh(cloth, *s.fine, Grab{hit->triangle, hit->barycentric});
    ASSERT_TRUE(onFine);
    EXPECT_LT(
        (grabbedPoint(*onFine, s.fine->triangles[onFine->triangle], nodes) - hit->point).norm(),
        1e-5)
        << "face " << f;
  }
  EXPECT_GT(checked, 50);
  EXPECT_GT(added, 5) << "faces with added nodes";
}

TEST(CameraMaths, ViewPlanePointProjectsBackToThePixel) {
  Camera camera;
  camera.fit({-1, 0, -1}, {1, 1, 1});
  const glm::dvec3 through(0.2, 0.4, -0.1);
  const glm::dvec3 p = camera.onViewPlane(300, 200, 800, 600, through);
  const glm::dvec2 q = camera.project(p, 800, 600);
  EXPECT_NEAR(q.x, 300, 1e-6);
  EXPECT_NEAR(q.y, 200, 1e-6);
  EXPECT_NEAR(glm::dot(p - through, camera.forward()), 0, 1e-9);  // on the plane facing the camera
  const double before = camera.distance;
  camera.zoom(1);
  EXPECT_LT(camera.distance, before);
}

}  // namespace
}  // namespace clothlab
