#include "sim/solvers/mls/mls_constraints.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <optional>

#include "sim/cell_grid.h"
#include "sim/format.h"
#include "sim/material.h"

namespace clothlab {

namespace {

// The vertices within a material distance `radius` of each vertex (u closing round a tube by
// `wrap`), through a grid of cells over the material coordinates (a test of every pair took 6.3 s
// on ckv-cylinder-fine's 15 039 vertices). Around a tube a vertex is also looked for once round
// to either side.
class RadiusSearch {
 public:
  RadiusSearch(const Eigen::MatrixX2d& material, double radius, const MaterialWrap& wrap)
      : material_(material), radius_(radius), wrap_(wrap), grid_(pointBoxes(material), radius) {}

  // The vertices within the radius of vertex i, i excluded, in increasing order.
  template <class Offset>
  void near(int i, const Offset& offset, std::vector<int>& out) const {
    out.clear();
    const Eigen::Vector2d at = material_.row(i).transpose();
    const Vec3 reach(radius_, radius_, 0);
    for (int k = wrap_.wraps() ? -1 : 0; k <= (wrap_.wraps() ? 1 : 0); ++k) {
      const Eigen::Vector2d image = wrap_.image(at, k);
      const Vec3 centre(image.x(), image.y(), 0);
      grid_.query(Eigen::AlignedBox3d(centre - reach, centre + reach), [&](int j) {
        if (j != i && offset(i, j).norm() <= radius_) out.push_back(j);
      });
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());  // a tube narrower than the radius
  }

 private:
  static std::vector<Eigen::AlignedBox3d> pointBoxes(const Eigen::MatrixX2d& material) {
    std::vector<Eigen::AlignedBox3d> boxes;
    for (Eigen::Index i = 0; i < material.rows(); ++i) {
      const Vec3 p(material(i, 0), material(i, 1), 0);
      boxes.emplace_back(p, p);
    }
    return boxes;
  }
  const Eigen::MatrixX2d& material_;
  double radius_;
  MaterialWrap wrap_;
  CellGrid grid_;
};

}  // namespace

Result<MlsNeighbourhoods> buildMlsNeighbourhoods(const TriangleMesh& mesh, const MeshTopology& topology,
                                                 const Eigen::MatrixX2d& material, int rings,
                                                 MlsWeighting weighting, const Eigen::VectorXd& mass) {
  MlsNeighbourhoodOptions options;
  options.rings = rings;
  options.weighting = weighting;
  return buildMlsNeighbourhoods(mesh, topology, material, options, mass);
}

Result<MlsNeighbourhoods> buildMlsNeighbourhoods(const TriangleMesh& mesh, const MeshTopology& topology,
                                                 const Eigen::MatrixX2d& material,
                                                 const MlsNeighbourhoodOptions& options,
                                                 const Eigen::VectorXd& mass) {
  if (options.radius <= 0 && (options.rings < 1 || options.rings > 2))
    return Error{"MLS neighbourhood: rings must be 1 or 2"};
  if (material.rows() != mesh.vertexCount())
    return Error{"MLS neighbourhood: need one material coordinate per vertex"};
  auto offset = [&](int i, int j) { return materialOffset(material, i, j, options.wrap); };
  MlsNeighbourhoods n;
  n.start.push_back(0);
  std::vector<int> ring;
  std::optional<RadiusSearch> search;
  if (options.radius > 0) search.emplace(material, options.radius, options.wrap);
  for (int i = 0; i < mesh.vertexCount(); ++i) {
    if (search) {
      search->near(i, offset, ring);
      // Only within the sample's piece: texture coordinates may lay a garment's panels over
      // each other.
      const auto& piece = topology.vertexComponent;
      if (topology.componentCount > 1)
        std::erase_if(ring, [&](int j) { return piece[j] != piece[i]; });
    } else {
      ring = topology.vertexNeighbours[i];
      const bool wide = i < static_cast<int>(options.twoRingSamples.size()) && options.twoRingSamples[i];
      if (options.rings == 2 || wide) {
        for (int j : topology.vertexNeighbours[i])
          for (int k : topology.vertexNeighbours[j])
            if (k != i) ring.push_back(k);
        std::sort(ring.begin(), ring.end());
        ring.erase(std::unique(ring.begin(), ring.end()), ring.end());
      }
    }
    // Moment matrix U W U^T; its inverse maps offsets to coefficients.
    Eigen::Matrix2d moment = Eigen::Matrix2d::Zero();
    std::vector<double> weights;
    double scale = 0;
    for (int j : ring) {
      const Eigen::Vector2d d = offset(i, j);
      const double w = options.weighting == MlsWeighting::Mass ? mass[j] : 1.0;
      weights.push_back(w);
      moment += w * d * d.transpose();
      scale = std::max(scale, w * d.squaredNorm());
    }
    // Two non-collinear offsets make the moment matrix invertible; test it scale-free.
    if (ring.size() < 2 || !(moment.determinant() > 1e-10 * scale * scale))
      return Error{"MLS neighbourhood of vertex " + std::to_string(i) + " has " +
                   std::to_string(ring.size()) +
                   " neighbour(s) that do not span the plane (collinear or too few): F is "
                   "undefined there; use the 2-ring, a larger radius, or fix the mesh"};
    if (n.neighbour.size() + ring.size() > options.maxNeighbours)
      return Error{(options.radius > 0 ? "a material radius of " + formatG(options.radius, 3) + " m"
                                       : "the " + std::to_string(options.rings) + "-ring") +
                   " gives the samples more than " + std::to_string(options.maxNeighbours) +
                   " neighbours in all (" + std::to_string(n.neighbour.size() + ring.size()) + " by vertex " +
                   std::to_string(i) + " of " + std::to_string(mesh.vertexCount()) +
                   "), more than J W J^T can be assembled from; choose smaller neighbourhoods"};
    const Eigen::Matrix2d inverse = moment.inverse();
    for (size_t k = 0; k < ring.size(); ++k) {
      n.neighbour.push_back(ring[k]);
      n.coefficient.push_back(weights[k] * inverse * offset(i, ring[k]));
    }
    n.start.push_back(static_cast<int>(n.neighbour.size()));
  }
  return n;
}

Mat32 mlsDeformationGradient(const MlsNeighbourhoods& n, int sample, const Positions& x) {
  Mat32 f = Mat32::Zero();
  const Vec3 xi = x.row(sample).transpose();
  for (int k = n.start[sample]; k < n.start[sample + 1]; ++k)
    f += (Vec3(x.row(n.neighbour[k]).transpose()) - xi) * n.coefficient[k].transpose();
  return f;
}

Eigen::Matrix2Xd mlsConstraints(const MlsNeighbourhoods& n, const Positions& x) {
  Eigen::Matrix2Xd c(2, n.sampleCount());
  for (int i = 0; i < n.sampleCount(); ++i) {
    const Mat32 f = mlsDeformationGradient(n, i, x);
    c(0, i) = mlsRow(f, MlsRow::Trace).value;
    c(1, i) = mlsRow(f, MlsRow::Determinant).value;
  }
  return c;
}

namespace {

// Below this the (unsoftened) shear gap is rounding noise and its gradient has no direction.
constexpr double kGapFloor = 1e-12;

}  // namespace

MlsRowEvaluation mlsRow(const Mat32& f, MlsRow row, double softening) {
  switch (row) {
    case MlsRow::Trace: return {Eigen::Matrix2d(f.transpose() * f).trace() - 2.0, 2.0 * f};
    case MlsRow::Determinant: {
      const Eigen::Matrix2d metric = f.transpose() * f;
      Eigen::Matrix2d adjugate;
      adjugate << metric(1, 1), -metric(0, 1), -metric(1, 0), metric(0, 0);
      return {metric.determinant() - 1.0, 2.0 * f * adjugate};
    }
    case MlsRow::ShearGap: {
      const double p = f.col(0).squaredNorm() - f.col(1).squaredNorm(), q = 2 * f.col(0).dot(f.col(1));
      const double g = Eigen::Vector2d(p, q).norm(), r = std::hypot(g, softening);
      MlsRowEvaluation out{softening > 0 ? r - softening : g, Mat32::Zero()};
      if (r > kGapFloor) {
        Eigen::Matrix2d deviator;
        deviator << p, q, q, -p;
        out.derivative = (2.0 / r) * f * deviator;
      }
      return out;
    }
  }
  return {};
}

void mlsConstraintGradient(const MlsNeighbourhoods& n, int sample, const Positions& x, MlsRow row,
                           std::vector<int>& particles, Eigen::MatrixX3d& gradient, double softening) {
  const Mat32 g = mlsRow(mlsDeformationGradient(n, sample, x), row, softening).derivative;
  const int count = n.start[sample + 1] - n.start[sample];
  particles.assign(1, sample);
  gradient.setZero(count + 1, 3);
  for (int k = 0; k < count; ++k) {
    const int entry = n.start[sample] + k;
    particles.push_back(n.neighbour[entry]);
    const Vec3 r = g * n.coefficient[entry];
    gradient.row(k + 1) = r.transpose();
    gradient.row(0) -= r.transpose();
  }
}

MetricHessian mlsDeterminantHessian(const Mat32& f) {
  const Vec3 f1 = f.col(0), f2 = f.col(1);
  const Eigen::Matrix3d identity = Eigen::Matrix3d::Identity();
  return {2 * f2.squaredNorm() * identity - 2 * f2 * f2.transpose(),
          2 * f1.squaredNorm() * identity - 2 * f1 * f1.transpose(),
          4 * f1 * f2.transpose() - 2 * f2 * f1.transpose() - 2 * f1.dot(f2) * identity};
}

Eigen::Matrix3d mlsHessianBlock(const MlsNeighbourhoods& n, int sample, const Positions& x, MlsRow row,
                                int localJ, int localL) {
  const Eigen::Vector2d& a = n.coefficient[n.start[sample] + localJ];
  const Eigen::Vector2d& b = n.coefficient[n.start[sample] + localL];
  if (row == MlsRow::Trace) return 2 * a.dot(b) * Eigen::Matrix3d::Identity();
  return mlsDeterminantHessian(mlsDeformationGradient(n, sample, x)).block(a, b);
}

}  // namespace clothlab
