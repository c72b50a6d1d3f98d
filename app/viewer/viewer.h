#pragma once
// The clothlab window: GLFW + OpenGL 3.3 core + Dear ImGui 1.86. The main thread handles events,
// the panel and drawing; a SimRunner steps the simulation on its own thread. See README "Viewer".
#include <array>
#include <chrono>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "app/viewer/edit_history.h"
#include "app/viewer/event_log.h"
#include "app/viewer/frame_pace.h"
#include "app/viewer/message_list.h"
#include "app/viewer/sim_runner.h"
#include "render/camera.h"
#include "render/picking.h"
#include "render/renderer.h"
#include "sim/compare_presets.h"
#include "sim/locking_metrics.h"
#include "sim/placement.h"

struct GLFWwindow;
struct ImVec2;

namespace clothlab {

// Whether `work` (a load or a build on another thread) has a result to take now.
template <class T>
bool finished(const std::future<T>& work) {
  return work.valid() && work.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

struct ViewerOptions {
  std::string scene = "hanging";  // built-in name, scene .json or cloth .obj
  std::string solver;             // overrides the scene's solver when set
  int width = 1280, height = 760;
  long frames = 0;                // quit after this many frames (0: run until closed)
  double seconds = 0;             // quit after this much wall time (0: run until closed)
  std::string screenshot;         // PNG written at the last frame (with --frames / --seconds)
  std::vector<std::string> obstacles;  // OBJ files added as mesh obstacles under the cloth
  std::string logPath;            // JSON-lines event log
  bool paused = false;
  std::string compare;             // compare preset to start in (see comparePresets())
  bool layout = false;            // print LAYOUT lines for widget positions (GUI tests)
  double maxFps = 240;            // frame limiter (vsync is ignored under Xvfb)
  // Frame rate caps while the simulation lags, or nothing runs, and nothing is touched
  // (frame_pace.h; 0: none).
  double laggingFps = 30;
  double idleFps = 10;
  std::string pattern = "none";   // printed on the cloth from the start (render/pattern.h names)
  double patternSize = 0;         // its first scene's cell size [m] (0: a tenth of the cloth)
};

class Viewer {
 public:
  explicit Viewer(ViewerOptions options);
  ~Viewer();
  // Runs until the window closes or the frame/second limit. Returns the process exit code.
  int run();
  // After run(): true when quitting left work that the destructor would wait for (a load or a
  // comparison built on another thread, a step that cannot be given up part-way, such as the
  // first step's ordering of a 600 000-row system): the caller then ends the process at once
  // (std::_Exit) rather than keep the closed window on screen (26 s for a 600 000-triangle
  // load). Saves clicked before quitting have been written by then.
  bool exitWithoutWaiting() const { return exitWithoutWaiting_; }

  // The scene the window opens with: `argument` (a scene name, scene .json or cloth .obj) under
  // `solver` (the scene's own when empty). When that cannot run, `error` says why and the
  // simulation is the scene under its own solver, if the solver asked for refused the cloth, or
  // else the built-in `hanging` (under `solver` if it can). `opened`: the argument's scene runs.
  struct FirstScene {
    std::unique_ptr<Simulation> simulation;
    std::string error;
    bool opened = false;
  };
  static FirstScene firstScene(const std::string& argument, const std::string& solver);

  // GLFW callbacks (static trampolines forward here).
  void onMouseButton(int button, int action, int mods);
  void onCursor(double x, double y);
  void onScroll(double dy);
  // `physical` is GLFW's key code; shortcuts go by the key's label on the active layout
  // (shortcut_key.h).
  void onKey(int physical, int scancode, int action, int mods);
  void onDrop(int count, const char** paths);

 private:
  enum class Drag { None, Grab, Pin, Orbit, Pan };
  enum class ObjAs { Cloth, ObstacleMesh, ObstacleBox, ObstacleSphere, Jelly };

  void frame(bool last);
  // Ends the drag in progress as releasing the mouse button does: a grab lets go, a moved pin
  // stays where it is, a Ctrl+click on a pin without a move unpins it (only on the button's
  // release: `byButton`).
  void endDrag(bool byButton);
  void drawPanel();
  void drawSceneSection();
  void drawSolverSection();
  void drawParameterSection();
  void drawPlacement();  // the cloth's placement (sim/placement.h), inside drawParameterSection
  void drawPinSection();
  void drawObstacleSection();
  // Posts a change of the obstacle list as the panel saw it to every pane (refused if the list
  // changed meanwhile); with `interrupt` a step in progress is given up for it (postClick). A step
  // of the edit history (postSceneEdit; `continuous` for a dragged number or a slider).
  void editObstacles(const std::string& label, std::function<void(std::vector<Obstacle>&)> change,
                     bool interrupt = false, bool continuous = false);
  // The jellies (sim/jelly/jelly.h): each one's state and material, a ball to drop on the cloth.
  void drawJellySection();
  // Posts a change of the jelly list as the panel saw it to every pane, like editObstacles.
  void editJellies(const std::string& label, std::function<void(std::vector<JellySpec>&)> change,
                   bool interrupt = false, bool continuous = false);
  // Adds `jelly` to every pane (an addition does not depend on the list the panel saw).
  void addJelly(JellySpec jelly, const std::string& what);
  // Where a jelly of these vertices (its own coordinates) goes: as they are, moved so that it sits
  // centred under the cloth, its top 2 cm below the cloth's lowest point, or, where the ground
  // leaves no room for that, a centimetre above the ground.
  Transform jellyUnderCloth(const Positions& vertices) const;
  void drawStatsSection();
  void drawViewSection();
  void drawHelpWindow();
  void drawOverlayText();
  void layout(const char* name);  // prints LAYOUT name x0 y0 x1 y1 of the last item
  void layoutRect(const std::string& name, ImVec2 min, ImVec2 max);  // the same for a given rectangle
  void consumeSnapshot();
  void printProbes();
  void openPath(const std::string& path, const std::string& how);
  void loadObjObstacle(const std::string& path, ObjAs as);
  // OBJs loaded and added as mesh obstacles under the cloth together (sim/placement.h
  // meshObstaclesUnderCloth: in a row, beside the obstacles there); a file that cannot be read is
  // named in an error and the others are added.
  void loadMeshObstacles(const std::vector<std::string>& paths);
  // Obstacles added to the scene as one edit of the history, each announced with its file, what
  // it was added as and the file's warnings.
  struct AddedObstacle {
    Obstacle obstacle;
    std::string path, what;
    std::vector<std::string> warnings;
  };
  void addObstacles(std::vector<AddedObstacle> added);
  void saveScene(const std::string& path);
  void exportObj(const std::string& path);
  bool takeScreenshot(const std::string& path);  // false (and an error shown) if not written
  void listSavedScenes();  // the scenes saveScene() has written, into the recent files
  void addRecent(const std::string& path);
  // Pin edits, each one step of the edit history (undone with Ctrl+Z); setPin returns its record,
  // which a drag that follows the Ctrl+click completes (one step for pinning and moving).
  std::shared_ptr<SceneEdit> setPin(int vertex, const Vec3& target, const std::string& why);
  void removePin(int vertex);
  void applyPreset(const std::string& preset);
  void clearPins();
  // Posts the edits `make` builds to every pane (postEach, giving up a step in progress with
  // `interrupt`), each recorded for undo as a change of `part`, and pushes the record on the edit
  // history. A `continuous` edit (a dragged number, a slider: one every frame) joins the newest
  // record instead when that is one of the same label made less than kContinuousSeconds ago.
  std::shared_ptr<SceneEdit> postSceneEdit(const std::string& label, EditedPart part,
                                           const std::function<SimRunner::Edit(int pane)>& make,
                                           bool interrupt = true, bool continuous = false);
  // The same, for an edit made with its record at hand (a placement: SceneEdit::placing).
  std::shared_ptr<SceneEdit> postSceneEdit(
      const std::string& label, EditedPart part,
      const std::function<SimRunner::Edit(int pane, SceneEdit& record)>& make,
      bool interrupt = true, bool continuous = false);
  static constexpr double kContinuousSeconds = 1.0;
  // Undoes (or redoes) the last scene edit in every pane, or says there is none; for parameters
  // the panel then shows what was put back (paramsShownAfter_).
  void undoEdit(bool redo);
  // Empties the edit history when what runs has changed (other runners, another scene loaded).
  void dropStaleHistory();
  void resetScene();
  // Keeps the moment of the motion in every pane (K), or goes back to it (B): SimRunner's
  // keepMoment and backToMoment.
  void keepMoment();
  // Shows `pattern` on the cloth (T, the View section), logged as "pattern".
  void setPattern(ClothPattern pattern);
  void backToMoment();
  // Frames the snapshot; a new scene also gets the default angles and room for pinned cloth to hang.
  void fitCamera(const Snapshot& snapshot, bool newScene);
  void refitChangedPane();  // frames the active pane again when its shape changed (framed_)
  // The panel's parameters (sim_, as edited from `before`; solverParams_ after `key` changed) to
  // the active pane, or to every pane with editAllPanes_ (solver parameters: those running the
  // same solver), as one step of the edit history named after what changed.
  void postSimParams(const SimParams& before);
  // Whether the panel's parameter edits go to `pane` (-1: the one simulation outside compare
  // mode): the active pane, or every pane with editAllPanes_.
  bool parameterEditsReach(int pane) const {
    return pane < 0 || editAllPanes_ || pane == activePane_;
  }
  // Restarts every pane's cloth from rest, placed as `choose` says for its simulation (the
  // pane's own cloth: its own centre), or reports why not while the scene runs on.
  void postPlacement(const std::string& label,
                     std::function<Result<ClothPlacement>(const Simulation&)> choose);
  void postSolverParams(const std::string& key);
  void message(RunnerMessage::Kind kind, const std::string& text);
  // Compare mode (compare.cpp): 2-4 panes, each a scene variant run by one solver on its own
  // thread, drawn side by side with one shared camera. Input goes to every pane: the clicked
  // pane's material point is mapped to each pane's mesh through the rest positions.
  struct Pane {
    ComparePane spec;
    std::unique_ptr<SimRunner> runner;
    std::shared_ptr<const ClothModel> cloth;  // rest mesh and topology (mapping, metrics)
    std::shared_ptr<const Snapshot> snapshot;
    MetricProbe probe;
    std::vector<double> metrics;
    // The metrics as measured (every kMetricsInterval of wall time) over the last
    // kMetricsMeanWindow of simulated time: (time, values).
    MetricSeries recentMetrics;
    std::vector<MetricSummary> recentSummary;  // per metric, averaged over recentMetrics' time
    std::deque<double> stepMs;
    long lastStep = -1;
    double metricsWall = -1;
    double x = 0, y = 0, w = 0, h = 0;  // window pixels, top-left origin
    Grab grab;  // the current drag's point mapped to this pane's mesh
  };
  static constexpr double kCompareTableHeight = 190;  // window pixels under the panes
  // Below either size a new panel starts collapsed (drawPanel).
  static constexpr int kSmallWindowWidth = 640, kSmallWindowHeight = 480;
  // A step running this long is shown in the panel and on its pane ("step N: S s so far").
  static constexpr double kSlowStepSeconds = 1.0;
  // What they show of the step after `step` (the last one published), running for `seconds`.
  static std::string runningStepText(long step, double seconds);
  struct ViewRect {
    double x, y, w, h;
  };
  // A pane running `spec`: its simulation on a new runner (paced with the others through `pace`),
  // a copy of its rest cloth, its probe.
  Result<Pane> makePane(const ComparePane& spec, bool paused, std::shared_ptr<PaceGroup> pace) const;
  Pane wrapPane(const ComparePane& spec, std::unique_ptr<Simulation> simulation, bool paused,
                std::shared_ptr<PaceGroup> pace) const;
  struct BuiltPane {
    ComparePane spec;
    std::unique_ptr<Simulation> simulation;
  };
  // Builds every pane first: one that fails leaves what runs as it is, and says which.
  std::optional<std::string> startCompare(const std::vector<ComparePane>& panes, const std::string& name);
  // Replaces what runs (a single scene or other panes) with `built`.
  void installPanes(std::vector<BuiltPane> built, const std::string& name);
  // "this scene, all solvers": asks the simulation thread for the current scene as it stands
  // (cloth, pins, obstacles, parameters); frame() hands it to startComparingScene when it
  // arrives, which builds the panes on a thread (buildPanesInBackground, also used to restart
  // such a comparison); finishComparingScene starts them once built, leaving out the solvers
  // that cannot run the cloth, unless another scene was opened meanwhile.
  void compareThisScene();
  void startComparingScene(Scene scene);
  void buildPanesInBackground(std::vector<ComparePane> specs, const std::string& name);
  // Whether a comparison is still being built, which refuses another (saying so).
  bool comparisonBeingBuilt();
  // Identifies what runs: the runners (a comparison started or left) and the single runner's
  // loads. A reset or a solver switch keeps the scene, and so it.
  std::pair<long, long> whatRuns() const;
  // What runs on other threads that quitting would wait for: "the load of X", "the panes of Y".
  std::vector<std::string> unfinishedWork() const;
  void finishComparingScene();
  void stopCompare();
  // Runs `simulation` alone in a new single runner (compare mode, if on, ends).
  void runSingle(std::unique_ptr<Simulation> simulation);
  // Opens `argument` (built-in name, scene .json or .obj) as the scene. In compare mode the
  // comparison runs until the new scene is built and ends only then: a bad path or file leaves
  // it running with the error in the panel.
  void openScene(const std::string& argument);
  // Each frame: a scene opened in compare mode that is built takes over; one that failed leaves
  // its error in the panel.
  void finishOpenInCompare();
  // Replaces pane i by `spec` (another mesh variant or solver); an error leaves the pane running.
  std::optional<std::string> rebuildPane(int pane, const ComparePane& spec);
  // With the panes kept in step, a pane that starts again from rest (a new solver or mesh) would
  // hold the others still until it caught up with them, at wall-time speed: they start again too.
  void restartOtherPanesInStep(int pane, const std::string& why);
  void layoutPanes();
  void consumePanes();
  void activatePane(int pane);
  int paneAt(double x, double y) const;
  ViewRect activeView() const;
  void drawCompareSection();
  void drawCompareOverlay();
  // Posts an edit to every runner the input goes to (every pane in compare mode, or only the
  // active one when `all` is false). `make` builds each pane's edit (pane -1: single mode).
  // Posts make(pane) to every pane's runner (to the active pane's only unless `all`); with
  // `interrupt` a step in progress is given up for it (SimRunner::post).
  void postEach(const std::string& label, const std::function<SimRunner::Edit(int pane)>& make, bool all = true,
                bool interrupt = false);
  // postEach for a click (a grab taken or let go, a pin set or removed, an obstacle added): it
  // gives up a step in progress rather than wait it out. The moves of a drag do not, or a slow
  // scene would stand still for as long as the mouse moves.
  void postClick(const std::string& label, const std::function<SimRunner::Edit(int pane)>& make) {
    postEach(label, make, true, true);
  }
  void forEachRunner(const std::function<void(SimRunner&)>& fn);
  // The active pane's vertex / surface point in `pane`'s mesh (through the rest positions when the
  // panes run different scenes; the same otherwise).
  SimRunner& runnerOf(int pane) { return pane < 0 ? *runner_ : *panes_[pane].runner; }
  int mapVertex(int pane, int vertex) const;
  Grab mapGrab(int pane, const Grab& grab) const;

  Vec3 viewPlanePoint(double x, double y, const Vec3& through) const;
  std::optional<int> pinNearCursor(double x, double y, double radiusPixels) const;

  ViewerOptions options_;
  GLFWwindow* window_ = nullptr;
  std::unique_ptr<SimRunner> single_;  // the runner outside compare mode
  SimRunner* runner_ = nullptr;         // the active runner (single_, or the active pane's)
  std::vector<Pane> panes_;             // compare mode when not empty
  int activePane_ = 0;
  int comparePreset_ = 0;
  std::string compareName_;            // what the panes run: a preset's name or the scene's
  std::future<Scene> sceneToCompare_;  // see compareThisScene()
  std::future<std::vector<std::pair<ComparePane, Result<std::unique_ptr<Simulation>>>>>
      panesBuilding_;
  std::string panesBuildingName_;
  // Work let go that cannot be stopped part-way and whose end is not waited for: a single
  // runner released while it loads (installPanes), a load given up in compare mode (openScene).
  // Dropped as each ends (frame()); quitting does not wait for them (exitWithoutWaiting).
  std::vector<std::future<void>> lettingGo_;
  bool exitWithoutWaiting_ = false;  // see exitWithoutWaiting()
  // What ran when those panes were asked for (whatRuns()): they start only over it.
  std::pair<long, long> requestedFor_{0, 0};
  long runnersStarted_ = 0;  // single runners and sets of panes started (installPanes, runSingle)
  // A scene opened in compare mode, built on its own thread (openScene()), and what was opened.
  std::future<Result<std::unique_ptr<Simulation>>> openedInCompare_;
  std::string openedInComparePath_;
  double openedInCompareStart_ = 0;  // glfwGetTime() when it started
  std::shared_ptr<LoadTicket> openedInCompareTicket_;  // read by its stages
  // Gives the load opened in compare mode up (its result is dropped when it ends), saying `why`.
  void giveUpOpenInCompare(const std::string& why);
  bool editAllPanes_ = true;
  bool keepPanesInStep_ = true;         // the panes' PaceGroup is enabled
  // The panes' labels and metrics table show each metric's mean over the last
  // kMetricsMeanWindow of simulated time instead of its latest value.
  bool metricsMean_ = false;
  static constexpr double kMetricsMeanWindow = 2.0;  // s of simulated time
  std::shared_ptr<PaceGroup> pace_;     // the panes' runners are its members
  std::unique_ptr<Renderer> renderer_;
  Camera camera_;
  // The box the camera last framed and the view's aspect then, kept until the user moves the
  // camera: a compare pane that changes shape (the panel's width is known only after its first
  // frame; collapsing the panel, resizing the window) is framed again.
  std::optional<std::pair<glm::dvec3, glm::dvec3>> framed_;
  double framedAspect_ = 1;
  RenderOptions render_;
  ClothPattern lastPattern_ = ClothPattern::Checks;  // what T brings back
  EventLog log_;
  // Scene files the simulation thread has written (saveScene), for the recent files: a save that
  // fails is not listed.
  std::mutex savedMutex_;
  std::vector<std::string> savedScenes_;
  std::shared_ptr<const Snapshot> snapshot_;
  // What the last logged snapshot showed: a snapshot that changes none of it is not logged.
  long lastLoggedStep_ = -1;
  std::optional<Vec3> lastLoggedGrabTarget_;
  std::vector<int> lastLoggedPinVertices_;
  std::vector<Vec3> lastLoggedPinTargets_;
  const void* sceneIdentity_ = nullptr;  // triangles of the scene the panel copies belong to
  std::string solverIdentity_;
  int fbWidth_ = 0, fbHeight_ = 0, winWidth_ = 0, winHeight_ = 0;

  // Scene edits to undo and redo, and what ran when they were made (whatRuns; rebuildPane resets
  // it, which drops them too). pinDragEdit_: the record the moves of the pin drag in progress join;
  // continuousWall_: when a continuous edit last joined the newest record (postSceneEdit).
  EditHistory edits_;
  std::pair<long, long> editsFor_{-1, -1};
  std::shared_ptr<SceneEdit> pinDragEdit_;
  double continuousWall_ = -1e9;
  // After an undo or redo of parameters: the active runner and its edits posted by then; the
  // panel takes its parameters from the first snapshot of it that shows them (null: none
  // awaited; another pane made active, or other runners, end the wait).
  const SimRunner* paramsRunner_ = nullptr;
  long paramsShownAfter_ = 0;

  // Mouse.
  Drag drag_ = Drag::None;
  double cursorX_ = 0, cursorY_ = 0, pressX_ = 0, pressY_ = 0;
  bool moved_ = false;
  bool unpinOnClick_ = false;
  Grab grab_;
  int dragVertex_ = -1;
  Vec3 dragThrough_{0, 0, 0};

  // Panel state (the UI's own copies; edits are posted to the runner).
  SimParams sim_;
  nlohmann::json solverParams_ = nlohmann::json::object();
  char pathField_[1024] = "";
  char savePath_[1024] = "scene.json";
  char exportPath_[1024] = "surface.obj";
  char screenshotPath_[1024] = "clothlab.png";
  char recordDir_[1024] = "frames";
  int objAs_ = 0;
  ClothPlacement placement_;  // the placement fields (`move` from where the cloth is now)
  bool obstaclesFromCommandLine_ = false;  // --obstacle files added (after the first snapshot)
  std::vector<std::string> recent_;
  std::deque<PanelMessage> messages_;  // addPanelMessage (message_list.h)
  bool showHelp_ = false;
  bool screenshotRequested_ = false;
  bool finalScreenshotFailed_ = false;  // --screenshot could not be written: run() returns 1
  bool recording_ = false;
  long recordIndex_ = 0;
  float speed_ = 1.0f;
  float panelWidth_ = 0;  // right edge of the panel [window pixels]
  // The ImGui windows drawn in the last frame [window pixels: min x, min y, max x, max y], and
  // whether a point lies on one (rememberWindow() inside each window's Begin/End).
  std::vector<std::array<float, 4>> windowRects_;
  void rememberWindow();
  bool overWindow(double x, double y) const;

  // Rolling statistics (one sample per new snapshot) and frame times.
  struct Sample {
    float wall, msTotal, msFactor, msForces, msVelocity, msPosition, msCollision, iterations, error,
        strain, rtf;
    bool converged;
  };
  std::deque<Sample> history_;
  std::deque<double> frameTimes_;  // wall time of recent frames [s]
  double lastInput_ = 0;           // wall time of the last mouse, key or drop event [s]
  FramePace framePace_;
  // The frame rate cap for the next frame (FramePace: paced while every running pane lags, or
  // none runs, and nothing was touched for a second).
  double frameCap();
  double lastFpsLog_ = 0;
  long frameCount_ = 0;
  double startWall_ = 0;
  struct Probe {
    int index = 0;  // a triangle of the cloth, or the pinned vertex
    double x = -1e9, y = -1e9;
  };
  Probe probes_[2];
  Probe pinProbe_;  // the last pin in the list
  const void* probeScene_ = nullptr;
  std::array<int, 4> printedClothBox_{};  // the cloth's last printed screen rectangle
};

}  // namespace clothlab
