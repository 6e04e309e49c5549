#!/usr/bin/env python3
"""seeds_reference.py: the update rules of the seed programs boidsim
replaces, written again here in float64 numpy straight from their
documents' formulas (docs/SEEDS.md names each), sharing no code with src/
or scripts/. Each case runs a scenarios/systems/ scenario with boidsim,
writing every step to CSV, then steps the program's rule from boidsim's
frame t and compares it with boidsim's frame t+1, for every step: positions
to within TOL x the box side, velocities to within TOL x speed.max (for
seed 003, which has no speed limit, TOL x the fastest boid's speed).

Usage: seeds_reference.py BOIDSIM SRCDIR WORKDIR; prints TAP.
"""
import csv
import json
import math
import os
import subprocess
import sys

import numpy as np

TOL = 1e-5
STEPS = 120

BOIDSIM, SRCDIR, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
SYS = os.path.join(SRCDIR, "scenarios", "systems")


RUNS = {}


def run(name, *overrides):
    """Runs a systems scenario (with --set overrides) for STEPS steps, every
    step to CSV; returns its effective scenario and frames [(P, V)] in id
    order. Each run once."""
    key = (name,) + overrides
    if key not in RUNS:
        RUNS[key] = run_once(name, *overrides)
    return RUNS[key]


def run_csv(name, tag, overrides):
    """Runs a systems scenario for STEPS steps, every step to CSV: its
    effective scenario, the CSV header, and the rows by step."""
    sc, head, frames = run_csv_by_step(name, tag, overrides)
    return sc, head, [frames[k] for k in sorted(frames)]


def run_csv_by_step(name, tag, overrides):
    """run_csv's, the rows in a dict by step (a CSV has no line for a frame
    of no agents, so steps may be missing)."""
    path = os.path.join(SYS, name + ".json")
    out = os.path.join(WORK, name + tag + ".csv")
    sets = []
    for o in overrides:
        sets += ["--set", o]
    args = [BOIDSIM, "-q", path, "--steps", str(STEPS), "--every", "1", "-o", out] + sets
    subprocess.run(args, check=True)
    # the effective scenario of that run, every override included
    sc = json.loads(subprocess.run([BOIDSIM, "-q", path, "--steps", str(STEPS)] + sets +
                                   ["--check"], check=True,
                                   capture_output=True, text=True).stdout)
    frames = {}
    with open(out, newline="") as f:
        rd = csv.reader(f)
        head = next(rd)
        for row in rd:
            frames.setdefault(int(row[0]), []).append(row)
    return sc, head, frames


def run_once(name, *overrides):
    sc, _, rows = run_csv(name, "", overrides)
    dims = sc["dimensions"]
    res = []
    for fr in rows:
        a = np.array([[float(x) for x in r[2:2 + 2 * dims]] for r in fr], dtype=np.float64)
        res.append((a[:, :dims], a[:, dims:]))
    return sc, res


def unit(v, tol=0.0):
    """Rows of v scaled to length 1; rows not longer than tol stay zero."""
    n = np.linalg.norm(v, axis=1, keepdims=True)
    ok = n > tol
    return np.where(ok, v / np.where(ok, n, 1.0), 0.0)


def pairs(P, period=None):
    """D[i, j] = p_j - p_i (the nearest image on a torus of the given
    sides), the distances, and the mask of i != j."""
    D = P[None, :, :] - P[:, None, :]
    if period is not None:
        D = D - period * np.round(D / period)
    dist = np.sqrt((D * D).sum(axis=2))
    other = ~np.eye(len(P), dtype=bool)
    return D, dist, other


def mean_over(m, X):
    """Per boid i: the mean of X[i, j] (or X[j]) over m[i, j]; 0 where none."""
    n = m.sum(axis=1, keepdims=True)
    if X.ndim == 2:
        s = m.astype(float) @ X
    else:
        s = (m[:, :, None] * X).sum(axis=1)
    return np.where(n > 0, s / np.maximum(n, 1), 0.0), n[:, 0]


def blend(sc, t, P, V):
    """Seed 000, BoidManager::Tick: unit directions blended, constant speed."""
    r, w = sc["radii"], sc["weights"]
    dt, vmax = sc["dt"], sc["speed"]["max"]
    D, dist, other = pairs(P)
    s, _ = mean_over(other & (dist <= r["separation"]), -D)
    a, _ = mean_over(other & (dist <= r["alignment"]), V)
    c, _ = mean_over(other & (dist <= r["cohesion"]), D)
    ret = sc["return"]
    off = np.array(ret["center"])[None, :] - P
    far = np.linalg.norm(off, axis=1) > ret["radius"]
    rd = np.where(far[:, None], unit(off, 1e-6), V)
    f = (w["separation"] * unit(s, 1e-6) + w["alignment"] * unit(a, 1e-6) +
         w["cohesion"] * unit(c, 1e-6) + ret["weight"] * rd)
    v = V + unit(f, 1e-6) * dt
    v = unit(v) * vmax
    return P + v * dt, v, np.zeros(len(P), dtype=bool)


def godot(sc, t, P, V):
    """Seed 003, its pseudocode: velocity += (mean position - p) 0.005 +
    (mean velocity - v) 0.05 + sum(p - other) 0.05, within 50 (20 for
    separation); position += velocity, with no speed limit (the pseudocode
    has none); the 512 x 384 window a torus."""
    r, w = sc["radii"], sc["weights"]
    dt = sc["dt"]
    lo, hi = np.array(sc["bounds"]["min"]), np.array(sc["bounds"]["max"])
    D, dist, other = pairs(P, hi - lo)
    mc, nc = mean_over(other & (dist <= r["cohesion"]), D)
    mv, na = mean_over(other & (dist <= r["alignment"]), V)
    sep = ((other & (dist <= r["separation"]))[:, :, None] * -D).sum(axis=1)
    a = (w["cohesion"] * mc + w["alignment"] * np.where(na[:, None] > 0, mv - V, 0.0) +
         w["separation"] * sep)
    v = V + a * dt
    p = lo + np.mod(P + v * dt - lo, hi - lo)
    return p, v, np.zeros(len(P), dtype=bool)


def slerp_vec(u, w, t):
    """Rows of unit u turned toward unit w by the fraction t of the angle."""
    c = np.clip((u * w).sum(axis=1), -1.0, 1.0)
    th = np.arccos(c)
    s = np.sin(th)
    ok = s > 1e-9
    a = np.where(ok, np.sin((1 - t) * th) / np.where(ok, s, 1), 1 - t)
    b = np.where(ok, np.sin(t * th) / np.where(ok, s, 1), t)
    return unit(a[:, None] * u + b[:, None] * w)


def slerp(sc, t, P, V):
    """Seed 001, BoidController.Update: steer to the group's centre plus
    the target plus avoidance by a slerp, the group's mean speed; turn back
    beyond 20 with a new random speed (only its range is known here)."""
    r = sc["radii"]
    dt = sc["dt"]
    frac = min(1.0, sc["turn_rate"] * dt)
    target = np.array(sc["target"]["position"])
    D, dist, other = pairs(P)
    near = other & (dist <= r["cohesion"])
    close = near & (dist < r["separation"])
    n = near.sum(axis=1)
    u = unit(V)
    sp = np.linalg.norm(V, axis=1)
    centre, _ = mean_over(near, P)
    avoid = (close[:, :, None] * -D).sum(axis=1)
    d = centre + (target[None, :] - P) + avoid - P
    grp = n > 0
    gs, _ = mean_over(near, sp[:, None])
    sp = np.where(grp, gs[:, 0], sp)
    turn = grp & (np.linalg.norm(d, axis=1) > 0)
    u = np.where(turn[:, None], slerp_vec(u, unit(d), frac), u)
    ret = sc["return"]
    off = np.array(ret["center"])[None, :] - P
    back = np.linalg.norm(off, axis=1) >= ret["radius"]
    u = np.where(back[:, None], slerp_vec(u, unit(off), frac), u)
    v = u * sp[:, None]
    return P + v * dt, v, back


def inertia(sc, t, P, V, factor=1.0):
    """Seed 002, CSMain: separation (p_i - p_j)(1/d - 1/R), alignment of
    directions and cohesion with the flock position as one more neighbour,
    the direction lerped toward its old unit heading by exp(-rotation dt)."""
    R = sc["radii"]["alignment"]
    dt, vmax = sc["dt"], sc["speed"]["max"]
    flock = np.array(sc["target"]["position"])
    D, dist, other = pairs(P)
    dd = np.maximum(dist, 1e-6)
    m = other & (dd < R)
    cnt = 1 + m.sum(axis=1)
    dirs = V / vmax
    sep = (m[:, :, None] * -D * (1.0 / dd - 1.0 / R)[:, :, None]).sum(axis=1)
    ali = (m.astype(float) @ dirs) / cnt[:, None]
    coh = (flock[None, :] + m.astype(float) @ P) / cnt[:, None] - P
    direction = ali + sep + unit(coh)
    prop = math.exp(-sc["turn_rate"] * dt)
    nd = direction + prop * (unit(dirs) - direction)
    return P + nd * vmax * factor * dt, nd * vmax, np.zeros(len(P), dtype=bool)


def waypoint(at, step):
    """An attractor's place at a step: linear between waypoints."""
    if "position" in at:
        return np.array(at["position"], dtype=float)
    wp = at["waypoints"]
    k = 0
    while k + 1 < len(wp) and wp[k + 1]["step"] <= step:
        k += 1
    p = np.array(wp[k]["position"], dtype=float)
    if k + 1 < len(wp) and step > wp[k]["step"]:
        f = (step - wp[k]["step"]) / (wp[k + 1]["step"] - wp[k]["step"])
        p = p + f * (np.array(wp[k + 1]["position"]) - p)
    return p


def accelerate(sc, t, P, V):
    """Seed 004, sections 5.1 and 5.3: accelerations added straight, Euler,
    the speed limited; the mouse tools as attractors; reflecting walls."""
    r, w = sc["radii"], sc["weights"]
    dt, vmax = sc["dt"], sc["speed"]["max"]
    D, dist, other = pairs(P)
    a = np.zeros_like(P)
    mv, n_a = mean_over(other & (dist <= r["alignment"]), V)
    a += w["alignment"] * np.where(n_a[:, None] > 0, mv - V, 0.0)
    mp, n_c = mean_over(other & (dist <= r["cohesion"]), P)
    a += w["cohesion"] * np.where(n_c[:, None] > 0, mp - P, 0.0)
    ms = other & (dist <= r["separation"]) & (dist > 0)
    sv, _ = mean_over(ms, -D * (r["separation"] / np.where(dist > 0, dist, 1.0))[:, :, None])
    a += w["separation"] * sv
    for at in sc.get("attractors", []):
        off = waypoint(at, t)[None, :] - P
        dn = np.linalg.norm(off, axis=1)
        inr = (dn <= at["range"]) & (dn > 0)
        a += np.where(inr[:, None], at["strength"] * unit(off), 0.0)
    v = V + a * dt
    s = np.linalg.norm(v, axis=1)
    v = np.where((s > vmax)[:, None], v * (vmax / np.where(s > 0, s, 1))[:, None], v)
    p = P + v * dt
    lo, hi = np.array(sc["bounds"]["min"]), np.array(sc["bounds"]["max"])
    under, over = p < lo, p > hi
    p = np.where(under, 2 * lo - p, np.where(over, 2 * hi - p, p))
    v = np.where(under | over, -v, v)
    return p, v, np.zeros(len(P), dtype=bool)


def compare(label, sc, frames, rule, check_speed=None, vmax=None):
    """Steps rule from every frame and compares with the next; returns a
    failure message or None. Velocities are compared relative to vmax
    (default speed.max)."""
    side = max(b - a for a, b in zip(sc["bounds"]["min"], sc["bounds"]["max"]))
    if vmax is None:
        vmax = sc["speed"]["max"]
    worst_p = worst_v = 0.0
    for t in range(len(frames) - 1):
        P, V = frames[t]
        P1, V1 = frames[t + 1]
        p, v, partial = rule(sc, t, P, V)
        full = ~partial
        ep = np.abs(p - P1)[full].max(initial=0.0) / side
        ev = np.abs(v - V1)[full].max(initial=0.0) / vmax
        if partial.any():
            # only the heading is known, the speed within its range, and the
            # move made with the new velocity
            eh = np.abs(unit(v[partial]) - unit(V1[partial])).max()
            ev = max(ev, eh)
            ep = max(ep, np.abs(P + V1 * sc["dt"] - P1)[partial].max() / side)
            if check_speed is not None and not check_speed(np.linalg.norm(V1[partial], axis=1)):
                return f"step {t + 1}: a turning boid's speed is outside its range"
        worst_p, worst_v = max(worst_p, ep), max(worst_v, ev)
        if ep > TOL or ev > TOL:
            i = int(np.argmax(np.abs(p - P1).max(axis=1) / side + np.abs(v - V1).max(axis=1) / vmax))
            return (f"step {t + 1}: boid {i}: position error {ep:.3g} of the box side, "
                    f"velocity {ev:.3g} of the speed scale (reference p {p[i]}, v {v[i]}; "
                    f"boidsim p {P1[i]}, v {V1[i]})")
    print(f"# {label}: {len(frames) - 1} steps, worst position error {worst_p:.2g} "
          f"of the box side, velocity {worst_v:.2g} of the speed scale")
    return None


CASES = []


def case(desc):
    def deco(fn):
        CASES.append((desc, fn))
        return fn
    return deco


@case("seed 000 (blend): desktop-2d-return-to-centre, every step, against the reference")
def c000():
    sc, fr = run("desktop-2d-return-to-centre")
    return compare("000", sc, fr, blend)


@case("seed 000 (blend): every boid flies at exactly speed.max after step 0")
def c000_speed():
    sc, fr = run("desktop-2d-return-to-centre")
    sp = np.concatenate([np.linalg.norm(V, axis=1) for _, V in fr[1:]])
    err = np.abs(sp / sc["speed"]["max"] - 1).max()
    return None if err < 1e-6 else f"a speed differs from speed.max by {err:.3g} of it"


@case("seed 000: the count slider: disabled boids leave, the last disabled come back first, with the state they had")
def c000_slider():
    pop = ('population=[{"step": 30, "disable": 40}, {"step": 50, "disable": 20}, '
           '{"step": 70, "enable": 25}, {"step": 90, "enable": 35}]')
    sc, head, rows = run_csv("desktop-2d-return-to-centre", "-slider", [pop, "count=200"])
    _, phead, plain = run_csv("desktop-2d-return-to-centre", "-noslider", ["count=200"])
    if "id" not in head:
        return "no id column in a run with a population schedule"
    def byid(fr, h=head):
        c = h.index("id")
        return {int(r[c]): r[c + 1:] for r in fr}
    count = {t: len(fr) for t, fr in enumerate(rows)}
    want = {29: 200, 30: 160, 49: 160, 50: 140, 70: 165, 90: 200}
    for t, n in want.items():
        if count[t] != n:
            return f"step {t}: {count[t]} boids, expected {n}"
    # the last 40 ids leave at 30 (199 .. 160), then 159 .. 140 at 50; the
    # 25 enabled at 70 are the last disabled: 140 .. 164; the rest at 90
    if set(byid(rows[30])) != set(range(160)) or set(byid(rows[50])) != set(range(140)):
        return "the disabled boids are not the highest ids"
    if set(byid(rows[70])) != set(range(165)):
        return f"enabled at 70: ids {sorted(set(byid(rows[70])) - set(range(140)))[:8]}..., expected 140 .. 164"
    # a boid comes back as it was when it left: the state at its disabling
    # step, which a run without that disabling has in its frame of that step
    # (both runs are the same up to it): for those that left at 50, the run
    # with the first disabling alone
    _, h1, first = run_csv("desktop-2d-return-to-centre", "-slider1",
                           ['population=[{"step": 30, "disable": 40}]', "count=200"])
    for t_off, t_on, ids, ref, rh in ((50, 70, range(140, 160), first, h1),
                                      (30, 70, range(160, 165), plain, phead),
                                      (30, 90, range(165, 200), plain, phead)):
        a, b = byid(ref[t_off], rh), byid(rows[t_on])
        for i in ids:
            if a[i] != b[i]:
                return f"boid {i} came back at step {t_on} with {b[i]}, left at {t_off} with {a[i]}"
    # and they fly on: the next frame differs
    if byid(rows[91])[199] == byid(rows[90])[199]:
        return "an enabled boid does not move"
    return None


@case("seed 003 (simple): godot-pseudocode-512x384, every step, against the reference")
def c003():
    sc, fr = run("godot-pseudocode-512x384")
    # no speed limit: velocities relative to the fastest boid's speed
    vmax = max(np.linalg.norm(V, axis=1).max() for _, V in fr)
    return compare("003", sc, fr, godot, vmax=vmax)


@case("seed 001 (slerp): unity-3d-wandering-target (target fixed), every step, against the reference")
def c001():
    sc, fr = run("unity-3d-wandering-target", "target.wander.interval=1e9")
    lo, hi = sc["speed"]["min"], sc["speed"]["max"]
    return compare("001", sc, fr, slerp,
                   lambda s: bool(((s >= lo * (1 - 1e-6)) & (s <= hi * (1 + 1e-6))).all()))


@case("seed 001 (slerp): all boids start heading +z at speeds uniform in [speed.min, speed.max]")
def c001_start():
    sc, fr = run("unity-3d-wandering-target")
    V = fr[0][1]
    u = unit(V)
    sp = np.linalg.norm(V, axis=1)
    if np.abs(u - np.array([0, 0, 1])).max() > 1e-6:
        return "a start heading is not +z"
    lo, hi = sc["speed"]["min"], sc["speed"]["max"]
    if sp.min() < lo or sp.max() > hi or sp.std() < 0.2 * (hi - lo):
        return f"start speeds {sp.min()}..{sp.max()} (s.d. {sp.std()}) are not uniform in [{lo}, {hi}]"
    return None


@case("seed 002 (inertia): compute-shader-3d-large (no speed noise), every step, against the reference")
def c002():
    sc, fr = run("compute-shader-3d-large", "count=400", "speed.variation=0")
    return compare("002", sc, fr, inertia)


@case("seed 002 (inertia): with its speed noise, the direction exactly and the speed factor in [0, 2]")
def c002_noise():
    sc, fr = run("compute-shader-3d-large", "count=400")
    dt, vmax = sc["dt"], sc["speed"]["max"]
    factors = []
    for t in range(len(fr) - 1):
        P, V = fr[t]
        P1, V1 = fr[t + 1]
        p, v, _ = inertia(sc, t, P, V)
        ev = np.abs(v - V1).max() / vmax
        if ev > TOL:
            return f"step {t + 1}: velocity error {ev:.3g} of speed.max"
        move = P1 - P
        f = (move * V1).sum(axis=1) / ((V1 * V1).sum(axis=1) * dt)
        off = np.abs(move - f[:, None] * V1 * dt).max() / 8.0
        if off > TOL:
            return f"step {t + 1}: a move is not along the new velocity ({off:.3g})"
        factors.append(f)
    f = np.concatenate(factors)
    if f.min() < -1e-6 or f.max() > 2 + 1e-6 or f.std() < 0.05:
        return f"speed factors {f.min()}..{f.max()} (s.d. {f.std()}) not a fluctuation in [0, 2]"
    return None


@case("seed 002 (inertia): starts in the ball, headings spread around +z")
def c002_start():
    sc, fr = run("compute-shader-3d-large", "count=2000")
    P, V = fr[0]
    st = sc["start"]
    rr = np.linalg.norm(P - np.array(st["center"]), axis=1)
    if rr.max() > st["radius"] * (1 + 1e-6):
        return f"a boid starts {rr.max()} from the centre, beyond the radius {st['radius']}"
    # uniform in the ball: the fraction within half the radius is 1/8
    inner = (rr <= st["radius"] / 2).mean()
    if abs(inner - 0.125) > 0.03:
        return f"{inner:.3f} of the boids within half the radius, not about 1/8"
    cz = unit(V)[:, 2]
    if not (cz.min() > -1 and cz.mean() > 0.5 and cz.mean() < 0.99):
        return f"headings' mean z {cz.mean():.3f}: not spread around +z"
    return None


@case("seed 004 (accelerate): javafx-2d-attractor-then-repeller (no obstacles), every step, against the reference")
def c004():
    sc, fr = run("javafx-2d-attractor-then-repeller", "count=1000", "obstacles=[]")
    return compare("004", sc, fr, accelerate)


def hues(name, *overrides):
    """A systems scenario's positions and hue column, every step for STEPS
    steps: its effective scenario, then frames [(P, h)] in id order, h in
    turns."""
    sc, head, rows = run_csv(name, "-hue", overrides)
    dims, col = sc["dimensions"], head.index("hue")
    res = []
    for fr in rows:
        a = np.array([[float(x) for x in r[2:2 + dims]] + [float(r[col])] for r in fr])
        res.append((a[:, :dims], a[:, dims]))
    return sc, res


def colour_vector(sc, P, u, r):
    """Seed 004, section 5 (the colour vector): the hue as a vector moved by
    the motion's cohesion and alignment, without separation, its velocity
    kept on the colour circle: w = r perp(u); cohesion projected on
    perp(u), alignment of the velocities carried along the circle (their
    rates): r' = r + dt (C (m - u).perp(u) + A (mean r_j - r)),
    u' = normalize(u + dt r' perp(u)); C = hue.weight, A = hue.alignment,
    neighbours within hue.radius. Returns u', r'."""
    h, dt = sc["hue"], sc["dt"]
    _, dist, other = pairs(P)
    nb = other & (dist <= h["radius"])
    perp = np.stack([-u[:, 1], u[:, 0]], axis=1)
    m, n = mean_over(nb, u)
    mr, _ = mean_over(nb, r[:, None])
    acc = (h["weight"] * ((m - u) * perp).sum(axis=1)
           + h["alignment"] * (mr[:, 0] - r))
    r1 = r + dt * np.where(n > 0, acc, 0.0)
    return unit(u + dt * r1[:, None] * perp), r1


@case("seed 004: the colour vector (cohesion and alignment of a colour velocity), every step, against the reference")
def c004_colour():
    sc, fr = hues("javafx-2d-attractor-then-repeller", "count=1000", "obstacles=[]")
    dt = sc["dt"]
    turn = lambda h: np.stack([np.cos(2 * np.pi * h), np.sin(2 * np.pi * h)], axis=1)
    worst = 0.0
    moved = []
    for t in range(1, len(fr) - 1):
        (_, h0), (P, h), (_, h1) = fr[t - 1], fr[t], fr[t + 1]
        u0, u = turn(h0), turn(h)
        # the rate that turned u0 into u: u = normalize(u0 + dt r perp(u0))
        r = np.tan(np.arctan2(u0[:, 0] * u[:, 1] - u0[:, 1] * u[:, 0],
                              (u0 * u).sum(axis=1))) / dt
        u1, _ = colour_vector(sc, P, u, r)
        err = np.abs(np.angle(np.exp(2j * np.pi * h1) / (u1[:, 0] + 1j * u1[:, 1]))) / (2 * np.pi)
        worst = max(worst, err.max())
        moved.append(np.median(np.abs(np.angle(np.exp(2j * np.pi * (h1 - h))))) / (2 * np.pi))
        if err.max() > TOL:
            i = int(np.argmax(err))
            return f"step {t + 1}: boid {i}: hue {h1[i]} where the reference has {np.arctan2(u1[i, 1], u1[i, 0]) / (2 * np.pi) % 1}"
    print(f"# 004 colour: {len(fr) - 2} steps, worst hue error {worst:.2g} turns, "
          f"median hue change per step {np.median(moved):.2g} turns")
    return None


@case("seed 004: colours agree within groups and keep changing (the report's aim), where one rate would freeze them")
def c004_colours_move():
    out = {}
    for label, hue in (("colour vector", None), ("one rate", '{"weight": 0.1}')):
        path = os.path.join(SYS, "javafx-2d-attractor-then-repeller.json")
        f = os.path.join(WORK, "colours-%d.csv" % len(out))
        args = [BOIDSIM, "-q", path, "--set", "count=1000", "--set", "obstacles=[]",
                "--steps", "1000", "--every", "1", "-o", f]
        if hue:
            args += ["--set", "hue=" + hue]
        subprocess.run(args, check=True)
        rows = {}
        with open(f, newline="") as fp:
            rd = csv.reader(fp)
            col = next(rd).index("hue")
            for row in rd:
                if int(row[0]) in (999, 1000):
                    rows.setdefault(int(row[0]), []).append(
                        [float(row[2]), float(row[3]), float(row[col])])
        a, b = np.array(rows[999]), np.array(rows[1000])
        _, dist, other = pairs(b[:, :2])
        near = other & (dist <= 5.0)
        dh = np.abs(np.angle(np.exp(2j * np.pi * (b[None, :, 2] - b[:, None, 2])))) / (2 * np.pi)
        change = np.median(np.abs(np.angle(np.exp(2j * np.pi * (b[:, 2] - a[:, 2]))))) / (2 * np.pi)
        out[label] = (dh[near].mean(), change)
        print(f"# {label}: mean hue difference of neighbours {out[label][0]:.3g} turns, "
              f"median hue change per step at step 1000 {out[label][1]:.3g} turns")
    agree, change = out["colour vector"]
    if agree > 0.05:
        return f"neighbours' hues differ by {agree:.3g} turns on average"
    if change < 1e-3:
        return f"colours have stopped changing ({change:.3g} turns per step)"
    if out["one rate"][1] > 1e-4:
        return "the one-rate control does not freeze: the test cannot tell the rules apart"
    return None


@case("seed 004 (accelerate): no boid starts inside an obstacle")
def c004_start():
    sc, fr = run("javafx-2d-attractor-then-repeller")
    bad = 0
    for ob in sc["obstacles"]:
        if ob["type"] == "sphere":
            r = np.linalg.norm(fr[0][0] - np.array(ob["center"]), axis=1)
            bad += int((r < ob["radius"]).sum())
    return None if bad == 0 else f"{bad} boids start inside an obstacle"


@case("seed 004: obstacles drawn and erased at given steps (schedule): none holds a boid while it exists")
def c004_draw():
    big = {"type": "sphere", "center": [40, 50], "radius": 6}
    box = {"type": "box", "min": [50, 40], "max": [70, 60]}
    sched = [{"step": 30, "set": {"obstacles": [big, box]}},
             {"step": 70, "set": {"obstacles": [], "attractors[0].strength": 0.2}}]
    sc, fr = run("javafx-2d-attractor-then-repeller", "count=3000",
                 "schedule=" + json.dumps(sched))

    def inside(P):
        c = np.linalg.norm(P - np.array(big["center"]), axis=1) < big["radius"]
        b = ((P > np.array(box["min"])) & (P < np.array(box["max"]))).all(axis=1)
        return int(c.sum()), int(b.sum())
    before = inside(fr[30][0])
    during = [inside(fr[t][0]) for t in range(31, 71)]
    after = inside(fr[STEPS][0])
    if min(before) == 0:
        return f"the test needs boids where the obstacles will be drawn ({before})"
    if any(c or b for c, b in during):
        return f"boids inside a drawn obstacle: {during}"
    if after[1] == 0:
        return "no boid back where the erased box was"
    return None


@case("seed 001 (slerp): the boids spawn uniform in the cube of +-spawnSizeArea (the bounds box)")
def c001_spawn():
    sc, fr = run("unity-3d-wandering-target", "count=3000")
    P = fr[0][0]
    lo, hi = np.array(sc["start"]["min"]), np.array(sc["start"]["max"])
    if (P < lo).any() or (P > hi).any():
        return "a boid starts outside the spawn cube"
    # uniform: each axis's mean at the centre, its variance side^2/12
    side = hi - lo
    m = (P.mean(axis=0) - (lo + hi) / 2) / side
    v = P.var(axis=0) / (side * side / 12)
    if np.abs(m).max() > 0.02 or np.abs(v - 1).max() > 0.06:
        return f"start positions not uniform in the cube (means {m}, variances {v} of uniform's)"
    return None


@case("seed 004 (accelerate): the avoid-mouse tool (a repeller in range), every step, against the reference")
def c004_avoid_mouse():
    rep = [{"strength": -0.15, "range": 25, "position": [80, 50]}]
    sc, fr = run("javafx-2d-attractor-then-repeller", "count=1000", "obstacles=[]",
                 "attractors=" + json.dumps(rep))
    near = sum(int((np.linalg.norm(P - np.array([80, 50]), axis=1) <= 25).sum())
               for P, _ in fr[:-1])
    if near == 0:
        return "no boid ever within the repeller's range: the test shows nothing"
    return compare("004 avoid-mouse", sc, fr, accelerate)


@case("seed 004: a tool's strength changed during the run (schedule) acts from its step, against the reference")
def c004_tool_change():
    sched = [{"step": 60, "set": {"attractors[0].strength": -0.3}}]
    sc, fr = run("javafx-2d-attractor-then-repeller", "count=1000", "obstacles=[]",
                 "schedule=" + json.dumps(sched))
    after = json.loads(json.dumps(sc))
    after["attractors"][0]["strength"] = -0.3

    def rule(sc0, t, P, V):
        return accelerate(after if t >= 60 else sc0, t, P, V)
    # the old strength no longer gives step 61
    p, v, _ = accelerate(sc, 60, *fr[60])
    if np.abs(v - fr[61][1]).max() <= TOL * sc["speed"]["max"]:
        return "step 61 is the same with and without the change: the test shows nothing"
    return compare("004 tool change", sc, fr, rule)


# Philox4x32-10 (Salmon et al. 2011) as boidsim-scenario(5) draws with it:
# key the seed (low word first), counter (purpose 2^24 + index, id, step
# mod 2^32, step div 2^32); U = (r0 2^21 + (r1 div 2^11)) / 2^53.
def philox_unit(seed, purpose, index, ident, step):
    m32 = 0xFFFFFFFF
    c = [(purpose << 24) | index, ident, step & m32, step >> 32]
    k = [seed & m32, seed >> 32]
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & m32, (p0 >> 32) ^ c[3] ^ k[1], p0 & m32]
        k = [(k[0] + 0x9E3779B9) & m32, (k[1] + 0xBB67AE85) & m32]
    return ((c[0] << 21) + (c[1] >> 11)) / 2.0 ** 53


def noise1(x):
    """Seed 002's noise1 of the float3 (x, x, x): hash(n) = frac(sin(n)
    43758.5453) at the corners n = p.x + 57 p.y + 113 p.z + {0, 1, 57, 58,
    113, 114, 170, 171}, lerped in x, y, z by f = g^2 (3 - 2 g)."""
    def hsh(n):
        v = math.sin(n) * 43758.5453
        return v - math.floor(v)

    def lerp(a, b, t):
        return a + (b - a) * t
    p = math.floor(x)
    g = x - p
    f = g * g * (3.0 - 2.0 * g)
    n = p + p * 57.0 + 113.0 * p
    return lerp(lerp(lerp(hsh(n), hsh(n + 1), f), lerp(hsh(n + 57), hsh(n + 58), f), f),
                lerp(lerp(hsh(n + 113), hsh(n + 114), f), lerp(hsh(n + 170), hsh(n + 171), f), f), f)


@case("seed 002 (inertia): the speed factor is its noise, 1 + variation (2 clamp(noise1(time/100 + offset)) - 1), offset Random.value x 1000")
def c002_noise_exact():
    sc, fr = run("compute-shader-3d-large", "count=400")
    dt, var, period = sc["dt"], sc["speed"]["variation"], sc["speed"]["noise"]["period"]
    off = [1000.0 * philox_unit(sc["seed"], 11, 0, i, 0) for i in range(len(fr[0][0]))]
    worst = 0.0
    for t in range(0, len(fr) - 1, 7):
        (P, _), (P1, V1) = fr[t], fr[t + 1]
        move = P1 - P
        f = (move * V1).sum(axis=1) / ((V1 * V1).sum(axis=1) * dt)
        want = np.array([1.0 + var * (2.0 * min(1.0, max(-1.0, noise1(t * dt / period + o))) - 1.0)
                         for o in off])
        err = np.abs(f - want).max()
        worst = max(worst, err)
        if err > 1e-4:
            i = int(np.argmax(np.abs(f - want)))
            return f"step {t + 1}: boid {i}: speed factor {f[i]}, the document's noise gives {want[i]}"
    print(f"# 002 noise: worst speed factor error {worst:.2g}")
    return None


@case("seed 000: the count slider down to 0 and back: no boid for those steps, then the last disabled with the state they had")
def c000_slider_zero():
    pop = 'population=[{"step": 20, "disable": 200}, {"step": 40, "enable": 120}]'
    _, head, by_step = run_csv_by_step("desktop-2d-return-to-centre", "-slider0",
                                       [pop, "count=200"])
    _, phead, plain = run_csv("desktop-2d-return-to-centre", "-noslider", ["count=200"])
    steps = sorted(by_step)
    if steps != list(range(20)) + list(range(40, STEPS + 1)):
        gone = sorted(set(range(STEPS + 1)) - set(steps))
        return f"steps without boids: {gone[:3]}...{gone[-3:]}, expected 20 to 39"
    c = head.index("id")
    back = {int(r[c]): r[c + 1:] for r in by_step[40]}
    if sorted(back) != list(range(120)):
        return f"enabled at 40: {len(back)} boids, not ids 0 .. 119 (the last disabled)"
    # each as it was when it left at step 20: the run without a slider
    # (the same up to there) at that step
    pc = phead.index("id")
    left = {int(r[pc]): r[pc + 1:] for r in plain[20]}
    for i in range(120):
        if back[i] != left[i]:
            return f"boid {i} came back with {back[i]}, left with {left[i]}"
    if {int(r[c]): r[c + 1:] for r in by_step[41]}[0] == back[0]:
        return "an enabled boid does not move"
    return None


@case("seed 004: boids placed with the mouse into an empty sky (count 0): none until the first click, then each batch inside its region with the next ids")
def c004_empty_sky():
    pop = ('population=[{"step": 5, "add": 10, "region": {"min": [20, 20], "max": [24, 24]}}, '
           '{"step": 15, "add": 10, "region": {"min": [120, 60], "max": [126, 66]}}]')
    _, head, by_step = run_csv_by_step("javafx-2d-attractor-then-repeller", "-empty",
                                       [pop, "count=0"])
    if min(by_step) != 5 or sorted(by_step) != list(range(5, STEPS + 1)):
        return f"steps with boids: {sorted(by_step)[:3]}..., expected 5 to {STEPS}"
    c, x = head.index("id"), head.index("x")
    for t, ids, lo, hi in ((5, range(10), (20, 20), (24, 24)),
                           (15, range(10, 20), (120, 60), (126, 66))):
        rows = {int(r[c]): r for r in by_step[t]}
        if sorted(rows) != list(range(ids.stop)):
            return f"step {t}: ids {sorted(rows)[:4]}..., expected 0 .. {ids.stop - 1}"
        for i in ids:
            p = [float(v) for v in rows[i][x:x + 2]]
            if not all(lo[d] <= p[d] <= hi[d] for d in range(2)):
                return f"step {t}: boid {i} at {p}, outside its batch's region {lo}-{hi}"
    return None


def main():
    os.makedirs(WORK, exist_ok=True)
    print(f"1..{len(CASES)}")
    for k, (desc, fn) in enumerate(CASES, 1):
        try:
            msg = fn()
        except Exception as e:  # a failed run or a crash is a failure
            msg = f"{type(e).__name__}: {e}"
        if msg is None:
            print(f"ok {k} - {desc}")
        else:
            print(f"not ok {k} - {desc}")
            print(f"# {msg}")


main()
