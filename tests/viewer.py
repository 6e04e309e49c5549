# viewer.py: boidsim-render's HTML viewer opened in a real headless Chromium, as TAP (run by viewer.test).
"""Usage: viewer.py CHROMIUM RENDER WORKDIR
       viewer.py --screenshot CHROMIUM PAGE FRAGMENT WxH OUT.png

The second takes a screenshot of a page (for docs/pictures, by
scripts/render-pictures).

Drives Chromium through the DevTools protocol over a pipe
(--remote-debugging-pipe: no port, no network), with the pages opened
from file:// URLs, which proves they need no server. BOIDSIM and srcdir
come from the environment, as for the other tests."""

import io
import json
import math
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

if __name__ == "__main__" and sys.argv[1:2] != ["--screenshot"]:
    CHROMIUM, RENDER, WORK = sys.argv[1:4]
    BOIDSIM = os.environ["BOIDSIM"]
    SRC = os.environ["srcdir"]
    sys.path.insert(0, os.path.join(SRC, "scripts"))
    import boidsim_traj  # noqa: E402

PY = sys.executable
N_TESTS = 17
tap_n = 0
failed = 0


def result(ok, what, note=None):
    global tap_n, failed
    tap_n += 1
    if not ok:
        failed += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", tap_n, what))
    if note and not ok:
        for line in str(note).splitlines()[:40]:
            print("# " + line)
    sys.stdout.flush()


def comment(text):
    print("# " + text)
    sys.stdout.flush()


def run(*cmd, **kw):
    return subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, **kw)


def render(*args):
    return run(PY, RENDER, *args)


# ---- the browser -------------------------------------------------------------


class Browser:
    """Chromium, headless, with a new profile, driven over the pipe: fd 3
    carries commands to it and fd 4 its answers and events, each a JSON
    message ended by a NUL."""

    FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-extensions", "--disable-default-apps", "--mute-audio",
             # WebGL on the CPU (SwiftShader): there is no GPU here.
             "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]

    def __init__(self, exe, work):
        import fcntl
        self.profile = tempfile.mkdtemp(prefix="chromium-", dir=work)
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        # Above the numbers the child will use, so no dup2 clobbers another.
        fds = [fcntl.fcntl(f, fcntl.F_DUPFD_CLOEXEC, 10) for f in (to_r, to_w, from_r, from_w)]
        for f in (to_r, to_w, from_r, from_w):
            os.close(f)
        to_r, to_w, from_r, from_w = fds
        args = [exe] + self.FLAGS + ["--user-data-dir=" + self.profile,
                                     "--remote-debugging-pipe", "about:blank"]
        self.log = open(self.profile + ".log", "w")
        self.proc = subprocess.Popen(
            ["bash", "-c", 'exec "$@" 3<&%d 4>&%d %d<&- %d>&-' % (to_r, from_w, to_r, from_w),
             "bash"] + args,
            pass_fds=(to_r, from_w), stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
            start_new_session=True)
        os.close(to_r)
        os.close(from_w)
        self.w, self.r = to_w, from_r
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def send(self, method, params=None, session=True, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        want = self.next_id
        end = time.monotonic() + timeout
        while True:
            m = self.recv(end)
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"].get("message")))
                return m["result"]
            if "method" in m:
                self.events.append(m)

    def recv(self, end):
        while b"\0" not in self.buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.r], [], [], left)[0]:
                raise TimeoutError("no answer from chromium")
            data = os.read(self.r, 1 << 20)
            if not data:
                raise EOFError("chromium closed its pipe (see %s.log)" % self.profile)
            self.buf += data
        m, self.buf = self.buf.split(b"\0", 1)
        return json.loads(m)

    def wait_event(self, method, timeout=60):
        end = time.monotonic() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e["method"] == method:
                    return self.events.pop(i)
            m = self.recv(end)
            if "method" in m:
                self.events.append(m)

    def open_tab(self, width, height):
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": target["targetId"], "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(domain + ".enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def goto(self, path, fragment=""):
        """Opens a page from its file and waits until the viewer has decoded
        and drawn it; returns the seconds that took."""
        self.events = [e for e in self.events if e["method"] != "Page.loadEventFired"]
        url = "file://" + os.path.abspath(path) + (("#" + fragment) if fragment else "")
        # By way of a blank page, so that a new fragment of the same page
        # opens it again rather than only moving to the fragment.
        self.send("Page.navigate", {"url": "about:blank"})
        self.wait_event("Page.loadEventFired", timeout=30)
        t0 = time.monotonic()
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired", timeout=120)
        self.eval("window.boidsimViewer.ready", timeout=120)
        self.eval("window.boidsimViewer.drawn()")
        return time.monotonic() - t0

    def eval(self, expr, timeout=60):
        r = self.send("Runtime.evaluate", {"expression": expr, "awaitPromise": True,
                                           "returnByValue": True}, timeout=timeout)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise RuntimeError("%s: %s" % (expr[:60], (d.get("exception") or {}).get("description")
                                           or d.get("text")))
        return r["result"].get("value")

    def key(self, key, code=None, shift=False):
        code = code or key
        vk = {"ArrowRight": 39, "ArrowLeft": 37, "End": 35, "Home": 36, " ": 32}.get(key, 0)
        for t in ("keyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent",
                      {"type": t, "key": key, "code": code, "windowsVirtualKeyCode": vk,
                       "modifiers": 8 if shift else 0,
                       "text": key if t == "keyDown" and len(key) == 1 else ""})

    def screenshot(self):
        from PIL import Image
        import base64
        self.eval("window.boidsimViewer.drawn()")
        png = base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"})["data"])
        return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)

    def problems(self):
        """The console's errors and warnings, uncaught exceptions, failed
        loads and requests for anything but the page's own file, since
        the last call."""
        out = []
        keep = []
        for e in self.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                out.append("console.%s: %s" % (p["type"], " ".join(
                    str(a.get("value", a.get("description"))) for a in p.get("args", []))))
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append("exception: %s" % ((d.get("exception") or {}).get("description")
                                              or d.get("text")))
            elif (m == "Log.entryAdded" and p["entry"].get("level") in ("error", "warning") and
                  # Chromium's own note, with software compositing (no
                  # GPU), that it reads each WebGL frame back to show it.
                  "GPU stall due to ReadPixels" not in p["entry"].get("text", "")):
                out.append("log: %s %s" % (p["entry"].get("text"), p["entry"].get("url", "")))
            elif m == "Network.requestWillBeSent":
                url = p["request"]["url"]
                if not url.startswith(("file://", "data:", "blob:")):
                    out.append("request: " + url)
            elif m == "Network.loadingFailed":
                out.append("load failed: %s" % p.get("errorText"))
            else:
                keep.append(e)
        self.events = keep
        return out

    def close(self):
        """Closes it, and ends any process it left behind (by its PID)."""
        try:
            self.send("Browser.close", session=False, timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.w)
        os.close(self.r)
        self.log.close()
        # Its renderer and GPU processes end after the browser's own
        # process, later still on a loaded machine or under a sanitizer:
        # only those still running after a grace period are left behind.
        deadline = time.monotonic() + 30
        left = leftovers(self.profile)
        while left and time.monotonic() < deadline:
            time.sleep(0.2)
            left = leftovers(self.profile)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)
        return left


def leftovers(profile):
    """The PIDs of processes whose command line names the profile."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                if profile.encode() in f.read():
                    out.append(int(d))
        except OSError:
            pass
    return out


# ---- trajectories by hand ----------------------------------------------------------


def write_traj(path, scenario, frames):
    """A version-1 trajectory without agents (as render.test's by hand);
    frames are (step, positions, velocities)."""
    dims, count = scenario["dimensions"], scenario["count"]
    gen, js = b"viewer.test", json.dumps({"seed": 42, **scenario}).encode()
    nf = 2 * dims
    h = struct.pack("<8sHHIQQIII", b"\x89BOID\r\n\x1a", 1, dims, 0, count, 42, nf,
                    len(gen), len(js)) + gen + js
    out = [h + struct.pack("<I", zlib.crc32(h))]
    for step, p, v in frames:
        p, v = np.array(p, "<f4"), np.array(v, "<f4")
        raw = np.concatenate([p[:, d] for d in range(dims)] + [v[:, d] for d in range(dims)]).tobytes()
        z = zlib.compress(raw)
        fh = struct.pack("<4sQIIQQ", b"FRAM", step, count, 0, len(raw), len(z))
        out.append(fh + struct.pack("<I", zlib.crc32(z, zlib.crc32(fh))) + z)
    e = struct.pack("<4sIQQ", b"TEND", 0, len(frames), frames[-1][0])
    out.append(e + struct.pack("<I", zlib.crc32(e)))
    with open(path, "wb") as f:
        f.write(b"".join(out))


def sim(out, scenario, *sets):
    r = run(BOIDSIM, "-q", os.path.join(SRC, scenario), *sets, "-o", out)
    if r.returncode:
        raise RuntimeError("boidsim %s: %s" % (scenario, r.stdout))


# ---- comparisons ---------------------------------------------------------------------


def compare(b, path, selected=None, keep=None):
    """Every frame the page holds against the reader's: steps, counts,
    ids, positions within the page's stated error (and a rounding's
    worth), heading and speed within theirs. None when they agree, else
    what differs."""
    t = boidsim_traj.open_trajectory(path)
    frames = list(t.frames())
    if selected is not None:
        frames = [frames[i] for i in selected]
    if keep is not None:
        frames = [f.subset(keep(f)) for f in frames]
    n = b.eval("window.boidsimViewer.frames")
    if n != len(frames):
        return "the page has %d frames, the file %d" % (n, len(frames))
    err = b.eval("window.boidsimViewer.error")
    tol = np.array(err["position"]) * (1 + 1e-9) + 1e-9
    worst = 0.0
    for k, f in enumerate(frames):
        g = b.eval("window.boidsimViewer.frame(%d)" % k)
        if g["step"] != f.step or g["nb"] != f.n_boids or g["np"] != f.n_predators:
            return "frame %d: step %s, %s boids, %s predators; the file: %d, %d, %d" % (
                k, g["step"], g["nb"], g["np"], f.step, f.n_boids, f.n_predators)
        if g["ids"] != f.ids.tolist() or g["groups"] != f.groups.tolist():
            return "frame %d: the ids or groups differ" % k
        pos = np.array(g["pos"]).reshape(-1, t.dims)
        d = np.abs(pos - f.pos.astype(np.float64))
        if len(d) and (d > tol).any():
            i = int(np.argmax((d / tol).max(axis=1)))
            return "frame %d row %d: %s, the file %s (error %s > %s)" % (
                k, i, pos[i].tolist(), f.pos[i].tolist(), d[i].tolist(), tol.tolist())
        worst = max(worst, float((d / tol).max()) if len(d) else 0.0)
        v = f.vel.astype(np.float64)
        if len(v):
            moving = np.hypot(v[:, 0], v[:, 1]) > 1e-6
            head = np.arctan2(v[:, 1], v[:, 0])
            dh = np.abs((np.array(g["heading"]) - head + np.pi) % (2 * np.pi) - np.pi)[moving]
            if len(dh) and dh.max() > math.radians(err["heading_deg"]) + 1e-9:
                return "frame %d: heading off by %g degrees" % (k, math.degrees(dh.max()))
            ds = np.abs(np.array(g["speed"]) - np.sqrt((v * v).sum(axis=1)))
            if ds.max() > err["speed"] * (1 + 1e-9) + 1e-12:
                return "frame %d: speed off by %g (> %g)" % (k, ds.max(), err["speed"])
            if t.dims == 3:
                el = np.arctan2(v[:, 2], np.hypot(v[:, 0], v[:, 1]))
                de = np.abs(np.array(g["elevation"]) - el)
                if de.max() > math.radians(err["elevation_deg"]) + 1e-9:
                    return "frame %d: elevation off by %g degrees" % (k, math.degrees(de.max()))
    comment("%s: %d frames agree; the largest position error is %.3f of the stated bound %s"
            % (os.path.basename(path), len(frames), worst, err["position"]))
    return None


def pixel(img, xy):
    """The colours of the 3x3 pixels around a CSS point (device scale 1)."""
    x, y = int(round(xy[0])), int(round(xy[1]))
    return [tuple(img[y + dy, x + dx]) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]


def white(c):
    return all(v >= 250 for v in c)


def main():
    print("1..%d" % N_TESTS)
    W = WORK

    # The pages of the tests, made first.
    sim(W + "/r2.bin", "scenarios/flock2d.json", "--set", "count=300", "--steps", "30",
        "--every", "1")
    run(BOIDSIM, "-q", "convert", W + "/r2.bin", "-o", W + "/r2.csv.gz")
    sim(W + "/r3.bin", "scenarios/flock3d.json", "--set", "count=300", "--steps", "20",
        "--every", "1")
    sim(W + "/a.bin", "scenarios/predators/attack2d.json", "--steps", "210",
        "--set", "output.every=10")
    # Every boid disabled, then some back: frames of the predators alone.
    sim(W + "/z.bin", "scenarios/predators/attack2d.json", "--steps", "30", "--every", "1",
        "--set", 'population=[{"step":5,"disable":1500},{"step":20,"enable":600}]')
    # By hand: three boids in a 100x75 box, heading east, north and
    # south-west; the first frame has them elsewhere.
    box2 = {"min": [0, 0], "max": [100, 75], "mode": "reflect"}
    p = [(20, 20), (50, 40), (80, 60)]
    v = [(1, 0), (0, 1), (-0.7, -0.7)]
    write_traj(W + "/h2.bin", {"dimensions": 2, "count": 3, "bounds": box2},
               [(0, [(10, 10), (30, 30), (60, 50)], v), (5, p, v)])
    box3 = {"min": [0, 0, 0], "max": [100, 100, 100], "mode": "reflect"}
    p3 = [(50, 50, 50), (20, 80, 30), (80, 20, 70)]
    write_traj(W + "/h3.bin", {"dimensions": 3, "count": 3, "bounds": box3},
               [(0, p3, [(1, 0, 0), (0, 1, 0), (0, 0, 1)])])
    # A scene: an obstacle drawn at step 10 by the schedule, an attractor
    # on waypoints (50, 40) at step 2 to (90, 40) at step 10, and one boid
    # far from them.
    scene = {"dimensions": 2, "count": 1, "bounds": box2,
             "obstacles": [{"type": "box", "min": [5, 5], "max": [15, 15]}],
             "attractors": [{"strength": 1.5, "range": 6, "waypoints": [
                 {"step": 2, "position": [50, 40]}, {"step": 10, "position": [90, 40]}]}],
             "schedule": [{"step": 10, "set": {"obstacles": [
                 {"type": "box", "min": [5, 5], "max": [15, 15]},
                 {"type": "sphere", "center": [30, 55], "radius": 8}]}}]}
    write_traj(W + "/sc.bin", scene, [(s, [(80, 10)], [(1, 0)]) for s in (0, 6, 14)])

    made = {}
    for name, src, extra in (("r2", "r2.bin", ["--trail", "3"]), ("r2gz", "r2.csv.gz", []),
                             ("r3", "r3.bin", []), ("a", "a.bin", []), ("z", "z.bin", []),
                             ("h2", "h2.bin", ["--boid-size", "14"]),
                             ("h3", "h3.bin", ["--boid-size", "14"]),
                             ("sc", "sc.bin", ["--boid-size", "10"])):
        r = render(W + "/" + src, "-o", W + "/" + name + ".html", *extra)
        made[name] = (r.returncode, r.stdout)
    bad = [k for k, (rc, _) in made.items() if rc != 0 or not os.path.isfile(W + "/" + k + ".html")]
    # One file, nothing it loads: no src or href, no url() and no import.
    outside = []
    for k in made:
        if k in bad:
            continue
        text = open(W + "/" + k + ".html", encoding="utf-8").read()
        for needle in ("src=", "href=", "url(", "@import", "<link", "import(", "fetch(",
                       "XMLHttpRequest", "http://", "https://"):
            if needle in text:
                outside.append("%s.html: %s" % (k, needle))
    result(not bad and not outside,
           "boidsim-render writes one self-contained .html from .bin and .csv.gz, 2D and 3D",
           "\n".join(made[k][1] for k in bad) + "\n".join(outside))

    b = Browser(CHROMIUM, W)
    try:
        b.open_tab(640, 480)
        opened = []
        for k in ("r2", "r2gz", "r3", "a", "z", "h2", "h3", "sc"):
            if k in bad:
                continue
            try:
                b.goto(W + "/" + k + ".html")
                opened.append(k)
            except Exception as e:
                comment("%s.html: %s" % (k, e))
        probs = b.problems()
        result(len(opened) == 8 - len(bad) and not probs and not bad,
               "the pages open from file:// in headless Chromium: no error, no warning, "
               "no request for anything else", "\n".join(probs))

        why = []
        for k, path, extra in (("r2", "r2.bin", None), ("r2gz", "r2.csv.gz", None)):
            b.goto(W + "/" + k + ".html")
            why.append(compare(b, W + "/" + path))
        result(not any(why), "2D: every frame's decoded positions equal the reader's within the "
               "stated quantisation error; ids, heading and speed too (.bin and .csv.gz)",
               "\n".join(w for w in why if w))

        b.goto(W + "/r3.html")
        why = compare(b, W + "/r3.bin")
        result(why is None, "3D: decoded positions, heading, elevation and speed within the "
               "stated errors", why)

        b.goto(W + "/a.html")
        why = compare(b, W + "/a.bin")
        result(why is None, "agents (attack2d): per-frame boid and predator counts, ids and "
               "positions are the reader's", why)

        b.goto(W + "/z.html")
        why = compare(b, W + "/z.bin")
        if why is None:
            # a frame of no boid drawn (step 10; one frame a step)
            b.goto(W + "/z.html", "frame=10")
            b.eval("window.boidsimViewer.drawn()")
            g = b.eval("window.boidsimViewer.frame(10)")
            if g["nb"] != 0 or g["np"] != 3:
                why = "frame 10: %s boids, %s predators; 0 and 3 expected" % (g["nb"], g["np"])
        if why is None and b.problems():
            why = "\n".join(b.problems())
        result(why is None, "a population taken to no boid and back: frames of the predators "
               "alone, counts, ids and positions the reader's, no error", why)

        # The fragment sets the frame and the colour mode, at opening and later.
        b.goto(W + "/r2.html", "frame=7&color=speed&trail=2")
        s1 = b.eval("window.boidsimViewer.state()")
        where1 = b.eval("document.getElementById('where').textContent")
        b.eval("location.hash = '#step=20&color=id'")
        b.eval("new Promise(r => setTimeout(r, 50))")
        b.eval("window.boidsimViewer.drawn()")
        s2 = b.eval("window.boidsimViewer.state()")
        ok = (s1["frame"] == 7 and s1["color"] == "speed" and s1["trail"] == 2 and
              "frame 7" in where1 and "step 7" in where1 and s2["frame"] == 20 and
              s2["color"] == "id")
        result(ok, "the URL fragment sets frame (or step), colour mode and trail; the "
               "slider's label shows frame and step", json.dumps([s1, where1, s2]))

        # Keys and the slider.
        b.goto(W + "/r2.html", "frame=3")
        b.key("ArrowRight")
        f1 = b.eval("window.boidsimViewer.state().frame")
        b.key("End")
        f2 = b.eval("window.boidsimViewer.state().frame")
        b.key("Home")
        f3 = b.eval("window.boidsimViewer.state().frame")
        b.key("c")
        c1 = b.eval("window.boidsimViewer.state().color")
        b.eval("(() => { const s = document.getElementById('slider'); s.value = '12';"
               " s.dispatchEvent(new Event('input')); })()")
        f4 = b.eval("window.boidsimViewer.state().frame")
        b.key(" ")
        b.eval("new Promise(r => setTimeout(r, 400))")
        playing = b.eval("window.boidsimViewer.state()")
        b.key(" ")
        b.eval("new Promise(r => setTimeout(r, 300))")
        frag = b.eval("location.hash")
        ok = (f1 == 4 and f2 == 30 and f3 == 0 and c1 == "speed" and f4 == 12 and
              playing["playing"] and playing["frame"] > 12 and "frame=" in frag)
        result(ok, "keys (Right, End, Home, C, Space) and the slider change the frame, colour "
               "and playback; the fragment follows", json.dumps([f1, f2, f3, c1, f4, playing, frag]))

        # Pixels: the boids where the page puts them, in heading colours,
        # and white around them.
        b.goto(W + "/h2.html", "frame=1&ui=0")
        img = b.screenshot()
        notes = []
        colours = {0: lambda c: c[0] > 200 and c[1] < 80 and c[2] < 80,          # east: red
                   1: lambda c: c[0] > 120 and c[1] > 180 and c[2] < 80,         # north: yellow-green
                   2: lambda c: c[2] > 150 and c[0] < 180}                       # south-west: blue
        for i, (x, y) in enumerate(p):
            xy = b.eval("window.boidsimViewer.toScreen([%g, %g])" % (x, y))
            px = pixel(img, xy)
            if not any(colours[i](c) for c in px):
                notes.append("boid %d at %s: %s" % (i, xy, px))
        # Where no boid is: inside the box, away from the boids.
        for x, y in ((35, 55), (65, 20), (90, 10), (10, 65)):
            xy = b.eval("window.boidsimViewer.toScreen([%g, %g])" % (x, y))
            if not all(white(c) for c in pixel(img, xy)):
                notes.append("no boid at (%g, %g) %s, yet %s" % (x, y, xy, pixel(img, xy)))
        lo = b.eval("window.boidsimViewer.toScreen([0, 0])")
        hi = b.eval("window.boidsimViewer.toScreen([100, 75])")
        # The box fits the 640x480 view (95% of it) and is centred.
        if not (abs(lo[0] + hi[0] - 640) < 1 and abs(lo[1] + hi[1] - 480) < 1 and
                abs((hi[0] - lo[0]) - 0.95 * 640) < 1):
            notes.append("box on screen: %s to %s" % (lo, hi))
        result(not notes, "2D screenshot: each boid drawn at its position in its heading's "
               "colour, white elsewhere, the box fitted", "\n".join(notes))

        b.goto(W + "/h3.html", "ui=0&color=id")
        img = b.screenshot()
        notes = []
        for i, w in enumerate(p3):
            xy = b.eval("window.boidsimViewer.toScreen(%s)" % json.dumps(list(w)))
            if all(white(c) for c in pixel(img, xy)):
                notes.append("boid %d at %s: white" % (i, xy))
        for xy in ((20, 20), (620, 20), (20, 460), (620, 460)):
            if not all(white(c) for c in pixel(img, xy)):
                notes.append("corner %s: %s" % (xy, pixel(img, xy)))
        result(not notes, "3D screenshot: boids at their projected positions, white outside "
               "the box", "\n".join(notes))

        # Predators: black edged in red, drawn over the boids.
        b.goto(W + "/a.html", "frame=5&ui=0&color=heading")
        img = b.screenshot()
        g = b.eval("window.boidsimViewer.frame(5)")
        notes = []
        preds = np.array(g["pos"]).reshape(-1, 2)[g["nb"]:]
        for w in preds:
            xy = b.eval("window.boidsimViewer.toScreen(%s)" % json.dumps(w.tolist()))
            if not (0 < xy[0] < 639 and 0 < xy[1] < 479):
                continue
            if not any(max(c) < 60 for c in pixel(img, xy)):
                notes.append("predator at %s: %s" % (xy, pixel(img, xy)))
        counts = b.eval("document.getElementById('counts').textContent")
        want = "%d boids, %d predators" % (g["nb"], g["np"])
        if counts != want:
            notes.append("counts %r, expected %r" % (counts, want))
        result(not notes and len(preds) == 3, "a file with agents: predators drawn black at "
               "their positions; the panel counts boids and predators", "\n".join(notes))

        # The scene: the scheduled obstacle only from its step on; the
        # attractor where its waypoints put it.
        notes = []
        for k, step, sphere, attractor in ((0, 0, False, (50, 40)), (2, 14, True, (90, 40)),
                                           (1, 6, False, (70, 40))):
            b.goto(W + "/sc.html", "frame=%d&ui=0" % k)
            img = b.screenshot()
            grey = lambda c: abs(c[0] - c[1]) < 6 and abs(c[1] - c[2]) < 6 and 120 < c[0] < 200
            at = b.eval("window.boidsimViewer.toScreen([30, 55])")
            if any(grey(c) for c in pixel(img, at)) != sphere:
                notes.append("step %d: sphere %s: %s" % (step, "missing" if sphere else "drawn",
                                                          pixel(img, at)))
            at = b.eval("window.boidsimViewer.toScreen([10, 10])")
            if not any(grey(c) for c in pixel(img, at)):
                notes.append("step %d: box missing: %s" % (step, pixel(img, at)))
            at = b.eval("window.boidsimViewer.toScreen(%s)" % json.dumps(list(attractor)))
            if not any(c[1] > c[0] + 60 and c[1] > c[2] + 40 for c in pixel(img, at)):
                notes.append("step %d: attractor not at %s: %s" % (step, attractor,
                                                                     pixel(img, at)))
        scen = b.eval("document.getElementById('scenario').textContent")
        if '"schedule"' not in scen:
            notes.append("the scenario shown lacks its schedule")
        result(not notes, "scene: obstacles, a scheduled one from its step on, an attractor on "
               "its waypoints; the scenario's JSON in the page", "\n".join(notes))

        # --ids, --max-boids and bad input.
        notes = []
        r = render(W + "/r2.bin", "-o", W + "/ids.html", "--ids", "3,10-12,299",
                   "--frames", "10:20:2")
        if r.returncode:
            notes.append(r.stdout)
        else:
            b.goto(W + "/ids.html")
            why = compare(b, W + "/r2.bin", selected=list(range(10, 20, 2)),
                          keep=lambda f: np.isin(f.ids, [3, 10, 11, 12, 299]))
            if why:
                notes.append(why)
        r = render(W + "/a.bin", "-o", W + "/max.html", "--max-boids", "100")
        if r.returncode:
            notes.append(r.stdout)
        else:
            b.goto(W + "/max.html")
            k = -(-boidsim_traj.open_trajectory(W + "/a.bin").count // 100)
            why = compare(b, W + "/a.bin",
                          keep=lambda f: (f.ids % k == 0) | (f.groups == 1))
            if why:
                notes.append(why)
        for args in (["--ids", "300"], ["--ids", "x"], ["--frame", "3"], ["--max-boids", "0"]):
            r = render(W + "/r2.bin", "-o", W + "/bad.html", *args)
            lines = r.stdout.strip().splitlines()
            if r.returncode != 2 or len(lines) != 1 or os.path.exists(W + "/bad.html"):
                notes.append("%s: exit %d, %r" % (args, r.returncode, r.stdout))
        probs = b.problems()
        result(not notes and not probs, "--ids, --frames and --max-boids pick the page's "
               "boids and frames; bad options exit 2 with one line and no file",
               "\n".join(notes + probs))

        # 10,000 boids in 3D: the time to draw a frame with software GL.
        sim(W + "/big3.bin", "scenarios/flock3d.json", "--set", "count=10000", "--steps", "4",
            "--every", "1")
        r = render(W + "/big3.bin", "-o", W + "/big3.html")
        ms = None
        if r.returncode == 0:
            b.open_tab(1280, 720)
            b.goto(W + "/big3.html", "ui=0")
            ms = b.eval("window.boidsimViewer.timeDraw(20)")
            comment("3D, 10,000 boids, 1280x720: %.1f ms a frame drawn (mean of 20, "
                    "SwiftShader software GL on the CPU, not a GPU)" % ms)
        result(ms is not None and ms > 0 and not b.problems(),
               "3D, 10,000 boids: frame time measured (a comment; not asserted)", r.stdout)

        # The budget: 10,000 boids, 600 frames in 2D (every step).
        t0 = time.monotonic()
        sim(W + "/big2.bin", "scenarios/flock2d.json", "--set", "count=10000", "--steps", "599",
            "--every", "1")
        t1 = time.monotonic()
        r = render(W + "/big2.bin", "-o", W + "/big2.html")
        t2 = time.monotonic()
        size = os.path.getsize(W + "/big2.html") if r.returncode == 0 else None
        notes = [r.stdout] if r.returncode else []
        if size:
            comment("10,000 boids x 600 frames, 2D: %.2f MB of HTML; simulated in %.1f s, "
                    "page written in %.1f s" % (size / 1e6, t1 - t0, t2 - t1))
            secs = b.goto(W + "/big2.html", "frame=599")
            load = b.eval("window.boidsimViewer.loadMs")
            comment("opened, decoded and drawn in %.2f s (%.0f ms to the first frame drawn, "
                    "from the navigation's start)" % (secs, load))
            g = b.eval("window.boidsimViewer.frame(599)")
            f = boidsim_traj.open_trajectory(W + "/big2.bin").frame(599)
            tol = np.array(b.eval("window.boidsimViewer.error")["position"]) * (1 + 1e-9) + 1e-9
            d = np.abs(np.array(g["pos"]).reshape(-1, 2) - f.pos.astype(np.float64))
            if (d > tol).any():
                notes.append("frame 599: position error %s > %s" % (d.max(axis=0), tol))
        result(size is not None and size <= 25e6 and not notes and not b.problems(),
               "10,000 boids x 600 frames in 2D: at most 25 MB of HTML, its last frame "
               "decoded within the error", "\n".join(notes))
        for k in ("big2.bin", "big2.html"):
            if os.path.exists(W + "/" + k):
                os.unlink(W + "/" + k)
    finally:
        left = b.close()
    result(not left and b.proc.returncode is not None,
           "Chromium closed; no process of it left behind", "left: %s" % left)
    result(tap_n == N_TESTS - 1, "every test above ran", "ran %d" % tap_n)
    return 1 if failed else 0


def guarded():
    """main(), and when it stops short, the tests it did not get to as
    failures, the reason as a comment."""
    import traceback
    try:
        return main()
    except Exception:
        for line in traceback.format_exc().splitlines():
            comment(line)
        while tap_n < N_TESTS:
            result(False, "not run: the test stopped at an error (above)")
        return 1


def screenshot(chromium, page, fragment, size, out):
    from PIL import Image
    w, h = (int(v) for v in size.split("x"))
    work = tempfile.mkdtemp(prefix="viewer-shot.")
    b = Browser(chromium, work)
    try:
        b.open_tab(w, h)
        b.goto(page, fragment)
        Image.fromarray(b.screenshot().astype(np.uint8)).save(out, optimize=True)
        probs = b.problems()
    finally:
        b.close()
        shutil.rmtree(work, ignore_errors=True)
    for p in probs:
        sys.stderr.write("viewer.py: %s: %s\n" % (page, p))
    return 1 if probs else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--screenshot"]:
        sys.exit(screenshot(*sys.argv[2:7]))
    sys.exit(guarded())
