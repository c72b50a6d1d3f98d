#pragma once
// Flat cloth meshes made in code. All lie in the z = 0 plane, centred on the origin, counter-
// clockwise seen from +z; (x, y) are also the material coordinates of the flat rest state.
#include <cstdint>
#include <string>

#include "sim/mesh.h"
#include "sim/result.h"

namespace clothlab {

enum class DiagonalPattern { Same, Alternating, Random };
Result<DiagonalPattern> parseDiagonalPattern(const std::string& name);  // same|alternating|random

// Regular grid of columns x rows vertices over width x height [m]; each quad split by a diagonal.
TriangleMesh makeGrid(double width, double height, int columns, int rows, DiagonalPattern pattern,
                      std::uint64_t seed = 1);

// Irregular triangulations: Delaunay triangulation of well-spaced random points (Poisson-disk
// sampling, boundary sampled at the same spacing). The spacing is tuned so the triangle count
// lands within a few per cent of targetTriangles. Same seed, same mesh.
TriangleMesh makeIrregularRectangle(double width, double height, int targetTriangles,
                                    std::uint64_t seed);
TriangleMesh makeIrregularDisk(double radius, int targetTriangles, std::uint64_t seed);

// A closed tube of `columns` vertices around and `rows` along its axis (y, from 0 to height),
// each quad split by a diagonal. `material` receives the unrolled flat coordinates
// (arc length around, height), periodic in the first with period 2 pi radius.
TriangleMesh makeCylinder(double radius, double height, int columns, int rows, DiagonalPattern pattern,
                          std::uint64_t seed, Eigen::MatrixX2d* material);
// The same with radius `bottomRadius` at y = 0 and `topRadius` at y = height: a truncated cone (a
// flared skirt when the bottom is wider). Its quads are planar, so it unfolds exactly
// (unfoldRestMesh, sim/material.h) into a sector of a ring.
TriangleMesh makeCone(double bottomRadius, double topRadius, double height, int columns, int rows,
                      DiagonalPattern pattern, std::uint64_t seed);

// A closed torus around the y axis: `segments` vertices around the axis, `rings` around the tube,
// outward-facing (an obstacle shape, not cloth).
TriangleMesh makeTorus(double majorRadius, double minorRadius, int segments, int rings);

// A closed ellipsoid with semi-axes `radii` centred on the origin, poles on the y axis: `segments`
// vertices round each of `rings` - 1 latitudes, outward-facing (a jelly's shape).
TriangleMesh makeEllipsoid(const Vec3& radii, int segments, int rings);

// Every generator avoids "ear" triangles (two boundary edges, one neighbour) by flipping their
// interior edge, so that every boundary triangle has two neighbours, as the NC boundary
// constraints of Bender et al. assume (methods 1.3).
void flipEarTriangles(TriangleMesh& mesh);

// Delaunay triangulation of 2D points (Bowyer-Watson). Triangles are counter-clockwise; exactly
// collinear hull slivers are removed. Exposed for tests.
std::vector<Tri> delaunayTriangulate(const Eigen::MatrixX2d& points);

}  // namespace clothlab
