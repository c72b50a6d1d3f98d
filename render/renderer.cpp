#include "render/renderer.h"

#include <glad/gl.h>
#include <stb_image_write.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <glm/gtc/matrix_transform.hpp>
#include <glm/gtc/type_ptr.hpp>
#include <numbers>
#include <set>

#include "shaders/embedded_shaders.h"
#include "sim/file_io.h"

namespace clothlab {

namespace {

struct FlatVertex {
  glm::vec3 position;
  glm::vec4 color;
};

// A lit triangle mesh in GPU buffers: positions, normals, one scalar per vertex, indices.
struct GpuMesh {
  GLuint vao = 0, positions = 0, normals = 0, scalars = 0, indices = 0;
  GLsizei indexCount = 0;
  void create() {
    glGenVertexArrays(1, &vao);
    glGenBuffers(1, &positions);
    glGenBuffers(1, &normals);
    glGenBuffers(1, &scalars);
    glGenBuffers(1, &indices);
    glBindVertexArray(vao);
    auto attribute = [](GLuint buffer, GLuint location, GLint size) {
      glBindBuffer(GL_ARRAY_BUFFER, buffer);
      glEnableVertexAttribArray(location);
      glVertexAttribPointer(location, size, GL_FLOAT, GL_FALSE, 0, nullptr);
    };
    attribute(positions, 0, 3);
    attribute(normals, 1, 3);
    attribute(scalars, 2, 1);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, indices);
    glBindVertexArray(0);
  }
  void destroy() {
    glDeleteBuffers(1, &positions);
    glDeleteBuffers(1, &normals);
    glDeleteBuffers(1, &scalars);
    glDeleteBuffers(1, &indices);
    glDeleteVertexArrays(1, &vao);
  }
  void upload(const std::vector<float>& p, const std::vector<float>& n, const std::vector<float>& s) {
    auto fill = [](GLuint buffer, const std::vector<float>& data) {
      glBindBuffer(GL_ARRAY_BUFFER, buffer);
      glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(data.size() * sizeof(float)), data.data(),
                   GL_STREAM_DRAW);
    };
    fill(positions, p);
    fill(normals, n);
    fill(scalars, s.empty() ? std::vector<float>(p.size() / 3, 0.0f) : s);
  }
  void uploadIndices(const std::vector<std::uint32_t>& idx) {
    glBindVertexArray(vao);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, static_cast<GLsizeiptr>(idx.size() * sizeof(std::uint32_t)),
                 idx.data(), GL_STATIC_DRAW);
    glBindVertexArray(0);
    indexCount = static_cast<GLsizei>(idx.size());
  }
  void draw(GLenum mode = GL_TRIANGLES) const {
    glBindVertexArray(vao);
    glDrawElements(mode, indexCount, GL_UNSIGNED_INT, nullptr);
  }
};

GLuint compileShader(GLenum type, const char* name, std::string& error) {
  const char* source = embeddedShader(name);
  if (!source) {
    error = std::string("shader ") + name + " is not embedded";
    return 0;
  }
  GLuint shader = glCreateShader(type);
  glShaderSource(shader, 1, &source, nullptr);
  glCompileShader(shader);
  GLint ok = 0;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[2048];
    glGetShaderInfoLog(shader, sizeof log, nullptr, log);
    error = std::string("shaders/") + name + ": " + log;
    glDeleteShader(shader);
    return 0;
  }
  return shader;
}

// Links the embedded shaders named (a geometry shader optional); 0 and `error` on failure.
GLuint linkProgram(const char* vertex, const char* fragment, std::string& error, const char* geometry = nullptr) {
  std::vector<GLuint> shaders;
  for (const auto& [type, name] : {std::pair{GL_VERTEX_SHADER, vertex}, {GL_GEOMETRY_SHADER, geometry},
                                   {GL_FRAGMENT_SHADER, fragment}}) {
    if (!name) continue;
    const GLuint shader = compileShader(type, name, error);
    if (!shader) {
      for (GLuint compiled : shaders) glDeleteShader(compiled);
      return 0;
    }
    shaders.push_back(shader);
  }
  GLuint program = glCreateProgram();
  for (GLuint shader : shaders) glAttachShader(program, shader);
  glLinkProgram(program);
  for (GLuint shader : shaders) glDeleteShader(shader);
  GLint ok = 0;
  glGetProgramiv(program, GL_LINK_STATUS, &ok);
  if (!ok) {
    char log[2048];
    glGetProgramInfoLog(program, sizeof log, nullptr, log);
    error = std::string("linking ") + vertex + (geometry ? std::string(" + ") + geometry : "") + " + " + fragment +
            ": " + log;
    glDeleteProgram(program);
    return 0;
  }
  return program;
}

void buildSphere(std::vector<float>& p, std::vector<float>& n, std::vector<std::uint32_t>& idx) {
  const int slices = 48, stacks = 24;
  for (int i = 0; i <= stacks; ++i) {
    const double phi = std::numbers::pi * i / stacks;
    for (int j = 0; j <= slices; ++j) {
      const double theta = 2 * std::numbers::pi * j / slices;
      const float x = static_cast<float>(std::sin(phi) * std::cos(theta));
      const float y = static_cast<float>(std::cos(phi));
      const float z = static_cast<float>(std::sin(phi) * std::sin(theta));
      p.insert(p.end(), {x, y, z});
      n.insert(n.end(), {x, y, z});
    }
  }
  for (int i = 0; i < stacks; ++i)
    for (int j = 0; j < slices; ++j) {
      const std::uint32_t a = i * (slices + 1) + j, b = a + slices + 1;
      idx.insert(idx.end(), {a, b, a + 1, a + 1, b, b + 1});
    }
}

void buildCube(std::vector<float>& p, std::vector<float>& n, std::vector<std::uint32_t>& idx) {
  for (int axis = 0; axis < 3; ++axis)
    for (int sign = -1; sign <= 1; sign += 2) {
      const std::uint32_t base = static_cast<std::uint32_t>(p.size() / 3);
      const int u = (axis + 1) % 3, v = (axis + 2) % 3;
      for (int corner = 0; corner < 4; ++corner) {
        float q[3];
        q[axis] = static_cast<float>(sign);
        q[u] = (corner & 1) ? 1.0f : -1.0f;
        q[v] = (corner & 2) ? 1.0f : -1.0f;
        float m[3] = {0, 0, 0};
        m[axis] = static_cast<float>(sign);
        p.insert(p.end(), q, q + 3);
        n.insert(n.end(), m, m + 3);
      }
      idx.insert(idx.end(), {base, base + 1, base + 3, base, base + 3, base + 2});
    }
}

glm::vec3 toGlm(const Vec3& v) { return {float(v.x()), float(v.y()), float(v.z())}; }

}  // namespace

struct Renderer::Impl {
  GLuint meshProgram = 0, flatProgram = 0, wireProgram = 0;
  GpuMesh cloth, sphere, cube;
  // The material coordinates for the pattern of each mesh a cloth is drawn with (attribute 3 of
  // cloth.vao, enabled while they match the drawn surface): the cloth's own, or the finer mesh
  // it is simulated on (Snapshot::fine; a new one after a remesh that changed it). Uploaded when a
  // pattern is first drawn on that mesh (compare mode's panes each have one); dropped when it is
  // gone.
  struct ClothPatternBuffer {
    std::weak_ptr<const void> mesh;  // the ClothModel or the FineMesh
    PatternCoordinates pattern;      // without its coordinates once uploaded
    size_t vertices = 0;
    GLuint buffer = 0;
  };
  std::map<const void*, ClothPatternBuffer> patterns;
  // Releases and erases the entries of `entries` whose owner is `gone`.
  template <class Map, class Gone, class Release>
  static void forgetGone(Map& entries, Gone gone, Release release) {
    for (auto it = entries.begin(); it != entries.end();) {
      if (gone(it->second)) {
        release(it->second);
        it = entries.erase(it);
      } else {
        ++it;
      }
    }
  }
  // Mesh obstacles, uploaded once per shape (smooth normals); dropped when the shape is gone.
  struct ShapeMesh {
    std::weak_ptr<const MeshShape> shape;
    GpuMesh mesh;
  };
  std::map<const MeshShape*, ShapeMesh> shapes;

  const GpuMesh& obstacleMesh(const Obstacle& ob) {
    if (ob.type == Obstacle::Type::Sphere) return sphere;
    if (ob.type != Obstacle::Type::Mesh || !ob.shape) return cube;
    // Forget shapes that no scene holds any more (their addresses may be reused).
    forgetGone(
        shapes, [](ShapeMesh& e) { return e.shape.expired(); },
        [](ShapeMesh& e) { e.mesh.destroy(); });
    auto found = shapes.find(ob.shape.get());
    if (found != shapes.end()) return found->second.mesh;
    ShapeMesh& entry = shapes[ob.shape.get()];
    entry.shape = ob.shape;
    entry.mesh.create();
    const TriangleMesh& m = ob.shape->mesh();
    const Positions normals = vertexNormals(m.positions, m.triangles);
    std::vector<float> p, n;
    std::vector<std::uint32_t> idx;
    for (int v = 0; v < m.vertexCount(); ++v)
      for (int k = 0; k < 3; ++k) {
        p.push_back(static_cast<float>(m.positions(v, k)));
        n.push_back(static_cast<float>(normals(v, k)));
      }
    for (const Tri& f : m.triangles)
      for (int k : f) idx.push_back(static_cast<std::uint32_t>(k));
    entry.mesh.upload(p, n, {});
    entry.mesh.uploadIndices(idx);
    return entry.mesh;
  }
  GLuint clothShadowVao = 0;
  // Mean length of the drawn cloth's edges when its triangles were uploaded [m] (inextensible cloth
  // keeps it).
  float meanEdge = 0;
  std::shared_ptr<const void>
      clothTriangles;  // what `cloth` holds: a snapshot's triangles or a FineMesh
  GLuint flatVao = 0, flatBuffer = 0;
  std::vector<FlatVertex> lines, points, bigPoints;

  void setMat4(GLuint program, const char* name, const glm::mat4& m) {
    glUniformMatrix4fv(glGetUniformLocation(program, name), 1, GL_FALSE, glm::value_ptr(m));
  }
  void setVec3(GLuint program, const char* name, const glm::vec3& v) {
    glUniform3fv(glGetUniformLocation(program, name), 1, glm::value_ptr(v));
  }
  void setFloat(GLuint program, const char* name, float f) {
    glUniform1f(glGetUniformLocation(program, name), f);
  }
  void setInt(GLuint program, const char* name, int i) {
    glUniform1i(glGetUniformLocation(program, name), i);
  }

  void drawFlat(const std::vector<FlatVertex>& vertices, GLenum mode, float pointSize, float bias,
                bool round) {
    if (vertices.empty()) return;
    glUseProgram(flatProgram);
    setFloat(flatProgram, "uPointSize", pointSize);
    setFloat(flatProgram, "uDepthBias", bias);
    setInt(flatProgram, "uRoundPoints", round ? 1 : 0);
    glBindVertexArray(flatVao);
    glBindBuffer(GL_ARRAY_BUFFER, flatBuffer);
    glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(vertices.size() * sizeof(FlatVertex)),
                 vertices.data(), GL_STREAM_DRAW);
    glDrawArrays(mode, 0, static_cast<GLsizei>(vertices.size()));
  }

  // The pattern of `s`'s cloth with its coordinates in attribute 3 of cloth.vao, or null where
  // there is no cloth or its coordinates do not fit the surface.
  const PatternCoordinates* preparePattern(const Snapshot& s) {
    if (!s.cloth) return nullptr;
    forgetGone(
        patterns, [](ClothPatternBuffer& e) { return e.mesh.expired(); },
        [](ClothPatternBuffer& e) { glDeleteBuffers(1, &e.buffer); });
    const std::shared_ptr<const void> mesh =
        s.fine ? std::shared_ptr<const void>(s.fine) : std::shared_ptr<const void>(s.cloth);
    auto [it, added] = patterns.try_emplace(mesh.get());
    ClothPatternBuffer& entry = it->second;
    if (added) {
      entry.mesh = mesh;
      entry.pattern = s.fine ? patternCoordinates(*s.cloth, *s.fine) : patternCoordinates(*s.cloth);
      entry.vertices = entry.pattern.coords.size() / 4;
      glGenBuffers(1, &entry.buffer);
      glBindBuffer(GL_ARRAY_BUFFER, entry.buffer);
      glBufferData(GL_ARRAY_BUFFER,
                   static_cast<GLsizeiptr>(entry.pattern.coords.size() * sizeof(float)),
                   entry.pattern.coords.data(), GL_STATIC_DRAW);
      entry.pattern.coords = {};
    }
    if (entry.vertices != static_cast<size_t>(s.fine ? s.fine->nodeCount() : s.vertexCount()))
      return nullptr;
    glBindVertexArray(cloth.vao);
    glBindBuffer(GL_ARRAY_BUFFER, entry.buffer);
    glVertexAttribPointer(3, 4, GL_FLOAT, GL_FALSE, 0, nullptr);
    return &entry.pattern;
  }

  // The mesh program's uniforms for `pattern` in cells of `size` [m] (mesh.frag).
  void setPattern(const PatternCoordinates& pattern, double size) {
    setInt(meshProgram, "uPatternKind", static_cast<int>(pattern.kind));
    setFloat(meshProgram, "uPatternSize", static_cast<float>(size));
    const size_t n = std::min(pattern.rounds.size(), static_cast<size_t>(kMaxPatternRounds));
    if (n == 0) return;
    std::array<float, kMaxPatternRounds> period{}, angle{}, from{}, cell{};
    std::array<float, 2 * kMaxPatternRounds> apex{};
    for (size_t k = 0; k < n; ++k) {
      const PatternRound& round = pattern.rounds[k];
      period[k] = static_cast<float>(round.period);
      angle[k] = static_cast<float>(round.angle);
      from[k] = static_cast<float>(round.from);
      cell[k] = static_cast<float>(drawnPatternSize(size, round));
      apex[2 * k] = static_cast<float>(round.apex.x());
      apex[2 * k + 1] = static_cast<float>(round.apex.y());
    }
    const auto count = static_cast<GLsizei>(n);
    glUniform1fv(glGetUniformLocation(meshProgram, "uRoundPeriod"), count, period.data());
    glUniform1fv(glGetUniformLocation(meshProgram, "uRoundAngle"), count, angle.data());
    glUniform1fv(glGetUniformLocation(meshProgram, "uRoundFrom"), count, from.data());
    glUniform1fv(glGetUniformLocation(meshProgram, "uRoundCell"), count, cell.data());
    glUniform2fv(glGetUniformLocation(meshProgram, "uRoundApex"), count, apex.data());
  }

  // The cloth as drawn: the finer mesh it is simulated on where there is one, else its own.
  void uploadCloth(const Snapshot& s) {
    const std::vector<float>& p = s.fine ? s.finePositions : s.positions;
    cloth.upload(p, s.fine ? s.fineNormals : s.normals, s.fine ? s.fineStrain : s.strain);
    const std::shared_ptr<const void> triangles =
        s.fine ? std::shared_ptr<const void>(s.fine) : std::shared_ptr<const void>(s.triangles);
    if (clothTriangles == triangles) return;
    clothTriangles = triangles;
    std::vector<std::uint32_t> fineIndices;
    if (s.fine)
      for (const Tri& f : s.fine->triangles)
        for (int k : f) fineIndices.push_back(static_cast<std::uint32_t>(k));
    const std::vector<std::uint32_t>& t = s.fine ? fineIndices : *s.triangles;
    cloth.uploadIndices(t);
    // The drawn mesh's edges: the finer mesh has its own; the cloth's from its triangles.
    std::vector<std::array<int, 2>> edges;
    if (s.fine) {
      edges = s.fine->edges;
    } else {
      std::set<std::pair<std::uint32_t, std::uint32_t>> unique;
      for (size_t i = 0; i + 2 < t.size(); i += 3)
        for (int k = 0; k < 3; ++k) {
          std::uint32_t a = t[i + k], b = t[i + (k + 1) % 3];
          unique.emplace(std::min(a, b), std::max(a, b));
        }
      for (const auto& [a, b] : unique) edges.push_back({static_cast<int>(a), static_cast<int>(b)});
    }
    auto vertex = [&p](int v) { return Vec3(p[3 * v], p[3 * v + 1], p[3 * v + 2]); };
    double total = 0;
    for (const auto& [a, b] : edges) total += (vertex(a) - vertex(b)).norm();
    meanEdge = edges.empty() ? 0.0f : static_cast<float>(total / static_cast<double>(edges.size()));
  }

  // Lit draw of a mesh with a model matrix.
  // mesh.vert's view for a pass outside the shadow: the lit cloth and the wireframe drawn over it
  // must feed it alike, so that their depths agree.
  void setMeshView(GLuint program, const glm::mat4& viewProj, const glm::vec3& eye) {
    setMat4(program, "uViewProj", viewProj);
    setMat4(program, "uShadow", glm::mat4(1));
    setVec3(program, "uEye", eye);
    setFloat(program, "uRecede", 0);
  }
  void drawLit(const GpuMesh& mesh, const glm::mat4& model, const glm::vec3& front,
               const glm::vec3& back, bool heat, ClothPattern pattern = ClothPattern::None) {
    setInt(meshProgram, "uPattern", static_cast<int>(pattern));
    setMat4(meshProgram, "uModel", model);
    const glm::mat3 normalMatrix = glm::transpose(glm::inverse(glm::mat3(model)));
    glUniformMatrix3fv(glGetUniformLocation(meshProgram, "uNormalMatrix"), 1, GL_FALSE,
                       glm::value_ptr(normalMatrix));
    setVec3(meshProgram, "uFrontColor", front);
    setVec3(meshProgram, "uBackColor", back);
    setInt(meshProgram, "uHeat", heat ? 1 : 0);
    mesh.draw();
  }
};

Renderer::Renderer() : impl_(std::make_unique<Impl>()) {}

Renderer::~Renderer() {
  if (!impl_->meshProgram) return;
  impl_->cloth.destroy();
  impl_->sphere.destroy();
  impl_->cube.destroy();
  for (auto& [key, entry] : impl_->shapes) entry.mesh.destroy();
  for (auto& [key, entry] : impl_->patterns) glDeleteBuffers(1, &entry.buffer);
  glDeleteVertexArrays(1, &impl_->clothShadowVao);
  glDeleteBuffers(1, &impl_->flatBuffer);
  glDeleteVertexArrays(1, &impl_->flatVao);
  glDeleteProgram(impl_->meshProgram);
  glDeleteProgram(impl_->flatProgram);
  glDeleteProgram(impl_->wireProgram);
}

std::optional<std::string> Renderer::init() {
  std::string error;
  impl_->meshProgram = linkProgram("mesh.vert", "mesh.frag", error);
  if (!impl_->meshProgram) return error;
  impl_->flatProgram = linkProgram("flat.vert", "flat.frag", error);
  if (!impl_->flatProgram) return error;
  impl_->wireProgram = linkProgram("mesh.vert", "wire.frag", error, "wire.geom");
  if (!impl_->wireProgram) return error;

  impl_->cloth.create();
  std::vector<float> p, n;
  std::vector<std::uint32_t> idx;
  impl_->sphere.create();
  buildSphere(p, n, idx);
  impl_->sphere.upload(p, n, {});
  impl_->sphere.uploadIndices(idx);
  p.clear(), n.clear(), idx.clear();
  impl_->cube.create();
  buildCube(p, n, idx);
  impl_->cube.upload(p, n, {});
  impl_->cube.uploadIndices(idx);

  // Shadow of the cloth: its positions and triangles, colour a constant attribute.
  glGenVertexArrays(1, &impl_->clothShadowVao);
  glBindVertexArray(impl_->clothShadowVao);
  glBindBuffer(GL_ARRAY_BUFFER, impl_->cloth.positions);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, nullptr);
  glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, impl_->cloth.indices);

  glGenVertexArrays(1, &impl_->flatVao);
  glGenBuffers(1, &impl_->flatBuffer);
  glBindVertexArray(impl_->flatVao);
  glBindBuffer(GL_ARRAY_BUFFER, impl_->flatBuffer);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, sizeof(FlatVertex), nullptr);
  glEnableVertexAttribArray(1);
  glVertexAttribPointer(1, 4, GL_FLOAT, GL_FALSE, sizeof(FlatVertex),
                        reinterpret_cast<void*>(offsetof(FlatVertex, color)));
  glBindVertexArray(0);
  return std::nullopt;
}

std::string Renderer::glInfo() const {
  auto str = [](GLenum e) {
    const GLubyte* s = glGetString(e);
    return s ? std::string(reinterpret_cast<const char*>(s)) : std::string("?");
  };
  return "GL_VERSION=" + str(GL_VERSION) + " GL_RENDERER=" + str(GL_RENDERER);
}

void Renderer::draw(const Snapshot& s, const Camera& camera, const RenderOptions& o, int x, int y,
                    int width, int height) {
  Impl& r = *impl_;
  glViewport(x, y, width, height);
  glEnable(GL_SCISSOR_TEST);
  glScissor(x, y, width, height);
  glClearColor(o.background.r, o.background.g, o.background.b, 1);
  glClearStencil(0);
  glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT | GL_STENCIL_BUFFER_BIT);
  glEnable(GL_DEPTH_TEST);
  glDepthFunc(GL_LEQUAL);
  glDisable(GL_CULL_FACE);
  glEnable(GL_PROGRAM_POINT_SIZE);
  glEnable(GL_BLEND);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);

  if (s.vertexCount() > 0) r.uploadCloth(s);
  Vec3 lo, hi;
  s.bounds(lo, hi);
  const double size = std::max((hi - lo).norm(), 0.1);

  // The ground (groundHeight), else just below everything.
  const std::optional<double> groundY = groundHeight(s.obstacles);
  const double gridY = groundY.value_or(lo.y() - 0.05 * size);
  const glm::vec3 center = toGlm(0.5 * (lo + hi));
  const glm::mat4 viewProj = camera.viewProjection(width, height);
  const glm::vec3 lightDir = glm::normalize(glm::vec3(0.35f, 1.0f, 0.45f));
  const glm::dvec3 eyeAt = camera.eye();
  const Vec3 eye(eyeAt.x, eyeAt.y, eyeAt.z);
  const bool belowTheGround = groundY && eye.y() <= *groundY;

  glUseProgram(r.meshProgram);
  r.setMeshView(r.meshProgram, viewProj, glm::vec3(eyeAt));
  // From below the ground the lit meshes take the light mirrored in it, at half strength: the
  // sun lights only the tops, and the cloth's underside, all that shows from there, would be
  // one flat shade, while at full strength undersides would fade into the sky behind them.
  // (mesh.frag takes the sky's side from the light's.)
  r.setVec3(r.meshProgram, "uLightDir",
            belowTheGround ? lightDir * glm::vec3(1.0f, -1.0f, 1.0f) : lightDir);
  r.setFloat(r.meshProgram, "uLightStrength", belowTheGround ? 0.5f : 1.0f);
  r.setFloat(r.meshProgram, "uHeatMax", o.heatMax);
  r.setInt(r.meshProgram, "uShadowPass", 0);
  r.setFloat(r.meshProgram, "uAlpha", 1.0f);

  // Obstacles.
  const float extent = static_cast<float>(std::max(4.0 * size, 4.0));
  auto obstacleModel = [&](const Obstacle& ob) {
    const glm::vec3 c = toGlm(ob.point);
    if (ob.type == Obstacle::Type::Sphere)
      return glm::scale(glm::translate(glm::mat4(1), c), glm::vec3(float(ob.radius)));
    if (ob.type == Obstacle::Type::Box)
      return glm::scale(glm::translate(glm::mat4(1), c), toGlm(ob.halfExtents));
    if (ob.type == Obstacle::Type::Mesh && ob.shape) {  // triangles in world coordinates at t = 0, then moved and spun
      glm::mat4 spin(1);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) spin[j][i] = static_cast<float>(ob.rotation(i, j));
      const glm::vec3 pivot = toGlm(ob.shape->pivot());
      return glm::translate(glm::mat4(1), c + pivot) * spin * glm::translate(glm::mat4(1), -pivot);
    }
    // Plane: a large square around the scene's centre, rotated from +y to the normal.
    const glm::vec3 nrm = glm::normalize(toGlm(ob.normal));
    const glm::vec3 onPlane = center - glm::dot(center - c, nrm) * nrm;
    glm::mat4 m = glm::translate(glm::mat4(1), onPlane);
    const glm::vec3 axis = glm::cross(glm::vec3(0, 1, 0), nrm);
    const float angle = std::acos(std::clamp(nrm.y, -1.0f, 1.0f));
    if (glm::length(axis) > 1e-6f) m = glm::rotate(m, angle, glm::normalize(axis));
    return glm::scale(m, glm::vec3(extent, 1, extent));
  };
  const glm::vec3 planeColor(0.70f, 0.71f, 0.69f), solidColor(0.62f, 0.66f, 0.72f),
      jellyColor(0.45f, 0.78f, 0.35f);
  // Planes are flat: lit once here and filled with the unlit program (a large area is the most
  // expensive thing to shade in software rendering). A plane is the face of the solid half-space
  // behind it, so it is filled only where the eye is on its free side: orbited below the ground,
  // the camera sees the cloth from underneath through the ground's grid, not the ground's back.
  auto seenFromItsFreeSide = [&](const Obstacle& plane) {
    return (eye - plane.point).dot(plane.normal) > 0;
  };
  glEnable(GL_POLYGON_OFFSET_FILL);
  glPolygonOffset(1.0f, 1.0f);  // surfaces behind lines and shadows
  glUseProgram(r.flatProgram);
  r.setMat4(r.flatProgram, "uViewProj", viewProj);
  for (const auto& ob : s.obstacles) {
    if (ob.type != Obstacle::Type::Plane || !seenFromItsFreeSide(ob)) continue;
    const glm::mat4 m = obstacleModel(ob);
    const glm::vec3 n = glm::normalize(toGlm(ob.normal));
    const float light = 0.55f + 0.45f * std::max(glm::dot(n, lightDir), 0.0f);
    const glm::vec4 color(planeColor * light, 1.0f);
    r.points.clear();
    for (const glm::vec4 corner : {glm::vec4(-1, 0, -1, 1), glm::vec4(1, 0, -1, 1), glm::vec4(1, 0, 1, 1),
                                   glm::vec4(-1, 0, 1, 1)})
      r.points.push_back({glm::vec3(m * corner), color});
    r.drawFlat(r.points, GL_TRIANGLE_FAN, 1, 0, false);
  }
  glDisable(GL_POLYGON_OFFSET_FILL);

  // Ground grid.
  if (o.grid) {
    r.lines.clear();
    const double step = std::pow(10.0, std::floor(std::log10(size / 2)));
    const int count = static_cast<int>(std::ceil(2.0 * size / step));
    const double cx = std::round(center.x / step) * step, cz = std::round(center.z / step) * step;
    for (int i = -count; i <= count; ++i) {
      const float alpha = (i % 10 == 0) ? 0.45f : 0.18f;
      const glm::vec4 color(0.25f, 0.27f, 0.30f, alpha);
      const float a = static_cast<float>(i * step), e = static_cast<float>(count * step);
      const float gy = static_cast<float>(gridY);
      r.lines.push_back({{float(cx) + a, gy, float(cz) - e}, color});
      r.lines.push_back({{float(cx) + a, gy, float(cz) + e}, color});
      r.lines.push_back({{float(cx) - e, gy, float(cz) + a}, color});
      r.lines.push_back({{float(cx) + e, gy, float(cz) + a}, color});
    }
    // The lines lie on the ground, which is drawn pushed back (polygon offset), so they need no
    // depth bias. They write no depth either: whatever is drawn later over the ground (cloth
    // resting on it, shadows, obstacles) is tested against the ground's depth alone. A line's
    // depth is interpolated differently from a triangle's, and a fixed clip-space pull toward the
    // eye, as here before, is several centimetres at a few metres: the lines showed through cloth
    // lying on the ground. Seen from below the ground they are in front of everything on it, and
    // write their depth so that the cloth drawn later stays behind them.
    glUseProgram(r.flatProgram);
    r.setMat4(r.flatProgram, "uViewProj", viewProj);
    glDepthMask(belowTheGround ? GL_TRUE : GL_FALSE);
    r.drawFlat(r.lines, GL_LINES, 1, 0.0f, false);
    glDepthMask(GL_TRUE);
  }

  // Planar shadows of the cloth and solid obstacles on the ground, each pixel darkened once (on
  // the ground's top, so not from below it).
  if (o.shadows && groundY && !belowTheGround) {
    const float gy = static_cast<float>(*groundY) + 1e-4f * static_cast<float>(size);
    glm::mat4 shadow(1);
    shadow[1] = glm::vec4(-lightDir.x / lightDir.y, 0, -lightDir.z / lightDir.y, 0);
    shadow[3] = glm::vec4(lightDir.x / lightDir.y * gy, gy, lightDir.z / lightDir.y * gy, 1);
    glEnable(GL_STENCIL_TEST);
    glStencilFunc(GL_EQUAL, 0, 0xff);
    glStencilOp(GL_KEEP, GL_KEEP, GL_INCR);
    glDepthMask(GL_FALSE);
    if (s.vertexCount() > 0) {  // the cloth's shadow with the unlit program: it is the larger one
      glUseProgram(r.flatProgram);
      r.setMat4(r.flatProgram, "uViewProj", viewProj * shadow);
      r.setFloat(r.flatProgram, "uDepthBias", 0);
      r.setInt(r.flatProgram, "uRoundPoints", 0);
      glVertexAttrib4f(1, 0, 0, 0, 0.28f);
      glBindVertexArray(r.clothShadowVao);
      glDrawElements(GL_TRIANGLES, r.cloth.indexCount, GL_UNSIGNED_INT, nullptr);
    }
    glUseProgram(r.meshProgram);
    r.setMat4(r.meshProgram, "uShadow", shadow);
    r.setInt(r.meshProgram, "uShadowPass", 1);
    r.setFloat(r.meshProgram, "uAlpha", 0.28f);
    for (const auto* list : {&s.obstacles, &s.jellies})
      for (const auto& ob : *list)
        if (ob.type != Obstacle::Type::Plane)
          r.drawLit(r.obstacleMesh(ob), obstacleModel(ob), {}, {}, false);
    glDepthMask(GL_TRUE);
    glDisable(GL_STENCIL_TEST);
    r.setMat4(r.meshProgram, "uShadow", glm::mat4(1));
    r.setInt(r.meshProgram, "uShadowPass", 0);
    r.setFloat(r.meshProgram, "uAlpha", 1.0f);
  }

  // Boxes and mesh obstacles are drawn pushed back along the view rays (depth only: they cover
  // the same pixels). Contacts hold the cloth's vertices outside them, but a cloth triangle that
  // spans a box's edge cuts into it, and the edge would show through the cloth as a line. A
  // triangle with edges of length s cuts at most s / sqrt(6) into a corner (s / (2 sqrt 2) into
  // an edge), perpendicular to it; along a view ray 60 degrees off its normal that is twice as
  // deep. A mesh obstacle's sharp features are kept out of the cloth's triangles
  // (resolveObstacleFeatures), but over its smooth parts a flat triangle sags s^2 / (8 R) into a
  // surface of curvature radius R, at most s / 8 where R >= s: twice that along the same ray, a
  // quarter of an edge, pushed 0.3 with a margin (the torus showed through torus-drape's cloth in
  // small spots). Spheres are drawn as polyhedra inside the sphere the contacts see: no push.
  glUseProgram(r.meshProgram);
  const float boxRecede = s.vertexCount() > 0 ? 0.8f * r.meanEdge : 0.0f;
  const float meshRecede = s.vertexCount() > 0 ? 0.3f * r.meanEdge : 0.0f;
  for (const auto& ob : s.obstacles) {
    if (ob.type == Obstacle::Type::Plane) continue;
    const bool box = ob.type == Obstacle::Type::Box, mesh = ob.type == Obstacle::Type::Mesh;
    r.setFloat(r.meshProgram, "uRecede", box ? boxRecede : mesh ? meshRecede : 0.0f);
    r.drawLit(r.obstacleMesh(ob), obstacleModel(ob), solidColor, solidColor, false);
  }
  r.setFloat(r.meshProgram, "uRecede", meshRecede);
  for (const auto& jelly : s.jellies)
    r.drawLit(r.obstacleMesh(jelly), obstacleModel(jelly), jellyColor, jellyColor, false);
  r.setFloat(r.meshProgram, "uRecede", 0);

  // The cloth.
  if (s.vertexCount() > 0) {
    // No polygon offset here: the cloth rests millimetres above obstacles. The wireframe is drawn
    // at the cloth's own depths instead, and the overlay carries a depth bias.
    const PatternCoordinates* pattern =
        o.pattern != ClothPattern::None ? r.preparePattern(s) : nullptr;
    glBindVertexArray(r.cloth.vao);
    if (pattern) {
      glEnableVertexAttribArray(3);
      r.setPattern(*pattern, o.patternSize);
    } else {
      glDisableVertexAttribArray(3);
    }
    r.drawLit(r.cloth, glm::mat4(1), o.clothFront, o.clothBack, o.heatMap,
              pattern ? o.pattern : ClothPattern::None);
    if (o.wireframe) {  // the same triangles again, at the same depths (wire.geom)
      const GLuint w = r.wireProgram;
      glUseProgram(w);
      r.setMeshView(w, viewProj, glm::vec3(camera.eye()));
      r.setMat4(w, "uModel", glm::mat4(1));
      glUniform2f(glGetUniformLocation(w, "uViewport"), static_cast<float>(width), static_cast<float>(height));
      glUniform4f(glGetUniformLocation(w, "uColor"), 0.08f, 0.08f, 0.10f, 0.55f);
      // Pulled forward by a few depth units: the two programs' depths may differ in the last bit.
      glEnable(GL_POLYGON_OFFSET_FILL);
      glPolygonOffset(-1.0f, -2.0f);
      glDepthMask(GL_FALSE);
      r.cloth.draw();
      glDepthMask(GL_TRUE);
      glDisable(GL_POLYGON_OFFSET_FILL);
    }
  }

  glUseProgram(r.flatProgram);
  r.setMat4(r.flatProgram, "uViewProj", viewProj);
  // Solver overlay.
  if (o.overlay && !s.overlayPoints.empty()) {
    auto point = [&](std::uint32_t i) {
      return glm::vec3(s.overlayPoints[3 * i], s.overlayPoints[3 * i + 1], s.overlayPoints[3 * i + 2]);
    };
    r.lines.clear();
    if (o.overlayLines)
      for (size_t i = 0; i + 1 < s.overlayLines.size(); i += 2) {
        r.lines.push_back({point(s.overlayLines[i]), {0.10f, 0.35f, 0.15f, 0.7f}});
        r.lines.push_back({point(s.overlayLines[i + 1]), {0.10f, 0.35f, 0.15f, 0.7f}});
      }
    r.drawFlat(r.lines, GL_LINES, 1, 0.0008f, false);
    r.points.clear();
    for (std::uint32_t i = 0; i < s.overlayPoints.size() / 3; ++i)
      r.points.push_back({point(i), {0.05f, 0.55f, 0.20f, 1.0f}});
    r.drawFlat(r.points, GL_POINTS, 4, 0.001f, true);
  }

  // Contacts: the vertices touching obstacles.
  if (o.contacts && !s.contactVertices.empty()) {
    r.points.clear();
    for (int v : s.contactVertices) r.points.push_back({toGlm(s.vertex(v)), {0.10f, 0.75f, 0.95f, 1.0f}});
    r.drawFlat(r.points, GL_POINTS, 5, 0.001f, true);
  }

  // A garment's open seams: a thread from each sewn vertex to the point it is sewn to
  // (sim/stitches.h), drawn while the two are more than a millimetre apart.
  if (o.markers && s.cloth && !s.cloth->stitches.empty() &&
      s.positions.size() == 3 * static_cast<size_t>(s.cloth->mesh.vertexCount())) {
    r.lines.clear();
    const glm::vec4 thread{0.12f, 0.12f, 0.18f, 0.9f};
    for (const Stitch& stitch : s.cloth->stitches) {
      const glm::vec3 at = toGlm(s.vertex(stitch.vertex));
      const glm::vec3 to = glm::mix(toGlm(s.vertex(stitch.a)), toGlm(s.vertex(stitch.b)),
                                    static_cast<float>(stitch.t));
      if (glm::distance(at, to) <= 1e-3f) continue;
      r.lines.push_back({at, thread});
      r.lines.push_back({to, thread});
    }
    r.drawFlat(r.lines, GL_LINES, 1, 0.0008f, false);
  }

  // Point masses, pins and the grab, always visible.
  if (o.markers) {
    glDisable(GL_DEPTH_TEST);
    r.points.clear();
    for (const auto& [vertex, mass] : s.pointMasses)
      r.points.push_back({toGlm(s.vertex(vertex)), {0.10f, 0.10f, 0.13f, 1}});
    r.drawFlat(r.points, GL_POINTS, 17, 0, true);
    r.lines.clear();
    r.bigPoints.clear();
    for (size_t i = 0; i < s.pinVertices.size(); ++i) {
      const glm::vec3 at = toGlm(s.vertex(s.pinVertices[i]));
      r.bigPoints.push_back({at, {0.85f, 0.10f, 0.12f, 1}});
      r.lines.push_back({at, {0.85f, 0.10f, 0.12f, 0.8f}});
      r.lines.push_back({toGlm(s.pinTargets[i]), {0.85f, 0.10f, 0.12f, 0.8f}});
    }
    if (s.grab) {
      r.bigPoints.push_back({toGlm(s.grabPoint), {1.0f, 0.85f, 0.10f, 1}});
      r.bigPoints.push_back({toGlm(s.grab->target), {1.0f, 0.95f, 0.55f, 0.9f}});
      r.lines.push_back({toGlm(s.grabPoint), {1.0f, 0.85f, 0.10f, 1}});
      r.lines.push_back({toGlm(s.grab->target), {1.0f, 0.85f, 0.10f, 1}});
    }
    r.drawFlat(r.lines, GL_LINES, 1, 0, false);
    r.drawFlat(r.bigPoints, GL_POINTS, 11, 0, true);
    glEnable(GL_DEPTH_TEST);
  }
  glBindVertexArray(0);
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_BLEND);
}

std::vector<unsigned char> readPixels(int width, int height) {
  std::vector<unsigned char> rgba(static_cast<size_t>(width) * height * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
  // GL rows are bottom-up.
  const size_t row = static_cast<size_t>(width) * 4;
  for (int yy = 0; yy < height / 2; ++yy)
    std::swap_ranges(rgba.begin() + yy * row, rgba.begin() + (yy + 1) * row,
                     rgba.begin() + (height - 1 - yy) * row);
  for (size_t i = 3; i < rgba.size(); i += 4) rgba[i] = 255;  // opaque PNGs
  return rgba;
}

std::optional<std::string> checkPngWritable(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) return path + ": is a directory, not a file name for the PNG";
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  const std::string temp = path + ".part";  // what writePng writes first
  bool ok;
  {
    std::ofstream probe(temp, std::ios::binary | std::ios::trunc);
    ok = static_cast<bool>(probe);
  }
  fs::remove(temp, ec);
  if (!ok) return path + ": cannot write the PNG (folder missing or not writable?)";
  return std::nullopt;
}

std::optional<std::string> writePng(const std::string& path, int width, int height,
                                    const std::vector<unsigned char>& rgba) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  const std::string temp = path + ".part";
  stbi_flip_vertically_on_write(0);
  if (!stbi_write_png(temp.c_str(), width, height, 4, rgba.data(), width * 4)) {
    fs::remove(temp, ec);
    return path + ": could not write the PNG (folder missing or not writable?)";
  }
  if (auto why = renameOver(temp, path)) return path + ": " + *why;
  return std::nullopt;
}

}  // namespace clothlab
