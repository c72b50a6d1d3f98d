// --obstacle of `run` and `compare`: OBJs added as mesh obstacles under the cloth, placed as the
// viewer's --obstacle places them (sim/placement.h meshObstaclesUnderCloth): several in a row.
#include <iostream>

#include "app/cli/commands.h"
#include "sim/obj_io.h"
#include "sim/placement.h"
#include "sim/simulation.h"

namespace clothlab::cli {

std::optional<std::string> addObstaclesUnderCloth(Simulation& simulation,
                                                  const std::vector<std::string>& paths) {
  if (paths.empty()) return std::nullopt;
  const Positions& surface = simulation.surface();
  const Vec3 lo = surface.colwise().minCoeff(), hi = surface.colwise().maxCoeff();
  std::vector<ObjToPlace> objs;
  for (const std::string& path : paths) {
    auto loaded = loadObj(path);
    if (!loaded) return "--obstacle: " + loaded.error();
    for (const std::string& warning : loaded->warnings) std::cerr << "warning: " << warning << "\n";
    objs.push_back({std::move(loaded->mesh), path});
  }
  std::vector<Obstacle> obstacles = simulation.obstacles();
  for (PlacedObstacle& placed :
       meshObstaclesUnderCloth(std::move(objs), lo, hi, simulation.sim().friction, obstacles,
                               /*clothPinned=*/!simulation.pins().empty()))
    obstacles.push_back(std::move(placed.obstacle));
  if (auto e = simulation.setObstacles(std::move(obstacles))) return "--obstacle: " + *e;
  return std::nullopt;
}

}  // namespace clothlab::cli
