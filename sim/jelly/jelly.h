#pragma once
// Elastic "jelly" bodies (seed 004, methods §4.6 and §4.7): a closed triangle mesh moved as a
// rigid body by gravity and contact forces, and deformed while it touches something by a static
// 2D boundary element solve on two cross-sections through its centre, interpolated onto the 3D
// vertices.
//
// - Contact (WOKT §4.1): each obstacle near the body acts as a wall, the plane that touches it at
//   its point nearest the body's centre (a plane obstacle is its own wall). The wall pushes with
//   F = k_c V n, V the volume of the undeformed body beyond it, damped (the "internal friction")
//   and never pulling; Coulomb friction slows the body's sliding along it.
//   (Ours: k_c V is divided by 1 - V / volume, so that a fast soft body squashes but cannot pass
//   its centre through the wall; with V a tenth of the volume that is 11% more.)
// - Deformation (methods §4.6): while the body touches, each section's elements that lie beyond a
//   wall are pushed onto it (sticking: no sliding), the others are traction-free, and the
//   d'Alembert body force -ρ F/m balances the contact; an element the solve leaves beyond a wall is
//   pushed onto it too and the section solved once more (WOKT §6). The sections contain the
//   direction from the centre to the mean contact point (methods §4.7); a vertex their
//   interpolation leaves beyond a wall is put on it. Out of contact the body returns to its rest
//   shape. The shape moves towards the static one no faster than the elastic wave speed
//   √(E/ρ) (ours: a jump in one step threw the cloth lying on it), and no vertex moves farther
//   than half the body's radius under the solves (ours: linear elasticity means little beyond).
//   WOKT's two sections suit compact shapes (balls, ellipsoids, cylinders: their §5.1); a shape
//   with limbs bends them as soft cantilevers (jellyShapeWarning).
// - Turning (ours; WOKT's bodies only translate): the body is a rigid body with the inertia of its
//   closed surface. Each wall's push acts at the centroid of the volume beyond it, so a tilted
//   body tips over; friction acts where the body meets the wall, so a ball rolls; and the
//   Hunt-Crossley damping, spread over that volume, resists rolling (the patch's leading part
//   approaches the wall and pushes harder than its trailing part). The sections and the
//   displacements turn with the body. The rigid motion runs in sub-steps short enough for the
//   contact's stiffness, and the centre never comes closer to a wall than a fifth of the body's
//   reach towards it (ours: a hard light jelly gained energy at each bounce, a very soft one sank
//   through the floor).
// - The cloth does not push the body (the cloth collides with its deformed surface as with a
//   moving, turning mesh obstacle). Other jellies are walls like obstacles (Simulation::substep
//   passes them all in; each passes over its own).
#include <Eigen/Geometry>
#include <array>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/jelly/bem2d.h"
#include "sim/mesh.h"
#include "sim/obstacles.h"
#include "sim/params.h"
#include "sim/result.h"

namespace clothlab {

struct JellyMaterial {
  double density = 1000;  // [kg/m³]
  double young = 2e4;     // Young's modulus of the sections [Pa]
  double poisson = 0.45;  // [0, 0.5)
  // Internal friction: the walls push harder by this much per m/s of approach and softer by as
  // much while the body leaves (Hunt and Crossley 1975; about 1 - 0.4 damping v of the speed v
  // comes back) [s/m].
  double damping = 0.5;
  double friction =
      0.5;  // Coulomb coefficient of cloth on the jelly (against walls: the wall's own)
  double alpha =
      1.5;  // WOKT eq. 18's exponent, spreading the sections' displacements inwards (1 to 2)
  int elements = 48;  // boundary elements per section
  // k_c [N/m³]; 0: from the material (jellyContactStiffness).
  double contactStiffness = 0;
  // Keys, units, descriptions and valid ranges: what scenes read and write and the panel edits.
  static const ParamTable<JellyMaterial>& table();
};

// A jelly as a scene describes it: its closed surface in world coordinates at t = 0, its velocity
// then, its material, and the JSON it was read from (for saving).
struct JellySpec {
  std::shared_ptr<const TriangleMesh> surface;
  Vec3 velocity{0, 0, 0};
  Vec3 angularVelocity{0, 0, 0};  // spin about its centre of mass [rad/s]
  JellyMaterial material;
  nlohmann::json json;
};

// The JSON a saved scene writes for `spec`: what it was read from, with the material and velocity
// it has now.
nlohmann::json jellyJson(const JellySpec& spec);

// The contact stiffness k_c that makes the wall's force on a sphere of the body's volume (radius
// R) match a Hertz contact of the material at a depth of R / 10: k_c = 4 E / (3π (1 - ν²) R √0.1).
double jellyContactStiffness(const JellyMaterial& material, double volume);

// A message naming `at` when `material` or `surface` cannot make a jelly: a value out of range, a
// surface that is not closed (every edge shared by two triangles) or encloses no volume.
std::optional<std::string> validateJelly(const JellySpec& spec, const std::string& at);

// A warning naming `at` when `spec`'s surface is not the compact shape WOKT's two cross-sections
// suit (their §5.1): it fills less than 60% of the ellipsoid inscribed in its bounding box (Spot
// and the Stanford bunny fill half), or a vertical section through its centre falls in several
// pieces or misses the centre (a torus). Such a jelly still runs; its limbs bend as soft
// cantilevers where it touches.
std::optional<std::string> jellyShapeWarning(const JellySpec& spec, const std::string& at);

// What the body did in its last step.
struct JellyStepInfo {
  int walls = 0;               // obstacles touching it
  double contactForce = 0;     // |F| [N]
  double penetration = 0;      // undeformed volume beyond the walls [m³]
  double maxDisplacement = 0;  // largest elastic displacement of a vertex [m]
  int sectionSolves = 0;       // 2D solves (two sections, each once or twice)
  int factorizations = 0;      // reference factorizations among them
  int rigidSubsteps = 0;       // sub-steps of the rigid motion (more for a stiff contact)
};

class JellyBody {
 public:
  explicit JellyBody(const JellySpec& spec);

  // One step of dt [s] under `gravity` [m/s²] against `obstacles` (where they stand now), which
  // may hold this body's own asObstacle() (passed over).
  void step(double dt, const Vec3& gravity, const std::vector<Obstacle>& obstacles);
  // A new material (validated by the caller), the body staying where it is and moving as it does;
  // the sections are built again when the elastic constants or the element count change.
  void setMaterial(const JellyMaterial& material);
  const JellyMaterial& material() const { return material_; }

  const Vec3& center() const { return center_; }      // centre of mass [m]
  const Vec3& velocity() const { return velocity_; }  // [m/s]
  // Its turn from the surface as the spec gave it, and its spin [rad/s].
  Eigen::Matrix3d rotation() const { return orientation_.toRotationMatrix(); }
  const Vec3& angularVelocity() const { return angularVelocity_; }
  // The inertia tensor about the centre of mass, turned as the body is now [kg m²].
  Eigen::Matrix3d inertia() const;
  double mass() const { return mass_; }               // [kg]
  double volume() const { return volume_; }           // [m³]
  double contactStiffness() const { return contactStiffness_; }
  const JellyStepInfo& lastStep() const { return info_; }
  // The deformed surface in world coordinates.
  Positions surface() const;
  const TriangleMesh& rest() const { return *rest_; }
  // The deformed surface as a mesh obstacle moving with the body (what the cloth meets).
  Obstacle asObstacle() const;
  // The same for something within `box`: where the box stays out of the body's reach (its farthest
  // vertex from the centre of mass plus its largest displacement), the rest surface, turned and
  // moved with the body, stands in. It answers alike there (nothing within reach), and no deformed
  // shape is built for a jelly nothing comes near.
  Obstacle asObstacleFor(const Eigen::AlignedBox3d& box) const;
  // How far from the centre of mass the deformed surface reaches at most [m].
  double reach() const { return radius_ + info_.maxDisplacement; }

  // Exposed for tests: the volume of the rest shape, turned as the body is now and centred at
  // `center`, beyond the plane through `point` with outward normal `normal`, that volume's
  // centroid, its second moment about the centroid (∫ (x - c)(x - c)ᵀ dV) and the area the plane
  // cuts.
  struct Beyond {
    double volume = 0;
    Vec3 centroid{0, 0, 0};
    Eigen::Matrix3d spread = Eigen::Matrix3d::Zero();
    double area = 0;  // of the body's section by the plane [m²]: V's growth with depth
  };
  Beyond beyond(const Vec3& center, const Vec3& point, const Vec3& normal) const;
  // The rest shape's cross-section through its centre in the plane spanned by `across` and `along`
  // (unit and perpendicular, in the body's own frame: that of the spec's surface), as a
  // counter-clockwise polygon in (across, along) coordinates of `elements` equal edges (the
  // largest loop where the plane cuts several).
  // `loops`, when given, gets how many closed loops the plane cut.
  std::vector<Vec2> section(const Vec3& across, const Vec3& along, int elements,
                            int* loops = nullptr) const;

  // Exposed for tests: a section's elements by where they reach across `axis`. The line through p
  // parallel to coordinate `axis` can only meet the elements of the slab that p's other
  // coordinate falls in (those whose extent overlaps it, a little widened), listed in the order
  // of the elements.
  struct ElementSlabs {
    int axis = 0;
    double lo = 0, height = 1;
    std::vector<std::vector<int>> elements;
    std::span<const int> at(const Vec2& p) const;  // empty where the line misses the section
  };
  static ElementSlabs elementSlabs(const BemPolygon& bem, int axis);

 private:
  struct Wall {
    Vec3 point, normal, velocity;
    double friction;
  };
  // Where the line through a vertex parallel to a section's axis meets the section's boundary,
  // nearest on either side (element and position along it; element -1: no boundary there), and
  // the weights of the displacements there; where the line misses the section, the nearest
  // element (else -1).
  struct Spread {
    int element[2] = {-1, -1};
    double at[2] = {0, 0}, weight[2] = {0, 0};
    int nearest = -1;
  };
  struct Section {
    // Unit, in the body's frame; along points from the centre to the mean contact point.
    Vec3 across, along;
    std::shared_ptr<BemPolygon> bem;  // shared by copies of the body: a cache of matrices
    // WOKT eq. 18 for each vertex along each axis (0: across, 1: along); fixed by the section and
    // the rest shape, so found once per section (and shared like `bem`).
    std::shared_ptr<const std::vector<std::array<Spread, 2>>> spreads;
  };
  Section& sectionFor(int which, const Vec3& across, const Vec3& along);
  // `shape` (the rest or the deformed surface) as the obstacle that moves with the body.
  Obstacle obstacleOf(std::shared_ptr<const MeshShape> shape) const;
  // The displacement of every vertex (in the body's frame) that the sections' static solves give
  // for these walls, the direction to the mean contact point (in the body's frame) and the
  // contact force; empty when no section touches.
  Positions staticDisplacement(const std::vector<Wall>& walls, const Vec3& toContact,
                               const Vec3& contactForce);
  // Solves one section against the walls; its displacements, empty when it does not touch.
  Eigen::VectorXd solveSection(Section& section, const std::vector<Wall>& walls,
                               const Vec3& bodyForce);
  // WOKT eq. 18 in a section: how the displacement at 2D point p along the line through it
  // parallel to coordinate slabs.axis (0: across, 1: along) follows from where that line meets
  // the boundary.
  Spread spreadAt(const BemPolygon& bem, const Vec2& p, const ElementSlabs& slabs) const;

  std::shared_ptr<const TriangleMesh> rest_;    // relative to the centre of mass
  std::shared_ptr<const MeshShape> restShape_;  // at the initial centre, for the obstacle
  Vec3 start_;                                  // the initial centre
  JellyMaterial material_;
  Vec3 center_, velocity_, angularVelocity_;
  Eigen::Quaterniond orientation_ = Eigen::Quaterniond::Identity();
  Positions posed_;  // rest_'s positions turned as the body is now
  // ∫ x xᵀ dV over the rest shape about its centre of mass [m⁵] (the inertia per unit density).
  Eigen::Matrix3d secondMoment_ = Eigen::Matrix3d::Zero();
  double mass_ = 0, volume_ = 0, contactStiffness_ = 0, radius_ = 0;
  // The inertia tensor in the body's frame, and its smallest principal moment [kg m²].
  Eigen::Matrix3d bodyInertia_ = Eigen::Matrix3d::Zero();
  double leastInertia_ = 0;
  Positions displacement_;  // elastic, per vertex, in the body's frame (empty: none)
  // The deformed surface as a mesh shape, built when asObstacle first needs it after a step.
  mutable std::shared_ptr<const MeshShape> deformedShape_;
  Section sections_[2];
  JellyStepInfo info_;
};

}  // namespace clothlab
