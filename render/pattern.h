#pragma once
// The pattern printed on the cloth (the View section's checks or grid lines, key T): each surface
// vertex's place in the cloth's own material coordinates, so that the pattern moves, stretches
// and shears with the cloth. A stretched cloth shows long cells, a sheared one slanted cells, and
// a locked one keeps them flat where it should fold. Knows nothing of OpenGL.
#include <optional>
#include <string>
#include <vector>

#include "sim/scene.h"

namespace clothlab {

enum class ClothPattern { None, Checks, Lines };
// "none", "checks", "lines", and back (nullopt for any other name).
const char* patternName(ClothPattern pattern);
std::optional<ClothPattern> patternNamed(const std::string& name);

// Per vertex, three floats for the shader (mesh.vert's aMaterial), by the kind of rest state:
//  - Flat: the flat rest state (ClothModel::flatCoords) as (u, v, 0) [m];
//  - Tube: a flat rest state whose first coordinate wraps round with period P (a closed tube), as
//    (R cos(u / R), v, R sin(u / R)) with R = P / 2 pi: the rest circle, which interpolates
//    across the seam without a jump; the shader takes u back as R atan2;
//  - Solid: no flat rest state (a curved OBJ without a flattening): the rest positions, and the
//    pattern is a solid one in space that the rest surface cuts.
struct PatternCoordinates {
  enum class Kind { Flat, Tube, Solid } kind = Kind::Flat;
  std::vector<float> coords;  // 3 per vertex
  double radius = 0;          // Tube: R = P / 2 pi [m]
  double extent = 0;  // the longest side of the coordinates' bounding box [m] (Tube: of (u, v))
};
PatternCoordinates patternCoordinates(const ClothModel& cloth);
// PatternCoordinates::extent alone.
double patternExtent(const ClothModel& cloth);

// A cell size of about a tenth of `extent`, rounded down to 1, 2 or 5 times a power of ten [m];
// 0.1 m for an empty or degenerate extent.
double defaultPatternSize(double extent);
// The cell size drawn for a requested one: on a tube the nearest one that fits an even number of
// cells round it (at least 2), so that the checks and lines meet at the seam; else `requested`.
double drawnPatternSize(double requested, const PatternCoordinates& pattern);

}  // namespace clothlab
