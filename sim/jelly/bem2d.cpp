#include "sim/jelly/bem2d.h"

#include <cmath>
#include <numbers>

namespace clothlab {
namespace {

constexpr double kPi = std::numbers::pi;

// 8-point Gauss-Legendre rule on [-1, 1].
constexpr double kGaussX[8] = {-0.9602898564975363, -0.7966664774136267, -0.5255324099163290,
                               -0.1834346424956498, 0.1834346424956498,  0.5255324099163290,
                               0.7966664774136267,  0.9602898564975363};
constexpr double kGaussW[8] = {0.1012285362903763, 0.2223810344533745, 0.3137066458778873,
                               0.3626837833783620, 0.3626837833783620, 0.3137066458778873,
                               0.2223810344533745, 0.1012285362903763};

// Calls f(q, w) at quadrature points q along the segment a-b with weights w (summing to its
// length). Where p lies within two lengths of the segment, the segment is cut into 8 pieces
// first, so that the 1/r and ln r kernels of its neighbours are integrated as accurately as those
// of far elements.
template <class F>
void integrateSegment(const Vec2& p, const Vec2& a, const Vec2& b, F&& f) {
  const double length = (b - a).norm();
  const int pieces = (0.5 * (a + b) - p).norm() < 2 * length ? 8 : 1;
  for (int k = 0; k < pieces; ++k) {
    const Vec2 s = a + (b - a) * (double(k) / pieces), e = a + (b - a) * (double(k + 1) / pieces);
    const double half = 0.5 * length / pieces;
    for (int g = 0; g < 8; ++g)
      f(Vec2(0.5 * (s + e) + 0.5 * kGaussX[g] * (e - s)), kGaussW[g] * half);
  }
}

}  // namespace

double polygonArea(const std::vector<Vec2>& polygon) {
  double twice = 0;
  for (size_t i = 0; i < polygon.size(); ++i) {
    const Vec2& a = polygon[i];
    const Vec2& b = polygon[(i + 1) % polygon.size()];
    twice += a.x() * b.y() - a.y() * b.x();
  }
  return twice / 2;
}

std::optional<std::string> checkBemPolygon(const std::vector<Vec2>& polygon) {
  if (polygon.size() < 3)
    return "a section needs at least 3 vertices, got " + std::to_string(polygon.size());
  for (size_t i = 0; i < polygon.size(); ++i) {
    if (!polygon[i].allFinite()) return "a section vertex is not finite";
    if ((polygon[(i + 1) % polygon.size()] - polygon[i]).norm() == 0)
      return "a section has two equal consecutive vertices";
  }
  if (!(polygonArea(polygon) > 0))
    return "a section must be counter-clockwise with a positive area";
  return std::nullopt;
}

BemPolygon::BemPolygon(std::vector<Vec2> vertices, const BemMaterial& material)
    : vertices_(std::move(vertices)) {
  const int n = elementCount();
  nu_ = material.planeStress ? material.poisson / (1 + material.poisson) : material.poisson;
  mu_ = material.young / (2 * (1 + material.poisson));
  mid_.resize(n);
  normal_.resize(n);
  tangent_.resize(n);
  length_.resize(n);
  for (int j = 0; j < n; ++j) {
    const Vec2& a = vertices_[j];
    const Vec2& b = vertices_[(j + 1) % n];
    mid_[j] = 0.5 * (a + b);
    length_[j] = (b - a).norm();
    tangent_[j] = (b - a) / length_[j];
    normal_[j] =
        Vec2(tangent_[j].y(), -tangent_[j].x());  // outward for a counter-clockwise polygon
  }
  double perimeter = 0;
  for (double l : length_) perimeter += l;
  tractionScale_ = 8 * kPi * mu_ * (1 - nu_) * n / perimeter;
  area_ = polygonArea(vertices_);
  H_.setZero(2 * n, 2 * n);
  G_.setZero(2 * n, 2 * n);
  bodyX_.resize(2 * n);
  bodyY_.resize(2 * n);
  const double cu = 1 / (8 * kPi * mu_ * (1 - nu_));
  for (int i = 0; i < n; ++i) {
    // The influence of each other element, and the body-force term's integral (over every
    // element), at the same quadrature points.
    BodyForceIntegrals body;
    for (int j = 0; j < n; ++j) {
      Eigen::Matrix2d h = Eigen::Matrix2d::Zero(), g = Eigen::Matrix2d::Zero();
      integrateSegment(mid_[i], vertices_[j], vertices_[(j + 1) % n], [&](const Vec2& q, double w) {
        const Vec2 d = q - mid_[i];
        const double r = d.norm();
        if (r == 0) return;
        const Vec2 dr = d / r;
        const double logInverse = std::log(1 / r);
        if (j != i) {
          const Kelvin k = kelvin(r, dr, logInverse, normal_[j]);
          h += w * k.t;
          g += w * k.u;
        }
        body.add(w, r, dr, logInverse, normal_[j]);
      });
      if (j == i) continue;
      H_.block<2, 2>(2 * i, 2 * j) = h;
      G_.block<2, 2>(2 * i, 2 * j) = g;
    }
    // A rigid translation makes no traction: each row block of H sums to zero over a closed
    // boundary, which gives the diagonal (the free term ½I plus the principal value, zero on a
    // straight element) without integrating the singularity.
    Eigen::Matrix2d sum = Eigen::Matrix2d::Zero();
    for (int j = 0; j < n; ++j)
      if (j != i) sum += H_.block<2, 2>(2 * i, 2 * j);
    H_.block<2, 2>(2 * i, 2 * i) = -sum;
    const double l = length_[i];
    const Vec2& s = tangent_[i];
    G_.block<2, 2>(2 * i, 2 * i) =
        cu * ((3 - 4 * nu_) * l * (1 - std::log(l / 2)) * Eigen::Matrix2d::Identity() +
              l * s * s.transpose());
    const Eigen::Matrix2d term = bodyForceOperator(body);
    bodyX_.segment<2>(2 * i) = term.col(0);
    bodyY_.segment<2>(2 * i) = term.col(1);
  }
}

BemPolygon::Kelvin BemPolygon::kelvin(double r, const Vec2& dr, double logInverse,
                                      const Vec2& n) const {
  const Eigen::Matrix2d drdr = dr * dr.transpose();
  Kelvin k;
  k.u = ((3 - 4 * nu_) * logInverse * Eigen::Matrix2d::Identity() + drdr) /
        (8 * kPi * mu_ * (1 - nu_));
  const double drdn = dr.dot(n);
  const Eigen::Matrix2d t = drdn * ((1 - 2 * nu_) * Eigen::Matrix2d::Identity() + 2 * drdr) -
                            (1 - 2 * nu_) * (dr * n.transpose() - n * dr.transpose());
  k.t = -t / (4 * kPi * (1 - nu_) * r);
  return k;
}

Eigen::Matrix2d BemPolygon::kernelU(const Vec2& p, const Vec2& q) const {
  const double r = (q - p).norm();
  return kelvin(r, (q - p) / r, std::log(1 / r), Vec2::Zero()).u;
}

Eigen::Matrix2d BemPolygon::kernelT(const Vec2& p, const Vec2& q, const Vec2& n) const {
  const double r = (q - p).norm();
  return kelvin(r, (q - p) / r, std::log(1 / r), n).t;
}

void BemPolygon::BodyForceIntegrals::add(double w, double r, const Vec2& dr, double logInverse,
                                         const Vec2& n) {
  const double f = r * (2 * logInverse - 1);
  first += w * f * dr.dot(n);
  second.col(0) += w * f * dr.x() * n;  // for b = (1, 0): w f (b · r_,) n
  second.col(1) += w * f * dr.y() * n;
}

Eigen::Matrix2d BemPolygon::bodyForceOperator(const BodyForceIntegrals& body) const {
  // Methods §4.3: the Galerkin-vector form of WOKT eq. 10, plus the rigid shift that makes it the
  // domain integral of the same U* that G uses.
  const double young = 2 * mu_ * (1 + nu_);
  const double shift = (3.5 - 4 * nu_) / (8 * kPi * mu_ * (1 - nu_)) * area_;
  return ((1 + nu_) / (4 * kPi * young) * body.first + shift) * Eigen::Matrix2d::Identity() -
         (1 + nu_) / (8 * kPi * young * (1 - nu_)) * body.second;
}

Vec2 BemPolygon::bodyForceTermAt(const Vec2& p, const Vec2& b) const {
  BodyForceIntegrals body;
  const int n = elementCount();
  for (int j = 0; j < n; ++j) {
    integrateSegment(p, vertices_[j], vertices_[(j + 1) % n], [&](const Vec2& q, double w) {
      const double r = (q - p).norm();
      if (r > 0)
        body.add(w, r, (q - p) / r, std::log(1 / r), normal_[j]);  // the integrand -> 0 at r = 0
    });
  }
  return bodyForceOperator(body) * b;
}

Eigen::MatrixXd BemPolygon::systemMatrix(const std::vector<char>& known) const {
  Eigen::MatrixXd a(H_.rows(), H_.cols());
  for (Eigen::Index c = 0; c < a.cols(); ++c)
    a.col(c) = known[c] ? Eigen::VectorXd(-tractionScale_ * G_.col(c)) : H_.col(c);
  return a;
}

Eigen::VectorXd BemPolygon::rightHandSide(const Conditions& conditions,
                                          const Vec2& bodyForce) const {
  Eigen::VectorXd rhs = bodyForceTerm(bodyForce);
  for (Eigen::Index c = 0; c < rhs.size(); ++c)
    rhs += conditions.displacementKnown[c] ? Eigen::VectorXd(-H_.col(c) * conditions.value[c])
                                           : Eigen::VectorXd(G_.col(c) * conditions.value[c]);
  return rhs;
}

BemPolygon::Solution BemPolygon::unpack(const Conditions& conditions,
                                        const Eigen::VectorXd& x) const {
  Solution s{conditions.value, conditions.value};
  for (Eigen::Index c = 0; c < x.size(); ++c) {
    if (conditions.displacementKnown[c])
      s.traction[c] = tractionScale_ * x[c];
    else
      s.displacement[c] = x[c];
  }
  return s;
}

namespace {
// Reciprocal condition below which a system counts as singular.
constexpr double kSingular = 1e-13;
}  // namespace

std::optional<BemPolygon::Solution> BemPolygon::solveDirect(const Conditions& conditions,
                                                            const Vec2& bodyForce) const {
  Eigen::PartialPivLU<Eigen::MatrixXd> lu(systemMatrix(conditions.displacementKnown));
  if (!(lu.rcond() > kSingular)) return std::nullopt;
  return unpack(conditions, lu.solve(rightHandSide(conditions, bodyForce)));
}

std::optional<BemPolygon::Solution> BemPolygon::solve(const Conditions& conditions,
                                                      const Vec2& bodyForce) {
  const std::vector<char>& known = conditions.displacementKnown;
  std::vector<int> switched;
  if (!reference_.empty())
    for (int c = 0; c < static_cast<int>(known.size()); ++c)
      if ((known[c] != 0) != (reference_[c] != 0)) switched.push_back(c);
  // Columns that switch cost a solve each (once per reference) and an s x s factorization; past
  // half the elements a fresh factorization is cheaper.
  if (reference_.empty() || static_cast<int>(switched.size()) > elementCount()) {
    Eigen::PartialPivLU<Eigen::MatrixXd> lu(systemMatrix(known));
    if (!(lu.rcond() > kSingular)) return std::nullopt;
    lu_ = std::move(lu);
    reference_ = known;
    switchColumn_.assign(known.size(), Eigen::VectorXd());
    switched.clear();
    ++factorizations_;
  }
  lastSwitched_ = static_cast<int>(switched.size());
  const Eigen::VectorXd y = lu_.solve(rightHandSide(conditions, bodyForce));
  if (switched.empty()) return unpack(conditions, y);
  // A = A0 + δA Eᵀ over the switched columns: X = y - W (I + Eᵀ W)⁻¹ Eᵀ y with W = A0⁻¹ δA.
  const int s = static_cast<int>(switched.size());
  Eigen::MatrixXd w(y.size(), s);
  for (int k = 0; k < s; ++k) {
    const int c = switched[k];
    if (switchColumn_[c].size() == 0) {
      // The column goes from H to -G (displacement now known) or back: δA = ∓(G + H), G scaled.
      const Eigen::VectorXd delta =
          (known[c] ? -1.0 : 1.0) * (tractionScale_ * G_.col(c) + H_.col(c));
      switchColumn_[c] = lu_.solve(delta);
    }
    w.col(k) = switchColumn_[c];
  }
  Eigen::MatrixXd capacitance = Eigen::MatrixXd::Identity(s, s);
  Eigen::VectorXd ey(s);
  for (int k = 0; k < s; ++k) {
    capacitance.row(k) += w.row(switched[k]);
    ey[k] = y[switched[k]];
  }
  Eigen::PartialPivLU<Eigen::MatrixXd> small(capacitance);
  if (!(small.rcond() > kSingular)) return std::nullopt;
  return unpack(conditions, y - w * small.solve(ey));
}

Vec2 BemPolygon::boundaryDisplacement(const Eigen::VectorXd& displacement, int element,
                                      double s) const {
  const int n = elementCount();
  const int other = s < 0.5 ? (element + n - 1) % n : (element + 1) % n;
  // Arclength from this element's midpoint, and from the other's.
  const double here = std::abs(s - 0.5) * length_[element];
  const double there = 0.5 * length_[other] + (s < 0.5 ? s : 1 - s) * length_[element];
  const Vec2 a = displacement.segment<2>(2 * element), b = displacement.segment<2>(2 * other);
  return (there * a + here * b) / (here + there);
}

}  // namespace clothlab
