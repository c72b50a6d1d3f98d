#pragma once
// Analytic obstacles (ground plane, sphere, axis-aligned box) and the position-level contact
// response used on the conforming surface: a point closer than `thickness` to an obstacle is
// moved out along the surface normal, and its tangential motion over the step is reduced by
// Coulomb friction (the tangential correction is at most friction x normal correction).
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/mesh.h"
#include "sim/mesh_shape.h"

namespace clothlab {

// The range of an obstacle's friction coefficient, in scene files and live edits.
constexpr double kMaxFriction = 10;
// The farthest an obstacle's position (and its size) may reach from the origin along an axis [m];
// the renderer draws in single precision.
constexpr double kMaxObstacleCoordinate = 1e6;
// The fastest an obstacle may move along an axis [m/s] and spin about one [rad/s]: no faster than
// the solvers' default max_speed, beyond which cloth it touches would be thrown.
constexpr double kMaxObstacleSpeed = 1000;
constexpr double kMaxObstacleSpin = 1000;

struct Obstacle {
  enum class Type { Plane, Sphere, Box, Mesh };
  Type type = Type::Plane;
  Vec3 point{0, 0, 0};        // plane: a point on it; sphere/box: centre [m]
  Vec3 normal{0, 1, 0};       // plane: unit normal pointing to the free side
  double radius = 0.5;        // sphere [m]
  Vec3 halfExtents{0.5, 0.5, 0.5};  // box, axis-aligned [m]
  // mesh: the triangles in world coordinates at t = 0, offset by `point` (zero at t = 0, moved by
  // the velocity), and the scene description it was built from (for saving).
  std::shared_ptr<const MeshShape> shape;
  nlohmann::json meshSpec;
  double friction = 0.3;      // Coulomb coefficient, >= 0
  Vec3 velocity{0, 0, 0};     // constant velocity [m/s] ...
  double moveUntil = 1e300;   // ... until this time [s]; then it stays
  // Spin about the obstacle's centre [rad/s]: a sphere's shape is unchanged (friction feels it);
  // a mesh turns about the centre of its bounding box at t = 0.
  Vec3 angularVelocity{0, 0, 0};
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();  // mesh: its turn at the current time
  // The obstacle at simulated time t (moved by its velocity, at rest after move_until, or along
  // an axis once it reaches kMaxObstacleCoordinate there; spun).
  Obstacle at(double t) const {
    Obstacle o = *this;
    o.point += velocity * std::min(t, moveUntil);
    if (t >= moveUntil) o.velocity = Vec3::Zero();
    for (int axis = 0; axis < 3; ++axis)
      if (std::abs(o.point[axis]) >= kMaxObstacleCoordinate) {
        o.point[axis] = std::copysign(kMaxObstacleCoordinate, o.point[axis]);
        o.velocity[axis] = 0;
      }
    const double angle = angularVelocity.norm() * t;
    if (angle > 0) o.rotation = Eigen::AngleAxisd(angle, angularVelocity.normalized()).toRotationMatrix();
    return o;
  }
  // The centre it spins about, now.
  Vec3 center() const { return type == Type::Mesh && shape ? Vec3(point + shape->pivot()) : point; }
  // A mesh's vertex position in the world now, from its position in the shape [m].
  Vec3 toWorld(const Vec3& shapePoint) const {
    return shape ? Vec3(rotation * (shapePoint - shape->pivot()) + shape->pivot() + point) : shapePoint;
  }
  Vec3 toShape(const Vec3& world) const {
    return shape ? Vec3(rotation.transpose() * (world - point - shape->pivot()) + shape->pivot()) : world;
  }
  // Velocity of the obstacle's surface material at p [m/s] (friction drags the cloth along it).
  Vec3 surfaceVelocity(const Vec3& p) const { return velocity + angularVelocity.cross(p - center()); }
};

std::string obstacleTypeName(Obstacle::Type type);

// The axis-aligned box that holds an obstacle as it stands (a mesh turned by its rotation, by
// the corners of its own box); nothing for a plane.
std::optional<Eigen::AlignedBox3d> obstacleBounds(const Obstacle& obstacle);

// An error naming `at` (e.g. "obstacles[2]") and the field when an obstacle would put non-finite
// numbers into the step or the renderer: a position or size beyond kMaxObstacleCoordinate, a
// velocity or spin beyond kMaxObstacleSpeed or kMaxObstacleSpin, a zero plane normal, a size that
// is not positive, a friction outside [0, kMaxFriction].
std::optional<std::string> validateObstacle(const Obstacle& obstacle, const std::string& at);

// Signed distance from p to the obstacle surface (negative inside) and the outward unit normal.
// Mesh obstacles: a closed mesh has an inside (pseudo-normal sign); an open one is two-sided,
// and `previous` (where the point was at the start of the step) says which side the point
// belongs to, so a point that crossed the surface during the step counts as inside. Boxes: a
// point inside that was outside at `previous` is measured to the face it came in by (not the
// nearest one, which for a thin plate may be the far side). `previous` is seen from the obstacle
// as it is now. Only distances up to `reach` are needed: farther points may get any value of at
// least `reach`.
double signedDistance(const Obstacle& obstacle, const Vec3& p, Vec3* normal, const Vec3* previous = nullptr,
                      double reach = 1e300);

// The points of `positions` deeper than `allowed` [m] inside `obstacle` as it stands (an open
// mesh has no inside): how many, and the deepest of them (vertex -1: none).
struct Penetration {
  int count = 0;
  int deepest = -1;
  double depth = 0;  // of the deepest [m]
};
Penetration pointsInside(const Obstacle& obstacle, const Positions& positions, double allowed);

// Where a scene or an edit (a thicker cloth, a moved or added obstacle) leaves cloth points within
// the thickness of an obstacle, its contacts move them out at kContactRecoverySpeed instead of at
// once (StepContext::contactAllowance): pushed out in one step, the push became velocity, and a
// sheet laid 1 mm above the ground with a 2 mm thickness (or a tablecloth laid on its table) left
// it at 1 m/s when dt = 1 ms.
constexpr double kContactRecoverySpeed = 0.05;  // [m/s]
// The distance the contacts keep point i off an obstacle: the thickness less its allowance
// (StepContext::contactAllowance, null: none), not below zero.
inline double thicknessKept(double thickness, const Eigen::VectorXd* allowance, Eigen::Index i) {
  return allowance && i < allowance->size() ? std::max(thickness - (*allowance)[i], 0.0) : thickness;
}
// How far each point lies within `thickness` of the obstacles, in [0, thickness] (thickness for a
// point inside one).
Eigen::VectorXd depthsWithinThickness(const std::vector<Obstacle>& obstacles, const Positions& points,
                                      double thickness);

// `p` moved out to `thickness` from every obstacle it is closer to than that (inside one
// included), along the obstacle's normal, in turn (three rounds, for a point between two).
Vec3 outsideObstacles(const std::vector<Obstacle>& obstacles, Vec3 p, double thickness);

struct ContactResult {
  int contactCount = 0;       // points moved this step
  double maxDepth = 0;        // deepest penetration before correction [m]
};

// The ground: the height of the highest plane obstacle facing up (its normal within 8° of +y),
// if there is one [m]. What the renderer draws its grid on and the viewer places things on.
std::optional<double> groundHeight(const std::vector<Obstacle>& obstacles);

// Whether any obstacle is a mesh (the only ones with features, sim/self_collision.h, and the
// only ones a ContactCache keeps entries for).
bool hasMeshObstacle(const std::vector<Obstacle>& obstacles);

// Moves every point of `positions` that lies within `thickness` of an obstacle out to that
// distance (thicknessKept, with `allowance` when given), with friction against its displacement
// since `previous` (positions at the start of the step). Writes the corrections into
// `correction` (same shape, zero where untouched).
// Friction acts on the motion relative to the obstacle's surface over `dt` (the step; 0: the
// obstacle's own motion is ignored). `normals`, when given, gets the outward normal of the last
// obstacle that moved each point (zero where none did); `frictionLeft`, what friction could still
// do at each point (FrictionLeft, below).
//
// `cache`, when given, carries what one call learned about each point and mesh obstacle to the
// next calls within the same step (xpbd's sweeps), for the same obstacles, points and `previous`:
// the mesh's triangles within the thickness plus `cache->margin` of where the point was, gathered
// once, so that while the point stays within the margin of there only those triangles are
// searched (none: it is clear of that obstacle, and is passed over), and an open mesh's side the
// point started on. The results are those of the calls without it. (Resting cloth gains most: a
// search through the whole hierarchy for each of its points in every sweep.)
struct ContactCache {
  explicit ContactCache(double margin) : margin(margin) {}
  double margin;
  struct Entry {
    Vec3 anchor{0, 0, 0};  // where the triangles were gathered (in the shape's coordinates)
    double radius = -1;    // ... and within what distance of there (< 0: nothing gathered yet)
    int first = 0, count = 0;  // the triangles: triangles[first, first + count)
    signed char inside = -1;   // closed mesh, no triangle within the radius: inside (1) or not (0)
    signed char side = 0;      // open mesh: the side the point started on (0: not yet known)
  };
  std::vector<Entry> entries;  // per point, then obstacle
  std::vector<MeshShape::Near> triangles;
};
// What friction could still do at a point after resolveContacts moved it: the tangential motion
// it could still cancel in this step, friction × depth less what it cancelled [m], along the
// surface of the last obstacle that moved the point, whose normal and velocity there it gives
// (`left` 0 and a zero normal where none did). For a solver whose later passes slide the points
// resting on an obstacle (impulse-nc's velocity pass).
struct FrictionLeft {
  Vec3 normal{0, 0, 0};
  Vec3 obstacleVelocity{0, 0, 0};  // [m/s]
  double left = 0;
};
ContactResult resolveContacts(const std::vector<Obstacle>& obstacles, double thickness,
                              const Positions& previous, const Positions& positions,
                              Positions& correction, double dt = 0, Positions* normals = nullptr,
                              ContactCache* cache = nullptr,
                              const Eigen::VectorXd* allowance = nullptr,
                              std::vector<FrictionLeft>* frictionLeft = nullptr);

}  // namespace clothlab
