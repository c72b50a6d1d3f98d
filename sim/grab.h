#pragma once
// The grab as mls-isometry, xpbd and strain-limit-remesh apply it: the grabbed triangle's corners
// (strain-limit-remesh: the corners of its adaptive mesh's face there, grabOnFineMesh) are put
// where the grabbed point reaches its target, and their solver then moves them as if they
// weighed kGrabWeight times their mass (mls-isometry and strain-limit-remesh: at least the whole
// cloth's, grabbedCornerMass).
// They follow the mouse wherever the cloth can reach and stay behind where it cannot (beyond
// the pins' reach) instead of stretching it; as constraints that had to be met, the grab and
// the cloth's constraints had no common solution there.
// (impulse-nc and conforming keep the grab as three rows: docs/measurements.md says why.)
#include <algorithm>
#include <functional>
#include <optional>
#include <vector>

#include "sim/scene.h"
#include "sim/solver.h"

namespace clothlab {

// A grab of `vertex` (the first of its triangles, all the weight on the vertex) toward `target`.
Grab grabAtVertex(const ClothModel& cloth, int vertex, const Vec3& target);

// Where the grabbed point is: the grab's barycentric combination of `tri`'s corners in x [m].
Vec3 grabbedPoint(const Grab& grab, const Tri& tri, const Positions& x);

// The grab as it lies on a finer mesh a solver simulates on (Solver::fineMesh): `grab` with its
// triangle and barycentric coordinates those of the fine face holding the grabbed point's place in
// the cloth's flat rest state. So the grab pulls, and the viewer marks, the point of the drawn
// surface, not the cloth triangle's chord across a fold refined within it. None where the cloth
// has no flat rest state.
std::optional<Grab> grabOnFineMesh(const ClothModel& cloth, const FineMesh& fine, const Grab& grab);

// With weight 10 a dragged corner of ckv-corners lagged 23 mm behind the cursor, with 100 2 mm.
constexpr double kGrabWeight = 100;

// The mass a grabbed corner moves with in mls-isometry's and strain-limit-remesh's projections
// [kg]: kGrabWeight times its own, and at least the whole cloth's (`clothMass`). A weight relative
// to the vertex's mass shrinks with the mesh: torus-drape's 1500-triangle cloth, its corner dragged
// up and off the torus at 1.9 m/s, pulled each push back by about half at 100 times the corner's
// mass, GrabPull backed off, and the corner ended 0.37 m behind the cursor; with the cloth's mass
// 0.053 m. strain-limit-remesh the same: the corner yanked 5.8 m (TorusYank) came 1.48 m nearer in
// 0.2 s at 100 times its mass, every step ending beyond the limits and the pull halving to 1/32;
// with the cloth's mass 3.87 m. (xpbd keeps kGrabWeight: its 20 sweeps leave a heavier grab's pull
// in the edges, stretched by 0.096 instead of 0.073 when hanging's middle is dragged in reach,
// 0.115 instead of 0.064 out of it, while it follows the torus drag within 0.056 m at 100.)
inline double grabbedCornerMass(double mass, double clothMass) { return std::max(kGrabWeight * mass, clothMass); }

// With 0.05 ckv-corners dragged out of reach took 60 iterations per frame, with 0.1 77, with 0.02
// 53; with no floor the grab stops pulling (the point ends 0.51 m from the cursor, not 0.34).
constexpr double kGrabPushFloor = 0.02;
// A step pushes the point by at most this many mean rest edge lengths (a speed limit of one edge
// per step; a drag at 1.9 m/s pushes torus-drape's 35 mm edges by 3.8 mm per 2 ms step). A yank
// of torus-drape's corner 5.8 m away, with nothing to hold the cloth back, pushed it by 0.67 m a
// step: mls-isometry stretched edges by up to 16 (4.3 while the corner weighed 100 times its
// mass), at 471 ms per step, and xpbd by 4.4. With the limit: 0.43 and 0.65, 57 and 6 ms per step
// (half an edge: 0.45 and 0.37, but the point crawls: 3.9 instead of 1.9 m behind after 0.2 s).
constexpr double kGrabPushCeiling = 1.0;

// One grab's pull from step to step. Each step the point is advanced from where it is toward
// the mouse at the grab's rate (Grab::timeConstant) times a gain. A step whose solver pulled
// the point back by more than half of that push (the cloth is taut: the mouse is out of reach)
// halves the gain for the next one, unless the push was already below kGrabPushFloor mean rest
// edge lengths; any other step doubles it, up to 1. Out of reach the cloth is then pushed
// beyond what it can give by little more than the floor each step, instead of by the whole
// rate: on ckv-corners, dragged out of reach, 53 instead of 112 Fast Projection iterations per
// frame. No push exceeds kGrabPushCeiling mean rest edge lengths.
class GrabPull {
 public:
  // meanEdgeLength: the cloth's mean rest edge length [m], which scales the push's floor and
  // ceiling (0: neither).
  explicit GrabPull(double meanEdgeLength = 0)
      : pushFloor_(kGrabPushFloor * meanEdgeLength), pushCeiling_(kGrabPushCeiling * meanEdgeLength) {}
  // Moves the corners of the grabbed triangle in x (a step's candidate) by the least move that
  // puts the grabbed point on this step's target; `start` is the state the step began from.
  // Corners for which fixed(vertex) holds (pins) stay. Returns the corners moved.
  std::vector<int> move(const Grab& grab, const Tri& tri, double h, const Positions& start, Positions& x,
                        const std::function<bool(int)>& fixed);
  // After the solve: x is where the solver left the cloth. Records the rate the next step pushes
  // at in `stats` (grab_gain).
  void settle(const Grab& grab, const Tri& tri, const Positions& x, StepStats& stats);
  void release() { gain_ = 1; }  // no grab this step: the next one starts at the full rate
  double gain() const { return gain_; }

 private:
  double pushFloor_ = 0, pushCeiling_ = 0;  // [m]
  double gain_ = 1;
  Vec3 from_{0, 0, 0}, target_{0, 0, 0};  // the point at the step's start, where it was put [m]
};

// Where a grab can take its point. Two points of an inextensible cloth get no farther apart than
// the straight line between them in the flat rest state, where that line stays inside the cloth
// (on a convex piece: a rectangle, a disk, a tube unrolled). On a cone unfolded (a flared skirt:
// an annular sector that closes round) that line may cross the hole round the apex, and there the
// way round the hole bounds them instead. So the grabbed point stays within a ball around each
// pin of its piece, and a target outside all of them is moved onto the nearest
// point the balls share (by projecting onto them in turn), where the cloth pulled taut can reach.
// The solvers then pull toward a place they can reach: dragged out of reach, `hanging` under
// impulse-nc kept a constraint error of about 4 mm and now keeps within its tolerance (1e-6 m);
// ckv-corners under mls-isometry took 53 Fast Projection iterations per frame with GrabPull's
// back-off alone and takes 18; xpbd stretched edges by 0.31 and stretches them by 0.064.
// Curved cloth without a flattening and pieces that are not convex (where the cloth may reach
// around a notch farther than the straight line) are left as they are. Simulation holds the pin
// moved last within reach of the others the same way (clampPin). A solver's surface can stand a
// little beyond that reach: impulse-nc keeps its edge midpoints inextensible, not the vertices
// between them (its surface edges strain by up to 0.9 in a fold). A pin put on a vertex where it
// stands is then held there, not pulled in: the reach grows by the vertex's excess (pinExcess).
class GrabReach {
 public:
  explicit GrabReach(const ClothModel& cloth);
  // The grab's target, brought within reach of the pins (their current targets), leaving out
  // the pin at vertex `except`, each reach lengthened by `slack` [m].
  Vec3 clamp(const Grab& grab, const std::vector<std::pair<int, Vec3>>& pins, int except = -1,
             double slack = 0) const;
  // A pin's target for `vertex`, brought within reach (plus `slack`) of the other pins in `pins`.
  Vec3 clampPin(int vertex, const Vec3& target, const std::vector<std::pair<int, Vec3>>& pins,
                double slack = 0) const;
  // How far `position` of `vertex` lies beyond the reach of the other pins [m]; 0 within it.
  double pinExcess(int vertex, const Vec3& position, const std::vector<std::pair<int, Vec3>>& pins) const;

 private:
  // Each pin of the grabbed piece but `except`: its target and how far the grabbed point can be
  // from it. None where the reach says nothing (no flattening, a piece that is not convex).
  std::vector<std::pair<Vec3, double>> balls(const Grab& grab, const std::vector<std::pair<int, Vec3>>& pins,
                                             int except) const;
  // How far two material points of a cone's piece can get apart: the straight line between them,
  // or where it would cross the hole round the apex, the way round it (see the constructor).
  struct Cone;
  static double coneReach(const Cone& cone, const Eigen::Vector2d& from, const Eigen::Vector2d& to);

  const ClothModel* cloth_;   // its flatCoords: the flat rest state, when the cloth has one
  std::vector<char> convex_;  // per component of the mesh
  // A cone's unfolding, an annular sector about the apex: its inner rim lies within `hole` of
  // the apex and its outer rim beyond `rim` [m], so every point between is cloth.
  struct Cone {
    Eigen::Vector2d apex = Eigen::Vector2d::Zero();
    double hole = 0, rim = 0;
  };
  std::vector<std::optional<Cone>> cone_;  // per component: the cone it is, if it is one
};

}  // namespace clothlab
