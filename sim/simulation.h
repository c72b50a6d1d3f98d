#pragma once
// Simulation: one scene stepped by one solver. Owns the immutable ClothModel, the solver and the
// inputs that change between steps (parameters, pins, grab, obstacles). Not thread-safe: the
// viewer's simulation thread owns one and applies queued edits between steps; the CLI uses it
// directly.
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/grab.h"
#include "sim/scene.h"
#include "sim/solver.h"

namespace clothlab {

// Folds the statistics of one sub-step into those of its step (the first sub-step's replace
// them): times, iterations, back-tracks and numeric extras are summed; errors, strains, contacts
// and extras named max_* keep the largest; `converged` holds only if every sub-step converged;
// boolean extras are true if any sub-step's is.
void accumulateSubstep(StepStats& total, const StepStats& sub, bool first);

// The key a step's stats carry (true) where the simulation slept through it (Simulation::step),
// and whether `stats` are such a step's.
inline constexpr const char* kAsleepKey = "asleep";
inline bool sleptThrough(const StepStats& stats) { return stats.extra.value(kAsleepKey, false); }

// Why `cloth` cannot start where it rests among `obstacles` (as at t = 0): vertices deeper inside
// one than half its mean rest edge length, or `thickness` where that is more. The message names
// the obstacle (obstacles[i]), how many vertices and the deepest. Simulation::create refuses such
// a scene; the viewer does not save one.
std::optional<std::string> startsInsideObstacle(const ClothModel& cloth, const std::vector<Obstacle>& obstacles,
                                                double thickness);

class Simulation {
 public:
  // Builds the cloth and the solver named by scene.solverId with scene.solverParams.
  static Result<std::unique_ptr<Simulation>> create(const Scene& scene);
  // The same with the cloth already built from `scene` (buildClothModel).
  static Result<std::unique_ptr<Simulation>> create(const Scene& scene, ClothModel cloth);

  // One step of sim().dt, taken as sim().substeps solver steps of dt / substeps (obstacles,
  // pin ramps and the grab follow each sub-step). lastStats() then sums times, iterations and
  // counts over the sub-steps and keeps the worst errors (see accumulateSubstep).
  // With sim().maxSubsteps above substeps (adaptive), a step that ends above the solver's
  // tolerance or diverges is taken again from its start in twice as many sub-steps, up to
  // maxSubsteps; the last attempt stands, lastStats().msTotal includes the attempts taken again
  // and extra["adaptive_retries"] counts them. The next step starts from the count this one
  // needed; after 20 steps in a row without a retry it tries half as many.
  // On failure (divergence, failed factorization) the state stays at the last good sub-step,
  // diverged() turns true and the message says which step and sub-step failed and why.
  // With a stop flag set (setStopFlag) the step is given up as soon as the solver or the
  // sub-step loop sees the flag: the state goes back to where the step began, the step and time
  // do not advance, diverged() stays false and the message is kStepStopped.
  // Sleep: once every surface vertex has moved slower than sim().sleepSpeed over sim().sleepTime
  // of steps that ended within the solver's tolerance, with nothing that moves or changes by
  // itself (restless()), the cloth falls asleep: step() then takes no solver step but advances
  // the time and step count, and lastStats() says "asleep" with the last step's figures of the
  // state (its max_* extras, error, strain, contacts) and no work. Any edit below that changes
  // what acts on the cloth, a grab, and a moving or travelling thing wake it.
  std::optional<std::string> step();
  bool diverged() const { return diverged_; }
  bool asleep() const { return asleep_; }
  // The flag step() watches (owned by the caller, outliving its use; nullptr: none).
  void setStopFlag(const std::atomic<bool>* stop) { stop_ = stop; }

  // Edits, applied at the next step.
  std::optional<std::string> setSimParams(const SimParams& params);
  std::optional<std::string> setSolverParams(const nlohmann::json& params);
  // Adds or moves a pin. Refused (with a message, nothing changed) for a vertex out of range or a
  // non-finite target. The vertex travels to the target in a straight line at kPinHandSpeed, from
  // where the pin holds it now (a new pin: from where the vertex stands; a scene's pin without a
  // ramp: from its rest position). A pin flicked across the window by the mouse jumped there in
  // one step, 0.57 m in 1 ms: it kicked the cloth around it to hundreds of m/s, and
  // impulse-nc's position pass could not move the vertex at all; a restarted scene's pin set
  // where the cloth had fallen to left mls-isometry tangled for good. The pin moved last is held
  // within reach of the others (GrabReach, sim/grab.h): a target farther from another pin than
  // the cloth between them is long holds the vertex where the cloth pulled taut reaches; pins()
  // keeps the target as given. Where the vertex stands beyond that reach when the pin is set (a
  // solver's surface may), the reach grows by as much, so a pin set where its vertex stands holds
  // it there.
  std::optional<std::string> setPin(int vertex, const Vec3& target);
  // Makes `pins` the pins (the viewer's undo and redo of pin edits): the others go, those with
  // the same target stay as they are, and each new or changed one travels from where its pin holds
  // its vertex now (a new one: from where the vertex stands) to its target. They travel together,
  // over the time the farthest needs at kPinHandSpeed, so that cloth between two of them is never
  // pulled further apart than it is now or will be when they arrive (each distance between them
  // stays between its start and end); one by one at the hand speed, the nearer ones arrive first.
  // The last changed one is the moved pin, held within the others' reach, as setPin's. Refused,
  // changing nothing, for a vertex out of range or listed twice or a non-finite target.
  std::optional<std::string> setPins(const std::vector<std::pair<int, Vec3>>& pins);
  void removePin(int vertex);
  void clearPins();
  // Starts, moves or (nullopt) releases the grab. Refused for a triangle out of range or
  // non-finite coordinates. Each sub-step hands the solver the grab with its target brought
  // within the pins' reach (GrabReach, sim/grab.h); grab() keeps the target as given.
  std::optional<std::string> setGrab(std::optional<Grab> grab);
  // Replaces the obstacles; refused, changing nothing, where one of them is invalid
  // (validateObstacle names it as obstacles[i]).
  std::optional<std::string> setObstacles(std::vector<Obstacle> obstacles);

  const Scene& scene() const { return scene_; }
  const ClothModel& cloth() const { return *cloth_; }
  std::shared_ptr<const ClothModel> clothModel() const { return cloth_; }
  const SimParams& sim() const { return sim_; }
  const Solver& solver() const { return *solver_; }
  Solver& solver() { return *solver_; }
  const std::vector<std::pair<int, Vec3>>& pins() const { return pins_; }
  const std::optional<Grab>& grab() const { return grab_; }
  const std::vector<Obstacle>& obstacles() const { return obstacles_; }  // as at t = 0
  std::vector<Obstacle> obstaclesAt(double t) const;  // moving obstacles where they are at t
  // Replaces the jellies; refused, changing nothing, where one of them is invalid (validateJelly
  // names it as jellies[i]). A jelly whose surface the list had already (the same mesh) keeps its
  // place and motion and takes the new material; a new one starts where its surface stands.
  // `earlier[i]` (the viewer's undo of a removal): jellies[i] as it stood at some moment; a jelly
  // of the list that does not run now takes up from there, with its motion, instead of starting
  // from its surface.
  std::optional<std::string> setJellies(std::vector<JellySpec> jellies,
                                        const std::vector<JellyBody>& earlier = {});
  // The jellies as a scene describes them, and as they stand now; each as the mesh obstacle the
  // cloth meets.
  const std::vector<JellySpec>& jellySpecs() const { return jellySpecs_; }
  const std::vector<JellyBody>& jellies() const { return jellies_; }
  std::vector<Obstacle> jellyObstacles() const;
  const StepStats& lastStats() const { return stats_; }
  long stepCount() const { return stepCount_; }
  double time() const { return time_; }
  const Positions& surface() const { return solver_->surface(); }
  // A moment of the motion, kept to go back to (the viewer's "keep moment"): the solver's state,
  // the time and step count, the jellies' bodies, the pins' travels and the contacts' allowance
  // as they stood.
  struct Moment;
  std::shared_ptr<const Moment> moment() const;
  // Puts the motion back as it stood at `moment`, keeping the edits made since (pins,
  // obstacles, parameters, a jelly's material), as Reset keeps them: a pin set or moved since
  // travels to its target from where the moment held its vertex, at kPinHandSpeed; a jelly added
  // since starts at its surface, and one removed stays away. A diverged simulation runs again.
  // Refused, changing nothing, for a moment of another solver or of another cloth (another mesh,
  // or this one placed anew). The same steps follow it as followed the moment (to the bit, with
  // no edit between).
  std::optional<std::string> goBack(const Moment& moment);
  // The scene as it stands now (current parameters and pins), for saving, resetting and
  // comparing: it starts from rest again, and a pin set away from its vertex's rest position
  // travels there (see setPin).
  Scene currentScene() const;
  static constexpr double kPinHandSpeed = 3.0;  // m/s

 private:
  // setJellies for valid `jellies`, without setting the contacts' allowance anew (goBack puts the
  // moment's back).
  void replaceJellies(std::vector<JellySpec> jellies, const std::vector<JellyBody>& earlier);
  // create() after the parameters and solver id were checked and the cloth built.
  static Result<std::unique_ptr<Simulation>> build(const Scene& scene, ClothModel cloth);
  Simulation() = default;
  // The step in `substeps` solver steps; a message naming the sub-step that failed.
  std::optional<std::string> takeSubsteps(int substeps, StepStats& stats);
  // Adaptive sub-steps: the count the last step was taken in, and how many steps in a row needed
  // no retry.
  int adaptiveSubsteps_ = 0;
  int easySteps_ = 0;
  // Whether something moves or changes by itself, so that the cloth may not sleep: a grab, a pin
  // still travelling, a moving or spinning obstacle, a jelly, stitches still closing, contacts
  // still recovering their allowance.
  bool restless() const;
  void wake() {
    asleep_ = false;
    stillFor_ = 0;
  }
  // After a step taken: adds its time to stillFor_ where every surface vertex moved slower than
  // sleepSpeed and the step ended within the tolerance (else starts again), and falls asleep once
  // that lasted sleepTime.
  void noteStillness(const StepStats& stats);
  // The largest speed of a surface vertex now [m/s] (0 for no vertex).
  double fastestSurfaceSpeed() const;
  double stillFor_ = 0;  // simulated time the cloth has moved slower than sleepSpeed [s]
  bool asleep_ = false;
  // One solver step of sim.dt from simulated time `start`.
  std::optional<std::string> substep(const SimParams& sim, double start, StepStats& stats);
  // Where the cloth can get to in a sub-step of sim.dt: its bounds grown by the thickness and
  // twice the way its fastest point would go (gravity included), for slack, and the grab's target.
  Eigen::AlignedBox3d clothReach(const SimParams& sim) const;
  Scene scene_;
  std::shared_ptr<const ClothModel> cloth_;
  std::unique_ptr<Solver> solver_;
  SimParams sim_;
  const std::atomic<bool>* stop_ = nullptr;
  bool stopRequested() const { return clothlab::stopRequested(stop_); }
  std::vector<std::pair<int, Vec3>> pins_;
  // Pins travelling to their targets: from `from` at time `start`, over `duration`. A scene's
  // pin with a ramp travels from rest in smoothstep time over the ramp (`smooth`); a pin moved by
  // hand (setPin), or a scene's pin off its rest position without a ramp, at kPinHandSpeed.
  struct PinTravel {
    int vertex;
    Vec3 from;
    double start, duration;
    bool smooth;
  };
  std::vector<PinTravel> pinTravels_;
  // Where the pin on `vertex` with `target` holds its vertex at time t (on its way, or there).
  Vec3 pinHoldAt(int vertex, const Vec3& target, double t) const;
  // Why a pin on `vertex` with `target` is refused (a vertex out of range, a non-finite target).
  std::optional<std::string> pinRefusal(int vertex, const Vec3& target) const;
  std::optional<Grab> grab_;
  std::unique_ptr<GrabReach> reach_;  // brings the grab's target within the pins' reach
  int movedPin_ = -1;  // the vertex of the pin moved last (setPin), brought within the others' reach
  double movedPinSlack_ = 0;  // how far beyond that reach its vertex stood when it was set [m]
  std::vector<Obstacle> obstacles_;
  // Stepped before the cloth in each sub-step, against obstacles_; the cloth meets them.
  std::vector<JellyBody> jellies_;
  std::vector<JellySpec> jellySpecs_;  // as the scene (or the last setJellies) gave them
  // Per vertex, how far within the thickness of an obstacle (or, with self-collision, of another
  // part of the cloth) its contacts may leave it (StepContext::contactAllowance): where the
  // scene, a thicker cloth, self-collision turned on or an obstacle edit put it, shrinking at
  // kContactRecoverySpeed (sim/obstacles.h). Empty: nowhere.
  Eigen::VectorXd allowance_;
  void allowWhereTheClothStands();
  long allowanceSettings_ = 0;  // how often allowWhereTheClothStands ran (a Moment's check)
  // allowance_ as the contacts take it (StepContext::contactAllowance): null where it is empty.
  const Eigen::VectorXd* contactAllowance() const {
    return allowance_.size() > 0 ? &allowance_ : nullptr;
  }
  // How far the stitches' gaps have closed since the start [m]: each sub-step adds the sewing
  // speed times its length, so a stitch resting g apart may be max(0, g - sewn_) apart
  // (StepContext::stitchAllowance; a live edit of the speed changes the pace from then on).
  double sewn_ = 0;
  StepStats stats_;
  long stepCount_ = 0;
  double time_ = 0;
  bool diverged_ = false;
};

struct Simulation::Moment {
  std::shared_ptr<const ClothModel> cloth;
  std::string solver;
  SolverState state;
  std::vector<std::pair<int, Vec3>> pins;
  std::vector<PinTravel> pinTravels;
  int movedPin = -1;
  double movedPinSlack = 0;
  std::vector<JellyBody> jellies;
  std::vector<JellySpec> jellySpecs;
  Eigen::VectorXd allowance;
  long allowanceSettings = 0;
  double sewn = 0;
  StepStats stats;
  long steps = 0;
  double time = 0;
  int adaptiveSubsteps = 0, easySteps = 0;
  double stillFor = 0;
  bool asleep = false;
};

}  // namespace clothlab
