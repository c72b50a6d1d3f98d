#include "sim/solver_registry.h"

#include "sim/solvers/impulse/impulse_solver.h"
#include "sim/solvers/mls/mls_solver.h"
#include "sim/solvers/remesh/remesh_solver.h"
#include "sim/solvers/xpbd/xpbd_solver.h"

namespace clothlab {

const std::vector<SolverEntry>& solverRegistry() {
  static const std::vector<SolverEntry> registry = {
      {"impulse-nc",
       "hard distance constraints on the edge-midpoint (nonconforming) mesh, impulses from one "
       "sparse factorization per step (Bender, Diziol, Bayer 2011)",
       [] { return std::make_unique<ImpulseSolver>(ImpulseSolver::Mode::Nonconforming); },
       describeParams(ImpulseParams::table())},
      {"conforming", "the same impulses on the ordinary mesh edges: locks (baseline)",
       [] { return std::make_unique<ImpulseSolver>(ImpulseSolver::Mode::Conforming); },
       describeParams(ImpulseParams::table())},
      {"mls-isometry",
       "meshless isometry constraints on moving-least-squares strain, Fast Projections (Chen, "
       "Kry, Vouga 2019)",
       [] { return std::make_unique<MlsSolver>(); }, describeParams(MlsParams::table())},
      {"xpbd",
       "XPBD distance constraints on mesh edges with Gauss-Seidel sweeps and a compliance, the "
       "usual real-time method: stretches unless given many iterations (baseline)",
       [] { return std::make_unique<XpbdSolver>(); }, describeParams(XpbdParams::table())},
      {"strain-limit-remesh",
       "warp, weft and bias strain limits (augmented Lagrangian) on an adaptively refined and "
       "coarsened mesh (seed 003 on Narain et al. 2012)",
       [] { return std::make_unique<RemeshSolver>(); }, describeParams(RemeshParams::table())},
  };
  return registry;
}

const SolverEntry* findSolver(const std::string& id) {
  for (const auto& entry : solverRegistry())
    if (entry.id == id) return &entry;
  return nullptr;
}

std::unique_ptr<Solver> createSolver(const std::string& id) {
  const SolverEntry* entry = findSolver(id);
  return entry ? entry->create() : nullptr;
}

std::string solverIdList() {
  std::string list;
  for (const auto& entry : solverRegistry()) list += (list.empty() ? "" : ", ") + entry.id;
  return list;
}

}  // namespace clothlab
