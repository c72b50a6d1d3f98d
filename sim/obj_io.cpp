#include "sim/obj_io.h"

#include <tiny_obj_loader.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "sim/file_io.h"
#include "sim/format.h"

namespace clothlab {
namespace {

// Up to `limit` characters of `text` as they can be printed in a message ('?' for the others).
std::string printable(std::string_view text, size_t limit) {
  std::string out;
  for (size_t k = 0; k < text.size() && out.size() < limit; ++k)
    out += std::isprint(static_cast<unsigned char>(text[k])) ? text[k] : '?';
  return out;
}

// Line numbers of the `v` and `f` records, so that errors found after parsing can point at the
// line that caused them, and a check of every coordinate token (tinyobjloader reads "nan" or a
// missing coordinate silently as a number).
struct ObjLineIndex {
  long long vertexCount = 0;  // `v` records seen so far
  std::optional<std::string> coordinateError;
  // A face's (or polyline's, point record's) vertex index that is 0 or out of range.
  std::optional<std::string> indexError;
  long long maxIndex = 0;  // largest positive such index, checked once all vertices are known
  int maxIndexLine = 0;
  std::string maxIndexWhat;  // "face", or the other element it is in
  long long faceCount = 0;  // `f` records
  // The file as tinyobjloader is given it: without a UTF-8 byte-order mark, with '\n' line
  // ends, and without the comments that end element (f, l, p) lines, which it would read as a
  // vertex index (exporters write them, as in "f 1 2 3 # back face").
  std::string text;
  // The first line with content and its number (0: none), printable, for a file with neither
  // `v` nor `f` records: what it is instead of an OBJ mesh.
  std::string firstContent;
  int firstContentLine = 0;
  bool utf16 = false;  // starts with a UTF-16 byte-order mark
  // Records whose keyword an OBJ mesh reader does not know (tinyobjloader skips them): per
  // keyword (printable, at most 20 characters; the first 20 keywords), how many and the first line.
  struct Unknown {
    std::string keyword;
    long long count = 0;
    int firstLine = 0;
  };
  std::vector<Unknown> unknown;
  // Codim-IPC's `stitch v a b t` records (0-based file vertex indices), with their lines.
  struct StitchRecord {
    long long vertex, a, b;
    double t;
    int line;
  };
  std::vector<StitchRecord> stitches;
  std::optional<std::string> stitchError;  // the first malformed one

  void noteKeyword(std::string_view raw, int lineNo) {
    static const char* const kKnown[] = {"v", "vt", "vn", "vp",     "f",      "l",     "p",
                                         "o", "g",  "s",  "mtllib", "usemtl", "stitch"};
    if (raw.front() == '#') return;
    for (const char* known : kKnown)
      if (raw == known) return;
    const std::string keyword = printable(raw, 20);
    for (Unknown& u : unknown)
      if (u.keyword == keyword) {
        ++u.count;
        return;
      }
    if (unknown.size() < 20) unknown.push_back({keyword, 1, lineNo});
  }
};

// A `stitch v a b t` record's fields (after the keyword), or nothing with `error` set to what is
// wrong, naming the line.
std::optional<ObjLineIndex::StitchRecord> readStitch(const std::string& fields, int lineNo,
                                                     std::optional<std::string>& error) {
  const std::string at = "line " + std::to_string(lineNo) + ": stitch";
  std::istringstream tokens(fields);
  std::vector<std::string> words;
  std::string token;
  while (tokens >> token && token[0] != '#') words.push_back(token);
  if (words.size() != 4) {
    error = at + " has " + std::to_string(words.size()) +
            " field(s); 4 are needed (stitch VERTEX A B T: VERTEX sewn to (1 - T) A + T B, 0-based "
            "vertex indices)";
    return std::nullopt;
  }
  ObjLineIndex::StitchRecord record{0, 0, 0, 0, lineNo};
  long long* const indices[] = {&record.vertex, &record.a, &record.b};
  for (int k = 0; k < 3; ++k) {
    char* end = nullptr;
    errno = 0;
    *indices[k] = std::strtoll(words[k].c_str(), &end, 10);
    if (end == words[k].c_str() || *end != '\0' || errno == ERANGE || *indices[k] < 0) {
      error = at + " vertex index '" + printable(words[k], 40) +
              "' is not a whole number from 0 up (indices are 0-based)";
      return std::nullopt;
    }
  }
  char* end = nullptr;
  record.t = std::strtod(words[3].c_str(), &end);
  if (end == words[3].c_str() || *end != '\0' || !(record.t >= 0 && record.t <= 1)) {
    error =
        at + " position '" + printable(words[3], 40) + "' along its edge is not a number in [0, 1]";
    return std::nullopt;
  }
  if (record.a == record.b || record.vertex == record.a || record.vertex == record.b) {
    error = at + " " + std::to_string(record.vertex) + " " + std::to_string(record.a) + " " +
            std::to_string(record.b) +
            ": its three vertices must differ (a vertex sewn to a point between two others)";
    return std::nullopt;
  }
  return record;
}

ObjLineIndex indexObjLines(const std::string& path) {
  ObjLineIndex index;
  std::ifstream in(path, std::ios::binary);
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (lineNo == 1) {
      index.utf16 = line.rfind("\xFE\xFF", 0) == 0 || line.rfind("\xFF\xFE", 0) == 0;
      if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // UTF-8's byte-order mark
    }
    size_t p = line.find_first_not_of(" \t");
    if (p == std::string::npos) {
      index.text += line + '\n';
      continue;
    }
    if (index.firstContentLine == 0) {
      index.firstContentLine = lineNo;
      index.firstContent = printable(std::string_view(line).substr(p), 40);
    }
    // The record's keyword; `v` and `f` count only with something after them.
    const size_t keywordEnd = std::min(line.find_first_of(" \t", p), line.size());
    const std::string_view keyword = std::string_view(line).substr(p, keywordEnd - p);
    const bool more = keywordEnd < line.size();
    index.noteKeyword(keyword, lineNo);
    const bool element = keyword == "f" || keyword == "l" || keyword == "p";
    index.text.append(line, 0, element ? line.find('#') : std::string::npos);
    index.text += '\n';
    if (keyword == "v" && more) {
      ++index.vertexCount;
      if (index.coordinateError) continue;
      std::istringstream tokens(line.substr(p + 2));
      std::string token;
      int count = 0;
      while (count < 3 && tokens >> token) {
        if (token[0] == '#') break;
        char* end = nullptr;
        errno = 0;
        const double value = std::strtod(token.c_str(), &end);
        if (end == token.c_str() || *end != '\0') {
          index.coordinateError = "line " + std::to_string(lineNo) + ": vertex coordinate '" +
                                  printable(token, 40) + "' is not a number";
        } else if (!std::isfinite(value) || (errno == ERANGE && std::abs(value) > 1.0)) {
          index.coordinateError = "line " + std::to_string(lineNo) + ": vertex coordinate '" +
                                  token + "' is not finite";
        }
        ++count;
        if (index.coordinateError) break;
      }
      if (!index.coordinateError && count < 3)
        index.coordinateError = "line " + std::to_string(lineNo) + ": vertex has " +
                                std::to_string(count) + " coordinate(s), 3 needed";
    } else if (keyword == "stitch") {
      if (!index.stitchError) {
        if (auto record = readStitch(line.substr(keywordEnd), lineNo, index.stitchError))
          index.stitches.push_back(*record);
      }
    } else if (element && more) {
      // A face's corners, a polyline's points or a point record's: the same vertex numbers.
      struct Element {
        const char* name;    // as the messages name it
        const char* corner;  // one of its entries
        const char* form;    // how it lists them
      };
      const Element what =
          keyword == "f" ? Element{"face", "face corner",
                                   "a face lists its corners as v, v/vt, v/vt/vn or v//vn"}
          : keyword == "l"
              ? Element{"polyline ('l')", "polyline ('l') point",
                        "a polyline lists its points as v or v/vt"}
              : Element{"point ('p')", "point ('p') entry", "a point record lists vertices as v"};
      if (keyword == "f") ++index.faceCount;
      if (index.indexError) continue;
      // OBJ indices are 1-based; negative ones count back from the latest vertex.
      const long long defined = index.vertexCount;
      std::istringstream tokens(line.substr(keywordEnd));
      std::string token;
      while (tokens >> token && !index.indexError) {
        if (token[0] == '#') break;
        char* end = nullptr;
        const long long value = std::strtoll(token.c_str(), &end, 10);
        if (end == token.c_str()) {
          index.indexError = "line " + std::to_string(lineNo) + ": " + what.corner + " '" +
                             printable(token, 40) + "' does not start with a vertex number (" +
                             what.form + ", each a number)";
          break;
        }
        const std::string at =
            "line " + std::to_string(lineNo) + ": " + what.name + " index " + token;
        if (value == 0) index.indexError = at + " is 0 (OBJ indices start at 1)";
        else if (value < 0 && -value > defined)
          index.indexError = at + " reaches before the first vertex (" + std::to_string(defined) +
                             " defined so far)";
        else if (value > index.maxIndex) {
          index.maxIndex = value;
          index.maxIndexLine = lineNo;
          index.maxIndexWhat = what.name;
        }
      }
    }
  }
  if (!index.indexError && index.maxIndex > index.vertexCount)
    index.indexError = "line " + std::to_string(index.maxIndexLine) + ": " + index.maxIndexWhat +
                       " index " + std::to_string(index.maxIndex) +
                       " is out of range (the file has " + std::to_string(index.vertexCount) +
                       " vertices)";
  return index;
}

// Triangles that repeat an earlier one's three corners (in any order): the indices of the later
// ones, each with the one it repeats.
std::vector<std::pair<int, int>> repeatedTriangles(const std::vector<Tri>& triangles) {
  std::vector<std::pair<std::array<int, 3>, int>> sorted;  // corners in order, the index
  sorted.reserve(triangles.size());
  for (int t = 0; t < static_cast<int>(triangles.size()); ++t) {
    std::array<int, 3> corners = triangles[t];
    std::sort(corners.begin(), corners.end());
    sorted.emplace_back(corners, t);
  }
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::pair<int, int>> repeats;
  for (size_t k = 1, first = 0; k < sorted.size(); ++k) {
    if (sorted[k].first != sorted[first].first)
      first = k;
    else
      repeats.emplace_back(sorted[k].second, sorted[first].second);
  }
  std::sort(repeats.begin(), repeats.end());
  return repeats;
}

// Turns triangles over (swapping their second and third corners, with their texture corners) so
// that every two triangles across an edge wind alike, running it in opposite directions. In each
// piece the winding most of its triangles have is kept. Only edges of exactly two triangles
// join (validateMesh refuses the others). Returns the triangles turned, and how many pieces
// are one-sided (a Moebius band), which keep their windings as given.
struct Rewinding {
  std::vector<int> turned;
  int oneSided = 0;
};
Rewinding windAlike(const Positions& positions, std::vector<Tri>& triangles,
                    std::vector<std::array<int, 3>>& texcoordCorners) {
  const int n = static_cast<int>(triangles.size());
  TriangleMesh mesh;
  mesh.positions = positions;
  mesh.triangles = triangles;
  const MeshTopology topology = buildTopology(mesh);
  // Whether triangle t runs from vertex a to vertex b.
  auto runs = [&](int t, int a, int b) {
    for (int k = 0; k < 3; ++k)
      if (triangles[t][k] == a && triangles[t][(k + 1) % 3] == b) return true;
    return false;
  };
  // Per triangle: its neighbours across edges of two triangles, and whether each must wind
  // oppositely to it as the file has them (both run the edge the same way).
  std::vector<std::vector<std::pair<int, bool>>> across(n);
  for (int e = 0; e < topology.edgeCount(); ++e) {
    if (topology.edgeTriCount[e] != 2) continue;
    const auto [s, t] = topology.edgeTris[e];
    const auto [a, b] = topology.edges[e];
    const bool alike = runs(s, a, b) == runs(t, a, b);
    across[s].emplace_back(t, alike);
    across[t].emplace_back(s, alike);
  }
  Rewinding out;
  std::vector<int> flip(n, -1);  // per triangle: 1 if it winds oppositely to its piece's first
  for (int root = 0; root < n; ++root) {
    if (flip[root] >= 0) continue;
    std::vector<int> piece{root};
    flip[root] = 0;
    bool orientable = true;
    for (size_t next = 0; next < piece.size(); ++next) {
      const int t = piece[next];
      for (const auto& [u, opposite] : across[t]) {
        const int want = flip[t] ^ static_cast<int>(opposite);
        if (flip[u] < 0) {
          flip[u] = want;
          piece.push_back(u);
        } else if (flip[u] != want) {
          orientable = false;
        }
      }
    }
    if (!orientable) {
      ++out.oneSided;
      continue;
    }
    const long opposed =
        std::count_if(piece.begin(), piece.end(), [&](int t) { return flip[t] == 1; });
    const int turn = 2 * opposed > static_cast<long>(piece.size()) ? 0 : 1;  // the fewer turn
    for (int t : piece)
      if (flip[t] == turn) out.turned.push_back(t);
  }
  std::sort(out.turned.begin(), out.turned.end());
  for (int t : out.turned) {
    std::swap(triangles[t][1], triangles[t][2]);
    std::swap(texcoordCorners[t][1], texcoordCorners[t][2]);
  }
  return out;
}

// "triangle 3 5 8 ..." (1-based) for a warning: at most ten of `triangles` (0-based).
std::string triangleList(const std::vector<int>& triangles) {
  std::string text = "triangle";
  for (size_t i = 0; i < triangles.size() && i < 10; ++i)
    text += ' ' + std::to_string(triangles[i] + 1);
  if (triangles.size() > 10) text += " ...";
  return text;
}

std::string firstLine(const std::string& text) {
  std::string s = text.substr(0, text.find('\n'));
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

Result<LoadedMesh> loadObj(const std::string& path, bool validate) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Error{path + ": file not found"};
  if (std::filesystem::is_directory(path, ec)) return Error{path + ": is a directory, not a file"};
  {
    std::ifstream probe(path, std::ios::binary);
    if (!probe) return Error{path + ": cannot open: " + std::strerror(errno)};
  }
  const ObjLineIndex lines = indexObjLines(path);
  if (lines.coordinateError) return Error{path + ": " + *lines.coordinateError};
  if (lines.indexError) return Error{path + ": " + *lines.indexError};
  if (lines.stitchError) return Error{path + ": " + *lines.stitchError};
  if (lines.vertexCount == 0 && lines.faceCount == 0) {
    if (lines.firstContentLine == 0) return Error{path + ": empty mesh: the file has no content"};
    if (lines.utf16)
      return Error{path + ": empty mesh: the file is UTF-16 text (it starts with a byte-order mark); "
                          "OBJ is read as ASCII or UTF-8, so save it in one of those"};
    return Error{path + ": empty mesh: no vertex ('v') or face ('f') records, so not an OBJ mesh (line " +
                 std::to_string(lines.firstContentLine) + " reads \"" + lines.firstContent + "\")"};
  }

  tinyobj::ObjReaderConfig config;
  config.triangulate = true;
  config.vertex_color = false;
  tinyobj::ObjReader reader;
  // Materials are not read: a cloth's look is the viewer's.
  const bool parsed = reader.ParseFromString(lines.text, "", config);
  if (!parsed || !reader.Error().empty()) {
    std::string message = reader.Error().empty() ? "unknown parse error" : firstLine(reader.Error());
    return Error{path + ": malformed OBJ: " + message};
  }

  const auto& attrib = reader.GetAttrib();
  const int rawVertexCount = static_cast<int>(attrib.vertices.size() / 3);
  LoadedMesh out;
  std::vector<Tri> triangles;
  std::vector<std::array<int, 3>> texcoordCorners;
  bool texcoordsComplete = true;
  int faceRecord = 0;
  for (const auto& shape : reader.GetShapes()) {
    const auto& m = shape.mesh;
    size_t offset = 0;
    for (size_t f = 0; f < m.num_face_vertices.size(); ++f, ++faceRecord) {
      const int arity = m.num_face_vertices[f];
      if (arity != 3) {  // triangulate=true leaves only triangles; anything else is malformed
        offset += arity;
        continue;
      }
      Tri tri;
      std::array<int, 3> uv{-1, -1, -1};
      for (int k = 0; k < 3; ++k) {
        const auto& idx = m.indices[offset + k];
        if (idx.vertex_index < 0 || idx.vertex_index >= rawVertexCount) {
          return Error{path + ": face " + std::to_string(faceRecord + 1) + " refers to vertex " +
                       std::to_string(idx.vertex_index + 1) + ", but the file has " +
                       std::to_string(rawVertexCount) + " vertices (indices are 1-based)"};
        }
        tri[k] = idx.vertex_index;
        uv[k] = idx.texcoord_index;
        if (idx.texcoord_index < 0) texcoordsComplete = false;
      }
      triangles.push_back(tri);
      texcoordCorners.push_back(uv);
      offset += 3;
    }
  }
  if (triangles.empty())
    return Error{path + ": empty mesh: no usable triangle faces (" +
                 std::to_string(rawVertexCount) + " vertices)"};

  // Drop zero-area triangles with a warning that names them (1-based, after triangulation).
  TriangleMesh raw;
  raw.positions.resize(rawVertexCount, 3);
  for (int i = 0; i < rawVertexCount; ++i)
    for (int d = 0; d < 3; ++d) raw.positions(i, d) = attrib.vertices[3 * i + d];
  raw.triangles = triangles;
  std::vector<Tri> kept;
  std::vector<std::array<int, 3>> keptUv;
  std::vector<int> keptFrom;  // each kept triangle's index in the file (after triangulation)
  std::vector<int> dropped;
  int overflowing = 0;  // dropped because their size overflows a double, not for a zero area
  for (int t = 0; t < raw.triangleCount(); ++t) {
    if (validate && isDegenerate(raw, t)) {
      dropped.push_back(t);
      // Squared edge lengths overflow beyond about 1e154 m, and the test of the area with them.
      bool huge = false;
      for (int v : triangles[t]) huge = huge || raw.positions.row(v).cwiseAbs().maxCoeff() > 1e150;
      if (huge) ++overflowing;
    } else {
      kept.push_back(triangles[t]);
      keptUv.push_back(texcoordCorners[t]);
      keptFrom.push_back(t);
    }
  }
  const std::string overflowText = "overflows: coordinates reach " +
                                   formatG(raw.positions.cwiseAbs().maxCoeff(), 3) +
                                   " (read as metres)";
  if (!dropped.empty()) {
    std::ostringstream w;
    w << path << ": dropped " << dropped.size() << (overflowing > 0 ? " degenerate" : " zero-area")
      << " triangle(s) (" << triangleList(dropped) << ")";
    if (overflowing > 0) w << "; the area of " << overflowing << " of them " << overflowText;
    out.warnings.push_back(w.str());
  }
  if (kept.empty() && overflowing == static_cast<int>(dropped.size()))
    return Error{path + ": every triangle's area " + overflowText};
  if (kept.empty())
    return Error{path + ": empty mesh: every triangle has zero area" +
                 (overflowing > 0 ? " or an area that " + overflowText : std::string())};

  if (validate) {
    // A triangle given twice (a two-sided face) is kept once.
    const auto repeats = repeatedTriangles(kept);
    if (!repeats.empty()) {
      std::vector<bool> repeated(kept.size(), false);
      for (const auto& [t, earlier] : repeats) repeated[t] = true;
      std::ostringstream w;
      w << path << ": dropped " << repeats.size() << " repeated triangle(s) (";
      for (size_t i = 0; i < repeats.size() && i < 5; ++i)
        w << (i ? ", " : "") << "triangle " << keptFrom[repeats[i].first] + 1
          << " repeats triangle " << keptFrom[repeats[i].second] + 1;
      w << (repeats.size() > 5 ? ", ...)" : ")");
      out.warnings.push_back(w.str());
      size_t k = 0;
      for (size_t t = 0; t < kept.size(); ++t)
        if (!repeated[t]) {
          kept[k] = kept[t];
          keptUv[k] = keptUv[t];
          keptFrom[k++] = keptFrom[t];
        }
      kept.resize(k);
      keptUv.resize(k);
      keptFrom.resize(k);
    }
    // Triangles that wind against their neighbours are turned over: normals, the flat rest
    // state's orientation and the renderer's front side all need one winding per piece.
    Rewinding rewound = windAlike(raw.positions, kept, keptUv);
    for (int& t : rewound.turned) t = keptFrom[t];
    if (!rewound.turned.empty())
      out.warnings.push_back(path + ": turned " + std::to_string(rewound.turned.size()) +
                             " triangle(s) over so that each winds like its neighbours (" +
                             triangleList(rewound.turned) + ")");
    if (rewound.oneSided > 0)
      out.warnings.push_back(path + ": " + std::to_string(rewound.oneSided) +
                             " piece(s) one-sided, like a Moebius band: their triangles cannot all "
                             "wind alike, and a solver that needs a flat rest state refuses them");
  }

  // Compact away unreferenced vertices.
  std::vector<int> remap(rawVertexCount, -1);
  int vertexCount = 0;
  for (auto& tri : kept)
    for (int& v : tri) {
      if (remap[v] < 0) remap[v] = vertexCount++;
      v = remap[v];
    }
  if (vertexCount < rawVertexCount)
    out.warnings.push_back(path + ": ignored " + std::to_string(rawVertexCount - vertexCount) +
                           " vertex/vertices not used by any triangle");
  if (!lines.unknown.empty()) {
    std::ostringstream w;
    w << path << ": ignored";
    const size_t shown = std::min<size_t>(lines.unknown.size(), 5);
    for (size_t k = 0; k < shown; ++k) {
      const auto& u = lines.unknown[k];
      w << (k == 0 ? " " : k + 1 == shown && shown == lines.unknown.size() ? " and " : ", ") << u.count << " '"
        << u.keyword << "' record" << (u.count > 1 ? "s" : "") << " (first on line " << u.firstLine << ")";
    }
    if (lines.unknown.size() > shown) w << " and records of other keywords";
    w << ", which ClothLab does not read";
    out.warnings.push_back(w.str());
  }
  // Stitches, renumbered like the vertices.
  for (const auto& record : lines.stitches) {
    Stitch stitch;
    int* const mapped[] = {&stitch.vertex, &stitch.a, &stitch.b};
    const long long given[] = {record.vertex, record.a, record.b};
    for (int k = 0; k < 3; ++k) {
      const std::string at = path + ": line " + std::to_string(record.line) + ": stitch vertex " +
                             std::to_string(given[k]);
      if (given[k] >= rawVertexCount)
        return Error{at + " is out of range (the file has " + std::to_string(rawVertexCount) +
                     " vertices; stitch indices are 0-based)"};
      if (remap[given[k]] < 0)
        return Error{at + " is not a corner of any triangle the cloth keeps"};
      *mapped[k] = remap[given[k]];
    }
    stitch.t = record.t;
    out.stitches.push_back(stitch);
  }
  out.mesh.positions.resize(vertexCount, 3);
  for (int i = 0; i < rawVertexCount; ++i)
    if (remap[i] >= 0) out.mesh.positions.row(remap[i]) = raw.positions.row(i);
  out.mesh.triangles = std::move(kept);

  // Texture coordinates become per-vertex data when every corner of a vertex gives the same
  // values (under one index or several), or, around a tube, the same up to one turn of one
  // coordinate: a seam where that coordinate wraps with one period throughout.
  if (!texcoordsComplete && !attrib.texcoords.empty())
    out.texcoordsDropped = "its texture coordinates were not used: some faces give none";
  if (texcoordsComplete && !attrib.texcoords.empty()) {
    const Eigen::Map<const Eigen::Matrix<tinyobj::real_t, Eigen::Dynamic, 2, Eigen::RowMajor>>
        fileUv(attrib.texcoords.data(), static_cast<Eigen::Index>(attrib.texcoords.size() / 2), 2);
    const double extent = (fileUv.colwise().maxCoeff() - fileUv.colwise().minCoeff()).maxCoeff();
    const double same = 1e-7 * std::max(extent, 1e-300);  // apart by less: the same values
    std::vector<int> vertexUv(vertexCount, -1);
    Eigen::Vector2d period = Eigen::Vector2d::Zero();  // per coordinate; at most one becomes > 0
    bool consistent = true;
    for (size_t t = 0; t < out.mesh.triangles.size() && consistent; ++t)
      for (int k = 0; k < 3 && consistent; ++k) {
        int& slot = vertexUv[out.mesh.triangles[t][k]];
        const int corner = keptUv[t][k];
        if (slot < 0) slot = corner;
        if (slot == corner) continue;
        const Eigen::Vector2d apart =
            (fileUv.row(corner) - fileUv.row(slot)).cwiseAbs().transpose();
        Eigen::Index axis;
        if (apart.maxCoeff(&axis) <= same) continue;
        // Apart in one coordinate only, by the period that coordinate already wraps with, if any.
        const bool turn = apart[1 - axis] <= same && period[1 - axis] == 0 &&
                          (period[axis] == 0 || std::abs(apart[axis] - period[axis]) <= same);
        if (turn) {
          period[axis] = apart[axis];
          continue;
        }
        consistent = false;
        const auto fileVertex =
            std::find(remap.begin(), remap.end(), out.mesh.triangles[t][k]) - remap.begin();
        out.texcoordsDropped =
            "its texture coordinates were not used: they are cut apart at seams (vertex " +
            std::to_string(fileVertex + 1) + " has texture coordinates " +
            std::to_string(slot + 1) + " and " + std::to_string(corner + 1) +
            "), not one flat piece per vertex nor a tube wrapping round one of them";
      }
    if (consistent) {
      // A tube's wrapping coordinate comes first.
      const int first = period[1] > 0 ? 1 : 0;
      Eigen::MatrixX2d uv(vertexCount, 2);
      for (int i = 0; i < vertexCount; ++i)
        uv.row(i) << fileUv(vertexUv[i], first), fileUv(vertexUv[i], 1 - first);
      out.texcoords = uv;
      out.texcoordPeriod = period[first];
    }
  }

  if (validate)
    if (auto problem = validateMesh(out.mesh, path)) return Error{*problem};
  return out;
}

std::optional<std::string> validateMesh(const TriangleMesh& mesh, const std::string& source) {
  if (mesh.vertexCount() == 0 || mesh.triangleCount() == 0)
    return source + ": empty mesh (" + std::to_string(mesh.vertexCount()) + " vertices, " +
           std::to_string(mesh.triangleCount()) + " triangles)";
  if (!mesh.positions.allFinite()) {
    for (int i = 0; i < mesh.vertexCount(); ++i)
      if (!mesh.positions.row(i).allFinite())
        return source + ": vertex " + std::to_string(i + 1) + " has a non-finite coordinate";
  }
  for (int t = 0; t < mesh.triangleCount(); ++t)
    for (int v : mesh.triangles[t])
      if (v < 0 || v >= mesh.vertexCount())
        return source + ": triangle " + std::to_string(t + 1) + " refers to vertex " +
               std::to_string(v + 1) + " of " + std::to_string(mesh.vertexCount());
  const MeshTopology topo = buildTopology(mesh);
  if (topo.nonManifoldEdgeCount > 0) {
    for (int e = 0; e < topo.edgeCount(); ++e)
      if (topo.edgeTriCount[e] > 2)
        return source + ": non-manifold mesh: " + std::to_string(topo.nonManifoldEdgeCount) +
               " edge(s) shared by more than two triangles, e.g. the edge between vertices " +
               std::to_string(topo.edges[e][0] + 1) + " and " + std::to_string(topo.edges[e][1] + 1) +
               " is shared by " + std::to_string(topo.edgeTriCount[e]) + " triangles";
  }
  for (int t = 0; t < mesh.triangleCount(); ++t)
    if (isDegenerate(mesh, t))
      return source + ": triangle " + std::to_string(t + 1) + " has zero area";
  return std::nullopt;
}

std::optional<std::string> writeObj(const std::string& path, const Positions& positions,
                                    const std::vector<Tri>& triangles, ObjTexcoords texcoords) {
  if (!positions.allFinite()) return path + ": refusing to write non-finite positions";
  const std::string temporary = path + ".tmp";
  {
    std::FILE* file = std::fopen(temporary.c_str(), "wb");
    if (!file) return path + ": cannot write: " + std::strerror(errno);
    std::fprintf(file, "# ClothLab surface: %d vertices, %d triangles\n",
                 static_cast<int>(positions.rows()), static_cast<int>(triangles.size()));
    for (Eigen::Index i = 0; i < positions.rows(); ++i)
      std::fprintf(file, "v %.9g %.9g %.9g\n", positions(i, 0), positions(i, 1), positions(i, 2));
    const Eigen::MatrixX2d* uv = texcoords.uv && texcoords.uv->rows() == positions.rows() && texcoords.uv->allFinite()
                                     ? texcoords.uv
                                     : nullptr;
    if (!uv) {
      for (const Tri& f : triangles) std::fprintf(file, "f %d %d %d\n", f[0] + 1, f[1] + 1, f[2] + 1);
    } else {
      const Eigen::RowVector2d low = uv->colwise().minCoeff();
      const Eigen::RowVector2d extent = uv->colwise().maxCoeff() - low;
      const double size = std::max({extent.x(), extent.y(), texcoords.wrap.period});
      const double scale = size > 0 ? 1 / size : 1;
      auto write = [&](const Eigen::RowVector2d& u) {
        std::fprintf(file, "vt %.9g %.9g\n", scale * (u.x() - low.x()), scale * (u.y() - low.y()));
      };
      if (!texcoords.wrap.wraps()) {
        for (Eigen::Index i = 0; i < uv->rows(); ++i) write(uv->row(i));
        for (const Tri& f : triangles)
          std::fprintf(file, "f %d/%d %d/%d %d/%d\n", f[0] + 1, f[0] + 1, f[1] + 1, f[1] + 1, f[2] + 1, f[2] + 1);
      } else {
        for (const Tri& f : triangles)
          for (int k = 0; k < 3; ++k) {
            const Eigen::Vector2d first = uv->row(f[0]).transpose();
            write((first + texcoords.wrap.offset(first, uv->row(f[k]).transpose())).transpose());
          }
        for (size_t t = 0; t < triangles.size(); ++t) {
          const Tri& f = triangles[t];
          const int c = static_cast<int>(3 * t);
          std::fprintf(file, "f %d/%d %d/%d %d/%d\n", f[0] + 1, c + 1, f[1] + 1, c + 2, f[2] + 1, c + 3);
        }
      }
    }
    const bool failed = std::ferror(file) != 0;
    if (std::fclose(file) != 0 || failed) {
      std::remove(temporary.c_str());
      return path + ": write failed";
    }
  }
  if (auto why = renameOver(temporary, path)) return path + ": cannot write: " + *why;
  return std::nullopt;
}

}  // namespace clothlab
