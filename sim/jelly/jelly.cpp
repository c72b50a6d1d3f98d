#include "sim/jelly/jelly.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numbers>

#include "sim/json_text.h"
#include "sim/mesh_shape.h"

namespace clothlab {
namespace {

constexpr double kPi = std::numbers::pi;
// The wall's force grows as k_c V / (1 - V / volume), the denominator no smaller than this.
constexpr double kLeastRoom = 0.05;
// The farthest the sections' solves move a vertex, as a fraction of the body's radius (the
// largest distance of a vertex from the centre).
constexpr double kFarthest = 0.5;
// Solves of a section after the first, each holding on the walls the elements the last one
// left beyond them.
constexpr int kExtraPasses = 3;
// The most sub-steps of the rigid motion in one step.
constexpr int kMostSubsteps = 256;
// The closest the centre comes to a wall, as a fraction of the body's reach towards it.
constexpr double kNearest = 0.2;
// The least a sub-step lets the point nearest a wall move towards it, as a fraction of the radius.
constexpr double kLeastTravel = 1e-3;

// Signed volume of the tetrahedron (p, a, b, c).
double tetVolume(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  return (a - p).dot((b - p).cross(c - p)) / 6;
}

// ∫ x xᵀ dV over the tetrahedron (a, b, c, d) of signed volume `volume`.
Eigen::Matrix3d tetSecondMoment(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d,
                                double volume) {
  const Vec3 sum = a + b + c + d;
  return volume / 20 *
         (a * a.transpose() + b * b.transpose() + c * c.transpose() + d * d.transpose() +
          sum * sum.transpose());
}

struct VolumeAndCentroid {
  double volume = 0;
  Vec3 centroid{0, 0, 0};
};

VolumeAndCentroid enclosed(const TriangleMesh& mesh) {
  VolumeAndCentroid out;
  const Vec3 origin = mesh.positions.colwise().mean().transpose();
  Vec3 moment = Vec3::Zero();
  for (const Tri& t : mesh.triangles) {
    const Vec3 a = mesh.positions.row(t[0]), b = mesh.positions.row(t[1]),
               c = mesh.positions.row(t[2]);
    const double v = tetVolume(origin, a, b, c);
    out.volume += v;
    moment += v * (origin + a + b + c) / 4;
  }
  out.centroid = out.volume != 0 ? Vec3(moment / out.volume) : origin;
  return out;
}

// A unit vector perpendicular to `along`: the x axis made perpendicular, or the z axis where
// `along` lies near x (a fixed preference, so that a wobbling `along` keeps its sections).
Vec3 perpendicular(const Vec3& along) {
  const Vec3 e = std::abs(along.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitZ();
  return (e - e.dot(along) * along).normalized();
}

// `loop` resampled at `count` points equally spaced along its length.
std::vector<Vec2> resample(const std::vector<Vec2>& loop, int count) {
  std::vector<double> at(loop.size() + 1, 0);
  for (size_t i = 0; i < loop.size(); ++i)
    at[i + 1] = at[i] + (loop[(i + 1) % loop.size()] - loop[i]).norm();
  std::vector<Vec2> out;
  out.reserve(count);
  size_t edge = 0;
  for (int k = 0; k < count; ++k) {
    const double s = at.back() * k / count;
    while (edge + 1 < loop.size() && at[edge + 1] <= s) ++edge;
    const double span = at[edge + 1] - at[edge];
    const double f = span > 0 ? (s - at[edge]) / span : 0;
    out.push_back(loop[edge] + f * (loop[(edge + 1) % loop.size()] - loop[edge]));
  }
  return out;
}

}  // namespace

double jellyContactStiffness(const JellyMaterial& m, double volume) {
  const double radius = std::cbrt(3 * volume / (4 * kPi));
  return 4 * m.young / (3 * kPi * (1 - m.poisson * m.poisson) * radius * std::sqrt(0.1));
}

const ParamTable<JellyMaterial>& JellyMaterial::table() {
  static const ParamTable<JellyMaterial> table = {
      {"density", "kg/m^3", "density (water 1000)", &JellyMaterial::density, 1, 1e5, true},
      {"young", "Pa",
       "Young's modulus: softer squashes more and sinks deeper (a gelatin dessert: about 1e4)",
       &JellyMaterial::young, 1, 1e9, true},
      {"poisson", "",
       "Poisson's ratio: near 0.5 bulges sideways as it squashes (rubber), near 0 does not "
       "(sponge)",
       &JellyMaterial::poisson, 0, 0.49},
      {"damping", "s/m",
       "internal friction: higher bounces less (about 1 - 0.4 damping v of an impact speed v comes "
       "back)",
       &JellyMaterial::damping, 0, 100},
      {"friction", "",
       "Coulomb coefficient of the cloth on the jelly (the jelly on an obstacle: the obstacle's)",
       &JellyMaterial::friction, 0, kMaxFriction},
      {"alpha", "",
       "WOKT eq. 18's exponent spreading the sections' displacements over the vertices (1 to 2)",
       &JellyMaterial::alpha, 0.1, 10},
      {"elements", "", "boundary elements per cross-section", &JellyMaterial::elements, 8, 512},
      {"contact_stiffness", "N/m^3",
       "k_c of the walls' push k_c V; 0: a Hertz contact of the material at a tenth of the radius",
       &JellyMaterial::contactStiffness, 0, 1e12, true},
  };
  return table;
}

std::optional<std::string> validateJelly(const JellySpec& spec, const std::string& at) {
  if (auto e = validateParams(JellyMaterial::table(), spec.material, at)) return e;
  if (!spec.velocity.allFinite() || spec.velocity.cwiseAbs().maxCoeff() > kMaxObstacleSpeed)
    return at + ".velocity: each component must be finite and at most " +
           nlohmann::json(kMaxObstacleSpeed).dump() + " m/s";
  if (!spec.angularVelocity.allFinite() ||
      spec.angularVelocity.cwiseAbs().maxCoeff() > kMaxObstacleSpin)
    return at + ".angular_velocity: each component must be finite and at most " +
           nlohmann::json(kMaxObstacleSpin).dump() + " rad/s";
  if (!spec.surface || spec.surface->triangleCount() == 0)
    return at + ": the jelly has no triangles";
  const TriangleMesh& mesh = *spec.surface;
  if (!mesh.positions.allFinite() || mesh.positions.cwiseAbs().maxCoeff() > kMaxObstacleCoordinate)
    return at + ": a vertex is not finite or lies beyond " +
           nlohmann::json(kMaxObstacleCoordinate).dump() + " m";
  const MeshTopology topology = buildTopology(mesh);
  int open = 0;
  for (int count : topology.edgeTriCount) open += count != 2;
  if (open > 0)
    return at + ": the jelly's surface must be closed (every edge shared by two triangles); " +
           std::to_string(open) + " of its " + std::to_string(topology.edgeCount()) +
           " edges are not";
  const double volume = enclosed(mesh).volume;
  if (!(volume > 0))
    return at + ": the jelly's surface encloses no volume (" + nlohmann::json(volume).dump() +
           " m³; are its triangles turned inwards?)";
  return std::nullopt;
}

nlohmann::json jellyJson(const JellySpec& spec) {
  nlohmann::json j = spec.json;
  j.update(writeParams(JellyMaterial::table(), spec.material));
  // A motion is written only when there is one.
  for (const auto& [key, value] :
       {std::pair{"velocity", spec.velocity}, std::pair{"angular_velocity", spec.angularVelocity}})
    if (value != Vec3::Zero())
      j[key] = vecJson(value);
    else
      j.erase(key);
  return j;
}

std::optional<std::string> jellyShapeWarning(const JellySpec& spec, const std::string& at) {
  const JellyBody body(spec);
  const Positions& p = spec.surface->positions;
  const Vec3 extent = p.colwise().maxCoeff() - p.colwise().minCoeff();
  const double fill = body.volume() / (kPi / 6 * extent.prod());
  std::string why;
  for (const Vec3& across : {Vec3(Vec3::UnitX()), Vec3(Vec3::UnitZ())}) {
    int loops = 0;
    const std::vector<Vec2> polygon =
        body.section(across, -Vec3::UnitY(), spec.material.elements, &loops);
    bool centre = false;  // inside the polygon, by the parity of crossings of a ray along +x
    for (size_t i = 0; i < polygon.size(); ++i) {
      const Vec2& a = polygon[i];
      const Vec2& b = polygon[(i + 1) % polygon.size()];
      if ((a.y() > 0) != (b.y() > 0) && a.x() + (0 - a.y()) / (b.y() - a.y()) * (b.x() - a.x()) > 0)
        centre = !centre;
    }
    if (loops > 1 && why.empty())
      why = "a section through its centre falls in " + std::to_string(loops) + " pieces";
    else if (!centre && why.empty())
      why = "a section through it misses its centre";
  }
  if (fill >= 0.6 && why.empty()) return std::nullopt;
  char filled[64];
  std::snprintf(filled, sizeof filled, "it fills %.0f%% of the ellipsoid in its bounding box",
                100 * fill);
  return at +
         ": WOKT's two cross-sections suit compact jellies (a ball, an ellipsoid, a cylinder); " +
         filled + (why.empty() ? "" : " and " + why) +
         ", so where it touches, its limbs bend as soft cantilevers (a soft one's droop far)";
}

JellyBody::JellyBody(const JellySpec& spec)
    : velocity_(spec.velocity), angularVelocity_(spec.angularVelocity) {
  const VolumeAndCentroid vc = enclosed(*spec.surface);
  volume_ = vc.volume;
  start_ = center_ = vc.centroid;
  auto rest = std::make_shared<TriangleMesh>(*spec.surface);
  rest->positions.rowwise() -= start_.transpose();
  radius_ = rest->positions.rowwise().norm().maxCoeff();
  for (const Tri& t : rest->triangles) {
    const Vec3 a = rest->positions.row(t[0]), b = rest->positions.row(t[1]),
               c = rest->positions.row(t[2]);
    secondMoment_ += tetSecondMoment(Vec3::Zero(), a, b, c, tetVolume(Vec3::Zero(), a, b, c));
  }
  posed_ = rest->positions;
  rest_ = std::move(rest);
  restShape_ = std::make_shared<const MeshShape>(*spec.surface);
  setMaterial(spec.material);
}

void JellyBody::setMaterial(const JellyMaterial& material) {
  if (material.young != material_.young || material.poisson != material_.poisson ||
      material.elements != material_.elements || material.alpha != material_.alpha)
    for (Section& s : sections_) s.bem = nullptr;
  material_ = material;
  mass_ = material_.density * volume_;
  bodyInertia_ =
      material_.density * (secondMoment_.trace() * Eigen::Matrix3d::Identity() - secondMoment_);
  leastInertia_ =
      Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(bodyInertia_, Eigen::EigenvaluesOnly)
          .eigenvalues()
          .minCoeff();
  contactStiffness_ = material_.contactStiffness > 0 ? material_.contactStiffness
                                                     : jellyContactStiffness(material_, volume_);
}

Eigen::Matrix3d JellyBody::inertia() const {
  const Eigen::Matrix3d r = rotation();
  return r * bodyInertia_ * r.transpose();
}

Positions JellyBody::surface() const {
  Positions p = posed_.rowwise() + center_.transpose();
  if (displacement_.size() > 0) p += displacement_ * rotation().transpose();
  return p;
}

Obstacle JellyBody::asObstacle() const {
  if (displacement_.size() > 0 && !deformedShape_) {
    deformedShape_ = std::make_shared<const MeshShape>(
        restShape_->movedTo((rest_->positions + displacement_).rowwise() + start_.transpose()));
  }
  return obstacleOf(displacement_.size() > 0 ? deformedShape_ : restShape_);
}

Obstacle JellyBody::asObstacleFor(const Eigen::AlignedBox3d& box) const {
  if (box.isEmpty() || box.exteriorDistance(center_) > reach()) return obstacleOf(restShape_);
  return asObstacle();
}

Obstacle JellyBody::obstacleOf(std::shared_ptr<const MeshShape> shape) const {
  Obstacle o;
  o.type = Obstacle::Type::Mesh;
  o.shape = std::move(shape);
  // The shape lies as the spec placed it (centre start_); the obstacle turns it about its pivot,
  // so `point` puts the turned centre of mass at center_, and `velocity` makes the surface move
  // at velocity_ + angularVelocity_ × (p - center_).
  o.rotation = rotation();
  const Vec3 pivot = o.shape->pivot();
  o.point = center_ - pivot + o.rotation * (pivot - start_);
  o.angularVelocity = angularVelocity_;
  o.velocity = velocity_ + angularVelocity_.cross(o.center() - center_);
  o.friction = material_.friction;
  return o;
}

JellyBody::Beyond JellyBody::beyond(const Vec3& center, const Vec3& point,
                                    const Vec3& normal) const {
  // The rest surface clipped to the far side of the plane, coned from a point on the plane: the
  // cap the plane cuts adds nothing (its cones are flat), so the sum is the volume beyond. In
  // coordinates relative to `center`, whose second moments do not cancel far from the origin.
  Beyond out;
  Vec3 moment = Vec3::Zero();
  Eigen::Matrix3d second = Eigen::Matrix3d::Zero();
  Vec3 vectorArea = Vec3::Zero();  // of the surface beyond: the cut face's, reversed
  const Vec3 onPlane = point - center;
  for (const Tri& t : rest_->triangles) {
    Vec3 v[3];
    double s[3];
    for (int k = 0; k < 3; ++k) {
      v[k] = posed_.row(t[k]).transpose();
      s[k] = (v[k] - onPlane).dot(normal);
    }
    if (s[0] >= 0 && s[1] >= 0 && s[2] >= 0) continue;
    Vec3 clipped[4];
    int n = 0;
    for (int k = 0; k < 3; ++k) {
      const int next = (k + 1) % 3;
      if (s[k] < 0) clipped[n++] = v[k];
      if ((s[k] < 0) != (s[next] < 0))
        clipped[n++] = v[k] + s[k] / (s[k] - s[next]) * (v[next] - v[k]);
    }
    for (int k = 1; k + 1 < n; ++k) {
      const double vol = tetVolume(onPlane, clipped[0], clipped[k], clipped[k + 1]);
      out.volume += vol;
      moment += vol * (onPlane + clipped[0] + clipped[k] + clipped[k + 1]) / 4;
      second += tetSecondMoment(onPlane, clipped[0], clipped[k], clipped[k + 1], vol);
      vectorArea += (clipped[k] - clipped[0]).cross(clipped[k + 1] - clipped[0]) / 2;
    }
  }
  if (out.volume > 0) {
    const Vec3 c = moment / out.volume;
    out.centroid = c + center;
    out.spread = second - out.volume * c * c.transpose();
    out.area = std::abs(vectorArea.dot(normal));
  } else {
    out.volume = 0;
  }
  return out;
}

std::vector<Vec2> JellyBody::section(const Vec3& across, const Vec3& along, int elements,
                                     int* loops) const {
  const Vec3 normal = across.cross(along);
  const Positions& r = rest_->positions;
  const Eigen::VectorXd side = r * normal;
  // Crossing points on mesh edges, keyed by the edge, and the segments between them.
  std::map<std::pair<int, int>, int> id;
  std::vector<Vec2> points;
  std::vector<std::vector<int>> next;
  auto crossing = [&](int a, int b) {
    const auto key = std::minmax(a, b);
    auto [it, fresh] = id.try_emplace(key, static_cast<int>(points.size()));
    if (fresh) {
      const double f = side[a] / (side[a] - side[b]);
      const Vec3 p = r.row(a) + f * (r.row(b) - r.row(a));
      points.emplace_back(p.dot(across), p.dot(along));
      next.emplace_back();
    }
    return it->second;
  };
  for (const Tri& t : rest_->triangles) {
    int ends[2], n = 0;
    for (int k = 0; k < 3 && n < 2; ++k) {
      const int a = t[k], b = t[(k + 1) % 3];
      if ((side[a] >= 0) != (side[b] >= 0)) ends[n++] = crossing(a, b);
    }
    if (n == 2 && ends[0] != ends[1]) {
      next[ends[0]].push_back(ends[1]);
      next[ends[1]].push_back(ends[0]);
    }
  }
  // Walk the loops; keep the one enclosing the most area.
  if (loops) *loops = 0;
  std::vector<char> seen(points.size(), 0);
  std::vector<Vec2> best;
  double bestArea = 0;
  for (size_t s = 0; s < points.size(); ++s) {
    if (seen[s] || next[s].empty()) continue;
    std::vector<Vec2> loop;
    int prev = -1, at = static_cast<int>(s);
    while (at >= 0 && !seen[at]) {
      seen[at] = 1;
      loop.push_back(points[at]);
      int go = -1;
      for (int candidate : next[at])
        if (candidate != prev && !seen[candidate]) go = candidate;
      prev = at;
      at = go;
    }
    const double area = polygonArea(loop);
    if (loops && loop.size() >= 3) ++*loops;
    if (loop.size() >= 3 && std::abs(area) > std::abs(bestArea)) {
      best = std::move(loop);
      bestArea = area;
    }
  }
  if (best.empty()) return best;
  if (bestArea < 0) std::reverse(best.begin(), best.end());
  return resample(best, elements);
}

JellyBody::Section& JellyBody::sectionFor(int which, const Vec3& across, const Vec3& along) {
  Section& s = sections_[which];
  // Within 5° of the last sections' directions their matrices serve (the direction to the mean
  // contact point wobbles by a few degrees on a faceted surface).
  constexpr double kSameDirection = 0.9962;
  if (s.bem && s.across.dot(across) > kSameDirection && s.along.dot(along) > kSameDirection)
    return s;
  s.across = across;
  s.along = along;
  std::vector<Vec2> polygon = section(across, along, material_.elements);
  s.bem = checkBemPolygon(polygon)
              ? nullptr
              : std::make_shared<BemPolygon>(
                    std::move(polygon), BemMaterial{material_.young, material_.poisson, false});
  s.spreads = nullptr;
  if (s.bem) {
    const Positions& r = rest_->positions;
    auto spreads = std::make_shared<std::vector<std::array<Spread, 2>>>(r.rows());
    const ElementSlabs slabs[2] = {elementSlabs(*s.bem, 0), elementSlabs(*s.bem, 1)};
    for (Eigen::Index i = 0; i < r.rows(); ++i) {
      const Vec3 q = r.row(i).transpose();
      const Vec2 p(q.dot(across), q.dot(along));
      (*spreads)[i] = {spreadAt(*s.bem, p, slabs[0]), spreadAt(*s.bem, p, slabs[1])};
    }
    s.spreads = std::move(spreads);
  }
  return s;
}

Eigen::VectorXd JellyBody::solveSection(Section& section, const std::vector<Wall>& walls,
                                        const Vec3& bodyForce) {
  if (!section.bem) return {};
  BemPolygon& bem = *section.bem;
  const int n = bem.elementCount();
  // The section's axes in the world, as the body is turned now.
  const Eigen::Matrix3d turn = rotation();
  const Vec3 across = turn * section.across, along = turn * section.along;
  auto toWorld = [&](const Vec2& p) { return Vec3(center_ + p.x() * across + p.y() * along); };
  // How far point q lies beyond the walls (the deepest), and that wall's normal.
  auto deepest = [&](const Vec3& q, Vec3& normal) {
    double depth = 0;
    for (const Wall& w : walls) {
      const double d = (w.point - q).dot(w.normal);
      if (d > depth) {
        depth = d;
        normal = w.normal;
      }
    }
    return depth;
  };
  BemPolygon::Conditions bc{std::vector<char>(2 * n, 0), Eigen::VectorXd::Zero(2 * n)};
  // Holds element j on the wall it lies beyond, moved by `already` (its displacement so far):
  // pushed along the wall's normal onto it, not sliding along it.
  auto holdOnWall = [&](int j, const Vec2& already) {
    Vec3 normal;
    const double depth = deepest(toWorld(bem.midpoint(j) + already), normal);
    if (depth <= 0) return false;
    const Vec3 u = already.x() * across + already.y() * along + depth * normal;
    bc.displacementKnown[2 * j] = bc.displacementKnown[2 * j + 1] = 1;
    bc.value[2 * j] = u.dot(across);
    bc.value[2 * j + 1] = u.dot(along);
    return true;
  };
  int held = 0;
  for (int j = 0; j < n; ++j) held += holdOnWall(j, Vec2::Zero());
  if (held < 2) return {};  // a touch of one element leaves the shape as it is
  const Vec2 b(bodyForce.dot(across), bodyForce.dot(along));
  std::optional<BemPolygon::Solution> solved;
  for (int pass = 0; pass <= kExtraPasses; ++pass) {
    const int before = bem.factorizations();
    solved = bem.solve(bc, b);
    ++info_.sectionSolves;
    info_.factorizations += bem.factorizations() - before;
    if (!solved || !solved->displacement.allFinite()) return {};
    // Elements the solve left beyond a wall are held on it too, and the section solved again
    // (WOKT §6 does this once; a body standing on a narrow foot needs a few).
    bool more = false;
    for (int j = 0; j < n && pass < kExtraPasses; ++j)
      if (!bc.displacementKnown[2 * j])
        more |= holdOnWall(j, solved->displacement.segment<2>(2 * j));
    if (!more) break;
  }
  return solved->displacement;
}

JellyBody::ElementSlabs JellyBody::elementSlabs(const BemPolygon& bem, int axis) {
  const std::vector<Vec2>& v = bem.vertices();
  const int n = bem.elementCount(), other = 1 - axis;
  ElementSlabs slabs;
  slabs.axis = axis;
  double hi = -1e300;
  slabs.lo = 1e300;
  for (const Vec2& a : v) {
    slabs.lo = std::min(slabs.lo, a[other]);
    hi = std::max(hi, a[other]);
  }
  slabs.height = std::max((hi - slabs.lo) / n, 1e-300);
  slabs.elements.resize(n);
  // An element meets the lines through (min, max] of its extent; each slab lists those that reach
  // it or come within a millionth of a slab of it, so that rounding in at() loses none.
  const double slack = 1e-6 * slabs.height;
  for (int k = 0; k < n; ++k) {
    const double low = std::min(v[k][other], v[(k + 1) % n][other]) - slack;
    const double high = std::max(v[k][other], v[(k + 1) % n][other]) + slack;
    const int first = std::max(0, static_cast<int>(std::floor((low - slabs.lo) / slabs.height)));
    const int last =
        std::min(n - 1, static_cast<int>(std::floor((high - slabs.lo) / slabs.height)));
    for (int slab = first; slab <= last; ++slab) slabs.elements[slab].push_back(k);
  }
  return slabs;
}

std::span<const int> JellyBody::ElementSlabs::at(const Vec2& p) const {
  const double offset = (p[1 - axis] - lo) / height;
  if (!(offset >= 0 && offset <= static_cast<double>(elements.size()))) return {};
  return elements[std::min(static_cast<size_t>(offset), elements.size() - 1)];
}

JellyBody::Spread JellyBody::spreadAt(const BemPolygon& bem, const Vec2& p,
                                      const ElementSlabs& slabs) const {
  const std::vector<Vec2>& v = bem.vertices();
  const int n = bem.elementCount(), axis = slabs.axis, other = 1 - axis;
  // Where the line through p along `axis` meets the boundary, nearest on either side of p.
  Spread out;
  double below = -1e300, above = 1e300;
  for (int k : slabs.at(p)) {
    const Vec2& a = v[k];
    const Vec2& b = v[(k + 1) % n];
    if ((a[other] >= p[other]) == (b[other] >= p[other])) continue;
    const double s = (p[other] - a[other]) / (b[other] - a[other]);
    const double x = a[axis] + s * (b[axis] - a[axis]);
    if (x <= p[axis] && x > below) {
      below = x;
      out.element[0] = k;
      out.at[0] = s;
    } else if (x > p[axis] && x < above) {
      above = x;
      out.element[1] = k;
      out.at[1] = s;
    }
  }
  const bool hasBelow = out.element[0] >= 0, hasAbove = out.element[1] >= 0;
  if (hasBelow && hasAbove) {
    const double r1 = std::pow(p[axis] - below, material_.alpha),
                 r2 = std::pow(above - p[axis], material_.alpha);
    out.weight[0] = r1 + r2 > 0 ? r2 / (r1 + r2) : 1;
    out.weight[1] = 1 - out.weight[0];
  } else if (hasBelow || hasAbove) {
    out.weight[hasBelow ? 0 : 1] = 1;
  } else {
    // The line misses the section (a vertex beyond its extent): the nearest element's displacement.
    out.nearest = 0;
    for (int k = 1; k < n; ++k)
      if ((bem.midpoint(k) - p).squaredNorm() < (bem.midpoint(out.nearest) - p).squaredNorm())
        out.nearest = k;
  }
  return out;
}

void JellyBody::step(double dt, const Vec3& gravity, const std::vector<Obstacle>& obstacles) {
  info_ = JellyStepInfo{};
  // The walls: each obstacle within reach, as its tangent plane nearest the centre; not this
  // body's own surface, when the list holds it (the jellies as the cloth meets them).
  std::vector<Wall> walls;
  for (const Obstacle& o : obstacles) {
    if (o.shape && (o.shape == restShape_ || o.shape == deformedShape_)) continue;
    Vec3 normal;
    const double d = signedDistance(o, center_, &normal, nullptr, 2 * radius_);
    if (!(d < radius_) || !normal.allFinite() || normal.norm() == 0) continue;
    const Vec3 point = center_ - d * normal;
    walls.push_back({point, normal.normalized(), o.surfaceVelocity(point), o.friction});
  }
  deformedShape_ = nullptr;  // the shape changes below
  // The rigid motion in sub-steps short enough for the contact's stiffness and damping (ours: in
  // steps of dt a stiff or light jelly gained energy at every bounce, and was thrown away at the
  // speed limit). The walls stand still meanwhile.
  Vec3 impulse = Vec3::Zero();  // the walls' over the step, friction included [N s]
  // Σ V centroid of the last sub-step's contacts, and the centre and turn they were found at.
  Vec3 contactMoment = Vec3::Zero(), contactFrom = center_;
  Eigen::Matrix3d contactTurn = rotation();
  for (double done = 0; done < dt;) {
    info_.walls = 0;
    info_.penetration = 0;
    contactMoment.setZero();
    contactFrom = center_;
    contactTurn = rotation();
    // Each touching wall's push, and where the body meets it (for friction).
    struct Touch {
      const Wall* wall;
      double push;
      Vec3 at;
      double radius;  // of the contact patch, as a disk of the cut's area
    };
    std::vector<Touch> touches;
    Vec3 force = Vec3::Zero(), torque = Vec3::Zero();
    // The damping's resistance to turning: its torque is -rollingDamping ω.
    Eigen::Matrix3d rollingDamping = Eigen::Matrix3d::Zero();
    // The pushes' growth with depth [N/m] and with the approach speed [N s/m], for the sub-step.
    double stiffness = 0, damping = 0;
    for (const Wall& w : walls) {
      const Beyond b = beyond(center_, w.point, w.normal);
      if (b.volume <= 0) continue;
      ++info_.walls;
      info_.penetration += b.volume;
      contactMoment += b.volume * b.centroid;
      // The mean approach speed over the volume beyond: that of its centroid.
      const Vec3 arm = b.centroid - center_;
      const double normalSpeed =
          (velocity_ + angularVelocity_.cross(arm) - w.velocity).dot(w.normal);
      // WOKT's k_c V, stiffened as V nears the whole volume (ours): a fast soft body would
      // otherwise pass its centre through the wall.
      const double room = std::max(1 - b.volume / volume_, kLeastRoom);
      const double spring = contactStiffness_ * b.volume / room;
      // Hunt and Crossley's damping: in proportion to the spring, so it starts at zero on
      // touching.
      const double push = std::max(0.0, spring * (1 - material_.damping * normalSpeed));
      if (push <= 0) continue;
      stiffness += contactStiffness_ * b.area / (room * room) * (push / spring);
      damping += spring * material_.damping;
      force += push * w.normal;
      torque += arm.cross(push * w.normal);
      // The push per unit volume k (1 - D s(x)) with s(x) = s + (x - centroid)·(n × ω) adds,
      // over the volume, the torque -k D (S (n × ω)) × n for its second moment S: -k D Nᵀ S N ω
      // with N = [n]×.
      Eigen::Matrix3d cross;
      cross << 0, -w.normal.z(), w.normal.y(), w.normal.z(), 0, -w.normal.x(), -w.normal.y(),
          w.normal.x(), 0;
      rollingDamping +=
          (spring / b.volume * material_.damping) * cross.transpose() * b.spread * cross;
      touches.push_back({&w, push, b.centroid + (w.point - b.centroid).dot(w.normal) * w.normal,
                         std::sqrt(b.area / kPi)});
    }
    const Eigen::Matrix3d inertiaNow = inertia();
    const Eigen::Matrix3d inverseInertia = inertiaNow.inverse();
    // Symplectic Euler is stable for steps below 2 / ω; a quarter of that keeps the bounces'
    // energy. The turning's stiffness is at most the push's at the body's radius.
    const double frequency = std::sqrt(stiffness * (1 / mass_ + radius_ * radius_ / leastInertia_));
    double h = dt - done;
    if (frequency > 0) h = std::min(h, 0.5 / frequency);
    if (damping > 0) h = std::min(h, mass_ / damping);
    // Nor does the point nearest a wall move towards it by more than a quarter of its depth
    // (kLeastTravel of the radius at least) or into it from outside: a stiff jelly arriving fast
    // would otherwise start its contact deep, and leave faster than it came.
    for (const Wall& w : walls) {
      Eigen::Index nearest;
      const double reach = (posed_ * -w.normal).maxCoeff(&nearest);
      const Vec3 arm = posed_.row(nearest).transpose();
      const double approach = -(velocity_ + angularVelocity_.cross(arm) - w.velocity).dot(w.normal);
      if (!(approach > 0)) continue;
      const double gap = (center_ - w.point).dot(w.normal) - reach;
      h = std::min(h,
                   (std::max(gap, 0.0) + std::max(-0.25 * gap, kLeastTravel * radius_)) / approach);
    }
    // A contact too stiff for the shortest sub-step (a light body of a hard material) is softened
    // to what that sub-step carries.
    const double shortest = dt / kMostSubsteps;
    double softer = 1;
    if (h < shortest) {
      if (frequency > 0) softer = std::min(softer, std::pow(0.5 / (shortest * frequency), 2));
      if (damping > 0) softer = std::min(softer, mass_ / (shortest * damping));
      force *= softer;
      torque *= softer;
      rollingDamping *= softer;
      for (Touch& t : touches) t.push *= softer;
    }
    h = std::min(std::max(h, shortest), dt - done);
    done = h >= dt - done ? dt : done + h;
    velocity_ += h * (gravity + force / mass_);
    // Angular momentum gains the torque; the damping is taken implicitly (stable for any damping).
    const Vec3 momentum = inertiaNow * angularVelocity_ + h * torque;
    angularVelocity_ = (inertiaNow + h * rollingDamping).ldlt().solve(momentum);
    impulse += h * force;
    // Coulomb friction where the body meets each wall: an impulse against the sliding there, no
    // larger than friction times the push, nor than what stops the sliding.
    for (const Touch& t : touches) {
      const Vec3 arm = t.at - center_;
      const Vec3 relative = velocity_ + angularVelocity_.cross(arm) - t.wall->velocity;
      const Vec3 sliding = relative - relative.dot(t.wall->normal) * t.wall->normal;
      const double slide = sliding.norm();
      if (!(slide > 0)) continue;
      const Vec3 along = sliding / slide;
      const Vec3 turn = arm.cross(along);
      const double inverseMass = 1 / mass_ + turn.dot(inverseInertia * turn);
      const Vec3 j = -std::min(slide / inverseMass, t.wall->friction * t.push * h) * along;
      velocity_ += j / mass_;
      angularVelocity_ += inverseInertia * arm.cross(j);
      impulse += j;
    }
    // Friction over the patch also resists spinning about the wall's normal: at most that of a
    // disk under an even pressure, 2/3 friction times the push times its radius.
    for (const Touch& t : touches) {
      const Vec3& n = t.wall->normal;
      const double spin = angularVelocity_.dot(n), resistance = n.dot(inverseInertia * n);
      if (!(std::abs(spin) > 0) || !(resistance > 0)) continue;
      const double most = 2.0 / 3 * t.wall->friction * t.push * t.radius * h;
      const double twist = std::clamp(-spin / resistance, -most, most);
      angularVelocity_ += inverseInertia * (twist * n);
    }
    for (int axis = 0; axis < 3; ++axis)  // as fast as an obstacle may move, no faster
      velocity_[axis] = std::clamp(velocity_[axis], -kMaxObstacleSpeed, kMaxObstacleSpeed);
    center_ += h * velocity_;
    const double angle = angularVelocity_.norm() * h;
    if (angle > 0) {
      orientation_ = Eigen::Quaterniond(Eigen::AngleAxisd(angle, angularVelocity_.normalized())) *
                     orientation_;
      orientation_.normalize();
      posed_ = rest_->positions * rotation().transpose();
      // The angular momentum is kept as the body turns (a free body's spin precesses).
      angularVelocity_ = inertia().ldlt().solve(Vec3(inertiaNow * angularVelocity_));
    }
    for (int axis = 0; axis < 3; ++axis)  // as fast as an obstacle may spin, no faster
      angularVelocity_[axis] =
          std::clamp(angularVelocity_[axis], -kMaxObstacleSpin, kMaxObstacleSpin);
    // The centre stays on the near side of each wall, at least kNearest of the body's reach
    // towards it (ours: a jelly too soft to carry its weight would sink through the floor).
    for (const Wall& w : walls) {
      const double reach = (posed_ * -w.normal).maxCoeff();
      const double short_ = kNearest * reach - (center_ - w.point).dot(w.normal);
      if (!(short_ > 0)) continue;
      center_ += short_ * w.normal;
      const double approach = (velocity_ - w.velocity).dot(w.normal);
      if (approach < 0) velocity_ -= approach * w.normal;
    }
    ++info_.rigidSubsteps;
  }
  // One that falls with nothing below stops where an obstacle would (kMaxObstacleCoordinate): the
  // renderer draws in single precision.
  for (int axis = 0; axis < 3; ++axis)
    if (std::abs(center_[axis]) >= kMaxObstacleCoordinate - radius_) {
      center_[axis] = std::copysign(kMaxObstacleCoordinate - radius_, center_[axis]);
      velocity_[axis] = 0;
    }
  const Vec3 contactForce = impulse / dt;
  info_.contactForce = contactForce.norm();
  // The deformation tends to the static solution while the body touches (zero otherwise), no
  // faster than the elastic wave speed √(E/ρ): a static solve that jumped in one step (when the
  // contact starts, or when the body leaves) would throw the cloth lying on it. Displacements are
  // kept in the body's frame, so they turn with it.
  Positions target;
  if (info_.walls > 0)
    target = staticDisplacement(
        walls, contactTurn.transpose() * (contactMoment / info_.penetration - contactFrom),
        contactForce);
  const Positions& r = rest_->positions;
  Positions d = displacement_.size() > 0 ? displacement_ : Positions::Zero(r.rows(), 3);
  const double reach = std::sqrt(material_.young / material_.density) * dt;
  for (Eigen::Index i = 0; i < r.rows(); ++i) {
    Vec3 change =
        (target.size() > 0 ? Vec3(target.row(i).transpose()) : Vec3::Zero()) - d.row(i).transpose();
    if (change.norm() > reach) change *= reach / change.norm();
    d.row(i) += change.transpose();
  }
  // What the interpolation (or the lag) leaves beyond a wall stays on it (WOKT §6).
  const Eigen::Matrix3d turn = rotation();
  for (Eigen::Index i = 0; i < r.rows(); ++i) {
    const Vec3 x = center_ + posed_.row(i).transpose() + turn * d.row(i).transpose();
    Vec3 push = Vec3::Zero();
    for (const Wall& w : walls)
      push += std::max(0.0, (w.point - x - push).dot(w.normal)) * w.normal;
    d.row(i) += (turn.transpose() * push).transpose();
  }
  const double largest = d.allFinite() ? d.rowwise().norm().maxCoeff() : 0;
  if (largest > 1e-9 * radius_) {
    displacement_ = std::move(d);
    info_.maxDisplacement = largest;
  } else {
    displacement_.resize(0, 3);
  }
}

Positions JellyBody::staticDisplacement(const std::vector<Wall>& walls, const Vec3& toContact,
                                        const Vec3& contactForce) {
  // Sections through the centre containing the direction to the mean contact point, loaded by
  // the d'Alembert body force that balances the contact.
  if (!(toContact.norm() > 1e-12 * radius_)) return {};
  const Vec3 along = toContact.normalized();
  const Vec3 across[2] = {perpendicular(along), along.cross(perpendicular(along))};
  const Vec3 bodyForce = -material_.density * contactForce / mass_;
  Eigen::VectorXd u[2];
  for (int k = 0; k < 2; ++k)
    u[k] = solveSection(sectionFor(k, across[k], along), walls, bodyForce);
  const bool has[2] = {u[0].size() > 0, u[1].size() > 0};
  if (!has[0] && !has[1]) return {};
  // The displacement a Spread gives from section k's solve.
  auto spread = [&](int k, const Spread& at) {
    const BemPolygon& bem = *sections_[k].bem;
    if (at.nearest >= 0) return Vec2(u[k].segment<2>(2 * at.nearest));
    Vec2 out = Vec2::Zero();
    for (int side = 0; side < 2; ++side)
      if (at.element[side] >= 0)
        out += at.weight[side] * bem.boundaryDisplacement(u[k], at.element[side], at.at[side]);
    return out;
  };
  const Positions& r = rest_->positions;
  Positions d(r.rows(), 3);
  for (Eigen::Index i = 0; i < r.rows(); ++i) {
    // Across each section from that section, along both from their mean.
    Vec3 sum = Vec3::Zero();
    for (int k = 0; k < 2; ++k) {
      if (!has[k]) continue;
      const Section& s = sections_[k];
      const std::array<Spread, 2>& at = (*s.spreads)[i];
      sum += spread(k, at[0]).x() * s.across + spread(k, at[1]).y() / (has[0] + has[1]) * s.along;
    }
    // Linear elasticity means little past strains of order one: no vertex moves farther than
    // kFarthest of the body's radius (ours; a cow's leg on the floor bent its soft head by 1 m).
    const double length = sum.norm(), most = kFarthest * radius_;
    d.row(i) = (length > most ? Vec3(sum * (most / length)) : sum).transpose();
  }
  return d.allFinite() ? d : Positions();
}

}  // namespace clothlab
