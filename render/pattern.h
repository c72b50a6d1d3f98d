#pragma once
// The pattern printed on the cloth (the View section's checks or grid lines, key T): each surface
// vertex's place in the cloth's own material coordinates, so that the pattern moves, stretches
// and shears with the cloth. A stretched cloth shows long cells, a sheared one slanted cells, and
// a locked one keeps them flat where it should fold. Knows nothing of OpenGL.
#include <Eigen/Core>
#include <optional>
#include <string>
#include <vector>

#include "sim/scene.h"
#include "sim/solver.h"

namespace clothlab {

enum class ClothPattern { None, Checks, Lines };
// "none", "checks", "lines", and back (nullopt for any other name).
const char* patternName(ClothPattern pattern);
std::optional<ClothPattern> patternNamed(const std::string& name);

// A piece of the cloth whose flat rest state closes round (sim/material_wrap.h), as the shader
// unrolls it:
//  - a cylinder (`period` > 0): its vertices at (R cos(u / R), v, R sin(u / R)) with
//    R = P / 2 pi, the rest circle, which interpolates across the seam without a jump; the shader
//    takes u back as R atan2;
//  - a cone (`angle` > 0, the width of its sector): its vertices at r (cos phi, sin phi, 0) about
//    the apex, with phi = 2 pi a / angle, where a is the angle from the sector's first side
//    (`from`, a direction from the apex). That too interpolates across the cut. The shader takes
//    a back as angle fract(phi / 2 pi) and prints the sector's own flat coordinates, so the
//    pattern breaks along the cut as a print sewn into a cone does.
struct PatternRound {
  double period = 0;  // a cylinder's once round [m]
  double angle = 0;   // a cone's sector [rad], > 0
  Eigen::Vector2d apex = Eigen::Vector2d::Zero();
  double from = 0;  // the sector's first side, measured like atan2 [rad]
};
// The most rounds the shader takes; a cloth with more gets a pattern in space (Kind::Solid).
constexpr int kMaxPatternRounds = 8;

// Per vertex, four floats for the shader (mesh.vert's aMaterial), by the kind of rest state:
//  - Flat: the flat rest state (ClothModel::flatCoords). The fourth float is 0 where a vertex
//    lies in no round, the first three then (u, v, 0) [m]; k where it lies in rounds[k - 1], the
//    first three then as PatternRound says;
//  - Solid: no flat rest state (a curved OBJ without a flattening), or more rounds than the
//    shader takes: the rest positions, and the pattern is a solid one in space that the rest
//    surface cuts.
struct PatternCoordinates {
  enum class Kind { Flat, Solid } kind = Kind::Flat;
  std::vector<float> coords;  // 4 per vertex
  std::vector<PatternRound> rounds;
};
PatternCoordinates patternCoordinates(const ClothModel& cloth);
// The same for the nodes of a finer mesh the cloth is simulated on (sim/solver.h FineMesh): the
// pattern printed on the same cloth, drawn on that mesh.
PatternCoordinates patternCoordinates(const ClothModel& cloth, const FineMesh& fine);
// The cloth's size for its default pattern cell [m]: the longest side of the flat rest state's
// bounding box; a tube's girth or length; a cone's rest shape's, or the rest shape's where there
// is no flat rest state. A cloth in several pieces: the rest shape of its largest piece.
double patternExtent(const ClothModel& cloth);

// A cell size of about a tenth of `extent`, rounded down to 1, 2 or 5 times a power of ten [m];
// 0.1 m for an empty or degenerate extent.
double defaultPatternSize(double extent);
// The cell size drawn on `round` for a requested one: on a cylinder the nearest one that fits an
// even number of cells round it (at least 2), so that the checks and lines meet at the seam; on
// a cone `requested` (its pattern breaks along the cut anyway).
double drawnPatternSize(double requested, const PatternRound& round);

}  // namespace clothlab
