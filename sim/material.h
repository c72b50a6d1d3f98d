#pragma once
// The cloth's flat rest state in material coordinates: what mls-isometry's samples are placed by,
// and what says how far apart two points of an inextensible cloth can get (sim/grab.h).
#include <Eigen/Core>
#include <utility>
#include <vector>

#include "sim/result.h"
#include "sim/scene.h"

namespace clothlab {

// u_j - u_i, with u_j at its image nearest u_i (MaterialWrap::offset).
Eigen::Vector2d materialOffset(const Eigen::MatrixX2d& u, int i, int j, const MaterialWrap& wrap);

// The flat point at barycentric coordinates `b` in triangle `tri` over the flat coordinates `u`,
// its corners seen from the first one (MaterialWrap::offset), so that a triangle across a tube's
// cut stays whole.
Eigen::Vector2d flatPointAt(const Tri& tri, const Eigen::MatrixX2d& u, const MaterialWrap& wrap,
                            const Vec3& b);

// The triangle of `triangles` (over the flat coordinates `u`) holding the flat point `m`, each
// triangle taken round its wrap where that brings it nearer, with m's barycentric coordinates in
// it: the triangle where the least of them is largest (a point on an edge, or a rounding outside,
// goes to either neighbour; a point outside them all to the triangle where that least is largest,
// clamped onto it). Scans every triangle.
std::pair<int, Vec3> locateFlatPoint(const std::vector<Tri>& triangles, const Eigen::MatrixX2d& u,
                                     const MaterialWrap& wrap, const Eigen::Vector2d& m);

// The cloth's own material coordinates when they flatten the rest mesh up to a uniform scale
// (checked on every edge, 1%), scaled to it with their period; else a plane fit of a mesh flat
// within 0.1% of its size; else the rest mesh unfolded (unfoldRestMesh) when that keeps every
// edge within 1%. Otherwise an error saying why there are none (curved and not developable,
// texture coordinates not a flattening).
Result<FlatRest> flatMaterialCoordinates(const ClothModel& cloth);

// Lays a curved rest mesh flat as a developable surface is cut and unrolled: triangle by
// triangle from a first one, across the edges between them, each keeping its shape. A sheet or
// a tube, either with holes. On a tube the unfolding meets itself moved by a translation (a
// cylinder) or a rotation about the apex (a cone, a flared skirt): that map becomes the
// coordinates' wrap. A mesh in several pieces (a garment's panels) unfolds piece by piece, each
// a sheet, a tube or a cone (each tube's or cone's wrap then holding only round it), the pieces
// laid apart. A piece that closes round more than one way (a shirt) is refused. The coordinates are
// not checked here beyond a consistent wrap; flatMaterialCoordinates checks every edge.
Result<FlatRest> unfoldRestMesh(const TriangleMesh& mesh, const MeshTopology& topology);

// The pieces (MeshTopology components) that a flat rest state's wraps close round, one per wrap
// (in MaterialWrap::rounds order): the piece of the first vertex where that wrap holds
// (MaterialWrap::at), or -1 where it holds at none. Empty where nothing wraps.
std::vector<int> wrappedPieces(const FlatRest& flat, const MeshTopology& topology);

}  // namespace clothlab
