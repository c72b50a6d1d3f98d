#!/usr/bin/env python3
"""Checks on the viewer's JSON-lines log (--log), used by gui_test.sh.

  grab LOG            the grabbed point followed the cursor: over the drag the target moved, the
                      point moved most of the way with it and ended close to it
  pin LOG             after the first pin_add, every snapshot has that vertex at its target
                      (0.1 mm: the pin is set where the vertex stands, so it must not move it)
  pin_dragged_paused LOG
                      a pin dragged while paused shows at its new target in a snapshot of the
                      step the drag began in
  pin_undo_redo LOG   after the last pin drag, its undo shows the pins as before the drag and
                      its redo as dragged
  pins_cleared_undone LOG
                      after the last "clear pins": none, undone every pin back, redone none,
                      undone again every pin back
  density LOG         a param event changed the density and a later snapshot runs with it
  substeps LOG        the last param event set more than one sub-step and a later snapshot runs with it
  gravity LOG         the last param event set gravity (0, -50, 0), no error followed, and a later
                      snapshot runs with it
  wind LOG            the last param event set the wind to (5, 0, 0) in air of 1.2 kg/m^3, and a
                      later snapshot runs with both
  running LOG SCENE   snapshots of SCENE keep coming after the last error (the scene kept running)
  laid_flat LOG SCENE the scene SCENE restarted after the last lay_flat lies level (its y extent
                      within 1 micrometre) about the same centre, as large as before, turned
  moment_back LOG     after the last moment_back, a snapshot within 0.05 s after the kept
                      moment's time with the pins as before it, and later ones; the last snapshot before was 0.2 s past
  lay_flat_undone LOG SCENE
                      after the last lay_flat, the first undo is of it and restarts SCENE
                      standing as before (the same bounds), and its redo restarts it level again
  fps LOG MIN RATIO   the window draws independently of the simulation's steps (after the first
                      3 s): a median of at least MIN frames per second, or at least RATIO frames
                      per simulation step (a window that waited on each step draws at most one;
                      on a slow host the rate alone falls below MIN while the steps slow down
                      more); prints both
  paced LOG UNTIL CAP while the mouse moves (from 3 s to UNTIL s) the frames are not paced; the
                      last frame rate logged is paced as lagging, at most CAP, with the
                      simulation behind
  idle LOG CAP        the last frame rate logged is paced as idle (nothing runs), at most CAP
  mirror LOG N        compare mode: one drag reached all N panes: each pane's snapshots show a
                      grab with the same target, and each pane's grabbed point moved with it
  clicks LOG          on a scene whose steps take seconds, the grab's start and release each show
                      in a snapshot within 1 s, of the same step as the last one before the click
                      (the step in progress was given up for it, not waited out)
  jelly LOG           a jelly_added event, then snapshots with one more jelly than before, whose
                      centre falls, and one of them touching something (walls > 0) and squashed
  inside OUT OUTER INNER...   the viewer's stdout with --layout: the last rectangle printed for
                      each INNER lies within the last one printed for OUTER; prints them
"""
import json
import math
import statistics
import sys


def events(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def dist(a, b):
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))


def jelly(log):
    added = [i for i, e in enumerate(log) if e["event"] == "jelly_added"]
    if not added:
        print("no jelly_added event")
        return False
    before = [e for e in log[:added[-1]] if e["event"] == "snapshot"]
    count = len(before[-1].get("jellies", [])) if before else 0
    after = [e for e in log[added[-1]:] if e["event"] == "snapshot" and len(e.get("jellies", [])) == count + 1]
    if len(after) < 3:
        print(f"only {len(after)} snapshots with {count + 1} jellies after the drop")
        return False
    heights = [e["jellies"][-1]["center"][1] for e in after]
    touched = [e["jellies"][-1] for e in after if e["jellies"][-1]["walls"] > 0]
    squash = max((j["squash"] for j in touched), default=0)
    print(f"{len(after)} snapshots with the new jelly: its centre from {heights[0]:.3f} to {min(heights):.3f} m, "
          f"touching in {len(touched)}, squashed up to {squash * 1e3:.1f} mm")
    return min(heights) < heights[0] - 0.02 and len(touched) > 0 and squash > 0


def grab(log):
    grabbed = [e for e in log if e["event"] == "snapshot" and "grab" in e]
    if len(grabbed) < 5:
        print(f"only {len(grabbed)} snapshots with a grab")
        return False
    first, last = grabbed[0]["grab"], grabbed[-1]["grab"]
    target_move = [b - a for a, b in zip(first["target"], last["target"])]
    point_move = [b - a for a, b in zip(first["point"], last["point"])]
    moved_target = math.sqrt(sum(x * x for x in target_move))
    along = sum(p * t for p, t in zip(point_move, target_move)) / max(moved_target, 1e-12)
    gap = dist(last["point"], last["target"])
    print(f"target moved {moved_target:.3f} m, the point {along:.3f} m along it, final gap {gap:.3f} m "
          f"over {len(grabbed)} snapshots")
    # The cloth is pinned and inextensible, so the point may lag a target it cannot reach; it
    # must still have come most of the way.
    return moved_target > 0.05 and along > 0.6 * moved_target and gap < 0.4 * moved_target


def mirror(log, panes):
    panes = int(panes)
    ok = True
    targets = {}
    for pane in range(panes):
        grabbed = [e for e in log if e["event"] == "pane" and e["pane"] == pane and "grab" in e]
        if len(grabbed) < 5:
            print(f"pane {pane}: only {len(grabbed)} snapshots with a grab")
            ok = False
            continue
        first, last = grabbed[0]["grab"], grabbed[-1]["grab"]
        target_move = [b - a for a, b in zip(first["target"], last["target"])]
        point_move = [b - a for a, b in zip(first["point"], last["point"])]
        moved_target = math.sqrt(sum(x * x for x in target_move))
        along = sum(p * t for p, t in zip(point_move, target_move)) / max(moved_target, 1e-12)
        targets[pane] = last["target"]
        print(f"pane {pane} ({grabbed[0]['solver']}): triangle {first['triangle']}, target moved "
              f"{moved_target:.3f} m, the point {along:.3f} m along it, over {len(grabbed)} snapshots")
        ok = ok and moved_target > 0.05 and along > 0.3 * moved_target
    # Every pane pulls toward the same target (one camera, one mouse).
    if len(targets) == panes:
        spread = max(dist(targets[0], t) for t in targets.values())
        print(f"largest difference between the panes' final targets: {spread:.2e} m")
        ok = ok and spread < 1e-9
    return ok


def pin(log):
    added = [i for i, e in enumerate(log) if e["event"] == "pin_add"]
    if not added:
        return False
    vertex = log[added[0]]["vertex"]
    worst, count = 0.0, 0
    for e in log[added[0] + 1:]:
        if e["event"] == "pin_drag_start" and e["vertex"] == vertex:
            break  # from here its pin travels to where it is dragged (pin_dragged_paused)
        if e["event"] != "snapshot" or e.get("scene") != "hanging":
            continue
        for p in e.get("pins", []):
            if p["vertex"] == vertex:
                worst = max(worst, dist(p["position"], p["target"]))
                count += 1
    print(f"vertex {vertex}: {count} snapshots, largest distance from target {worst:.2e} m")
    return count >= 5 and worst < 1e-4


def pin_dragged_paused(log):
    """A pin dragged while paused: a snapshot of the step the drag began in shows the pin at the
    last target it was dragged to (the vertex travels there once the simulation runs)."""
    starts = [i for i, e in enumerate(log) if e["event"] == "pin_drag_start"]
    if not starts:
        print("no pin_drag_start")
        return False
    start = starts[-1]
    vertex = log[start]["vertex"]
    moves = [i for i, e in enumerate(log) if i > start and e["event"] == "pin_move" and e["vertex"] == vertex]
    before = [e for e in log[:start] if e["event"] == "snapshot"]
    held = [p["target"] for p in before[-1].get("pins", []) if p["vertex"] == vertex] if before else []
    if not moves or not held:
        print(f"{len(moves)} pin_move events; the last snapshot before the drag pins the vertex: {bool(held)}")
        return False
    target, step = log[moves[-1]]["target"], before[-1]["step"]
    shown = [p["target"] for e in log[moves[-1]:] if e["event"] == "snapshot" and e["step"] == step
             for p in e.get("pins", []) if p["vertex"] == vertex]
    moved = dist(target, held[0])
    print(f"vertex {vertex} dragged {moved:.3f} m at step {step}; snapshots of that step showing "
          f"the last target: {sum(dist(t, target) < 1e-9 for t in shown)}")
    return moved > 0.01 and any(dist(t, target) < 1e-9 for t in shown)


def pins_of(e):
    return {p["vertex"]: p["target"] for p in e.get("pins", [])}


def pins_between(log, start, end):
    """The pins of the last snapshot in log[start:end] (None when there is none)."""
    shown = [e for e in log[start:end] if e["event"] == "snapshot"]
    return pins_of(shown[-1]) if shown else None


def same_pins(a, b):
    return a is not None and b is not None and a.keys() == b.keys() and all(dist(a[v], b[v]) < 1e-9 for v in a)


def first(log, start, event, edit=None):
    return next((i for i in range(start, len(log)) if log[i]["event"] == event
                 and (edit is None or log[i].get("edit") == edit)), None)


def pin_undo_redo(log):
    """After the last pin drag: each undo of the move (at least two) shows the pins as before the
    drag, each redo (at least two) as they were dragged to, until the next edit."""
    drags = [i for i, e in enumerate(log) if e["event"] == "pin_drag_start"]
    if not drags:
        print("no pin_drag_start")
        return False
    marks = [i for i in range(drags[-1], len(log)) if log[i]["event"] in ("undo", "redo")
             and log[i].get("edit") == "move pin"]
    if len(marks) < 4 or log[marks[0]]["event"] != "undo":
        print(f"{len(marks)} undos and redos of the move after the drag")
        return False
    vertex = log[drags[-1]]["vertex"]
    before, dragged = pins_between(log, 0, drags[-1]), pins_between(log, drags[-1], marks[0])
    ok = before is not None and dragged is not None and dist(before[vertex], dragged[vertex]) > 0.01
    edits = ("undo", "redo", "pins_cleared", "pin_add", "pin_remove", "pin_drag_start")
    for at in marks:
        end = next((i for i in range(at + 1, len(log)) if log[i]["event"] in edits), len(log))
        shown, want = pins_between(log, at, end), before if log[at]["event"] == "undo" else dragged
        print(f"{log[at]['event']}: vertex {vertex} at {shown and shown.get(vertex)}, wanted {want and want.get(vertex)}")
        ok = ok and same_pins(want, shown)
    return ok


def pins_cleared_undone(log):
    """After the last pins_cleared: no pins, an undo of it shows every pin back, a redo none
    again, and the next undo every pin back."""
    cleared = [i for i, e in enumerate(log) if e["event"] == "pins_cleared"]
    marks = cleared[-1:] if cleared else []
    for event in ("undo", "redo", "undo"):
        at = first(log, marks[-1], event, "clear pins") if marks else None
        if at is None:
            break
        marks.append(at)
    if len(marks) < 4:
        print(f"found {len(marks)} of: pins_cleared, undo, redo, undo")
        return False
    before = pins_between(log, 0, marks[0])
    shown = [pins_between(log, a, b) for a, b in zip(marks, marks[1:] + [len(log)])]
    print(f"pins before: {before and sorted(before)}; then {[s and sorted(s) for s in shown]}")
    return (bool(before) and shown[0] == {} and same_pins(before, shown[1]) and shown[2] == {}
            and same_pins(before, shown[3]))


def simulation_value(log, key, changed):
    """The last param event set simulation.KEY to a value `changed` accepts, and a later snapshot
    runs with it."""
    changes = [i for i, e in enumerate(log) if e["event"] == "param" and "simulation" in e]
    if not changes:
        print("no param event")
        return False
    wanted = log[changes[-1]]["simulation"][key]
    seen = [e.get(key) for e in log[changes[-1]:] if e["event"] == "snapshot"]
    print(f"{key} set to {wanted}, snapshots after it run with {seen[-1] if seen else None}")
    return changed(wanted) and bool(seen) and seen[-1] is not None and abs(seen[-1] - wanted) < 1e-12


def bending_rest(log):
    """The panel's choice of the bending's rest shape: the last param event set it to "loaded",
    snapshots after it ran with it, and a later undo of it (named bending_rest) put "flat" back in
    the snapshots after the undo."""
    changes = [i for i, e in enumerate(log) if e["event"] == "param" and "simulation" in e
               and e["simulation"].get("bending_rest") == "loaded"]
    undos = [i for i, e in enumerate(log) if e["event"] == "undo" and e.get("edit") == "bending_rest"]
    if not changes or not undos or undos[-1] < changes[-1]:
        print(f"param events to loaded at {changes}, undos of it at {undos}")
        return False
    between = [e.get("bending_rest") for e in log[changes[-1]:undos[-1]] if e["event"] == "snapshot"]
    after = [e.get("bending_rest") for e in log[undos[-1]:] if e["event"] == "snapshot"]
    print(f"bending_rest set to loaded: snapshots then {between[-1:]}, after the undo {after[-1:]}")
    return bool(between) and between[-1] == "loaded" and bool(after) and after[-1] == "flat"


def density_undone(log):
    """The density dragged, then undone (the undo names it): snapshots after the undo run with the
    density from before the drag, and the next param event (the sub-steps dragged) keeps it, so
    the panel's copy shows what the undo put back (a stale copy sent the dragged density again)."""
    undos = [i for i, e in enumerate(log) if e["event"] == "undo" and e.get("edit") == "density"]
    if not undos:
        print("no undo of the density")
        return False
    at = undos[-1]
    dragged = [i for i in range(at) if log[i]["event"] == "param" and "simulation" in log[i]]
    before = [e.get("density") for e in log[:dragged[0]] if e["event"] == "snapshot"] if dragged else []
    if not before:
        print("no snapshot before the density was dragged")
        return False
    nxt = first(log, at, "param")
    if nxt is None or "simulation" not in log[nxt]:
        print("no parameter edit after the undo")
        return False
    undone = [e.get("density") for e in log[at:nxt] if e["event"] == "snapshot"]
    sent = log[nxt]["simulation"]["density"]
    after = [e.get("density") for e in log[nxt:] if e["event"] == "snapshot"]
    print(f"density {before[-1]} dragged to {log[dragged[-1]]['simulation']['density']}; after the undo "
          f"snapshots run with {undone[-1:]}; the next edit sends {sent}, snapshots then {after[-1:]}")
    return (bool(undone) and undone[-1] == before[-1] and sent == before[-1] and bool(after)
            and after[-1] == before[-1])


def density(log):
    return simulation_value(log, "density", lambda value: abs(value - 0.1) > 1e-6)


def substeps(log):
    return simulation_value(log, "substeps", lambda value: value > 1)


def gravity(log):
    changes = [i for i, e in enumerate(log) if e["event"] == "param" and "gravity" in e]
    if not changes:
        print("no param event")
        return False
    wanted = log[changes[-1]]["gravity"]
    later = log[changes[-1]:]
    errors = [e["message"] for e in later if e["event"] == "error"]
    seen = [e.get("gravity") for e in later if e["event"] == "snapshot"]
    print(f"gravity set to {wanted}, errors after it {errors}, snapshots after it run with {seen[-1] if seen else None}")
    return wanted == [0, -50, 0] and not errors and bool(seen) and seen[-1] == wanted


def wind(log):
    changes = [i for i, e in enumerate(log) if e["event"] == "param" and "wind" in e]
    if not changes:
        print("no param event")
        return False
    last = log[changes[-1]]
    wanted = (last["wind"], last["simulation"]["air_density"])
    seen = [(e.get("wind"), e.get("air_density")) for e in log[changes[-1]:] if e["event"] == "snapshot"]
    print(f"wind and air set to {wanted}, snapshots after it run with {seen[-1] if seen else None}")
    return wanted == ([5, 0, 0], 1.2) and bool(seen) and seen[-1] == wanted


def advancing(log, start, key, value, what):
    """From log[start] on, at least three snapshots whose `key` is `value`, their steps advancing."""
    after = [e["step"] for e in log[start:] if e["event"] == "snapshot" and e.get(key) == value]
    print(f"{len(after)} snapshots {what} (steps {after[:1]}..{after[-1:]})")
    return len(after) >= 3 and after[-1] > after[0]


def running(log, scene):
    errors = [i for i, e in enumerate(log) if e["event"] == "error"]
    if not errors:
        return False
    return advancing(log, errors[-1], "scene", scene, f"of {scene} after the error")


def laid_flat(log, scene):
    marks = [i for i, e in enumerate(log) if e["event"] == "lay_flat"]
    if not marks:
        print("no lay_flat event")
        return False
    before = [e for e in log[:marks[-1]] if e["event"] == "scene" and e["name"] == scene]
    after = [e for e in log[marks[-1]:] if e["event"] == "scene" and e["name"] == scene]
    if not before or not after:
        print(f"{len(before)} starts of {scene} before the last lay_flat, {len(after)} after")
        return False
    def extent(e): return [h - l for l, h in zip(e["cloth_lo"], e["cloth_hi"])]
    def centre(e): return [(l + h) / 2 for l, h in zip(e["cloth_lo"], e["cloth_hi"])]
    b, a = before[-1], after[0]
    print(f"{scene} before: extent {extent(b)}, centre {centre(b)}; after: extent {extent(a)}, centre {centre(a)}")
    same_centre = math.dist(centre(a), centre(b)) < 1e-5
    same_size = abs(max(extent(a)) - max(extent(b))) < 1e-5
    return extent(b)[1] > 0.1 and extent(a)[1] < 1e-6 and same_centre and same_size


def lay_flat_undone(log, scene):
    """After the last lay_flat: the first undo is of it, and restarts SCENE standing as it stood
    before (the same extent and centre), and a redo of it restarts SCENE level again."""
    marks = [i for i, e in enumerate(log) if e["event"] == "lay_flat"]
    if not marks:
        print("no lay_flat event")
        return False
    starts = [(i, e) for i, e in enumerate(log) if e["event"] == "scene" and e["name"] == scene]
    before = [e for i, e in starts if i < marks[-1]]
    laid = [e for i, e in starts if i > marks[-1]]
    undo = [i for i, e in enumerate(log) if i > marks[-1] and e["event"] == "undo" and e["edit"] == "lay flat"]
    redo = [i for i, e in enumerate(log) if undo and i > undo[0] and e["event"] == "redo" and e["edit"] == "lay flat"]
    if not before or not laid or not undo or not redo:
        print(f"found {len(before)} starts of {scene} before the lay flat, {len(laid)} after, "
              f"{len(undo)} undos and {len(redo)} redos of it")
        return False
    undos = [e["edit"] for e in log[marks[-1]:] if e["event"] == "undo"]
    if undos[0] != "lay flat":
        print(f"the undos after the lay flat: {undos}")
        return False
    undone = [e for i, e in starts if undo[0] < i < redo[0]]
    redone = [e for i, e in starts if i > redo[0]]
    if not undone or not redone:
        print(f"{len(undone)} starts of {scene} after the undo, {len(redone)} after the redo")
        return False
    def bounds(e): return e["cloth_lo"] + e["cloth_hi"]
    def same(a, b): return max(abs(x - y) for x, y in zip(bounds(a), bounds(b))) < 1e-6
    print(f"{scene} standing {bounds(before[-1])}, laid {bounds(laid[0])}, "
          f"undone {bounds(undone[0])}, redone {bounds(redone[0])}")
    return same(undone[0], before[-1]) and same(redone[0], laid[0]) and not same(laid[0], before[-1])


def moment_back(log):
    """After the last moment_back (B or the panel's button): a snapshot within 0.05 s after the
    kept moment's time (the simulation thread may step on before the window draws the moment
    itself: seen in a GUI run, the first drawn 10 steps of 1 ms on), with the pins it had just
    before, then later ones (the motion runs on from there); the last snapshot before it was well
    past the moment."""
    backs = [i for i, e in enumerate(log) if e["event"] == "moment_back"]
    if not backs:
        print("no moment_back event")
        return False
    i = backs[-1]
    t = log[i]["t"]
    kept = [e["t"] for e in log[:i] if e["event"] == "moment_kept"]
    before = [e for e in log[:i] if e["event"] == "snapshot"]
    after = [e for e in log[i + 1:] if e["event"] == "snapshot"]
    at = [k for k, e in enumerate(after) if t - 1e-9 <= e["t"] < t + 0.05]
    print(f"kept at t = {kept[-1] if kept else None}, back to t = {t}; the last snapshot before: "
          f"t = {before[-1]['t'] if before else None}; after: {[round(e['t'], 3) for e in after[:4]]}")
    if not kept or not before or not at:
        return False
    on = [e["t"] for e in after[at[0] + 1:]]
    same_pins = len(after[at[0]]["pins"]) == len(before[-1]["pins"])
    return before[-1]["t"] > t + 0.2 and any(x > t for x in on) and same_pins


def moment_passed(log):
    """A snapshot logged after the last kept moment is more than 0.3 s of simulated time past
    it (the gap moment_back asks for, with some to spare)."""
    kept = [i for i, e in enumerate(log) if e["event"] == "moment_kept"]
    if not kept:
        return False
    t = log[kept[-1]]["t"]
    return any(e["event"] == "snapshot" and e["t"] > t + 0.3 for e in log[kept[-1] + 1:])


def compare_kept(log, name):
    """The last error names `name`; from the open before it on, no compare_stop, and after it
    every pane keeps stepping."""
    errors = [i for i, e in enumerate(log) if e["event"] == "error" and name in e["message"]]
    opens = [i for i, e in enumerate(log) if e["event"] == "open" and errors and i < errors[-1]]
    if not errors or not opens:
        print(f"no error naming {name}, or no open before it")
        return False
    later = [i for i, e in enumerate(log) if e["event"] == "open" and i > errors[-1]]
    after = log[errors[-1]:later[0] if later else len(log)]  # up to the next open
    stopped = any(e["event"] == "compare_stop" for e in log[opens[-1]:errors[-1]] + after)
    steps = {}
    for e in after:
        if e["event"] == "pane":
            steps.setdefault(e["pane"], []).append(e["step"])
    print(f"after the error: compare_stop {stopped}; steps per pane " +
          ", ".join(f"{p}: {s[0]}..{s[-1]}" for p, s in sorted(steps.items())))
    return not stopped and len(steps) >= 2 and all(s[-1] > s[0] for s in steps.values())


def compared(log, starts, solvers):
    """`starts` comparisons were started (compare_start), the last with panes of `solvers`
    (comma-separated), each of which then stepped."""
    started = [i for i, e in enumerate(log) if e["event"] == "compare_start"]
    if not started:
        print("no comparison started")
        return False
    panes = [p["solver"] for p in log[started[-1]]["panes"]]
    stepping = {e["pane"] for e in log[started[-1]:] if e["event"] == "pane" and e["step"] > 0}
    print(f"comparisons started: {len(started)}; the last: {panes}, panes stepping: {sorted(stepping)}")
    return (len(started) == starts and panes == solvers.split(",") and
            stepping == set(range(len(panes))))


def fps(log, minimum, ratio):
    rates = [e for e in log if e["event"] == "fps" and e["wall"] > 3.0]
    steps = [e for e in log if e["event"] == "snapshot"]
    ms = [e["ms_total"] for e in steps if e["step"] > 0]
    if len(rates) < 2:
        return False
    values = [e["fps"] for e in rates]
    # Frames drawn between the first and the last rate logged, against the steps taken meanwhile.
    frames = sum(b["fps"] * (b["wall"] - a["wall"]) for a, b in zip(rates, rates[1:]))
    stepped = rates[-1]["step"] - rates[0]["step"]
    per_step = frames / stepped if stepped > 0 else float("inf")
    print(f"frames per second: median {statistics.median(values):.1f}, min {min(values):.1f} "
          f"over {len(values)} s; {frames:.0f} frames over {stepped} steps ({per_step:.2f} per step); "
          f"simulation reached step {steps[-1]['step'] if steps else 0}, "
          f"median {statistics.median(ms) if ms else 0:.1f} ms per step")
    return statistics.median(values) >= minimum or per_step >= ratio


def paced(log, until, cap):
    """The frame pace (app/viewer/frame_pace.h) in a run where the mouse moves until `until` s
    and nothing is touched after: unpaced while it moves, paced at the end."""
    rates = [e for e in log if e["event"] == "fps"]
    moving = [e for e in rates if 3.0 < e["wall"] < until]
    print("frame rates (wall s: fps, pace, real-time factor): " +
          ", ".join(f"{e['wall']:.1f}: {e['fps']:.0f} {e['pace']} {e['rtf']:.2f}" for e in rates))
    if not moving or not rates:
        return False
    last = rates[-1]
    return (all(e["pace"] == "full" for e in moving) and last["pace"] == "lagging"
            and last["fps"] <= cap + 1 and last["rtf"] < 0.9)


def idle(log, cap):
    """The last frame rate logged is paced as idle, at most `cap` frames per second."""
    rates = [e for e in log if e["event"] == "fps"]
    print("frame rates (wall s: fps, pace): " +
          ", ".join(f"{e['wall']:.1f}: {e['fps']:.0f} {e['pace']}" for e in rates[-4:]))
    return bool(rates) and rates[-1]["pace"] == "idle" and rates[-1]["fps"] <= cap + 1


def sewing(log):
    """The snapshots' widest stitch: from apart (above 0.25 m) to at least 5 cm closer, never
    wider than at first (a seam may open again within its allowance, as the cloth bounces)."""
    gaps = [e["max_stitch_gap"] for e in log if e["event"] == "snapshot" and "max_stitch_gap" in e]
    print(f"{len(gaps)} snapshots, widest stitch {gaps[:1]} .. {gaps[-1:]} m, at most {max(gaps, default=0)}")
    return len(gaps) >= 3 and gaps[0] > 0.25 and gaps[-1] < gaps[0] - 0.05 and max(gaps) <= gaps[0] + 0.01


def clicks(log):
    ok = True
    for event, grabbed in (("grab_start", True), ("grab_release", False)):
        at = next((i for i, e in enumerate(log) if e["event"] == event), None)
        if at is None:
            print(f"no {event}")
            return False
        before = [e for e in log[:at] if e["event"] == "snapshot"]
        shown = next((e for e in log[at:] if e["event"] == "snapshot" and ("grab" in e) == grabbed), None)
        if not before or shown is None:
            print(f"{event}: no snapshot before it or none showing it")
            return False
        delay = shown["wall"] - log[at]["wall"]
        slow = before[-1]["ms_total"]
        print(f"{event}: shown after {delay:.2f} s at step {shown['step']} (the last step before it: "
              f"{before[-1]['step']}, {slow:.0f} ms)")
        ok = ok and slow > 1000 and delay < 1.0 and shown["step"] == before[-1]["step"]
    return ok


def inside(out_path, outer, inner_names):
    with open(out_path) as f:
        lines = f.read().splitlines()

    def last(name):
        rects = [list(map(int, l.split()[2:6])) for l in lines if l.startswith("LAYOUT " + name + " ")]
        return rects[-1] if rects else None

    box = last(outer)
    ok = box is not None
    for name in inner_names:
        rect = last(name)
        print(outer, box, name, rect)
        ok = ok and rect is not None and box[0] <= rect[0] and box[1] <= rect[1] and rect[2] <= box[2] and rect[3] <= box[3]
    return ok


def solver_runs(log, solver):
    """The solver was picked in the panel and the scene's snapshots go on advancing under it."""
    picked = [i for i, e in enumerate(log) if e["event"] == "solver" and e.get("id") == solver]
    if not picked:
        print(f"no solver event for {solver}")
        return False
    return advancing(log, picked[-1], "solver", solver, f"under {solver} after it was picked")


if __name__ == "__main__":
    what, path = sys.argv[1], sys.argv[2]
    if what == "inside":
        sys.exit(0 if inside(path, sys.argv[3], sys.argv[4:]) else 1)
    log = events(path)
    if what == "running":
        ok = running(log, sys.argv[3])
    elif what == "fps":
        ok = fps(log, float(sys.argv[3]), float(sys.argv[4]))
    elif what == "idle":
        ok = idle(log, float(sys.argv[3]))
    elif what == "paced":
        ok = paced(log, float(sys.argv[3]), float(sys.argv[4]))
    elif what == "laid_flat":
        ok = laid_flat(log, sys.argv[3])
    elif what == "moment_back":
        ok = moment_back(log)
    elif what == "moment_passed":
        ok = moment_passed(log)
    elif what == "lay_flat_undone":
        ok = lay_flat_undone(log, sys.argv[3])
    elif what == "compare_kept":
        ok = compare_kept(log, sys.argv[3])
    elif what == "compared":
        ok = compared(log, int(sys.argv[3]), sys.argv[4])
    elif what == "solver_runs":
        ok = solver_runs(log, sys.argv[3])
    elif what == "mirror":
        ok = mirror(log, sys.argv[3])
    else:
        ok = {"grab": grab, "clicks": clicks, "pin": pin, "pin_dragged_paused": pin_dragged_paused, "pin_undo_redo": pin_undo_redo, "pins_cleared_undone": pins_cleared_undone, "density": density, "density_undone": density_undone, "bending_rest": bending_rest, "substeps": substeps, "gravity": gravity, "wind": wind, "jelly": jelly, "sewing": sewing}[what](log)
    sys.exit(0 if ok else 1)
