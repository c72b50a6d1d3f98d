// OBJ loading and validation: every bad input gets a message naming the file (and line).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/material.h"
#include "sim/obj_io.h"
#include "test_util.h"

using namespace clothlab;
using clothlab::test::writeFile;

namespace {
std::string loadError(const std::string& name, const std::string& text) {
  const std::string path = writeFile(name, text);
  auto result = loadObj(path);
  EXPECT_FALSE(result.ok()) << name << " should fail";
  if (!result.ok()) {
    EXPECT_NE(result.error().find(path), std::string::npos) << result.error();
  }
  return result.ok() ? "" : result.error();
}
const char* kSquare = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n";
}  // namespace

TEST(Obj, LoadsQuadsAsTrianglesWithTexcoords) {
  const std::string path = writeFile("quad.obj", std::string(kSquare) +
                                                     "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n"
                                                     "f 1/1 2/2 3/3 4/4\n");
  auto result = loadObj(path);
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result->mesh.triangleCount(), 2);
  EXPECT_EQ(result->mesh.vertexCount(), 4);
  ASSERT_TRUE(result->texcoords.has_value());
  // In this file every vertex's texture coordinate equals its (x, y).
  EXPECT_TRUE(result->texcoords->isApprox(result->mesh.positions.leftCols<2>()));
}

TEST(Obj, MissingFileAndDirectory) {
  auto missing = loadObj("/nonexistent/cloth.obj");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("/nonexistent/cloth.obj: file not found"), std::string::npos);
  auto directory = loadObj(clothlab::test::tempDir().string());
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.error().find("directory"), std::string::npos);
}

TEST(Obj, ZeroIndexNamesLine) {
  const std::string e = loadError("zero.obj", std::string(kSquare) + "f 0 1 2\n");
  EXPECT_NE(e.find("line 5"), std::string::npos) << e;
  EXPECT_NE(e.find("is 0"), std::string::npos) << e;
}

// A corner that is not a number (a stray byte run into the next record) is named with its line,
// where tinyobjloader would only say it failed.
TEST(Obj, FaceCornerThatIsNotANumberNamesLine) {
  const std::string e = loadError("corner.obj", std::string(kSquare) +
                                                    "f 1 2 3\nf 1//4 3//4 4//4 \x1d"
                                                    "f 2//1\n");
  EXPECT_NE(e.find("corner.obj: line 6: face corner '?f' does not start with a vertex number"),
            std::string::npos)
      << e;
  const std::string word = loadError("word.obj", std::string(kSquare) + "f 1 two 3\n");
  EXPECT_NE(word.find("line 5: face corner 'two'"), std::string::npos) << word;
}

// Comments at the end of element lines, as exporters write them, are comments (tinyobjloader
// alone reads the '#' as a vertex index of 0 and refuses the file). The texture coordinates after
// them are still read.
TEST(Obj, CommentsAtTheEndOfElementLinesAreIgnored) {
  const std::string path =
      writeFile("trailing.obj", std::string(kSquare) +
                                    "vt 0 0 # corner\nvt 1 0\nvt 1 1\nvt 0 1\n"
                                    "f 1/1 2/2 3/3 # lower\r\nf 1/1 3/3 4/4#upper\n"
                                    "l 1 3 # the diagonal\np 2 # a point\n");
  auto result = loadObj(path);
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result->mesh.triangleCount(), 2);
  ASSERT_TRUE(result->texcoords.has_value());
  EXPECT_TRUE(result->texcoords->isApprox(result->mesh.positions.leftCols<2>()));
}

// Polyline and point records are not cloth, but their vertex numbers are checked as a face's.
TEST(Obj, PolylineAndPointIndicesNameTheirLine) {
  const std::string zero = loadError("line_zero.obj", std::string(kSquare) + "f 1 2 3\nl 0 1\n");
  EXPECT_NE(zero.find("line 6: polyline ('l') index 0 is 0"), std::string::npos) << zero;
  const std::string range = loadError("point_range.obj", std::string(kSquare) + "f 1 2 3\np 7\n");
  EXPECT_NE(range.find("line 6: point ('p') index 7 is out of range (the file has 4 vertices)"),
            std::string::npos)
      << range;
  const std::string word = loadError("line_word.obj", std::string(kSquare) + "f 1 2 3\nl 1 x\n");
  EXPECT_NE(word.find("line 6: polyline ('l') point 'x' does not start with a vertex number"),
            std::string::npos)
      << word;
}

TEST(Obj, OutOfRangeIndexNamesLine) {
  const std::string e = loadError("range.obj", std::string(kSquare) + "f 1 2 3\nf 1 3 9\n");
  EXPECT_NE(e.find("line 6"), std::string::npos) << e;
  EXPECT_NE(e.find("out of range"), std::string::npos) << e;
  const std::string negative = loadError("negative.obj", "v 0 0 0\nf -1 -2 -3\n");
  EXPECT_NE(negative.find("line 2"), std::string::npos) << negative;
}

TEST(Obj, NonFiniteCoordinateNamesLine) {
  const std::string e = loadError("nan.obj", "v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n");
  EXPECT_NE(e.find("line 2"), std::string::npos) << e;
  const std::string inf = loadError("inf.obj", "v 0 0 0\nv 1 0 0\nv 0 1e999 0\nf 1 2 3\n");
  EXPECT_NE(inf.find("line 3"), std::string::npos) << inf;
  const std::string shortLine = loadError("short.obj", "v 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  EXPECT_NE(shortLine.find("line 1"), std::string::npos) << shortLine;
  // A token of raw bytes (a binary file named .obj) is quoted with '?' for what cannot be printed.
  const std::string binary = loadError("binary.obj", "v 0 0 0\nv \x01\xff\xfe 0 0\n");
  const std::string quoted =
      "line 2: vertex coordinate '" + std::string(3, '?') + "' is not a number";
  EXPECT_NE(binary.find(quoted), std::string::npos) << binary;
}

TEST(Obj, EmptyMesh) {
  EXPECT_NE(loadError("empty.obj", "").find("empty mesh: the file has no content"), std::string::npos);
  EXPECT_NE(loadError("blank.obj", "\n  \n").find("no content"), std::string::npos);
  const std::string points = loadError("points.obj", kSquare);
  EXPECT_NE(points.find("empty mesh: no usable triangle faces (4 vertices)"), std::string::npos) << points;
}

// Another kind of file given as a mesh (a scene .json to --obstacle) says so and quotes what it
// starts with, non-printable bytes replaced.
TEST(Obj, FileWithoutObjRecordsIsNotAnObjMesh) {
  const std::string json = loadError("scene.json", "\n{\n  \"name\": \"x\"\n}\n");
  EXPECT_NE(json.find("not an OBJ mesh"), std::string::npos) << json;
  EXPECT_NE(json.find("line 2 reads \"{\""), std::string::npos) << json;
  const std::string binary = loadError("binary.obj", std::string("\x01\x02PK\0\0zz", 8));
  EXPECT_NE(binary.find("line 1 reads \"??PK??zz\""), std::string::npos) << binary;
  const std::string utf16 = loadError("utf16.obj", std::string("\xFE\xFF\0v\0 \0" "1\0\n", 9));
  EXPECT_NE(utf16.find("UTF-16"), std::string::npos) << utf16;
}

// Coordinates so large that a triangle's area overflows a double are named as such, not as a
// zero area.
TEST(Obj, AreasThatOverflowAreNamed) {
  const std::string huge = loadError("huge.obj", "v 0 0 0\nv 1e200 0 0\nv 0 1e200 0\nf 1 2 3\n");
  EXPECT_NE(
      huge.find(
          "huge.obj: every triangle's area overflows: coordinates reach 1e+200 (read as metres)"),
      std::string::npos)
      << huge;
  const std::string path =
      writeFile("stray.obj", std::string(kSquare) + "v 0 0 1e200\nf 1 2 3\nf 1 3 4\nf 1 2 5\n");
  auto result = loadObj(path);
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result->mesh.triangleCount(), 2);
  ASSERT_FALSE(result->warnings.empty());
  EXPECT_NE(result->warnings[0].find(
                "dropped 1 degenerate triangle(s) (triangle 3); the area of 1 of them overflows"),
            std::string::npos)
      << result->warnings[0];
}

TEST(Obj, NonManifoldEdge) {
  const std::string e = loadError(
      "fan.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 -1 0\nv 0 0 1\nf 1 2 3\nf 2 1 4\nf 1 2 5\n");
  EXPECT_NE(e.find("non-manifold"), std::string::npos) << e;
  EXPECT_NE(e.find("between vertices 1 and 2"), std::string::npos) << e;
}

TEST(Obj, ZeroAreaTrianglesDroppedWithWarning) {
  const std::string path =
      writeFile("sliver.obj", std::string(kSquare) + "v 2 0 0\nf 1 2 3\nf 1 3 4\nf 1 2 5\n");
  auto result = loadObj(path);
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result->mesh.triangleCount(), 2);
  ASSERT_FALSE(result->warnings.empty());
  EXPECT_NE(result->warnings[0].find("dropped 1 zero-area triangle(s) (triangle 3)"), std::string::npos)
      << result->warnings[0];
}

TEST(Obj, RepeatedTrianglesDroppedWithWarning) {
  // tinyobjloader's issue 391: the same face twice; here also once with the other winding.
  const std::string path =
      writeFile("twice.obj", std::string(kSquare) + "f 1 2 3\nf 1 3 4\nf 1 2 3\nf 3 2 1\n");
  auto result = loadObj(path);
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result->mesh.triangleCount(), 2);
  ASSERT_EQ(result->warnings.size(), 1u);
  EXPECT_NE(result->warnings[0].find("dropped 2 repeated triangle(s) (triangle 3 repeats triangle "
                                     "1, triangle 4 repeats triangle 1)"),
            std::string::npos)
      << result->warnings[0];
}

namespace {
// How many edges of exactly two triangles both triangles run in the same direction.
int edgesWoundAlike(const TriangleMesh& mesh) {
  std::map<std::pair<int, int>, std::vector<bool>> runs;  // per edge: runs from its lower vertex
  for (const Tri& t : mesh.triangles)
    for (int k = 0; k < 3; ++k) {
      const int a = t[k], b = t[(k + 1) % 3];
      runs[{std::min(a, b), std::max(a, b)}].push_back(a < b);
    }
  int alike = 0;
  for (const auto& [edge, up] : runs) alike += up.size() == 2 && up[0] == up[1];
  return alike;
}
// An n x n grid of quads in the z = 0 plane with texture coordinates equal to (x, y), each
// split by one diagonal; the triangles whose (0-based) index is in `turned` wind the other way.
std::string grid(int n, const std::vector<int>& turned) {
  std::ostringstream obj;
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) obj << "v " << i << ' ' << j << " 0\nvt " << i << ' ' << j << '\n';
  int t = 0;
  auto face = [&](int a, int b, int c) {
    if (std::count(turned.begin(), turned.end(), t++)) std::swap(b, c);
    obj << "f " << a << '/' << a << ' ' << b << '/' << b << ' ' << c << '/' << c << '\n';
  };
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const int a = j * (n + 1) + i + 1;
      face(a, a + 1, a + n + 1);
      face(a + 1, a + n + 2, a + n + 1);
    }
  return obj.str();
}
}  // namespace

// Triangles that wind against their neighbours are turned over: the winding most of the piece
// has is kept, and the texture coordinates turn with their corners.
TEST(Obj, TrianglesWindingAgainstTheirNeighboursAreTurnedOver) {
  const std::string path = writeFile("turned.obj", grid(4, {0, 5, 6, 30}));
  auto result = loadObj(path);
  ASSERT_TRUE(result.ok()) << result.error();
  const TriangleMesh& mesh = result->mesh;
  EXPECT_EQ(edgesWoundAlike(mesh), 0);
  for (int t = 0; t < mesh.triangleCount(); ++t) {  // every normal along +z, as most were
    const Vec3 a = mesh.positions.row(mesh.triangles[t][0]),
               b = mesh.positions.row(mesh.triangles[t][1]),
               c = mesh.positions.row(mesh.triangles[t][2]);
    EXPECT_GT((b - a).cross(c - a).z(), 0) << "triangle " << t;
  }
  ASSERT_TRUE(result->texcoords.has_value());
  EXPECT_TRUE(result->texcoords->isApprox(mesh.positions.leftCols<2>()));
  ASSERT_EQ(result->warnings.size(), 1u);
  EXPECT_NE(result->warnings[0].find("turned 4 triangle(s) over so that each winds like its "
                                     "neighbours (triangle 1 6 7 31)"),
            std::string::npos)
      << result->warnings[0];
  // Once wound alike, nothing is turned.
  EXPECT_TRUE(loadObj(writeFile("alike.obj", grid(4, {})))->warnings.empty());
}

// A Moebius band cannot wind alike: it keeps its windings, with a warning.
TEST(Obj, AMoebiusBandKeepsItsWindingsWithAWarning) {
  const int n = 12;
  std::ostringstream obj;
  for (int i = 0; i < n; ++i) {
    const double a = 2 * M_PI * i / n;
    for (int side : {-1, 1}) {
      const double r = 1 + 0.2 * side * std::cos(a / 2);
      obj << "v " << r * std::cos(a) << ' ' << r * std::sin(a) << ' '
          << 0.2 * side * std::sin(a / 2) << '\n';
    }
  }
  for (int i = 0; i < n; ++i) {
    const int a = 2 * i + 1, b = a + 1;
    // The last quad joins the strip's ends with its sides swapped: the half twist.
    const int c = i + 1 < n ? a + 2 : 2, d = i + 1 < n ? b + 2 : 1;
    obj << "f " << a << ' ' << c << ' ' << b << "\nf " << b << ' ' << c << ' ' << d << '\n';
  }
  auto result = loadObj(writeFile("moebius.obj", obj.str()));
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result->mesh.triangleCount(), 2 * n);
  ASSERT_EQ(result->warnings.size(), 1u);
  EXPECT_NE(result->warnings[0].find("1 piece(s) one-sided, like a Moebius band"),
            std::string::npos)
      << result->warnings[0];
  EXPECT_GT(edgesWoundAlike(result->mesh), 0);
}

// Records the reader does not know are named with their count and first line, so that a user
// sees what the file held that the cloth lacks. Codim-IPC's `stitch` records are read
// (StitchesAreReadRenumberedAndChecked), its `seam` records are not.
TEST(Obj, IgnoredRecordsAreNamedWithTheirLines) {
  const std::string path =
      writeFile("sewn.obj", "\xEF\xBB\xBF# two pieces\n" + std::string(kSquare) +
                                "vt 0 0\nf 1 2 3\nf 1 3 4\nseam 2\nstitch 0 1 2 0.5\n"
                                "pose 4 2 3 0.25\n");
  auto result = loadObj(path);
  ASSERT_TRUE(result.ok()) << result.error();
  ASSERT_EQ(result->warnings.size(), 1u);
  const std::string& w = result->warnings[0];
  EXPECT_NE(
      w.find(path +
             ": ignored 1 'seam' record (first on line 9) and 1 'pose' record (first on line 11)"),
      std::string::npos)
      << w;
  EXPECT_EQ(w.find("stitch"), std::string::npos) << w;
  // Known records (texture coordinates, comments, the UTF-8 byte-order mark) are not warned about.
  auto plain = loadObj(writeFile("plain.obj", "\xEF\xBB\xBFo square\n" + std::string(kSquare) +
                                                  "vt 0 0\ng a\ns 1\nusemtl m\nf 1 2 3\nf 1 3 4\n"));
  ASSERT_TRUE(plain.ok()) << plain.error();
  EXPECT_TRUE(plain->warnings.empty()) << plain->warnings.front();
}

// `stitch V A B T` sews vertex V to (1 - T) A + T B, with 0-based indices of the file's vertices;
// the loader renumbers them with the vertices (here the first triangle's corners come first),
// and every malformed record is refused naming its line.
TEST(Obj, StitchesAreReadRenumberedAndChecked) {
  // Two triangles apart; file vertices 0..5. The faces list the second triangle first, so the
  // loader numbers file vertices 3, 4, 5 as 0, 1, 2 and 0, 1, 2 as 3, 4, 5. File vertex 6 is
  // used by no triangle.
  const std::string body =
      "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 5 5 5\nf 4 5 6\nf 1 2 3\n";
  auto sewn = loadObj(writeFile(
      "two.obj", body + "stitch 0 3 4 0.25\n# stitch 1 4 5 1\nstitch 2 5 3 1 # closed\n"));
  ASSERT_TRUE(sewn.ok()) << sewn.error();
  ASSERT_EQ(sewn->stitches.size(), 2u);
  EXPECT_EQ(sewn->stitches[0].vertex, 3);
  EXPECT_EQ(sewn->stitches[0].a, 0);
  EXPECT_EQ(sewn->stitches[0].b, 1);
  EXPECT_EQ(sewn->stitches[0].t, 0.25);
  EXPECT_EQ(sewn->stitches[1].vertex, 5);
  EXPECT_EQ(sewn->stitches[1].a, 2);
  EXPECT_EQ(sewn->stitches[1].b, 0);
  // Where each stitch sews its vertex to: file vertex 3 + 0.25 (4 - 3) = (0.25, 0, 1).
  EXPECT_TRUE(stitchPoint(sewn->stitches[0], sewn->mesh.positions).isApprox(Vec3(0.25, 0, 1)));
  EXPECT_TRUE(sewn->warnings.size() == 1 &&
              sewn->warnings[0].find("not used by any triangle") != std::string::npos);

  const struct {
    const char* record;
    const char* expected;
  } bad[] = {
      {"stitch 0 3 4", "line 10: stitch has 3 field(s); 4 are needed"},
      {"stitch 0 3 4 0.5 1", "line 10: stitch has 5 field(s)"},
      {"stitch 0 x 4 0.5", "line 10: stitch vertex index 'x' is not a whole number from 0 up"},
      {"stitch -1 3 4 0.5", "line 10: stitch vertex index '-1' is not a whole number"},
      {"stitch 0 3 4 1.5",
       "line 10: stitch position '1.5' along its edge is not a number in [0, 1]"},
      {"stitch 0 3 4 nan", "position 'nan'"},
      {"stitch 0 3 3 0.5", "line 10: stitch 0 3 3: its three vertices must differ"},
      {"stitch 3 3 4 0.5", "its three vertices must differ"},
      {"stitch 0 3 9 0.5",
       "line 10: stitch vertex 9 is out of range (the file has 7 vertices; stitch indices are "
       "0-based)"},
      {"stitch 0 3 6 0.5", "line 10: stitch vertex 6 is not a corner of any triangle"},
  };
  for (const auto& b : bad) {
    const std::string error = loadError("badstitch.obj", body + b.record + "\n");
    EXPECT_NE(error.find(b.expected), std::string::npos) << b.record << ": " << error;
  }
}

TEST(Obj, MalformedFaceSyntax) {
  const std::string path = writeFile("garbage.obj", std::string(kSquare) + "f a b c\n");
  auto result = loadObj(path);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().find(path), std::string::npos);
}

TEST(Obj, WriteRefusesNonFiniteAndRoundTrips) {
  Positions p(3, 3);
  p << 0, 0, 0, 1, 0, 0, 0, 1, 0;
  const std::vector<Tri> tris = {{0, 1, 2}};
  const std::string path = (clothlab::test::tempDir() / "round.obj").string();
  ASSERT_FALSE(writeObj(path, p, tris).has_value());
  auto loaded = loadObj(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_TRUE(loaded->mesh.positions.isApprox(p));
  p(1, 1) = std::nan("");
  const std::string bad = (clothlab::test::tempDir() / "nan_out.obj").string();
  EXPECT_TRUE(writeObj(bad, p, tris).has_value());
  EXPECT_FALSE(std::filesystem::exists(bad));
  EXPECT_FALSE(std::filesystem::exists(bad + ".tmp"));
}

// Texture coordinates are written into the unit square (one scale, the aspect kept) and read
// back per vertex; a tube's per corner, unwrapped next to each triangle's first corner.
TEST(Obj, TextureCoordinatesAreWrittenAndReadBack) {
  Positions p(4, 3);
  p << 0, 0, 0, 2, 0, 0, 2, 1, 0, 0, 1, 0;
  const std::vector<Tri> tris = {{0, 1, 2}, {0, 2, 3}};
  Eigen::MatrixX2d uv(4, 2);
  uv << 1, 1, 3, 1, 3, 2, 1, 2;
  const std::string path = (clothlab::test::tempDir() / "uv_out.obj").string();
  ASSERT_FALSE(writeObj(path, p, tris, {&uv, MaterialWrap{}}).has_value());
  auto loaded = loadObj(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  ASSERT_TRUE(loaded->texcoords);
  Eigen::MatrixX2d expected(4, 2);
  expected << 0, 0, 1, 0, 1, 0.5, 0, 0.5;
  EXPECT_TRUE(loaded->texcoords->isApprox(expected)) << *loaded->texcoords;
  // Around a tube of period 2 (u = 1.8 and 0.2 are neighbours): each triangle's corners within
  // half a period of its first.
  uv << 1.8, 0, 0.2, 0, 0.2, 1, 1.8, 1;
  ASSERT_FALSE(writeObj(path, p, tris, {&uv, MaterialWrap::cylinder(2.0)}).has_value());
  std::ifstream file(path);
  std::string line;
  std::vector<double> us;
  while (std::getline(file, line))
    if (line.rfind("vt ", 0) == 0) us.push_back(std::stod(line.substr(3)));
  ASSERT_EQ(us.size(), 6u);
  EXPECT_NEAR(us[1] - us[0], 0.2, 1e-12);  // 1.8 -> 2.2, not back to 0.2
  // Read back, each vertex's corners agree, so they are one piece (scaled by 1/2 into the unit
  // square). Nothing in these two triangles shows the wrap (no vertex is met on both sides of the
  // seam); ATubeFrameReadsBackWithItsSeam reads a whole tube.
  loaded = loadObj(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  ASSERT_TRUE(loaded->texcoords) << loaded->texcoordsDropped;
  EXPECT_EQ(loaded->texcoordPeriod, 0);
  for (const Tri& f : tris)
    for (int k = 0; k < 3; ++k) {
      const int i = f[k], j = f[(k + 1) % 3];
      EXPECT_TRUE(materialOffset(*loaded->texcoords, i, j, MaterialWrap{})
                      .isApprox(0.5 * materialOffset(uv, i, j, MaterialWrap::cylinder(2.0))))
          << i << " " << j;
    }
}

// Texture coordinates given per corner rather than per vertex are one vertex's when their values
// agree; a seam is a tube's when one coordinate wraps with one period throughout (either one:
// the wrapping one comes first), and cut apart otherwise.
TEST(Obj, TextureCoordinatesPerCornerAreSortedIntoOnePieceATubeOrAnAtlas) {
  // A strip of two squares (vertices 1-3 below, 4-6 above) whose corners each get their own vt.
  const int faces[4][3] = {{0, 1, 4}, {0, 4, 3}, {1, 2, 5}, {1, 5, 4}};
  auto strip = [&](const std::string& name, const std::vector<std::pair<double, double>>& corners) {
    std::ostringstream text;
    text << "v 0 0 0\nv 1 0 0\nv 2 0 0\nv 0 1 0\nv 1 1 0\nv 2 1 0\n";
    for (const auto& [s, t] : corners) text << "vt " << s << " " << t << "\n";
    for (int f = 0; f < 4; ++f) {
      text << "f";
      for (int k = 0; k < 3; ++k) text << " " << faces[f][k] + 1 << "/" << 3 * f + k + 1;
      text << "\n";
    }
    return loadObj(test::writeFile(name, text.str()));
  };
  // (s, t) of vertices 1..6 in one piece: s along the strip, t across it.
  const std::vector<std::pair<double, double>> piece = {{0, 0},    {0.25, 0},    {0.5, 0},
                                                        {0, 0.25}, {0.25, 0.25}, {0.5, 0.25}};
  auto corners = [&](const std::vector<int>& shiftedCorners, double ds, double dt) {
    std::vector<std::pair<double, double>> out;
    for (int f = 0; f < 4; ++f)
      for (int k = 0; k < 3; ++k) {
        auto [s, t] = piece[faces[f][k]];
        if (std::count(shiftedCorners.begin(), shiftedCorners.end(), 3 * f + k)) s += ds, t += dt;
        out.emplace_back(s, t);
      }
    return out;
  };
  auto one = strip("corners_one.obj", corners({}, 0, 0));
  ASSERT_TRUE(one && one->texcoords) << (one ? one->texcoordsDropped : one.error());
  EXPECT_EQ(one->texcoordPeriod, 0);
  EXPECT_DOUBLE_EQ((*one->texcoords)(5, 0), 0.5);
  // Vertex 2's corner in the third face a turn of 0.75 along s: a tube whose s wraps.
  auto tube = strip("corners_tube.obj", corners({6}, 0.75, 0));
  ASSERT_TRUE(tube && tube->texcoords) << (tube ? tube->texcoordsDropped : tube.error());
  EXPECT_NEAR(tube->texcoordPeriod, 0.75, 1e-12);
  // The same turn along t: the coordinates come back with t first.
  auto across = strip("corners_across.obj", corners({6}, 0, 0.75));
  ASSERT_TRUE(across && across->texcoords) << (across ? across->texcoordsDropped : across.error());
  EXPECT_NEAR(across->texcoordPeriod, 0.75, 1e-12);
  EXPECT_DOUBLE_EQ((*across->texcoords)(5, 0), 0.25);
  EXPECT_DOUBLE_EQ((*across->texcoords)(5, 1), 0.5);
  // Two turns of different lengths, or corners apart in both coordinates: cut apart.
  auto twoTurns = corners({6}, 0.75, 0);
  twoTurns[8].first += 0.5;  // and vertex 6's in the third face a turn of 0.5
  for (const auto& [name, uv] :
       {std::pair<std::string, std::vector<std::pair<double, double>>>{"corners_two.obj", twoTurns},
        {"corners_both.obj", corners({6}, 0.75, 0.75)}}) {
    auto cut = strip(name, uv);
    ASSERT_TRUE(cut) << cut.error();
    EXPECT_FALSE(cut->texcoords) << name;
    EXPECT_NE(cut->texcoordsDropped.find("cut apart at seams"), std::string::npos)
        << name << ": " << cut->texcoordsDropped;
  }
}

// The loader stress corpus of ../shared/testdata/loader, when it is present: no crash, no hang,
// and a clear result (a mesh, or a message naming the file) for every file.
TEST(Obj, SharedLoaderCorpus) {
  const std::filesystem::path dir = std::filesystem::path(CLOTHLAB_SHARED_TESTDATA) / "loader";
  if (!std::filesystem::is_directory(dir))
    GTEST_SKIP() << dir << " is absent (the shared test data is not part of the repository)";
  int files = 0, loaded = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".obj") continue;
    ++files;
    auto result = loadObj(entry.path().string());
    if (result.ok()) {
      ++loaded;
      EXPECT_GT(result->mesh.triangleCount(), 0);
      EXPECT_TRUE(result->mesh.positions.allFinite());
      EXPECT_FALSE(validateMesh(result->mesh, "x").has_value());
    } else {
      EXPECT_NE(result.error().find(entry.path().string()), std::string::npos) << result.error();
    }
    // The lenient mode used by `info` also gives a clear answer.
    auto lenient = loadObj(entry.path().string(), false);
    if (!lenient.ok()) {
      EXPECT_FALSE(lenient.error().empty());
    }
  }
  EXPECT_GT(files, 5);
  RecordProperty("loader_files", files);
  RecordProperty("loaded", loaded);
  // The documented must-fail cases fail.
  EXPECT_FALSE(loadObj((dir / "tinyobjloader/models/issue-140-zero-face-idx.obj").string()).ok());
  EXPECT_FALSE(loadObj((dir / "tinyobjloader/models/invalid-relative-vertex-index.obj").string()).ok());
}
