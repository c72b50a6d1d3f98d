#pragma once
// clothlab-cli subcommands. Each returns the process exit code.
#include <string>
#include <vector>

namespace clothlab::cli {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;
constexpr int kExitDiverged = 3;

// Median of the values (0 for none).
double median(std::vector<double> values);

int runBench(const std::vector<std::string>& scenes, int steps, const std::string& jsonPath);

}  // namespace clothlab::cli
