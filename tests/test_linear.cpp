// The sparse SPD solvers and the linear-algebra runtime configuration.
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "sim/generators.h"
#include "sim/linear/added_rows.h"
#include "sim/linear/runtime.h"
#include "sim/linear/spd_solver.h"
#include "sim/linear/supernodal_solve.h"
#include "sim/steps_in_progress.h"

using namespace clothlab;

namespace {
// Upper triangle of a 2D Laplacian + shift on an n x n grid (SPD).
SparseMatrix laplacian(int n, double shift) {
  std::vector<Eigen::Triplet<double>> t;
  auto id = [n](int i, int j) { return i * n + j; };
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      t.emplace_back(id(i, j), id(i, j), 4.0 + shift);
      if (i + 1 < n) t.emplace_back(id(i, j), id(i + 1, j), -1.0);
      if (j + 1 < n) t.emplace_back(id(i, j), id(i, j + 1), -1.0);
    }
  SparseMatrix m(n * n, n * n);
  m.setFromTriplets(t.begin(), t.end());
  return m;
}

// Factorizes the analysed `upper` and checks that a solve with it has a small residual.
void expectFactorizesAndSolves(SpdSolver& solver, const SparseMatrix& upper, const Eigen::MatrixXd& rhs) {
  std::string message;
  ASSERT_EQ(solver.factorize(upper, &message), SpdSolver::Status::Ok) << message;
  Eigen::MatrixXd x = rhs;
  solver.solve(x);
  const SparseMatrix full = upper.selfadjointView<Eigen::Upper>();
  EXPECT_LT((full * x - rhs).norm() / rhs.norm(), 1e-10) << solver.name();
}
}  // namespace

TEST(SpdSolver, BothBackEndsSolveAndAgree) {
  const SparseMatrix upper = laplacian(40, 0.01);
  const SparseMatrix full = upper.selfadjointView<Eigen::Upper>();
  Eigen::MatrixXd rhs = Eigen::MatrixXd::Random(upper.rows(), 3);
  for (const char* id : {"cholmod", "cholmod-simplicial", "eigen-ldlt"}) {
    auto solver = makeSpdSolver(id);
    ASSERT_TRUE(solver);
    ASSERT_FALSE(solver->analyze(upper).has_value());
    std::string message;
    ASSERT_EQ(solver->factorize(upper, &message), SpdSolver::Status::Ok) << message;
    Eigen::MatrixXd x = rhs;
    solver->solve(x);
    EXPECT_LT((full * x - rhs).norm() / rhs.norm(), 1e-10) << id;
  }
  EXPECT_EQ(makeSpdSolver("pardiso"), nullptr);
}

// The BLAS-free solves (SupernodalSolve on CHOLMOD's supernodal factor, on the calling thread)
// agree with CHOLMOD's own, for any number of columns (they go three at a time, then one), on a
// matrix large enough for supernodes wider than one column; new values are solved with the new
// factor.
TEST(SpdSolver, BlasFreeSolvesAgreeWithCholmods) {
  const SparseMatrix upper = laplacian(60, 0.01);
  auto cholmod = makeSpdSolver("cholmod");
  auto blasFree = makeSpdSolver("cholmod-blas-free-solves");
  ASSERT_TRUE(blasFree);
  for (const SparseMatrix& values : {upper, SparseMatrix(2.0 * upper)}) {
    ASSERT_FALSE(cholmod->analyze(values).has_value());
    ASSERT_FALSE(blasFree->analyze(values).has_value());
    std::string message;
    ASSERT_EQ(cholmod->factorize(values, &message), SpdSolver::Status::Ok) << message;
    ASSERT_EQ(blasFree->factorize(values, &message), SpdSolver::Status::Ok) << message;
    EXPECT_EQ(blasFree->name(), "cholmod-supernodal, solves without BLAS");
    const SparseMatrix full = values.selfadjointView<Eigen::Upper>();
    for (int columns : {1, 2, 3, 4, 7}) {
      const Eigen::MatrixXd rhs = Eigen::MatrixXd::Random(upper.rows(), columns);
      Eigen::MatrixXd reference = rhs, x = rhs;
      cholmod->solve(reference);
      blasFree->solve(x);
      EXPECT_LT((x - reference).norm() / reference.norm(), 1e-12) << columns << " columns";
      EXPECT_LT((full * x - rhs).norm() / rhs.norm(), 1e-10) << columns << " columns";
    }
  }
}

// B^T A^-1 B for a sparse B (a few entries per column, some shared, one column empty): the
// supernodal factor's form, which follows each column only up its paths in the elimination tree,
// and the solves of every other back end agree with B^T X, X from Eigen's own solves, on a
// matrix large enough for supernodes wider than one column, in CHOLMOD's ordering and in the
// natural one (a deeper elimination tree).
TEST(SpdSolver, TheInverseQuadraticFormOfSparseColumnsAgreesWithSolves) {
  const SparseMatrix upper = laplacian(60, 0.01);
  const int n = static_cast<int>(upper.rows()), k = 40;
  std::vector<Eigen::Triplet<double>> entries;
  std::srand(7);
  for (int c = 0; c < k; ++c) {
    if (c == 5) continue;  // an empty column
    const int count = 1 + c % 4;
    for (int e = 0; e < count; ++e)
      entries.emplace_back(std::rand() % n, c, std::rand() / double(RAND_MAX) - 0.5);
    if (c % 7 == 0) entries.emplace_back(n / 2, c, 1.0);  // a row several columns share
  }
  SparseMatrix B(n, k);
  B.setFromTriplets(entries.begin(), entries.end());
  Eigen::SimplicialLDLT<SparseMatrix> reference(
      SparseMatrix(upper.selfadjointView<Eigen::Upper>()));
  ASSERT_EQ(reference.info(), Eigen::Success);
  const Eigen::MatrixXd expected = B.transpose() * reference.solve(Eigen::MatrixXd(B));
  std::vector<int> natural(n);
  for (int i = 0; i < n; ++i) natural[i] = i;
  for (const char* id : {"cholmod", "cholmod natural", "cholmod-simplicial", "eigen-ldlt"}) {
    const bool givenOrdering = std::strcmp(id, "cholmod natural") == 0;
    auto solver = makeSpdSolver(givenOrdering ? "cholmod" : id);
    ASSERT_FALSE(
        (givenOrdering ? solver->analyze(upper, natural, "natural") : solver->analyze(upper))
            .has_value());
    std::string message;
    ASSERT_EQ(solver->factorize(upper, &message), SpdSolver::Status::Ok) << message;
    const Eigen::MatrixXd form = solver->inverseQuadraticForm(B);
    EXPECT_LT((form - expected).norm() / expected.norm(), 1e-12) << id;
    EXPECT_EQ((form - form.transpose()).norm(), 0.0) << id;
    EXPECT_EQ(form.row(5).norm(), 0.0) << id;
  }
}

// Rows added beside a factorized A, solved through their Schur complement: over the rows kept,
// with known impulses along others moved to the right-hand side, p and q are those of the whole
// system solved densely, and a row not kept has q = 0.
TEST(AddedRows, TheComplementSolvesTheWholeSystemOverTheRowsKept) {
  const SparseMatrix upper = laplacian(20, 0.1);
  const int n = static_cast<int>(upper.rows()), k = 24;
  const Eigen::MatrixXd A = SparseMatrix(upper.selfadjointView<Eigen::Upper>());
  std::vector<Eigen::Triplet<double>> entries;
  std::srand(11);
  for (int c = 0; c < k; ++c)
    for (int e = 0; e < 3; ++e)
      entries.emplace_back(std::rand() % n, c, std::rand() / double(RAND_MAX) - 0.5);
  SparseMatrix B(n, k);
  B.setFromTriplets(entries.begin(), entries.end());
  const Eigen::MatrixXd Bd(B);
  // D such that the whole matrix is positive definite: its complement is R R^T + I.
  const Eigen::MatrixXd R = Eigen::MatrixXd::Random(k, k);
  const Eigen::MatrixXd D =
      Bd.transpose() * A.llt().solve(Bd) + R * R.transpose() + Eigen::MatrixXd::Identity(k, k);
  const Eigen::VectorXd r = Eigen::VectorXd::Random(n), s = Eigen::VectorXd::Random(k);

  auto factor = makeSpdSolver("cholmod");
  ASSERT_FALSE(factor->analyze(upper).has_value());
  std::string message;
  ASSERT_EQ(factor->factorize(upper, &message), SpdSolver::Status::Ok) << message;
  const AddedRows added(*factor, B, D, r);
  std::vector<int> kept;
  Eigen::VectorXd known = Eigen::VectorXd::Zero(k);
  for (int c = 0; c < k; ++c) {
    if (c % 3 == 1)
      known[c] = 0.3 * (c % 5) - 0.5;  // a sliding point's impulse, say
    else if (c % 7 != 0)
      kept.push_back(c);  // every seventh row let go
  }
  const std::optional<Eigen::VectorXd> q = added.solveAdded(kept, s, known);
  ASSERT_TRUE(q);
  const Eigen::VectorXd p = added.solveBase(*q + known);

  const int m = static_cast<int>(kept.size());
  Eigen::MatrixXd whole = Eigen::MatrixXd::Zero(n + m, n + m);
  Eigen::VectorXd rhs(n + m);
  whole.topLeftCorner(n, n) = A;
  rhs.head(n) = r - Bd * known;
  for (int a = 0; a < m; ++a) {
    whole.block(0, n + a, n, 1) = Bd.col(kept[a]);
    whole.block(n + a, 0, 1, n) = Bd.col(kept[a]).transpose();
    for (int b = 0; b < m; ++b) whole(n + a, n + b) = D(kept[a], kept[b]);
    rhs[n + a] = s[kept[a]];
  }
  const Eigen::VectorXd expected = whole.ldlt().solve(rhs);
  EXPECT_LT((p - expected.head(n)).norm() / expected.head(n).norm(), 1e-10);
  for (int c = 0, a = 0; c < k; ++c) {
    if (a < m && kept[a] == c) {
      EXPECT_NEAR((*q)[c], expected[n + a], 1e-10 * expected.tail(m).norm()) << "row " << c;
      ++a;
    } else {
      EXPECT_EQ((*q)[c], 0.0) << "row " << c << " is not kept";
    }
  }
}

// A factor of two tridiagonal blocks of `half` rows and a separator of `separator` rows coupled
// to both (the shape of a nested dissection's first level), one column per supernode: the
// elimination tree has two chains meeting at the separator, which SupernodalSolve splits between
// two threads. Its solves agree with a dense Cholesky solve, with the same bits with and without
// the second thread.
TEST(SupernodalSolve, TwoHalvesOfTheTreeSolveOnTwoThreadsWithTheSameBits) {
  const int half = 40, separator = 5, n = 2 * half + separator;
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < half; ++i) {
      const int r = b * half + i;
      a(r, r) = 4;
      if (i + 1 < half) a(r, r + 1) = a(r + 1, r) = -1;
      if (i % 7 == 3)
        for (int k = 0; k < separator; ++k) a(r, 2 * half + k) = a(2 * half + k, r) = -0.5;
    }
  for (int k = 0; k < separator; ++k) a(2 * half + k, 2 * half + k) = 6;
  const Eigen::MatrixXd l = a.llt().matrixL();
  std::vector<int> firstColumn(n + 1), rowStart(1, 0), rows, valueStart(1, 0);
  std::vector<double> values;
  for (int j = 0; j < n; ++j) {
    firstColumn[j + 1] = j + 1;
    for (int i = j; i < n; ++i)
      if (i == j || std::abs(l(i, j)) > 1e-300) {
        rows.push_back(i);
        values.push_back(l(i, j));
      }
    rowStart.push_back(static_cast<int>(rows.size()));
    valueStart.push_back(static_cast<int>(values.size()));
  }
  SupernodalLayout layout;
  layout.supernodes = n;
  layout.firstColumn = firstColumn.data();
  layout.rowStart = rowStart.data();
  layout.rows = rows.data();
  layout.valueStart = valueStart.data();
  layout.values = values.data();
  SupernodalSolve solve(layout);
  EXPECT_TRUE(solve.splits());
  for (int columns : {1, 3, 4}) {
    const Eigen::MatrixXd rhs = Eigen::MatrixXd::Random(n, columns);
    const Eigen::MatrixXd exact = a.llt().solve(rhs);
    Eigen::MatrixXd alone = rhs, together = rhs;
    solve.solve(alone, false);
    solve.solve(together, true);
    EXPECT_LT((together - exact).norm() / exact.norm(), 1e-13) << columns << " columns";
    EXPECT_EQ(0, std::memcmp(alone.data(), together.data(), sizeof(double) * alone.size())) << columns;
  }
}

// From kTwoThreadSolveRows rows the "cholmod" back end solves with its own SupernodalSolve: on a
// 22 500-row grid the solution is as accurate as CHOLMOD's, and the same bits whether a core was
// free for the second thread or every one was taken by steps in progress.
TEST(SpdSolver, LargeFactorsSolveTheSameWithAndWithoutASecondThread) {
  const SparseMatrix upper = laplacian(150, 0.01);
  ASSERT_GE(upper.rows(), kTwoThreadSolveRows);
  const SparseMatrix full = upper.selfadjointView<Eigen::Upper>();
  auto solver = makeSpdSolver("cholmod");
  ASSERT_FALSE(solver->analyze(upper).has_value());
  std::string message;
  ASSERT_EQ(solver->factorize(upper, &message), SpdSolver::Status::Ok) << message;
  EXPECT_EQ(solver->name(), "cholmod-supernodal, solves on two threads");
  const Eigen::MatrixXd rhs = Eigen::MatrixXd::Random(upper.rows(), 2);
  Eigen::MatrixXd free = rhs, crowded = rhs;
  ASSERT_TRUE(StepInProgress::threadToSpare() || std::thread::hardware_concurrency() < 2);
  solver->solve(free);
  {
    std::vector<std::unique_ptr<StepInProgress>> others;
    for (unsigned i = 0; i < std::thread::hardware_concurrency(); ++i)
      others.push_back(std::make_unique<StepInProgress>());
    ASSERT_FALSE(StepInProgress::threadToSpare());
    solver->solve(crowded);
  }
  EXPECT_LT((full * free - rhs).norm() / rhs.norm(), 1e-10);
  EXPECT_EQ(0, std::memcmp(free.data(), crowded.data(), sizeof(double) * free.size()));
}

// The CHOLMOD back ends store the matrix in their fill-reducing order once, at analysis, and copy
// each new matrix's values through that map: new values with the same pattern must give the new
// solution, whatever the numbering, and a matrix with another pattern is refused by name.
// analysedFor tells the two apart beforehand (the implicit bending steps use it to skip a new
// analysis when only k_b, h or the masses change).
TEST(SpdSolver, NewValuesOnTheAnalysedPatternAreSolvedAndAnotherPatternIsRefused) {
  const SparseMatrix grid = laplacian(30, 0.0);
  Eigen::VectorXi order = Eigen::VectorXi::LinSpaced(grid.rows(), 0, static_cast<int>(grid.rows()) - 1);
  std::srand(5);
  for (Eigen::Index i = order.size() - 1; i > 0; --i) std::swap(order[i], order[std::rand() % (i + 1)]);
  const Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> scramble(order);
  auto scrambled = [&](double shift) {
    SparseMatrix full = grid.selfadjointView<Eigen::Upper>();
    for (Eigen::Index i = 0; i < full.rows(); ++i) full.coeffRef(i, i) += shift;
    const SparseMatrix permuted = scramble * full * scramble.transpose();
    return SparseMatrix(permuted.triangularView<Eigen::Upper>());
  };
  const Eigen::MatrixXd rhs = Eigen::MatrixXd::Random(grid.rows(), 2);
  for (const char* id : {"cholmod", "cholmod-simplicial"}) {
    auto solver = makeSpdSolver(id);
    EXPECT_FALSE(solver->analysedFor(scrambled(0.5))) << id << ": nothing analysed yet";
    ASSERT_FALSE(solver->analyze(scrambled(0.5)).has_value());
    for (double shift : {0.5, 0.01, 3.0}) {
      const SparseMatrix upper = scrambled(shift);
      EXPECT_TRUE(solver->analysedFor(upper)) << id << " shift " << shift;
      std::string message;
      ASSERT_EQ(solver->factorize(upper, &message), SpdSolver::Status::Ok) << message;
      Eigen::MatrixXd x = rhs;
      solver->solve(x);
      const SparseMatrix full = upper.selfadjointView<Eigen::Upper>();
      EXPECT_LT((full * x - rhs).norm() / rhs.norm(), 1e-10) << id << " shift " << shift;
    }
    // The unscrambled grid has as many entries, in other places.
    for (const SparseMatrix& other : {laplacian(30, 0.5), laplacian(31, 0.5)}) {
      EXPECT_FALSE(solver->analysedFor(other)) << id;
      std::string message;
      EXPECT_EQ(solver->factorize(other, &message), SpdSolver::Status::Failed) << id;
      EXPECT_NE(message.find("pattern"), std::string::npos) << message;
    }
  }
}

// An ordering handed to the analysis is used as given (no search), and any ordering solves the
// same system: the natural one, the reversed one, and the one CHOLMOD found itself. An ordering of
// the wrong size is ignored (the search runs).
TEST(SpdSolver, AGivenOrderingIsUsedAndSolvesTheSameSystem) {
  const SparseMatrix upper = laplacian(20, 0.3);
  const Eigen::MatrixXd rhs = Eigen::MatrixXd::Random(upper.rows(), 2);
  const int n = static_cast<int>(upper.rows());
  auto solver = makeSpdSolver("cholmod");
  ASSERT_FALSE(solver->analyze(upper).has_value());
  const std::vector<int> found = solver->ordering();
  ASSERT_EQ(found.size(), static_cast<size_t>(n));
  std::vector<int> natural(n), reversed(n);
  for (int i = 0; i < n; ++i) natural[i] = i, reversed[i] = n - 1 - i;
  EXPECT_NE(found, natural) << "AMD on a grid reorders it";
  for (const auto& ordering : {natural, reversed, found, std::vector<int>{0, 1}}) {
    ASSERT_FALSE(solver->analyze(upper, ordering).has_value());
    if (ordering.size() == static_cast<size_t>(n)) {
      EXPECT_EQ(solver->ordering(), ordering);
    } else {
      EXPECT_EQ(solver->ordering(), found);
    }
    expectFactorizesAndSolves(*solver, upper, rhs);
  }
}

// Rows added to an analysed system (pins, a grab, contacts) are each eliminated right after the
// last base row they are coupled to: the base keeps its order, nothing is searched again, and the
// system still solves. Put last instead, rows spread over the cloth fill in a dense block among
// themselves.
TEST(SpdSolver, AddedRowsFollowTheirLastNeighbourInTheBaseOrdering) {
  const int side = 20, baseRows = side * side, added = 12;
  std::vector<Eigen::Triplet<double>> entries;
  const SparseMatrix grid = laplacian(side, 0.3);
  for (int j = 0; j < grid.outerSize(); ++j)
    for (SparseMatrix::InnerIterator it(grid, j); it; ++it) entries.emplace_back(it.row(), it.col(), it.value());
  std::vector<std::vector<int>> neighbours(added);
  for (int k = 0; k < added; ++k) {
    const int row = baseRows + k;
    neighbours[k] = {(37 * k) % baseRows, (37 * k + 1) % baseRows, (37 * k + side) % baseRows};
    for (int b : neighbours[k]) entries.emplace_back(b, row, -0.5);
    if (k % 3 == 1) entries.emplace_back(row - 1, row, -0.25);  // coupled to the added row before it
    entries.emplace_back(row, row, 3.0);
  }
  SparseMatrix upper(baseRows + added, baseRows + added);
  upper.setFromTriplets(entries.begin(), entries.end());
  upper.makeCompressed();

  auto baseSolver = makeSpdSolver("cholmod");
  ASSERT_FALSE(baseSolver->analyze(grid).has_value());
  const std::vector<int> base = baseSolver->ordering();
  const std::vector<int> ordering = orderingWithRowsAfterNeighbours(upper, base);
  ASSERT_EQ(ordering.size(), upper.rows());
  std::vector<int> position(upper.rows(), -1);
  for (int p = 0; p < static_cast<int>(ordering.size()); ++p) {
    ASSERT_EQ(position[ordering[p]], -1) << "row " << ordering[p] << " twice";
    position[ordering[p]] = p;
  }
  std::vector<int> baseKept;
  for (int row : ordering)
    if (row < baseRows) baseKept.push_back(row);
  EXPECT_EQ(baseKept, base);
  for (int k = 0; k < added; ++k) {
    int last = 0;
    for (int b : neighbours[k]) last = std::max(last, position[b]);
    // After its last base neighbour, with nothing but other added rows in between.
    EXPECT_GT(position[baseRows + k], last) << k;
    for (int p = last + 1; p < position[baseRows + k]; ++p) EXPECT_GE(ordering[p], baseRows) << k;
  }

  auto solver = makeSpdSolver("cholmod");
  ASSERT_FALSE(solver->analyze(upper, ordering, baseSolver->orderingMethod()).has_value());
  EXPECT_EQ(solver->ordering(), ordering);
  EXPECT_EQ(solver->orderingMethod(), "AMD");  // the search the base ordering came from
  expectFactorizesAndSolves(*solver, upper, Eigen::MatrixXd::Random(upper.rows(), 1));
}

// Of several orderings, the analysis keeps the one whose factorization takes the fewest flops
// (mls-isometry's J W J^T with many edge rows: its rows after their neighbours, or AMD of the
// whole): on a grid, AMD's against the natural one (a band), given in either order.
TEST(SpdSolver, TheOrderingWithTheFewestFlopsIsKept) {
  const SparseMatrix upper = laplacian(30, 0.3);
  const int n = static_cast<int>(upper.rows());
  std::vector<int> natural(n);
  for (int i = 0; i < n; ++i) natural[i] = i;
  const std::vector<int> amd = amdOrdering(upper);
  ASSERT_EQ(amd.size(), static_cast<size_t>(n));
  auto solver = makeSpdSolver("cholmod");
  ASSERT_FALSE(solver->analyze(upper, natural, "natural").has_value());
  const double naturalFlops = solver->factorFlops();
  ASSERT_FALSE(solver->analyze(upper, amd, "AMD").has_value());
  const double amdFlops = solver->factorFlops();
  ASSERT_GT(amdFlops, 0);
  ASSERT_LT(amdFlops, 0.5 * naturalFlops);  // a band of 30 against a fill of about n log n
  const Eigen::MatrixXd rhs = Eigen::MatrixXd::Random(n, 1);
  const NamedOrdering naturalNamed{natural, "natural"}, amdNamed{amd, "AMD"};
  for (const auto& candidates : {std::vector<NamedOrdering>{naturalNamed, amdNamed},
                                 std::vector<NamedOrdering>{amdNamed, naturalNamed}}) {
    const auto chosen = analyzeFewestFlops(*solver, upper, candidates);
    ASSERT_TRUE(chosen) << chosen.error();
    EXPECT_EQ(candidates[*chosen].method, "AMD");
    EXPECT_EQ(solver->ordering(), amd);
    EXPECT_EQ(solver->orderingMethod(), "AMD");
    EXPECT_EQ(solver->factorFlops(), amdFlops);
    expectFactorizesAndSolves(*solver, upper, rhs);
  }
  // An empty ordering is passed over; none at all is an error.
  const auto onlyNatural = analyzeFewestFlops(*solver, upper, {{{}, "none"}, naturalNamed});
  ASSERT_TRUE(onlyNatural) << onlyNatural.error();
  EXPECT_EQ(*onlyNatural, 1u);
  EXPECT_EQ(solver->ordering(), natural);
  EXPECT_FALSE(analyzeFewestFlops(*solver, upper, {{{}, "none"}}));
}

// The largest systems (sphere-drop's A: 59 398 rows) are ordered by nested dissection where that
// fills L less than AMD, as it does on a large grid; below kNestedDissectionRows rows only CHOLMOD's
// usual choice is tried.
TEST(SpdSolver, LargeGridsAreOrderedByNestedDissection) {
  const SparseMatrix large = laplacian(210, 0.01);
  ASSERT_GE(large.rows(), kNestedDissectionRows);
  auto solver = makeSpdSolver("cholmod");
  ASSERT_FALSE(solver->analyze(large).has_value());
  EXPECT_EQ(solver->orderingMethod(), "NESDIS");
  EXPECT_EQ(solver->name(), "cholmod-supernodal (NESDIS)");
  expectFactorizesAndSolves(*solver, large, Eigen::MatrixXd::Random(large.rows(), 1));

  auto small = makeSpdSolver("cholmod");
  ASSERT_FALSE(small->analyze(laplacian(150, 0.01)).has_value());
  EXPECT_EQ(small->orderingMethod(), "AMD");
  EXPECT_EQ(small->name(), "cholmod-supernodal");
}

TEST(SpdSolver, IndefiniteMatrixIsReportedAndLdlFallbackSolves) {
  SparseMatrix upper(2, 2);
  upper.insert(0, 0) = 1.0;
  upper.insert(0, 1) = 2.0;
  upper.insert(1, 1) = 1.0;  // eigenvalues 3 and -1
  upper.makeCompressed();
  // Eigen's LDL' has no pivoting and would go through; it reports the negative pivot as CHOLMOD's
  // LL' does, so that callers shift the diagonal alike.
  for (const char* id : {"cholmod", "eigen-ldlt"}) {
    auto solver = makeSpdSolver(id);
    ASSERT_FALSE(solver->analyze(upper).has_value());
    std::string message;
    EXPECT_EQ(solver->factorize(upper, &message), SpdSolver::Status::NotPositiveDefinite) << id;
    EXPECT_NE(message.find("not positive definite"), std::string::npos) << message;
    ASSERT_TRUE(solver->useIndefiniteFallback()) << id;
    EXPECT_EQ(solver->factorize(upper, &message), SpdSolver::Status::Ok) << message;
    Eigen::MatrixXd x = Eigen::Vector2d(3, 3);
    solver->solve(x);
    EXPECT_NEAR(x(0), 1.0, 1e-12) << id;
    EXPECT_NEAR(x(1), 1.0, 1e-12) << id;
    EXPECT_FALSE(solver->useIndefiniteFallback()) << id;  // nothing left to try
  }
}

// "auto" takes Eigen's SimplicialLDLT below kEigenLdltRows rows and CHOLMOD from there on; other
// ids are taken as they are.
TEST(SpdSolver, AutoTakesEigensLdltForSmallSystemsAndCholmodForLarge) {
  EXPECT_EQ(spdSolverId("auto", kEigenLdltRows - 1), "eigen-ldlt");
  EXPECT_EQ(spdSolverId("auto", kEigenLdltRows), "cholmod");
  EXPECT_EQ(spdSolverId("cholmod", 10), "cholmod");
  EXPECT_EQ(spdSolverId("eigen-ldlt", 1000000), "eigen-ldlt");
  EXPECT_EQ(makeSpdSolver(spdSolverId("auto", 100))->name(), "eigen-simplicial-ldlt");
  EXPECT_EQ(makeSpdSolver(spdSolverId("auto", kEigenLdltRows))->name().rfind("cholmod", 0), 0u);
  EXPECT_EQ(makeSpdSolver(spdSolverId("pardiso", 100)), nullptr);
}

TEST(Runtime, OpenMpRegionsRunInlineAndConfigurationIsDescribed) {
  // A matrix large enough for supernodal factorization with parallel regions.
  const SparseMatrix upper = laplacian(120, 0.01);
  auto solver = makeSpdSolver("cholmod");
  ASSERT_FALSE(solver->analyze(upper).has_value());
  std::string message;
  ASSERT_EQ(solver->factorize(upper, &message), SpdSolver::Status::Ok);
  const LinearAlgebraInfo info = linearAlgebraInfo();
  EXPECT_NE(info.cholmod.find("CHOLMOD"), std::string::npos);
  EXPECT_FALSE(info.blas.empty());
  const std::string line = describeLinearAlgebra();
  EXPECT_NE(line.find("BLAS:"), std::string::npos);
  if (info.inlinedRegions >= 0) {
    EXPECT_GT(info.inlinedRegions, 0) << line;
  }
  // The test executable links the interposers as the programs do: CHOLMOD's statistics timers
  // do not read the clock, and the factorization above is still right (the solve below).
  EXPECT_EQ(info.timers, "skipped") << line;
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer brings its own allocator, which refuses glibc's settings: the line says so.
  EXPECT_NE(line.find("mallopt refused"), std::string::npos) << line;
#else
  EXPECT_NE(line.find("allocator: glibc, every block from the heap, freed memory kept"), std::string::npos)
      << line;
  // A block larger than glibc's largest mmap threshold comes from the heap all the same.
  const size_t mappedBefore = mallinfo2().hblks;
  void* block = std::malloc(size_t{64} << 20);
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(mallinfo2().hblks, mappedBefore);
  std::free(block);
#endif
  Eigen::MatrixXd x = Eigen::MatrixXd::Ones(upper.rows(), 1);
  const Eigen::MatrixXd b = upper.selfadjointView<Eigen::Upper>() * x;
  Eigen::MatrixXd solved = b;
  solver->solve(solved);
  EXPECT_LT((solved - x).cwiseAbs().maxCoeff(), 1e-9);
  RecordProperty("linear_algebra", line);
}

TEST(Runtime, ExecutablesRunOnASingleThreadedBlas) {
  // The serial OpenBLAS build is linked first (third_party/); a threaded one is set to 1 thread.
  const LinearAlgebraInfo info = linearAlgebraInfo();
  const bool single = info.blas.find("SINGLE_THREADED") != std::string::npos ||
                      info.blas.find("1 thread") != std::string::npos;
  EXPECT_TRUE(single) << info.blas;
}

TEST(Runtime, CpuFlagsAreThoseEveryProcessorLists) {
  // Two processors, the second without AVX2 (a system that does not save its registers there):
  // kernels chosen by the first alone would trap on the second.
  std::istringstream two(
      "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\nbugs\t\t: spectre_v1\n\n"
      "processor\t: 1\nflags\t\t: fpu sse2 avx fma\n\n");
  EXPECT_EQ(commonCpuFlags(two), (std::set<std::string>{"fpu", "sse2", "avx", "fma"}));
  std::istringstream one("processor\t: 0\nflags\t\t: fpu avx2\n");
  EXPECT_EQ(commonCpuFlags(one), (std::set<std::string>{"fpu", "avx2"}));
  std::istringstream none("processor\t: 0\nmodel name\t: a CPU without a flags line\n");
  EXPECT_TRUE(commonCpuFlags(none).empty());
  // This system's: a subset of its first processor's.
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line) && line.rfind("flags", 0) != 0) {
  }
  std::istringstream firstLine(line);
  const std::set<std::string> first = commonCpuFlags(firstLine);
  for (const std::string& flag : systemCpuFlags()) EXPECT_TRUE(first.count(flag)) << flag;
}

// OpenBLAS runs AVX2 kernels wherever the system supports AVX2 (/proc/cpuinfo), even where CPUID
// hides OSXSAVE and OpenBLAS took SSE3's (Prescott) when it loaded: configureLinearAlgebra sets
// them. It failed on such a VM before (a Xeon with AVX-512: Prescott).
TEST(Runtime, OpenBlasRunsTheKernelsTheSystemSupports) {
  const LinearAlgebraInfo info = linearAlgebraInfo();
  const std::string core = blasKernelName();
  if (core.empty()) GTEST_SKIP() << "the BLAS is not OpenBLAS: " << info.blas;
  if (info.kernels.find("OPENBLAS_CORETYPE") != std::string::npos ||
      info.kernels.find("CLOTHLAB_BLAS_KERNELS_AS_LOADED") != std::string::npos)
    GTEST_SKIP() << "the kernels were chosen outside ClothLab: " << info.kernels;
  const std::set<std::string> flags = systemCpuFlags();
  if (!flags.count("avx2") || !flags.count("fma"))
    GTEST_SKIP() << "the system supports no AVX2 here";
  EXPECT_TRUE(blasKernelsHaveAvx2(core)) << core << "; " << info.kernels;
  EXPECT_NE(describeLinearAlgebra().find("BLAS kernels: " + core), std::string::npos)
      << describeLinearAlgebra();
  // The kernels set again still solve right.
  const SparseMatrix upper = laplacian(120, 0.01);
  auto solver = makeSpdSolver("cholmod");
  ASSERT_FALSE(solver->analyze(upper).has_value());
  expectFactorizesAndSolves(*solver, upper, Eigen::MatrixXd::Random(upper.rows(), 3));
}
