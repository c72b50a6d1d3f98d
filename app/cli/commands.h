#pragma once
// clothlab-cli subcommands. Each returns the process exit code.
#include <optional>
#include <string>
#include <vector>

namespace clothlab {
class Simulation;
}

namespace clothlab::cli {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;
constexpr int kExitDiverged = 3;

// Median of the values (0 for none).
double median(std::vector<double> values);

// Adds each OBJ in `paths` to `simulation` as a mesh obstacle, scaled and placed under the cloth
// as the viewer's --obstacle does (sim/placement.h meshObstaclesUnderCloth: one at 60% of the
// cloth, several in a row, beside the scene's own obstacles where those stand there). Fails
// with a message that starts "--obstacle: " and names the file (and line) or the obstacle the
// simulation refuses; nothing is added then. The files' warnings go to stderr.
std::optional<std::string> addObstaclesUnderCloth(Simulation& simulation,
                                                  const std::vector<std::string>& paths);

struct CompareOptions {
  std::string scene;    // built-in scene, scene .json or compare preset name
  std::string solvers;  // "ID[:KEY=VALUE...][@SCENE],..." (empty: the preset's panes)
  std::optional<long> steps;
  // Metrics averaged over this many last steps (each measured after every one of them), with
  // their range; unset: measured once, after the last step.
  std::optional<long> average;
  int jobs = 0;         // solvers run at a time
  std::vector<std::string> obstacles;  // --obstacle: OBJs placed under each pane's cloth
  std::string jsonPath, csvPath, outDir;
};
int runCompare(const CompareOptions& options);

int runBench(const std::vector<std::string>& scenes, int steps, const std::string& jsonPath);

}  // namespace clothlab::cli
