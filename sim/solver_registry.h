#pragma once
// The one list of solvers. The CLI, the viewer and the tests build their solver lists from it.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/params.h"
#include "sim/solver.h"

namespace clothlab {

struct SolverEntry {
  std::string id;           // e.g. "impulse-nc"
  std::string description;  // one line
  std::function<std::unique_ptr<Solver>()> create;
  std::vector<ParamDescription> parameters;  // the solver's parameter object, for editors
};

const std::vector<SolverEntry>& solverRegistry();
std::unique_ptr<Solver> createSolver(const std::string& id);  // nullptr if unknown
const SolverEntry* findSolver(const std::string& id);          // nullptr if unknown
std::string solverIdList();  // "impulse-nc, conforming, ..."

}  // namespace clothlab
