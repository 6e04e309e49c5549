# readers.py: the C reader (boidsim verify) and the Python reader
# (scripts/boidsim_traj.py) side by side on generated files, for
# tests/readers.test. Each command prints one line per disagreement and
# exits 1 when there is any.
#   readers.py cuts BOIDSIM DIR FILE...   every file cut at many lengths
#   readers.py damage BOIDSIM DIR SRC K OUT   a byte of frame K changed
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ.get("srcdir", "."), "scripts"))
import boidsim_traj  # noqa: E402


def c_verdict(boidsim, path):
    """boidsim verify's verdict: "ok N", "incomplete N" or "damaged N"."""
    p = subprocess.run([boidsim, "verify", path], capture_output=True, text=True)
    out = p.stdout.strip()
    words = out.split()
    if p.returncode == 0 and ": ok: " in out:
        return "ok %s" % words[words.index("ok:") + 1]
    if p.returncode == 3 and ": incomplete: " in out:
        return "incomplete %s" % words[words.index("incomplete:") + 1]
    if p.returncode == 1 and ": damaged after " in out:
        return "damaged %s" % words[words.index("after") + 1]
    if p.returncode == 1 and not out:
        return "damaged 0"          # refused when opened
    return "exit %d: %s %s" % (p.returncode, out, p.stderr.strip())


def py_verdict(path):
    """The Python reader's: its whole frames (strict=False), and whether
    the file is cut, has no end record, or is damaged."""
    n = 0
    try:
        t = boidsim_traj.open_trajectory(path, strict=False)
        for _ in t.frames():
            n += 1
    except boidsim_traj.TrajectoryError:
        return "damaged %d" % n
    if t.truncated or t.header.get("status") == "missing":
        return "incomplete %d" % n
    return "ok %d" % n


def compare(boidsim, path, bad):
    c, p = c_verdict(boidsim, path), py_verdict(path)
    if c != p:
        bad.append("%s: boidsim %s, python %s" % (os.path.basename(path), c, p))
    return c


def cuts(boidsim, work, files):
    bad, seen = [], {}
    for src in files:
        data = open(src, "rb").read()
        # every length near the start and end, and a spread between
        lengths = sorted(set(list(range(0, 200)) + list(range(len(data) - 120, len(data)))
                             + list(range(0, len(data), max(1, len(data) // 150)))))
        name = os.path.basename(src)
        for n in lengths:
            if not 0 <= n < len(data):
                continue
            path = os.path.join(work, "cut-%d-%s" % (n, name))
            with open(path, "wb") as f:
                f.write(data[:n])
            v = compare(boidsim, path, bad).split()[0]
            seen[v] = seen.get(v, 0) + 1
            os.unlink(path)
    for line in bad:
        print(line)
    print("# verdicts: %s" % seen)
    return 1 if bad else 0


def frame_offsets(data):
    """The offset of every frame record of a binary trajectory."""
    glen, jlen = struct.unpack_from("<II", data, 36)
    off, out = 48 + glen + jlen, []
    while data[off:off + 4] == b"FRAM":
        out.append(off)
        off += 40 + struct.unpack_from("<Q", data, off + 28)[0]
    return out


def damage(boidsim, work, args):
    """damage SRC K OUT: SRC with a byte of frame K's payload changed."""
    src, k, out = args[0], int(args[1]), args[2]
    data = bytearray(open(src, "rb").read())
    data[frame_offsets(data)[k] + 50] ^= 0xFF
    open(out, "wb").write(data)
    return 0


if __name__ == "__main__":
    cmd, boidsim, work = sys.argv[1:4]
    sys.exit({"cuts": cuts, "damage": damage}[cmd](boidsim, work, sys.argv[4:]))
