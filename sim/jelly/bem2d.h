#pragma once
// A 2D elastostatic boundary element model of one closed polygon (methods §4.1 to §4.5, after
// Watanabe, Ohya, Kurumisawa and Tokunaga, and James and Pai 1999): constant straight elements,
// collocation at their midpoints, the Kelvin fundamental solution, a spatially constant body force
// moved to the boundary (with the rigid-shift correction of methods §4.3), and mixed boundary
// conditions solved against a factorized reference matrix with capacitance-matrix (Sherman-
// Morrison-Woodbury) updates when the conditions change. Units SI; the polygon is in metres,
// tractions in N/m² and the body force in N/m³.
#include <Eigen/Dense>
#include <optional>
#include <string>
#include <vector>

namespace clothlab {

using Vec2 = Eigen::Vector2d;

struct BemMaterial {
  double young = 2e4;        // Young's modulus E [Pa]
  double poisson = 0.45;     // ν, in [0, 0.5)
  bool planeStress = false;  // plane strain when false
};

class BemPolygon {
 public:
  // `vertices`: a simple closed polygon, counter-clockwise (the body on the left of each edge),
  // at least 3 vertices; element j runs from vertex j to vertex j + 1.
  BemPolygon(std::vector<Vec2> vertices, const BemMaterial& material);

  int elementCount() const { return static_cast<int>(vertices_.size()); }
  const std::vector<Vec2>& vertices() const { return vertices_; }
  const Vec2& midpoint(int j) const { return mid_[j]; }
  const Vec2& normal(int j) const { return normal_[j]; }  // outward unit normal
  double length(int j) const { return length_[j]; }
  double area() const { return area_; }

  // The influence matrices (2N x 2N; rows and columns ordered element, then component):
  // H u = G t + B for displacements u and tractions t, constant per element.
  const Eigen::MatrixXd& H() const { return H_; }
  const Eigen::MatrixXd& G() const { return G_; }
  // Kelvin's kernels at (P, Q) with the outward normal n at Q (exposed for tests).
  Eigen::Matrix2d kernelU(const Vec2& p, const Vec2& q) const;
  Eigen::Matrix2d kernelT(const Vec2& p, const Vec2& q, const Vec2& n) const;
  // The body-force term B at the collocation points for the body force b (N/m³): linear in b,
  // so it is two precomputed vectors (methods §4.3).
  Eigen::VectorXd bodyForceTerm(const Vec2& b) const { return b.x() * bodyX_ + b.y() * bodyY_; }
  // The same term at any point P (inside or on the boundary), by its boundary integral.
  Vec2 bodyForceTermAt(const Vec2& p, const Vec2& b) const;

  // Mixed boundary conditions per element and component: `known displacement` (the traction is
  // then unknown) or `known traction`. A free body needs displacements prescribed on at least two
  // elements to fix its rigid motion.
  struct Conditions {
    std::vector<char> displacementKnown;  // 2N flags
    Eigen::VectorXd value;                // 2N: the known displacement or traction
  };
  struct Solution {
    Eigen::VectorXd displacement;  // 2N
    Eigen::VectorXd traction;      // 2N
  };
  // Solves H u = G t + B(b) for the unknowns. The first call factorizes the matrix of its pattern
  // as the reference; later calls whose pattern differs in at most kMaxSwitched columns reuse it
  // through the capacitance matrix, others factorize theirs as the new reference. Nullopt when
  // the system is singular (too few displacements prescribed).
  std::optional<Solution> solve(const Conditions& conditions, const Vec2& bodyForce);
  // The same by one dense LU of the whole matrix (for tests).
  std::optional<Solution> solveDirect(const Conditions& conditions, const Vec2& bodyForce) const;
  // How many reference factorizations solve() has made, and columns switched in its last call.
  int factorizations() const { return factorizations_; }
  int lastSwitched() const { return lastSwitched_; }

  // The displacement of the boundary at arclength-parameter point: element j, fraction s in
  // [0, 1) along it, interpolated linearly between the element midpoints.
  Vec2 boundaryDisplacement(const Eigen::VectorXd& displacement, int element, double s) const;

 private:
  // Both of Kelvin's kernels at distance r in direction dr (unit) from P, with the outward normal n
  // at Q: they share r, its direction and ln(1/r).
  struct Kelvin {
    Eigen::Matrix2d u, t;
  };
  Kelvin kelvin(double r, const Vec2& dr, double logInverse, const Vec2& n) const;
  // The body-force term at P is linear in b: its two boundary integrals, ∫ r (2 ln(1/r) - 1)
  // r_,·n dΓ and ∫ r (2 ln(1/r) - 1) n r_,ᵀ dΓ (a 2 x 2 matrix, times b), summed point by point.
  struct BodyForceIntegrals {
    double first = 0;
    Eigen::Matrix2d second = Eigen::Matrix2d::Zero();
    void add(double w, double r, const Vec2& dr, double logInverse, const Vec2& n);
  };
  // The matrix that gives the term for every b.
  Eigen::Matrix2d bodyForceOperator(const BodyForceIntegrals& body) const;
  Eigen::MatrixXd systemMatrix(const std::vector<char>& known) const;
  Eigen::VectorXd rightHandSide(const Conditions& conditions, const Vec2& bodyForce) const;
  Solution unpack(const Conditions& conditions, const Eigen::VectorXd& x) const;
  std::vector<Vec2> vertices_, mid_, normal_, tangent_;
  std::vector<double> length_;
  double area_ = 0;
  double mu_ = 0, nu_ = 0;  // shear modulus; Poisson's ratio of the plane-strain kernels
  // The unknown tractions are solved for divided by this [N/m³ · m], so that the columns of G
  // that replace columns of H are of the same order (the capacitance updates lost six digits
  // to the mixed scales otherwise).
  double tractionScale_ = 1;
  Eigen::MatrixXd H_, G_;
  Eigen::VectorXd bodyX_, bodyY_;
  // The reference factorization and the columns W = A0⁻¹ δA already computed for it.
  std::vector<char> reference_;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
  std::vector<Eigen::VectorXd> switchColumn_;
  int factorizations_ = 0, lastSwitched_ = 0;
};

// The signed area of a closed polygon (positive counter-clockwise) [m²].
double polygonArea(const std::vector<Vec2>& polygon);

// Whether `polygon` is simple enough for the model: at least 3 vertices, positive (counter-
// clockwise) area. A message saying what is wrong otherwise.
std::optional<std::string> checkBemPolygon(const std::vector<Vec2>& polygon);

}  // namespace clothlab
