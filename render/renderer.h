#pragma once
// Draws a Snapshot with OpenGL 3.3 core: the cloth (two-sided, lit, smooth normals, optional strain
// heat map), wireframe, the solver overlay, pins and the grab, obstacles, a ground grid and planar
// shadows. Needs a current GL context with glad loaded. Knows nothing of ImGui or solvers.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "render/camera.h"
#include "render/pattern.h"
#include "sim/snapshot.h"

namespace clothlab {

struct RenderOptions {
  bool wireframe = false;
  bool heatMap = false;
  float heatMax = 0.01f;       // strain shown in red
  bool overlay = false;        // solver debug geometry (NC particles and constraints)
  bool overlayLines = true;    // with the overlay: the constraints too
  bool contacts = false;       // the snapshot's contact vertices
  bool shadows = true;
  bool grid = true;
  bool markers = true;         // pins and grab
  // Checks or grid lines printed on the cloth in its material coordinates (render/pattern.h),
  // with cells of this side [m] (on a tube, the nearest that fits round it).
  ClothPattern pattern = ClothPattern::None;
  float patternSize = 0.1f;
  glm::vec3 background{0.78f, 0.82f, 0.87f};
  glm::vec3 clothFront{0.86f, 0.42f, 0.25f};
  glm::vec3 clothBack{0.55f, 0.62f, 0.80f};
};

class Renderer {
 public:
  Renderer();
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  // Compiles the shaders and builds the static meshes. Returns a message on failure.
  std::optional<std::string> init();
  // Draws into the currently bound framebuffer (viewport x, y, width, height in pixels).
  void draw(const Snapshot& snapshot, const Camera& camera, const RenderOptions& options, int x,
            int y, int width, int height);
  std::string glInfo() const;  // GL_VERSION and GL_RENDERER

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads the bound framebuffer's pixels (RGBA, top row first).
std::vector<unsigned char> readPixels(int width, int height);
// Whether a PNG can be written at `path` (its folder is created, as writePng does): a message
// naming the file when not, so that a run asked for a screenshot is refused before it starts.
std::optional<std::string> checkPngWritable(const std::string& path);
// Writes RGBA pixels (top row first) as a PNG. Returns a message naming the file on failure.
std::optional<std::string> writePng(const std::string& path, int width, int height,
                                    const std::vector<unsigned char>& rgba);

}  // namespace clothlab
