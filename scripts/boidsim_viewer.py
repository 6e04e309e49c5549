# boidsim_viewer: a trajectory as one self-contained HTML page (boidsim-render -o run.html).
"""Encodes the frames boidsim-render picked into the page that
boidsim_viewer.html (beside this file) decodes and draws with WebGL2.

The page holds everything: the scenario, the scene, colour maps and the
frames, deflated (zlib) and in base64, so it opens from a file with no
network, no server and no second file. The frames' data, once inflated,
is a series of sections, each a stream of residuals that the page turns
back into the quantised values in the same order (see decode() in the
page, and FORMAT below):

  ids  (files with agents, frames whose agents differ from the frame
       before only): per frame, the boids' ids and then the predators',
       each group's first id and then the gaps to the next, uint32 LE.
  pos  per axis, the low bytes of every row of every frame, then the high
       bytes: zigzag(q - prediction) mod 2^16, q the position quantised to
       16 bits against the box lo..hi, the prediction 0 for an agent new in
       the frame, its position in the frame before, or, when it was in the
       two frames before, their linear extrapolation 2 q1 - q2.
  ang  heading, 8 bits a turn (east 0, counter-clockwise), as
       zigzag(a - prediction) mod 2^8, predicted from the agent's move
       since the frame before (the velocity it implies, exact for a run
       written at every step, whose positions advance by v dt).
  elev 3D: the velocity's elevation, 8 bits over -90..90 degrees, the same.
  spd  speed, 8 bits over 0..vmax (the fastest in the page), the same.
  hue  colour following's hue, 8 bits a turn, from the frame before.

Prediction only makes the residuals small, and so the deflated stream: it
is computed with the same IEEE operations here and in the page (+, -, *,
/, sqrt, floor and a polynomial arctangent, never a library's atan2, which
may round differently), so the values decoded are exactly those encoded.
"""

import base64
import json
import math
import os
import zlib

import numpy as np

FORMAT = 1
TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "boidsim_viewer.html")

# The arctangent's coefficients (odd minimax polynomial on [0, 1], error
# below 1e-5 rad, far less than the 1/256 turn predicted), and the scales,
# given to the page as the same doubles.
ATAN_C = (0.99997726, -0.33262347, 0.19354346, -0.11643287, 0.05265332, -0.01172120)
HALF_PI = 1.5707963267948966
PI = 3.141592653589793
KA = 128.0 / math.pi          # radians to 1/256 turns
KE = 255.0 / math.pi          # elevation radians to 1/255 half turns


def atan2p(y, x):
    """atan2 by the polynomial, in float64 arrays, as the page computes it."""
    ax, ay = np.abs(x), np.abs(y)
    mx, mn = np.maximum(ax, ay), np.minimum(ax, ay)
    t = mn / np.where(mx == 0, 1.0, mx)
    z = t * t
    c = ATAN_C
    p = t * (c[0] + z * (c[1] + z * (c[2] + z * (c[3] + z * (c[4] + z * c[5])))))
    p = np.where(ay > ax, HALF_PI - p, p)
    p = np.where(x < 0, PI - p, p)
    p = np.where(y < 0, -p, p)
    return np.where(mx == 0, 0.0, p)


def zigzag(r, bits):
    """Residuals (int64) mod 2^bits as zigzag codes: 0, -1, 1, -2 ... as 0, 1, 2, 3 ..."""
    m = 1 << bits
    s = ((r + (m >> 1)) & (m - 1)) - (m >> 1)
    return ((s << 1) ^ (s >> 63)) & (m - 1)


def agent_keys(ids, groups):
    return groups.astype(np.int64) << 32 | ids.astype(np.int64)


def links(keys, prev_keys):
    """Each row's row in the frame before (same agent), or -1."""
    if prev_keys is None or not len(prev_keys):
        return np.full(len(keys), -1, np.int64)
    idx = np.minimum(np.searchsorted(prev_keys, keys), len(prev_keys) - 1)
    return np.where(prev_keys[idx] == keys, idx, -1)


class Quantiser:
    """The page's grid: positions against lo..hi in 16 bits, the velocity
    as heading, elevation and speed in 8 bits each."""

    def __init__(self, lo, hi, vmax, dt, wrap, dims):
        self.dims = dims
        self.lo = np.asarray(lo, float)
        span = np.asarray(hi, float) - self.lo
        span[~(span > 0)] = 1.0           # a flat axis still needs a scale
        self.hi = self.lo + span
        self.u = span / 65535.0
        self.vmax = vmax if vmax > 0 else 1.0
        self.ks = 255.0 / (self.vmax * dt)
        self.wrap = None if wrap is None else np.asarray(wrap, float)

    def positions(self, p):
        q = np.floor((p.astype(np.float64) - self.lo) / self.u + 0.5)
        return np.clip(q, 0, 65535).astype(np.int64)

    def velocity(self, v):
        v = v.astype(np.float64)
        a = np.floor(np.arctan2(v[:, 1], v[:, 0]) * KA + 0.5).astype(np.int64) & 255
        speed = np.sqrt((v * v).sum(axis=1))
        s = np.minimum(np.floor(speed * (255.0 / self.vmax) + 0.5), 255).astype(np.int64)
        e = None
        if self.dims == 3:
            e = np.clip(np.floor(np.arctan2(v[:, 2], np.hypot(v[:, 0], v[:, 1])) * KE + 128.0),
                        0, 255).astype(np.int64)
        return a, e, s

    def predict_velocity(self, q, q1, gap):
        """The heading, elevation and speed that the move from q1 to q
        (quantised positions of the same agents, gap steps apart) implies,
        by the page's arithmetic."""
        d = (q - q1).astype(np.float64) * self.u
        if self.wrap is not None:
            half = 0.5 * self.wrap
            d = np.where(d > half, d - self.wrap, np.where(d < -half, d + self.wrap, d))
        dx, dy = d[:, 0], d[:, 1]
        h2 = dx * dx + dy * dy
        a = np.floor(atan2p(dy, dx) * KA + 0.5).astype(np.int64) & 255
        e = None
        if self.dims == 3:
            dz = d[:, 2]
            e = np.clip(np.floor(atan2p(dz, np.sqrt(h2)) * KE + 128.0), 0, 255).astype(np.int64)
            h2 = h2 + dz * dz
        s = np.minimum(np.floor(np.sqrt(h2) * self.ks / gap + 0.5), 255).astype(np.int64)
        return a, e, s


def encode(frames, dims, lo, hi, dt, wrap, has_hue):
    """frames: a list of boidsim_traj.Frame. Returns (fields for the page's
    metadata, the inflated data)."""
    speeds = [np.sqrt((f.vel.astype(np.float64) ** 2).sum(axis=1)) for f in frames]
    vmax = max([float(s.max()) for s in speeds if len(s)] + [0.0])
    quant = Quantiser(lo, hi, vmax, dt, wrap, dims)
    ids_out = []
    same = []
    planes = {k: [] for k in ("pos", "ang", "elev", "spd", "hue")}
    prev = prev2 = None         # (keys, q, a, e, s, h, step) of the frames before
    link_prev = None
    for f in frames:
        keys = agent_keys(f.ids, f.groups)
        n = len(keys)
        if prev is not None and len(prev[0]) == n and np.array_equal(prev[0], keys):
            same.append(1)
            l1 = np.arange(n)
        else:
            same.append(0)
            l1 = links(keys, None if prev is None else prev[0])
            for g in (0, 1):
                gid = f.ids[f.groups == g].astype(np.int64)
                if len(gid):
                    ids_out.append(np.concatenate((gid[:1], np.diff(gid))).astype("<u4"))
        q = quant.positions(f.pos)
        a, e, s = quant.velocity(f.vel)
        h = None
        if has_hue:
            h = np.floor(f.hue.astype(np.float64) * 256.0 + 0.5).astype(np.int64) & 255
        has1 = l1 >= 0
        j1 = np.where(has1, l1, 0)
        pred = np.zeros_like(q)
        pa = np.zeros(n, np.int64)
        pe = np.full(n, 0, np.int64)
        ps = np.zeros(n, np.int64)
        ph = np.zeros(n, np.int64)
        if prev is not None and n and len(prev[0]):
            q1 = prev[1][j1]
            pred = np.where(has1[:, None], q1, 0)
            if prev2 is not None and len(prev2[0]):
                l2 = np.where(has1, link_prev[j1], -1)
                has2 = l2 >= 0
                q2 = prev2[1][np.where(has2, l2, 0)]
                pred = np.where(has2[:, None], 2 * q1 - q2, pred)
            va, ve, vs = quant.predict_velocity(q, q1, f.step - prev[6])
            pa = np.where(has1, va, 0)
            ps = np.where(has1, vs, 0)
            if dims == 3:
                pe = np.where(has1, ve, 0)
            if has_hue:
                ph = np.where(has1, prev[5][j1], 0)
        r = zigzag(q - pred, 16)
        planes["pos"].append(r)
        planes["ang"].append(zigzag(a - pa, 8))
        planes["spd"].append(zigzag(s - ps, 8))
        if dims == 3:
            planes["elev"].append(zigzag(e - pe, 8))
        if has_hue:
            planes["hue"].append(zigzag(h - ph, 8))
        prev2, prev = prev, (keys, q, a, e, s, h, f.step)
        link_prev = l1

    sections = []
    chunks = []
    if ids_out:
        b = np.concatenate(ids_out).tobytes()
        sections.append(["ids", len(b)])
        chunks.append(b)
    pos = np.concatenate(planes["pos"]) if planes["pos"] else np.zeros((0, dims), np.int64)
    b = b"".join((pos[:, d] & 255).astype(np.uint8).tobytes() +
                 (pos[:, d] >> 8).astype(np.uint8).tobytes() for d in range(dims))
    sections.append(["pos", len(b)])
    chunks.append(b)
    for k in ("ang", "elev", "spd", "hue"):
        if planes[k]:
            b = np.concatenate(planes[k]).astype(np.uint8).tobytes()
            sections.append([k, len(b)])
            chunks.append(b)
    all_speeds = np.concatenate(speeds) if speeds else np.zeros(0)
    meta = {
        "format": FORMAT,
        "lo": [float(x) for x in quant.lo], "hi": [float(x) for x in quant.hi],
        "u": [float(x) for x in quant.u],
        "vmax": quant.vmax, "ks": quant.ks, "ka": KA, "ke": KE,
        "atan": list(ATAN_C),
        "wrap": None if quant.wrap is None else [float(x) for x in quant.wrap],
        "same": same,
        "sections": sections,
        "data_speed": [float(all_speeds.min()) if len(all_speeds) else 0.0, vmax],
        "error": {"position": [float(x) / 2 for x in quant.u],
                  "heading_deg": 180.0 / 256, "elevation_deg": 90.0 / 255,
                  "speed": quant.vmax / 510.0, "hue": 1.0 / 512},
    }
    return meta, b"".join(chunks)


def colour_maps():
    """256 RGB entries each of the maps the PNG renderer uses: hsv for
    heading and hue (cyclic: entry i is i/256 of a turn), viridis for
    speed, turbo for id (entry i is i/255 of the range)."""
    import matplotlib.pyplot as plt
    out = {}
    for name, cyclic in (("hsv", True), ("viridis", False), ("turbo", False)):
        x = np.arange(256) / (256.0 if cyclic else 255.0)
        rgb = np.floor(plt.get_cmap(name)(x)[:, :3] * 255 + 0.5).astype(np.uint8)
        out[name] = base64.b64encode(rgb.tobytes()).decode("ascii")
    return out


def script_json(obj):
    """JSON safe inside a <script> element: no "</" can end it early, and
    no U+2028/9 (valid JSON, not always valid script)."""
    text = json.dumps(obj, separators=(",", ":"), allow_nan=False)
    return (text.replace("</", "<\\/").replace("<!--", "<\\!--")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def page(meta, data, template=TEMPLATE):
    """The page's text: the template with the metadata and the deflated,
    base64 data in place."""
    with open(template, encoding="utf-8") as f:
        text = f.read()
    z = zlib.compress(data, 6)
    meta = dict(meta, deflated=len(z), inflated=len(data))
    b64 = base64.b64encode(z).decode("ascii")
    head, rest = text.split("@@META@@", 1)
    mid, tail = rest.split("@@DATA@@", 1)
    return "".join((head, script_json(meta), mid, b64, tail))
