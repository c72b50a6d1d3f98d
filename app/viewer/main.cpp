// clothlab: the interactive viewer. See README "Viewer" and `clothlab --help`.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "app/viewer/viewer.h"
#include "sim/compare_presets.h"
#include "sim/linear/runtime.h"

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // tests read stdout while the window runs
  clothlab::configureLinearAlgebra();        // before any thread starts (sim/linear/runtime.h)
  clothlab::ViewerOptions o;
  CLI::App app{"ClothLab: drape, drag and pin inextensible cloth"};
  app.add_option("scene", o.scene, "built-in scene name, scene .json or cloth .obj (default: hanging)");
  app.add_option("--solver", o.solver, "solver id (overrides the scene's)");
  app.add_option("--frames", o.frames, "quit after N frames")->check(CLI::NonNegativeNumber);
  app.add_option("--seconds", o.seconds, "quit after S seconds of wall time")->check(CLI::NonNegativeNumber);
  app.add_option("--screenshot", o.screenshot, "write a PNG of the last frame (with --frames/--seconds)");
  app.add_option("--log", o.logPath, "JSON-lines log of user actions and drawn snapshots");
  app.add_option("--width", o.width, "window width")->check(CLI::Range(200, 8192));
  app.add_option("--height", o.height, "window height")->check(CLI::Range(200, 8192));
  app.add_flag("--paused", o.paused, "start paused");
  app.add_option("--obstacle", o.obstacles, "add an OBJ as a mesh obstacle, scaled and placed under the cloth (repeatable)")
      ->check(CLI::ExistingFile);
  app.add_option("--compare", o.compare,
                 "start in compare mode with a preset: " + clothlab::comparePresetNames());
  app.add_flag("--layout", o.layout, "print LAYOUT lines with widget rectangles (GUI tests)");
  app.add_option("--max-fps", o.maxFps, "frame rate cap (0: none)")->check(CLI::NonNegativeNumber);
  app.add_option("--lagging-fps", o.laggingFps,
                 "frame rate cap while the simulation runs behind real time and nothing is touched "
                 "for a second (0: none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--idle-fps", o.idleFps,
                 "frame rate cap while every simulation is paused and nothing is touched for a "
                 "second (0: none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--pattern", o.pattern,
                 "pattern printed on the cloth: none, checks or lines (key T)")
      ->check(CLI::IsMember({"none", "checks", "lines"}));
  app.add_option("--pattern-size", o.patternSize,
                 "the pattern's cell size in the first scene [m] (default: a tenth of the cloth)")
      ->check(CLI::Range(1e-3, 10.0));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  clothlab::Viewer viewer(o);
  const int code = viewer.run();
  if (viewer.exitWithoutWaiting()) {  // a load or a step still running: end now, not when it ends
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}
