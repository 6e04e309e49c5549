#!/usr/bin/env python3
"""generate.py: writes the many-obstacle scenarios of this directory.

    python3 scenarios/obstacles/generate.py [DIR]

maze2d.json   a 2D maze: about 2100 wall segments on a 45 x 45 grid
forest2d.json a 2D forest: 1000 circles (trunks), 40 boxes (huts) and 300
              segments at any angle (fallen logs)
forest3d.json a 3D forest: 700 spheres and 300 boxes

The layouts come from Python's random with a fixed seed, so running it
again writes the same files. They exercise the obstacle index (boidsim-
scenario(5), obstacles): each boid tests only the obstacles near it.
"""
import json
import math
import os
import random
import sys


def dump(path, sc, obstacles):
    """One obstacle per line, the rest as usual."""
    keys = ['  "%s": %s' % (k, json.dumps(v, separators=(", ", ": "))) for k, v in sc.items()]
    obs = ",\n".join("    " + json.dumps(o, separators=(", ", ": ")) for o in obstacles)
    text = "{\n" + ",\n".join(keys) + ',\n  "obstacles": [\n' + obs + "\n  ]\n}\n"
    with open(path, "w") as f:
        f.write(text)


def maze(rng, n, cell, org, extra):
    """Walls of a perfect maze on n x n cells (depth-first), with a fraction
    extra of its inner walls knocked down too, so the flock finds loops."""
    right = [[True] * n for _ in range(n)]  # wall to the right of (i, j)
    up = [[True] * n for _ in range(n)]     # wall above (i, j)
    seen = [[False] * n for _ in range(n)]
    stack = [(0, 0)]
    seen[0][0] = True
    while stack:
        i, j = stack[-1]
        nb = [(i + di, j + dj) for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1))
              if 0 <= i + di < n and 0 <= j + dj < n and not seen[i + di][j + dj]]
        if not nb:
            stack.pop()
            continue
        a, b = rng.choice(nb)
        if a != i:
            right[min(a, i)][j] = False
        else:
            up[i][min(b, j)] = False
        seen[a][b] = True
        stack.append((a, b))
    segs = []

    def seg(x0, y0, x1, y1):
        segs.append({"type": "segment",
                     "from": [org + x0 * cell, org + y0 * cell],
                     "to": [org + x1 * cell, org + y1 * cell]})

    for i in range(n):
        for j in range(n):
            if i < n - 1 and right[i][j] and rng.random() >= extra:
                seg(i + 1, j, i + 1, j + 1)
            if j < n - 1 and up[i][j] and rng.random() >= extra:
                seg(i, j + 1, i + 1, j + 1)
    for k in range(n):  # the outer wall, with a gap on each side
        if k != n // 2:
            seg(k, 0, k + 1, 0)
            seg(k, n, k + 1, n)
            seg(0, k, 0, k + 1)
            seg(n, k, n, k + 1)
    return segs


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = random.Random(20240605)

    walls = maze(rng, 45, 4.0, 10.0, 0.08)
    dump(os.path.join(out, "maze2d.json"), {
        "description": "A flock in a 2D maze of %d wall segments (45 x 45 cells of 4 units, "
                       "a few inner walls knocked down; written by generate.py). Boids steer "
                       "away from walls within radii.avoid and bounce off them; each tests "
                       "only the walls near it (the obstacle index)." % len(walls),
        "model": "reynolds", "dimensions": 2, "count": 6000, "steps": 300, "seed": 5,
        "radii": {"separation": 0.8, "alignment": 2.0, "cohesion": 2.0, "avoid": 1.5},
        "weights": {"separation": 1.5, "alignment": 1.0, "cohesion": 1.0, "avoid": 2.0},
        "speed": {"min": 0.2, "max": 0.6},
        "max_force": 0.05,
        "bounds": {"min": [0, 0], "max": [200, 200], "mode": "reflect"},
        "output": {"every": 10},
    }, walls)

    trees = []
    for _ in range(1000):
        trees.append({"type": "sphere",
                      "center": [round(rng.uniform(5, 195), 3), round(rng.uniform(5, 195), 3)],
                      "radius": round(rng.uniform(0.4, 1.6), 3)})
    for _ in range(40):
        x, y, w, h = rng.uniform(10, 180), rng.uniform(10, 180), rng.uniform(2, 8), rng.uniform(2, 8)
        trees.append({"type": "box", "min": [round(x, 3), round(y, 3)],
                      "max": [round(x + w, 3), round(y + h, 3)]})
    for _ in range(300):
        x, y, a, l = rng.uniform(5, 195), rng.uniform(5, 195), rng.uniform(0, 6.2832), rng.uniform(1, 6)
        trees.append({"type": "segment", "from": [round(x, 4), round(y, 4)],
                      "to": [round(x + l * math.cos(a), 4), round(y + l * math.sin(a), 4)]})
    dump(os.path.join(out, "forest2d.json"), {
        "description": "A flock through a 2D forest: 1000 circular trunks, 40 boxes and "
                       "300 segments at any angle "
                       "(written by generate.py); each boid tests only the obstacles near it "
                       "(the obstacle index).",
        "model": "reynolds", "dimensions": 2, "count": 6000, "steps": 300, "seed": 6,
        "radii": {"separation": 1.0, "alignment": 3.0, "cohesion": 3.0, "avoid": 2.0},
        "weights": {"separation": 1.5, "alignment": 1.0, "cohesion": 1.0, "avoid": 1.5},
        "speed": {"min": 0.3, "max": 1.0},
        "max_force": 0.05,
        "bounds": {"min": [0, 0], "max": [200, 200], "mode": "wrap"},
        "output": {"every": 10},
    }, trees)

    things = []
    for _ in range(700):
        things.append({"type": "sphere",
                       "center": [round(rng.uniform(3, 97), 3) for _ in range(3)],
                       "radius": round(rng.uniform(0.5, 2.0), 3)})
    for _ in range(300):
        lo = [rng.uniform(2, 95) for _ in range(3)]
        things.append({"type": "box", "min": [round(v, 3) for v in lo],
                       "max": [round(v + rng.uniform(0.5, 3.0), 3) for v in lo]})
    dump(os.path.join(out, "forest3d.json"), {
        "description": "A 3D flock among 700 spheres and 300 boxes (written by generate.py); "
                       "each boid tests only the obstacles near it (the obstacle index).",
        "model": "reynolds", "dimensions": 3, "count": 6000, "steps": 200, "seed": 7,
        "radii": {"separation": 1.0, "alignment": 3.0, "cohesion": 3.0, "avoid": 2.5},
        "weights": {"separation": 1.5, "alignment": 1.0, "cohesion": 1.0, "avoid": 1.5},
        "speed": {"min": 0.3, "max": 1.0},
        "max_force": 0.05,
        "bounds": {"min": [0, 0, 0], "max": [100, 100, 100], "mode": "reflect"},
        "output": {"every": 10},
    }, things)


if __name__ == "__main__":
    main()
