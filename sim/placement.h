#pragma once
// Placing a scene's cloth anew: turned and scaled about its own centre, moved, or laid flat (the
// viewer's placement controls). Many cloth OBJs are written lying in another plane than the
// world's floor (Codim-IPC's Sharkey12K and IPC's sheet1000 in z = 0, so they stand on edge here)
// or in other units, and a scene file's `cloth.transform` turns them about the OBJ's origin.
#include "sim/result.h"
#include "sim/scene.h"

namespace clothlab {

// A placement as the panel edits it: the cloth's rotation and scale (Transform's, the same
// values a scene file holds) taken about the centre of the rest mesh's bounding box, which stays
// where it is, moved by `move`.
struct ClothPlacement {
  Vec3 rotateDeg{0, 0, 0};  // about x, then y, then z [degrees], as Transform::rotateDeg
  double scale = 1;         // as Transform::scale, [1e-6, 1e6]
  Vec3 move{0, 0, 0};       // of the centre [m]
};

// The placement a cloth placed by `transform` has now: its rotation and scale, not moved.
inline ClothPlacement currentPlacement(const Transform& transform) {
  return {transform.rotateDeg, transform.scale, Vec3::Zero()};
}

// `scene` with its cloth placed by `placement`; `rest` is the cloth's rest mesh as `scene` places
// it now (ClothModel::mesh.positions). Everything tied to the cloth moves with it: pin targets
// (a pin at its vertex's rest position stays at it; one set elsewhere keeps its place relative
// to the cloth) and pins and point masses given by position. Obstacles stay. A cloth placed
// through a plane obstacle is lifted along the plane's normal to the thickness above it (other
// obstacles are not moved round: Simulation::create refuses a cloth that starts inside one).
// Fails, naming the value ("scale must be ..."), for a scale outside [1e-6, 1e6] or a value that is
// not finite.
Result<Scene> placeCloth(const Scene& scene, const Positions& rest,
                         const ClothPlacement& placement);

// `scene` with its cloth placed by `transform` (its cloth.transform) instead, everything tied to
// the cloth carried along as placeCloth does, with no lift: a placement put back by the viewer's
// undo. Fails, naming the value, for a scale outside [1e-6, 1e6] or a value that is not finite.
Result<Scene> placeClothAt(const Scene& scene, const Positions& rest, const Transform& transform);

// The rotation (Transform::rotateDeg) that lays the cloth of `scene` flat: its rest mesh `rest`
// (as `scene` places it) turned by the least rotation that makes its best-fit plane
// perpendicular to gravity (to y when there is none). Fails, saying how far it is from flat, for
// a cloth more than 1% of its size off that plane, and for one already within kLevelDegrees of
// level (laying it flat would only restart it).
constexpr double kLevelDegrees = 0.01;
Result<Vec3> layFlatRotation(const Scene& scene, const Positions& rest);

// Whether a cloth placed at `placed` (ClothModel::mesh.positions) is flat, as layFlatRotation
// needs, and stands on edge: its plane within 10 degrees of gravity's direction. False without
// gravity.
bool standsOnEdge(const Positions& placed, const Vec3& gravity);

// The ground under a cloth opened from a bare OBJ (Scene::groundBelowCloth): a plane facing up
// (+y) half the cloth's size (the diagonal of its bounding box at `placed`) below its lowest
// point, with the scene's `friction`. An OBJ's units and origin are arbitrary, so the ground goes
// where the cloth is; the viewer frames it with the ground it lands on.
Obstacle groundBelowCloth(const Positions& placed, double friction);

// OBJs' meshes added as mesh obstacles under the cloth (the viewer's and clothlab-cli's
// `--obstacle`, the panel's "an .obj is: obstacle"), since an OBJ's own units and origin are
// arbitrary. `clothLo`, `clothHi`: the cloth's bounds where it is now.
// - One OBJ is scaled to 60% of the cloth's largest extent (at least 0.1 m) and centred under
//   it, its top 2 cm below the cloth's lowest point. Under a cloth that nothing pins, which
//   falls to the ground anyway, it then goes down to stand on the ground where one lies below it
//   (the highest plane of `present` facing up, groundHeight); one that the ground would cut stays
//   where it is. Under a pinned cloth, which may hang clear of the ground, it stays below the
//   cloth.
// - n OBJs given together stand in a row along the cloth's longer horizontal side, each scaled to
//   60% of 1/n of the cloth's largest extent, spread evenly over the cloth's length along that
//   side (2 cm apart at least).
// - Where the row would cut into one of the obstacles `present` (a sphere, box or mesh; a plane
//   has no side to stand beside), it is moved along that side by the least distance that puts
//   it beside them, 2 cm away: so an OBJ added to a scene whose spot under the cloth is taken
//   stands next to what is there.
// Each obstacle's `meshSpec` is what a scene file holds for it (the OBJ's absolute path and the
// transform), so a saved scene opens with it in the same place.
struct ObjToPlace {
  TriangleMesh mesh;
  std::string path;  // as given; the scene file holds it absolute
};
struct PlacedObstacle {
  Obstacle obstacle;
  double scale = 1;  // the OBJ's own units to the scene's
};
std::vector<PlacedObstacle> meshObstaclesUnderCloth(std::vector<ObjToPlace> objs,
                                                    const Vec3& clothLo, const Vec3& clothHi,
                                                    double friction,
                                                    const std::vector<Obstacle>& present,
                                                    bool clothPinned);

}  // namespace clothlab
