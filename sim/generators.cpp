#include "sim/generators.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <unordered_map>

namespace clothlab {

Result<DiagonalPattern> parseDiagonalPattern(const std::string& name) {
  if (name == "same") return DiagonalPattern::Same;
  if (name == "alternating") return DiagonalPattern::Alternating;
  if (name == "random") return DiagonalPattern::Random;
  return Error{"unknown diagonal pattern '" + name + "' (expected same, alternating or random)"};
}

void flipEarTriangles(TriangleMesh& mesh) {
  for (int pass = 0; pass < 3; ++pass) {
    const MeshTopology topology = buildTopology(mesh);
    bool changed = false;
    std::vector<char> touched(mesh.triangleCount(), 0);
    for (int t = 0; t < mesh.triangleCount(); ++t) {
      int boundary = 0, interior = -1;
      for (int e : topology.triEdges[t]) {
        if (topology.edgeTriCount[e] == 1) ++boundary;
        else interior = e;
      }
      if (boundary != 2 || interior < 0) continue;
      const int n = topology.edgeTris[interior][0] == t ? topology.edgeTris[interior][1]
                                                        : topology.edgeTris[interior][0];
      if (touched[t] || touched[n]) continue;
      // t = (c, a, b) with the interior edge a-b opposite corner c; n = (b, a, d).
      int k = 0;
      while (topology.triEdges[t][k] != interior) ++k;
      const int c = mesh.triangles[t][k], a = mesh.triangles[t][(k + 1) % 3],
                b = mesh.triangles[t][(k + 2) % 3];
      int d = -1;
      for (int v : mesh.triangles[n])
        if (v != a && v != b) d = v;
      // Flip only when both new triangles keep the orientation (the quad c-a-d-b is convex).
      const Vec3 pc = mesh.positions.row(c), pa = mesh.positions.row(a),
                 pb = mesh.positions.row(b), pd = mesh.positions.row(d);
      const Vec3 normal = (pa - pc).cross(pb - pc);
      if ((pa - pc).cross(pd - pc).dot(normal) <= 0 || (pd - pc).cross(pb - pc).dot(normal) <= 0)
        continue;
      mesh.triangles[t] = {c, a, d};
      mesh.triangles[n] = {c, d, b};
      touched[t] = touched[n] = 1;
      changed = true;
    }
    if (!changed) return;
  }
}

namespace {
// Which diagonal splits quad (i, j) of a structured mesh: the same one everywhere, alternating,
// or a coin flip (reproducible from the seed, drawn in visiting order).
class QuadSplitter {
 public:
  QuadSplitter(DiagonalPattern pattern, std::uint64_t seed) : pattern_(pattern), rng_(seed) {}
  bool forward(int i, int j) {
    if (pattern_ == DiagonalPattern::Alternating) return (i + j) % 2 == 0;
    if (pattern_ == DiagonalPattern::Random) return coin_(rng_);
    return true;
  }

 private:
  DiagonalPattern pattern_;
  std::mt19937_64 rng_;
  std::bernoulli_distribution coin_{0.5};
};
}  // namespace

TriangleMesh makeGrid(double width, double height, int columns, int rows, DiagonalPattern pattern,
                      std::uint64_t seed) {
  TriangleMesh mesh;
  mesh.positions.resize(columns * rows, 3);
  for (int j = 0; j < rows; ++j)
    for (int i = 0; i < columns; ++i)
      mesh.positions.row(j * columns + i) << width * (double(i) / (columns - 1) - 0.5),
          height * (double(j) / (rows - 1) - 0.5), 0.0;
  QuadSplitter split(pattern, seed);
  for (int j = 0; j + 1 < rows; ++j)
    for (int i = 0; i + 1 < columns; ++i) {
      const int a = j * columns + i, b = a + 1, c = a + columns + 1, d = a + columns;
      if (split.forward(i, j)) {  // diagonal a-c
        mesh.triangles.push_back({a, b, c});
        mesh.triangles.push_back({a, c, d});
      } else {
        mesh.triangles.push_back({a, b, d});
        mesh.triangles.push_back({b, c, d});
      }
    }
  flipEarTriangles(mesh);
  return mesh;
}

TriangleMesh makeCylinder(double radius, double height, int columns, int rows, DiagonalPattern pattern,
                          std::uint64_t seed, Eigen::MatrixX2d* material) {
  TriangleMesh mesh = makeCone(radius, radius, height, columns, rows, pattern, seed);
  if (material) {
    material->resize(columns * rows, 2);
    for (int j = 0; j < rows; ++j)
      for (int i = 0; i < columns; ++i) {
        const double angle = 2 * std::numbers::pi * i / columns, y = height * j / (rows - 1);
        material->row(j * columns + i) << radius * angle, y;
      }
  }
  return mesh;
}

TriangleMesh makeCone(double bottomRadius, double topRadius, double height, int columns, int rows,
                      DiagonalPattern pattern, std::uint64_t seed) {
  TriangleMesh mesh;
  mesh.positions.resize(columns * rows, 3);
  for (int j = 0; j < rows; ++j)
    for (int i = 0; i < columns; ++i) {
      const double angle = 2 * std::numbers::pi * i / columns, t = double(j) / (rows - 1);
      const double radius = bottomRadius + t * (topRadius - bottomRadius);
      mesh.positions.row(j * columns + i) << radius * std::cos(angle), height * t,
          radius * std::sin(angle);
    }
  QuadSplitter split(pattern, seed);
  for (int j = 0; j + 1 < rows; ++j)
    for (int i = 0; i < columns; ++i) {
      const int next = (i + 1) % columns;
      const int a = j * columns + i, b = j * columns + next, c = b + columns, d = a + columns;
      // Outward normals: (a, d, c) runs counter-clockwise seen from outside.
      if (split.forward(i, j)) {
        mesh.triangles.push_back({a, c, b});
        mesh.triangles.push_back({a, d, c});
      } else {
        mesh.triangles.push_back({a, d, b});
        mesh.triangles.push_back({b, d, c});
      }
    }
  return mesh;
}

namespace {

using Point = Eigen::Vector2d;

// Twice the signed area of (a, b, c): > 0 when counter-clockwise.
long double orient(const Point& a, const Point& b, const Point& c) {
  return (static_cast<long double>(b.x()) - a.x()) * (static_cast<long double>(c.y()) - a.y()) -
         (static_cast<long double>(b.y()) - a.y()) * (static_cast<long double>(c.x()) - a.x());
}

// > 0 when d lies inside the circumcircle of the counter-clockwise triangle (a, b, c).
long double inCircle(const Point& a, const Point& b, const Point& c, const Point& d) {
  const long double adx = a.x() - d.x(), ady = a.y() - d.y();
  const long double bdx = b.x() - d.x(), bdy = b.y() - d.y();
  const long double cdx = c.x() - d.x(), cdy = c.y() - d.y();
  const long double ad = adx * adx + ady * ady, bd = bdx * bdx + bdy * bdy,
                    cd = cdx * cdx + cdy * cdy;
  return adx * (bdy * cd - bd * cdy) - ady * (bdx * cd - bd * cdx) + ad * (bdx * cdy - bdy * cdx);
}

struct DelaunayTri {
  std::array<int, 3> v;   // counter-clockwise
  std::array<int, 3> nb;  // nb[k]: triangle across the edge opposite v[k], -1 if none
  bool alive = true;
};

}  // namespace

std::vector<Tri> delaunayTriangulate(const Eigen::MatrixX2d& input) {
  const int n = static_cast<int>(input.rows());
  std::vector<Point> pts(n + 3);
  for (int i = 0; i < n; ++i) pts[i] = input.row(i).transpose();
  Point lo = pts[0], hi = pts[0];
  for (int i = 0; i < n; ++i) {
    lo = lo.cwiseMin(pts[i]);
    hi = hi.cwiseMax(pts[i]);
  }
  const Point centre = 0.5 * (lo + hi);
  const double size = std::max((hi - lo).maxCoeff(), 1e-12) * 1e3;
  pts[n] = centre + Point(-size, -size);
  pts[n + 1] = centre + Point(size, -size * 0.9);
  pts[n + 2] = centre + Point(0.1 * size, size);

  std::vector<DelaunayTri> tris;
  tris.push_back({{n, n + 1, n + 2}, {-1, -1, -1}});
  int last = 0;
  std::vector<int> bad, stack;
  std::vector<char> isBad;
  // Insert in a spatially coherent order (sorted along rows) so the walk stays short.
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  const double cell = (hi - lo).maxCoeff() / std::max(1.0, std::sqrt(double(n)));
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const long long ra = std::llround((pts[a].y() - lo.y()) / cell);
    const long long rb = std::llround((pts[b].y() - lo.y()) / cell);
    if (ra != rb) return ra < rb;
    return (ra % 2 == 0) ? pts[a].x() < pts[b].x() : pts[a].x() > pts[b].x();
  });

  for (int p : order) {
    const Point& q = pts[p];
    // Locate: walk towards q; fall back to a scan if the walk does not settle.
    int t = last;
    if (!tris[t].alive) t = static_cast<int>(tris.size()) - 1;
    for (int guard = 0; guard < 4 * static_cast<int>(tris.size()) + 16; ++guard) {
      int next = -1;
      for (int k = 0; k < 3 && next < 0; ++k) {
        const auto& tr = tris[t];
        if (orient(pts[tr.v[(k + 1) % 3]], pts[tr.v[(k + 2) % 3]], q) < 0) next = tr.nb[k];
      }
      if (next < 0) break;
      t = next;
    }
    // Cavity: all triangles connected to t whose circumcircle holds q.
    isBad.resize(tris.size(), 0);
    bad.clear();
    stack.assign(1, t);
    isBad[t] = 1;
    while (!stack.empty()) {
      const int c = stack.back();
      stack.pop_back();
      bad.push_back(c);
      for (int nb : tris[c].nb) {
        if (nb < 0 || isBad[nb]) continue;
        const auto& tr = tris[nb];
        if (inCircle(pts[tr.v[0]], pts[tr.v[1]], pts[tr.v[2]], q) > 0) {
          isBad[nb] = 1;
          stack.push_back(nb);
        }
      }
    }
    // Re-triangulate the cavity boundary as a fan around q.
    std::unordered_map<int, int> startsAt, endsAt;  // vertex -> new triangle (edge a->b)
    std::vector<int> created;
    for (int c : bad) {
      for (int k = 0; k < 3; ++k) {
        const int outside = tris[c].nb[k];
        if (outside >= 0 && isBad[outside]) continue;
        const int a = tris[c].v[(k + 1) % 3], b = tris[c].v[(k + 2) % 3];
        const int id = static_cast<int>(tris.size());
        tris.push_back({{a, b, p}, {-1, -1, outside}});
        isBad.push_back(0);
        if (outside >= 0)
          for (int m = 0; m < 3; ++m)
            if (tris[outside].nb[m] == c) tris[outside].nb[m] = id;
        startsAt[a] = id;
        endsAt[b] = id;
        created.push_back(id);
      }
    }
    for (int id : created) {
      auto& tr = tris[id];
      tr.nb[0] = startsAt[tr.v[1]];  // edge (b, p) is shared with the triangle starting at b
      tr.nb[1] = endsAt[tr.v[0]];    // edge (p, a) is shared with the triangle ending at a
    }
    for (int c : bad) {
      tris[c].alive = false;
      isBad[c] = 0;
    }
    last = created.empty() ? last : created.back();
  }

  std::vector<Tri> out;
  for (const auto& tr : tris) {
    if (!tr.alive || tr.v[0] >= n || tr.v[1] >= n || tr.v[2] >= n) continue;
    const Point &a = pts[tr.v[0]], &b = pts[tr.v[1]], &c = pts[tr.v[2]];
    const double longest = std::max({(b - a).squaredNorm(), (c - b).squaredNorm(),
                                     (a - c).squaredNorm()});
    if (static_cast<double>(orient(a, b, c)) <= 1e-10 * longest) continue;  // collinear sliver
    out.push_back({tr.v[0], tr.v[1], tr.v[2]});
  }
  return out;
}

namespace {

// Bridson's Poisson-disk sampling of the points inside `inside` at least `spacing` apart and at
// least `margin` from the boundary (distanceToBoundary), seeded with fixed boundary points.
template <class Inside, class Distance>
std::vector<Point> poissonDisk(const Point& lo, const Point& hi, double spacing,
                               const std::vector<Point>& fixed, Inside inside,
                               Distance distanceToBoundary, std::mt19937_64& rng) {
  const double cell = spacing / std::sqrt(2.0);
  const int gx = static_cast<int>(std::ceil((hi.x() - lo.x()) / cell)) + 1;
  const int gy = static_cast<int>(std::ceil((hi.y() - lo.y()) / cell)) + 1;
  std::vector<int> grid(size_t(gx) * gy, -1);
  std::vector<Point> points;
  auto cellOf = [&](const Point& p) {
    return std::pair<int, int>{std::clamp(int((p.x() - lo.x()) / cell), 0, gx - 1),
                               std::clamp(int((p.y() - lo.y()) / cell), 0, gy - 1)};
  };
  auto farEnough = [&](const Point& p) {
    auto [cx, cy] = cellOf(p);
    for (int y = std::max(0, cy - 2); y <= std::min(gy - 1, cy + 2); ++y)
      for (int x = std::max(0, cx - 2); x <= std::min(gx - 1, cx + 2); ++x) {
        const int q = grid[size_t(y) * gx + x];
        if (q >= 0 && (points[q] - p).squaredNorm() < spacing * spacing) return false;
      }
    return true;
  };
  auto add = [&](const Point& p) {
    auto [cx, cy] = cellOf(p);
    grid[size_t(cy) * gx + cx] = static_cast<int>(points.size());
    points.push_back(p);
  };
  for (const Point& p : fixed) add(p);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<int> active;
  // Seed the interior with one point near the centre, then grow.
  Point first = 0.5 * (lo + hi);
  if (inside(first) && distanceToBoundary(first) > 0.7 * spacing && farEnough(first)) {
    active.push_back(static_cast<int>(points.size()));
    add(first);
  }
  for (size_t i = 0; i < fixed.size(); ++i) active.push_back(static_cast<int>(i));
  const int attempts = 30;
  while (!active.empty()) {
    const size_t pick = std::min(active.size() - 1, size_t(unit(rng) * active.size()));
    const Point base = points[active[pick]];
    bool placed = false;
    for (int a = 0; a < attempts && !placed; ++a) {
      const double angle = 2 * std::numbers::pi * unit(rng);
      const double radius = spacing * (1.0 + unit(rng));
      const Point p = base + radius * Point(std::cos(angle), std::sin(angle));
      if (!inside(p) || distanceToBoundary(p) < 0.7 * spacing || !farEnough(p)) continue;
      active.push_back(static_cast<int>(points.size()));
      add(p);
      placed = true;
    }
    if (!placed) {
      active[pick] = active.back();
      active.pop_back();
    }
  }
  return points;
}

TriangleMesh toMesh(const std::vector<Point>& points) {
  Eigen::MatrixX2d p2(points.size(), 2);
  for (size_t i = 0; i < points.size(); ++i) p2.row(i) = points[i].transpose();
  TriangleMesh mesh;
  mesh.triangles = delaunayTriangulate(p2);
  mesh.positions = Positions::Zero(p2.rows(), 3);
  mesh.positions.leftCols<2>() = p2;
  flipEarTriangles(mesh);
  return mesh;
}

// Runs `build(spacing)` a few times, scaling the spacing until the triangle count is close.
template <class Build>
TriangleMesh tuneSpacing(double area, int targetTriangles, Build build) {
  double spacing = std::sqrt(area / (0.5 * std::sqrt(3.0) * std::max(targetTriangles, 2) / 2.0));
  TriangleMesh best;
  double bestError = 1e300;
  for (int attempt = 0; attempt < 6; ++attempt) {
    TriangleMesh mesh = build(spacing);
    const int count = mesh.triangleCount();
    const double error = std::abs(double(count) / targetTriangles - 1.0);
    if (error < bestError) {
      bestError = error;
      best = std::move(mesh);
    }
    if (error < 0.01) break;
    spacing *= std::sqrt(double(count) / targetTriangles);
  }
  return best;
}

}  // namespace

TriangleMesh makeIrregularRectangle(double width, double height, int targetTriangles,
                                    std::uint64_t seed) {
  const Point lo(-0.5 * width, -0.5 * height), hi(0.5 * width, 0.5 * height);
  return tuneSpacing(width * height, targetTriangles, [&](double spacing) {
    std::mt19937_64 rng(seed);
    std::vector<Point> boundary;
    const int nx = std::max(1, int(std::lround(width / spacing)));
    const int ny = std::max(1, int(std::lround(height / spacing)));
    for (int i = 0; i < nx; ++i) boundary.emplace_back(lo.x() + width * i / nx, lo.y());
    for (int j = 0; j < ny; ++j) boundary.emplace_back(hi.x(), lo.y() + height * j / ny);
    for (int i = nx; i > 0; --i) boundary.emplace_back(lo.x() + width * i / nx, hi.y());
    for (int j = ny; j > 0; --j) boundary.emplace_back(lo.x(), lo.y() + height * j / ny);
    auto inside = [&](const Point& p) {
      return p.x() > lo.x() && p.x() < hi.x() && p.y() > lo.y() && p.y() < hi.y();
    };
    auto distance = [&](const Point& p) {
      return std::min({p.x() - lo.x(), hi.x() - p.x(), p.y() - lo.y(), hi.y() - p.y()});
    };
    return toMesh(poissonDisk(lo, hi, spacing, boundary, inside, distance, rng));
  });
}

TriangleMesh makeIrregularDisk(double radius, int targetTriangles, std::uint64_t seed) {
  const Point lo(-radius, -radius), hi(radius, radius);
  return tuneSpacing(std::numbers::pi * radius * radius, targetTriangles, [&](double spacing) {
    std::mt19937_64 rng(seed);
    std::vector<Point> boundary;
    const int count = std::max(3, int(std::lround(2 * std::numbers::pi * radius / spacing)));
    for (int i = 0; i < count; ++i) {
      const double angle = 2 * std::numbers::pi * i / count;
      boundary.emplace_back(radius * std::cos(angle), radius * std::sin(angle));
    }
    auto inside = [&](const Point& p) { return p.norm() < radius; };
    auto distance = [&](const Point& p) { return radius - p.norm(); };
    return toMesh(poissonDisk(lo, hi, spacing, boundary, inside, distance, rng));
  });
}

TriangleMesh makeTorus(double majorRadius, double minorRadius, int segments, int rings) {
  TriangleMesh mesh;
  mesh.positions.resize(segments * rings, 3);
  for (int i = 0; i < segments; ++i) {
    const double u = 2 * std::numbers::pi * i / segments;
    for (int j = 0; j < rings; ++j) {
      const double v = 2 * std::numbers::pi * j / rings;
      const double r = majorRadius + minorRadius * std::cos(v);
      mesh.positions.row(i * rings + j) = Vec3(r * std::cos(u), minorRadius * std::sin(v), r * std::sin(u)).transpose();
    }
  }
  auto index = [&](int i, int j) { return (i % segments) * rings + (j % rings); };
  for (int i = 0; i < segments; ++i)
    for (int j = 0; j < rings; ++j) {
      // Counter-clockwise seen from outside the tube.
      const int a = index(i, j), b = index(i + 1, j), c = index(i + 1, j + 1), d = index(i, j + 1);
      mesh.triangles.push_back({a, d, c});
      mesh.triangles.push_back({a, c, b});
    }
  return mesh;
}

TriangleMesh makeEllipsoid(const Vec3& radii, int segments, int rings) {
  TriangleMesh mesh;
  const int n = 2 + (rings - 1) * segments;
  mesh.positions.resize(n, 3);
  mesh.positions.row(0) = Vec3(0, radii.y(), 0).transpose();
  mesh.positions.row(n - 1) = Vec3(0, -radii.y(), 0).transpose();
  auto index = [&](int ring, int i) { return 1 + (ring - 1) * segments + (i % segments); };
  for (int ring = 1; ring < rings; ++ring) {
    const double theta = std::numbers::pi * ring / rings;
    for (int i = 0; i < segments; ++i) {
      const double phi = 2 * std::numbers::pi * i / segments;
      mesh.positions.row(index(ring, i)) =
          Vec3(radii.x() * std::sin(theta) * std::cos(phi), radii.y() * std::cos(theta),
               radii.z() * std::sin(theta) * std::sin(phi))
              .transpose();
    }
  }
  for (int i = 0; i < segments; ++i) {
    mesh.triangles.push_back({0, index(1, i + 1), index(1, i)});
    mesh.triangles.push_back({n - 1, index(rings - 1, i), index(rings - 1, i + 1)});
    for (int ring = 1; ring + 1 < rings; ++ring) {
      const int a = index(ring, i), b = index(ring, i + 1), c = index(ring + 1, i + 1),
                d = index(ring + 1, i);
      mesh.triangles.push_back({a, b, c});
      mesh.triangles.push_back({a, c, d});
    }
  }
  return mesh;
}

}  // namespace clothlab
