#pragma once
// OBJ input and output.
//
// loadObj reads a Wavefront OBJ with tinyobjloader (double precision), triangulates polygons,
// merges all groups/objects into one mesh and validates it. Every failure names the file and,
// where it is known, the line. Zero-area triangles and repeats of a triangle are dropped with a
// warning; triangles that wind against their neighbours are turned over (the winding most of
// their piece has is kept) with a warning; unreferenced vertices are removed with a warning
// (indices are renumbered). Codim-IPC's `stitch` records
// (sim/stitches.h) are read and checked; other records an OBJ mesh reader does not know are
// skipped with a warning naming them.
#include <Eigen/Core>
#include <optional>
#include <string>
#include <vector>

#include "sim/material_wrap.h"
#include "sim/mesh.h"
#include "sim/result.h"
#include "sim/stitches.h"

namespace clothlab {

struct LoadedMesh {
  TriangleMesh mesh;
  std::optional<Eigen::MatrixX2d> texcoords;  // per vertex, when every corner agrees
  double texcoordPeriod = 0;                  // > 0: the first of them wraps round a tube
  std::string texcoordsDropped;               // why the file's texture coordinates are not in `texcoords`
  std::vector<Stitch> stitches;               // its `stitch` records (sim/stitches.h), renumbered
  std::vector<std::string> warnings;          // e.g. dropped triangles (which, and why)
};

// validate = false keeps degenerate triangles and skips validateMesh (for `info`, which reports
// defects instead of refusing them); unreadable or malformed files are errors either way.
Result<LoadedMesh> loadObj(const std::string& path, bool validate = true);

// Validates a mesh for simulation: non-empty, finite, indices in range, no edge shared by more
// than two triangles, no degenerate triangle. `source` names the mesh in messages.
std::optional<std::string> validateMesh(const TriangleMesh& mesh, const std::string& source);

// Texture coordinates for writeObj: `uv` per vertex (null: none), written scaled by one factor
// into the unit square (the aspect kept). With a `wrap` (a tube's coordinates close round it,
// sim/material_wrap.h) each triangle's corners get their own, unwrapped next to its first
// corner, so no triangle spans the seam.
struct ObjTexcoords {
  const Eigen::MatrixX2d* uv = nullptr;
  MaterialWrap wrap;
};

// Writes positions + triangles (+ texture coordinates) as OBJ. Refuses non-finite positions
// (nothing is written then). Writes to a temporary file and renames it, so a failure never
// leaves a partial file.
std::optional<std::string> writeObj(const std::string& path, const Positions& positions,
                                    const std::vector<Tri>& triangles, ObjTexcoords texcoords = {});

}  // namespace clothlab
