# boidsim_python.py: makes boidsim's plotting scripts run in a Python that
# has numpy and matplotlib, whichever python3 comes first on PATH.
"""The first python3 on PATH (pyenv's, conda's, a virtualenv's) often lacks
numpy or matplotlib while /usr/bin/python3 has them. need() is called by a
script before it imports them: when this interpreter cannot, the script is
run again with the first of these that can:

  1. the Python that configure found (the built scripts name it);
  2. /usr/bin/python3, then every python3 on PATH.

$BOIDSIM_PYTHON, when set, is the Python to use, whatever this one has.

When none can, it raises Missing, whose message is one line saying how to
point the script at one (BOIDSIM_PYTHON)."""

import os
import subprocess
import sys

ENV = "BOIDSIM_PYTHON"
# Set in the environment of the run started again, so that it never
# starts itself again in turn.
_AGAIN = "BOIDSIM_PYTHON_AGAIN"
# Each module's Debian package, for the one line of Missing.
DEBIAN = {"numpy": "python3-numpy", "matplotlib": "python3-matplotlib",
          "zstandard": "python3-zstandard"}
# A binary trajectory's first bytes (boidsim-trajectory(5)).
MAGIC = b"\x89BOID\r\n\x1a"
# The fewest pixels a picture has a side: below, matplotlib's tiles and
# the encoders fail late, with a traceback or an encoder's log.
MIN_PIXELS = 32


class Missing(Exception):
    """No Python with the modules: one line for the user."""


def _imports(modules):
    try:
        for m in modules:
            __import__(m)
    except ImportError as e:
        return e
    return None


def _candidates(configured):
    seen, out = set(), []
    on_path = [os.path.join(d, "python3") for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    for p in [configured, "/usr/bin/python3"] + on_path:
        if p and p not in seen and os.access(p, os.X_OK) and not os.path.isdir(p):
            seen.add(p)
            out.append(p)
    return out


def _run_with(python):
    """Replaces this process with the script run by python."""
    os.environ[_AGAIN] = python
    sys.stdout.flush()
    sys.stderr.flush()
    os.execvp(python, [python, os.path.abspath(sys.argv[0])] + sys.argv[1:])


def _works(python, modules):
    try:
        return subprocess.run([python, "-c", "import " + ", ".join(modules)],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=120).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def trajectory_modules(path):
    """What reading the trajectory at path needs besides numpy: zstandard
    for a binary file whose chunks are Zstandard frames (header flag 2),
    nothing for any other file, or one that cannot be read here (standard
    input, a missing file: the reader says why later)."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:
        return ()
    if len(head) == 16 and head[:8] == MAGIC and int.from_bytes(head[12:16], "little") & 2:
        return ("zstandard",)
    return ()


def need(configured=None, modules=("numpy", "matplotlib")):
    """Returns when this interpreter is the one to use and imports modules;
    otherwise replaces the process with the script run by the Python to
    use, or raises Missing. configured is the Python configure found, or
    None in the source tree."""
    # Popped, so that the scripts this one may start choose for themselves.
    again = os.environ.pop(_AGAIN, None)
    chosen = os.environ.get(ENV)
    names = " and ".join(modules) if len(modules) < 3 else \
        "%s and %s" % (", ".join(modules[:-1]), modules[-1])
    if chosen and not again:
        try:
            _run_with(chosen)
        except OSError as e:
            raise Missing("%s=%s: cannot run it: %s" % (ENV, chosen, e.strerror or e))
    err = _imports(modules)
    if err is None:
        return
    debian = " ".join(DEBIAN.get(m, m) for m in modules)
    if chosen:
        raise Missing("needs %s, which %s=%s cannot import (%s); point %s at a Python 3 "
                      "that has them (Debian: %s)" % (names, ENV, chosen, err, ENV, debian))
    if not again:
        for p in _candidates(configured):
            if _works(p, modules):
                _run_with(p)
    raise Missing("needs %s, which %s cannot import (%s), nor can any other Python tried "
                  "(configure's, /usr/bin/python3, python3 on PATH); set %s to a Python 3 "
                  "that has them (Debian: %s)" % (names, sys.executable, err, ENV, debian))


def plain_text_agg():
    """matplotlib without a display, and text drawn as written: a title or
    a file name with two $ in it is not a formula, which matplotlib would
    fail to parse at drawing time. Call before importing pyplot."""
    import matplotlib
    matplotlib.use("Agg")
    if "text.parse_math" in matplotlib.rcParams:  # (where this matplotlib has it)
        matplotlib.rcParams["text.parse_math"] = False
