#pragma once
// Stitches: the seams that sew a garment's panels together (Codim-IPC's `stitch` records in an
// OBJ: `stitch v a b t`, 0-based vertex indices, sewing vertex v to the point (1 - t) x_a + t x_b
// of the edge or vertex pair a, b of another panel).
//
// A garment is cut as flat panels laid around a body, apart from one another. Sewing pulls each
// stitch's two points together, not at once (a seam closed in one step would fling the panels
// across the body) but at the sewing speed: a stitch whose points rest `g` apart may be at most
// max(0, g - s) apart, where the sewn length s grows by the speed times each step's length
// (Simulation keeps it, with its moments), so every seam of a garment closes within
// (largest rest gap) / speed and then holds, and a new speed set mid-run goes on from where the
// seams are.
#include <Eigen/Core>
#include <array>
#include <vector>

#include "sim/mesh.h"

namespace clothlab {

struct StepStats;

struct Stitch {
  int vertex = 0;    // the vertex sewn
  int a = 0, b = 0;  // to the point (1 - t) x_a + t x_b
  double t = 0;      // in [0, 1]
};

// Where stitch `s` sews its vertex to, at positions `x` [m].
inline Vec3 stitchPoint(const Stitch& s, const Positions& x) {
  return ((1 - s.t) * x.row(s.a) + s.t * x.row(s.b)).transpose();
}

// The stitch's point minus its vertex at positions `x` [m].
inline Vec3 stitchVector(const Stitch& s, const Positions& x) {
  return stitchPoint(s, x) - x.row(s.vertex).transpose();
}

// A stitch as three weighted vertices, for solvers that hold it as a row: stitchVector is the
// sum of weight[p] x[vertex[p]] (weights -1, 1 - t, t), so the gradient of any function of it at
// vertex[p] is weight[p] times the gradient with respect to the vector.
struct StitchVertices {
  std::array<int, 3> vertex;
  std::array<double, 3> weight;
};
inline StitchVertices stitchVertices(const Stitch& s) {
  return {{s.vertex, s.a, s.b}, {-1.0, 1 - s.t, s.t}};
}

// How far apart each stitch's two points are at positions `x` [m].
Eigen::VectorXd stitchGaps(const std::vector<Stitch>& stitches, const Positions& x);

// How far apart each stitch's points may be once `sewn` metres are sewn: max(0, g - sewn) for
// each of `restGaps` (stitchGaps of the rest state).
Eigen::VectorXd stitchAllowances(const Eigen::VectorXd& restGaps, double sewn);

// One Gauss-Seidel pass over the stitches on vertex positions `x` with inverse masses `w`
// (0: held): each stitch whose points stand farther apart than its allowance is brought to it,
// the correction shared by the inverse masses of its vertex and of its point's two vertices.
// Returns the largest excess over an allowance seen before the pass [m].
double projectStitches(const std::vector<Stitch>& stitches, const Eigen::VectorXd& allowance,
                       const Eigen::VectorXd& w, Positions& x);

// Adds a garment's figures at positions `x` to a step's stats, from one pass over its stitches:
// max_stitch_gap (its widest stitch [m]) and max_stitch_excess (the most a stitch stands beyond
// its allowance [m]; 0: all within).
void recordStitches(const std::vector<Stitch>& stitches, const Eigen::VectorXd& allowance,
                    const Positions& x, StepStats& stats);

}  // namespace clothlab
