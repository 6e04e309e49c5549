# boidsim_traj.py: reads boidsim trajectories (binary, CSV, gzip'd CSV) into numpy arrays.
"""Read boidsim trajectories into numpy arrays.

boidsim writes a run's trajectory as a binary file (``.bin``, format version
3, described in boidsim-trajectory(5); versions 1 and 2 still read), as CSV
(``.csv``) or as gzip'd CSV (``.csv.gz``). This module reads all three, with
every codec of the binary format (lossless byte planes, XOR deltas, deltas
of predicted positions, and the lossy quantised frames of
``output.precision``); it needs numpy, and for binary files whose chunks
are Zstandard frames (the default since header flag 2, ``output.compressor``)
the ``zstandard`` module (Debian: python3-zstandard), imported only when
such a file is read. The
format is detected from the file's first bytes, so a renamed file (or a CSV
run's ``.partial`` leftover) still reads.

From a notebook::

    import sys; sys.path.insert(0, "/path/to/boidsim/scripts")
    import boidsim_traj

    t = boidsim_traj.open_trajectory("run.bin")
    t.header            # {'version': 3, 'dims': 2, 'count': 3000, 'seed': 1, ...}
    t.scenario          # the effective scenario as a dict (None for CSV)

    # Everything at once: steps (F,), positions and velocities (F, N, dims)
    steps, pos, vel = t.read_all()

    # Or frame by frame, holding one frame in memory at a time
    for step, pos, vel in t.iter_frames():
        print(step, pos.mean(axis=0), (vel ** 2).sum(axis=1).mean())

Positions and velocities are float32 arrays of shape (count, dims), row i
being boid i. A run with colour following (a ``hue`` key in its scenario)
also writes each boid's hue, a fraction of a turn in [0, 1): ``t.has_hue``
says whether the file has it, ``t.header["fields"]`` names the fields, and
every reading method takes ``hue=True`` to get it as one more array, of
shape (count,) per frame (None for a file without a hue)::

    steps, pos, vel, hue = t.read_all(hue=True)        # hue: (F, N) or None
    for step, pos, vel, hue in t.iter_frames(hue=True):
        ...

Agents: predators and a changing population
--------------------------------------------
A run with predators or a population schedule writes *agents* (the binary
header's flag bit 0; in CSV the header ``step,group,id,...``): each frame
holds its own number of agents, each with an id (u32, stable over the run,
so possibly sparse) and a group (GROUP_BOID 0 or GROUP_PREDATOR 1), in
increasing (group, id) order, boids first. Boids and predators number
their ids separately: boid 0 and predator 0 are two agents. ``t.has_agents``
says whether a file has them; ``t.count`` is then the most agents a frame
may hold (binary: the header's; CSV: the most any frame holds, found by
reading the file through when it is opened, as boidsim does). The rows of
such a frame are not "boid i", so read_all(), iter_frames(), read_frame(k)
and frames_at() refuse such a file with a TrajectoryError that names the
calls to use instead: they take ``agents=True``, and there are Frame
objects::

    for f in t.frames():          # Frame objects, from any file
        f.step, f.pos, f.vel      # (n, dims) float32, n = f.count, this frame's
        f.ids, f.groups           # (n,) uint32
        f.hue                     # (n,) float32, or None without a hue (predators': 0)
        f.pos[f.is_predator]      # boolean masks is_boid and is_predator
        f.n_boids, f.n_predators
        boids = f.subset(boidsim_traj.GROUP_BOID)   # a Frame of those rows
        r = f.row(17)             # the row of boid 17 (row(0, GROUP_PREDATOR) ...), or -1

    f = t.frame(-1)                                  # one Frame, random access
    for step, pos, vel, ids, groups in t.iter_frames(agents=True):
        ...                                          # hue=True: hues before ids
    step, pos, vel, ids, groups = t.read_frame(k, agents=True)
    steps, pos, vel, ids, groups = t.read_all(agents=True)   # lists, one array a frame

agents=True works on every file (one without agents gives ids 0..n-1, all
in group 0); so do ``frames()`` and ``frame(k)``. ``t.track(id, group=
GROUP_BOID)`` follows one agent through the file: a Track (frames, steps,
pos, vel, hue) of the frame indexes where it is present, their steps, and
its positions (F, dims), velocities and hues (None without) there.
A CSV frame with agents ends where the step changes, so a CSV cut exactly
at the end of a line inside its last frame reads as a shorter last frame
(only a last line without its newline is known to be cut).

``t.digest()`` computes the content digest that ``boidsim info`` prints
("sha256:..."), the same for every format and codec of the same frames.

``t.frame_count()`` counts the frames; for a binary file,
``t.read_frame(k)`` reads frame k (negative k counts from the end) without
reading the frames before its key frame: through the frame index at the end
of a complete file, or else by a scan of the frame headers.

``t.header`` holds version, dims, count, fields (the names of a boid's
float values, as the CSV header has them, without id and group), hue,
agents, flags, seed, generator and, once the end of the file has been
reached (by reading or by frame_count), status: "complete",
"interrupted" (stopped by SIGINT/SIGTERM, marked in the end record) or
"missing" (no end record), with complete True or False, and
indexed (whether a frame index was found and matched). precision is None
until a lossy frame is read, then its precision: every value of such a
frame is within precision/2 of the simulation's. A CSV carries no version,
seed, generator or status: those stay None, and so does ``t.scenario``.

Binary files are checked as they are read: every CRC is verified, and a
damaged record raises TrajectoryError (a ValueError) naming the frame;
so do, in every format, steps that do not increase, and under an embedded
boidsim scenario values that are not finite or positions outside its box
(bounds modes wrap and reflect), with the same rules as boidsim's reader
(boidsim-trajectory(5)); the scenario itself must be a JSON object whose
seed is the header's. ``t.check()`` reads every frame so, as ``boidsim
verify`` does. CSV rows are read in the grammar of boidsim-trajectory(5)
(an optional sign, digits with an optional point and exponent; no
blanks, nan, inf or hex; nothing that overflows binary32), exactly as
boidsim reads them. A
file cut short part way through a frame (a full disk, an interrupted copy)
yields its complete frames and then raises; open it with ``strict=False``
to stop quietly instead, after which ``t.truncated`` is True. A run that
was killed outright leaves no end record; that is not an error in itself,
but as boidsim buffers its output such a file usually ends part way
through a frame too, so open it with strict=False. (It also keeps its
temporary name, ``.NAME.tmp.XXXXXX`` beside NAME.)
"""

import collections
import functools
import gzip
import hashlib
import io
import itertools
import json
import math
import os
import re
import struct
import zlib

import numpy as np

__all__ = ["open_trajectory", "TrajectoryError", "BinaryTrajectory", "CsvTrajectory",
           "Frame", "Track", "GROUP_BOID", "GROUP_PREDATOR", "FLAG_AGENTS"]

MAGIC = b"\x89BOID\r\n\x1a"
GZIP_MAGIC = b"\x1f\x8b"
VERSIONS = (1, 2, 3)
VERSION = 3
CODEC_ZLIB_F32 = 0       # key: one zlib stream of the float32 arrays (version 1)
CODEC_SHUFFLE = 1        # key: float32 byte planes, chunked zlib
CODEC_XOR = 2            # delta: as 1, the bits XOR the previous frame's
CODEC_QUANT = 3          # key, lossy: integer multiples of the precision
CODEC_QUANT_DELTA = 4    # delta, lossy: differences of those integers
CODEC_PREDICT = 5        # delta: as 2, positions XOR their prediction x + v h (version 3)
_PLANE_CODECS = (CODEC_SHUFFLE, CODEC_XOR, CODEC_PREDICT)
_KEY_CODECS = (CODEC_ZLIB_F32, CODEC_SHUFFLE, CODEC_QUANT)
FLAG_AGENTS = 1          # header flag: frames hold agents (ids, groups, changing counts)
FLAG_ZSTD = 2            # header flag (version 3): chunks are Zstandard frames or stored
# the flags each version knows
_FLAGS_KNOWN = {1: 0, 2: FLAG_AGENTS, 3: FLAG_AGENTS | FLAG_ZSTD}
GROUP_BOID = 0           # an agent's group: a boid ...
GROUP_PREDATOR = 1       # ... or a predator
_GROUPS = 2
_AGENT_FIELDS = 2        # id and group, stored after the float fields as u32

def _predict(x, v, h):
    """Codec 5's prediction (traj_predict in src/traj.h): the u32 bits of
    x + v h, from the bits of x and v, in binary64 rounded to binary32; x
    itself where that is a NaN. numpy's multiply and add round once each,
    as the writer's C does."""
    xf = x.view(np.float32)
    with np.errstate(all="ignore"):
        p = (xf.astype(np.float64) + v.view(np.float32).astype(np.float64) * h
             ).astype(np.float32)
    return np.where(np.isnan(p), xf, p).view(np.uint32)


# Layouts, all little-endian; see src/traj.h.
_HEADER = struct.Struct("<8sHHIQQIII")       # magic .. scenario length: 44 bytes
_FRAME = struct.Struct("<4sQIIQQI")          # tag, step, count, codec, raw, payload, crc
_END = struct.Struct("<4sIQQI")              # tag, status, frames, last step, crc
_INDEX_HEAD = struct.Struct("<4sQ")          # tag, entries; then entries and a CRC
_INDEX_ENTRY = np.dtype([("step", "<u8"), ("offset", "<u8"), ("codec", "<u4"), ("back", "<u4")])
_EXCEPTION = np.dtype([("slot", "<u8"), ("bits", "<u4")])
_QUANT_PRELUDE = struct.Struct("<dQ")        # precision, exceptions; then plane counts
_GENERATOR_MAX = 4096
_SCENARIO_MAX = 16 << 20
_CHUNK_MIN, _CHUNK_MAX = 64, 1 << 30
_PRECISION_MAX = 1e9
_INFLATE_RATIO = 1040      # deflate makes at most 1032 bytes of one, rounded up
_ZSTD_RATIO = 32768        # Zstandard: a block of at most 128 KiB in at least 4 bytes
_STATUS_NAMES = {0: "complete", 1: "interrupted"}


def _field_names(dims, hue):
    """The fields of a frame, in file order, as the CSV header names them."""
    axes = ["x", "y", "z"][:dims]
    return axes + ["v" + a for a in axes] + (["hue"] if hue else [])


class TrajectoryError(ValueError):
    """A file that is not a boidsim trajectory, or is damaged or cut short.
    The message names the file and, for a frame, its index (from 0)."""


def _compress_bound(n):
    """zlib's compressBound: no honest payload is longer than this."""
    return n + (n >> 12) + (n >> 14) + (n >> 25) + 13


def _payload_max(n):
    """The longest honest chunked payload of an n-byte stream: chunks of at
    least 64 bytes, each within compressBound, and the chunk table."""
    chunks = -(-n // _CHUNK_MIN)
    return 8 + 17 * chunks + _compress_bound(n)


def open_trajectory(path, strict=True):
    """Opens a boidsim trajectory, reading only its header (and, for CSV,
    its first frame, since the boid count is not written anywhere else).

    strict=False makes a file cut short inside a frame end quietly after
    its last complete frame, setting ``.truncated``; damaged data (a CRC
    mismatch, a bad record) raises TrajectoryError either way."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        head = f.read(len(MAGIC))
    if head == MAGIC:
        return BinaryTrajectory(path, strict)
    if head.startswith(GZIP_MAGIC):
        return CsvTrajectory(path, strict, compressed=True)
    if head.startswith(b"step,"):
        return CsvTrajectory(path, strict, compressed=False)
    raise TrajectoryError("%s: not a boidsim trajectory (neither the binary format, "
                          "CSV nor gzip'd CSV)" % path)


class Frame(collections.namedtuple("Frame", "step pos vel hue ids groups")):
    """One frame of any trajectory, as ``t.frames()`` and ``t.frame(k)``
    give it: step (int); pos and vel, float32 (n, dims); hue, float32 (n,)
    or None without a hue; ids and groups, uint32 (n,). Row i is one agent:
    its id, its group (GROUP_BOID 0 or GROUP_PREDATOR 1), its values. In a
    file with agents the rows are in increasing (group, id) order, boids
    first, and n changes from frame to frame; in a file without, n is the
    header's count, ids are 0..n-1 and every group is 0. A tuple, so it
    also unpacks: ``step, pos, vel, hue, ids, groups = frame``."""
    __slots__ = ()

    @property
    def count(self):
        """The number of agents (rows) in the frame."""
        return len(self.ids)

    @property
    def is_boid(self):
        """Boolean mask (n,) of the boids' rows."""
        return self.groups == GROUP_BOID

    @property
    def is_predator(self):
        """Boolean mask (n,) of the predators' rows."""
        return self.groups == GROUP_PREDATOR

    @property
    def n_boids(self):
        return int(np.count_nonzero(self.groups == GROUP_BOID))

    @property
    def n_predators(self):
        return int(np.count_nonzero(self.groups == GROUP_PREDATOR))

    def subset(self, group):
        """The frame with only the rows of one group (GROUP_BOID or
        GROUP_PREDATOR), or of a boolean mask."""
        m = self.groups == group if np.isscalar(group) else np.asarray(group, bool)
        return Frame(self.step, self.pos[m], self.vel[m],
                     None if self.hue is None else self.hue[m], self.ids[m], self.groups[m])

    def row(self, id, group=GROUP_BOID):
        """The row of the agent (group, id), or -1 when it is not in the
        frame."""
        keys = _agent_keys(self.ids, self.groups)
        want = np.uint64(int(group) << 32 | int(id))
        i = int(np.searchsorted(keys, want))
        return i if i < len(keys) and keys[i] == want else -1


# What track() returns: the frame indexes (F,) where the agent is, their
# steps (F,), its positions and velocities (F, dims), and its hues (F,) or
# None.
Track = collections.namedtuple("Track", "frames steps pos vel hue")


def _agent_keys(ids, groups):
    """(group, id) as one uint64 each, increasing along a frame's rows."""
    return groups.astype(np.uint64) << np.uint64(32) | ids.astype(np.uint64)


def _check_agents(ids, groups):
    """None when every group is known and the agents are in strictly
    increasing (group, id) order, else what is wrong."""
    if len(groups) and int(groups.max()) >= _GROUPS:
        return "agent %d has group %d" % (int(np.argmax(groups >= _GROUPS)),
                                           int(groups.max()))
    keys = _agent_keys(ids, groups)
    bad = np.flatnonzero(keys[1:] <= keys[:-1])
    if len(bad):
        return "agent %d out of (group, id) order" % (bad[0] + 1)
    return None


class _Trajectory:
    """What both formats share: whole-file reads built on _each_frame,
    which yields (step, pos, vel, hue or None, ids or None, groups or None),
    ids and groups None in a file without agents."""

    def __init__(self, path, strict):
        self.path = path
        self.strict = strict
        self.truncated = False
        self.header = {}
        self.scenario = None

    @property
    def dims(self):
        return self.header["dims"]

    @property
    def count(self):
        """Boids per frame; in a file with agents, the most agents a frame
        may hold (binary: the header's; CSV: the most any frame holds)."""
        return self.header["count"]

    @property
    def has_hue(self):
        """Whether the frames hold each boid's hue (colour following)."""
        return self.header["hue"]

    @property
    def has_agents(self):
        """Whether the frames hold agents: boids and predators with ids and
        groups, their number changing from frame to frame (header flag
        bit 0; in CSV, a group column)."""
        return self.header["agents"]

    def _no_agents(self):
        """The calls made for a fixed count of boids in id order refuse a
        file with agents rather than hand out rows that mean something
        else in each frame."""
        if self.has_agents:
            raise TrajectoryError(
                "%s: the frames hold agents (boids and predators with ids; the count "
                "changes from frame to frame): read them with frames(), "
                "iter_frames(agents=True), read_frame(k, agents=True) or "
                "read_all(agents=True)" % self.path)

    def _shape(self, rec, hue, agents):
        """A record of _each_frame as the public calls return it."""
        s, p, v, h, ids, groups = rec
        if not agents:
            return (s, p, v, h) if hue else (s, p, v)
        if ids is None:
            ids = np.arange(len(p), dtype=np.uint32)
            groups = np.zeros(len(p), np.uint32)
        return (s, p, v, h, ids, groups) if hue else (s, p, v, ids, groups)

    def iter_frames(self, hue=False, agents=False):
        """Yields (step, positions (N, dims), velocities (N, dims)), one frame
        at a time; with hue=True also the hues (N,) (None without a hue).
        agents=True adds the ids and groups (N,) uint32 at the end, N being
        the frame's count; it is required for a file with agents (any other
        file gives ids 0..N-1 and groups 0)."""
        if not agents:
            self._no_agents()
        return (self._shape(r, hue, agents) for r in self._each_frame())

    def frames(self):
        """Yields every frame as a Frame (step, pos, vel, hue, ids, groups),
        from any file."""
        for r in self._each_frame():
            yield Frame(*self._shape(r, True, True))

    def frame(self, i):
        """Frame i (negative counts from the end) as a Frame."""
        return Frame(*self.read_frame(i, hue=True, agents=True))

    def read_frame(self, i, hue=False, agents=False):
        """Frame i (negative counts from the end) as iter_frames gives it.
        The default reads through the file; subclasses that can seek do
        better."""
        n = self.frame_count() if i < 0 else i + 1
        if not -n <= i < n:
            raise IndexError("frame %d: %s has %d frames" % (i, self.path, n))
        for _, *rest in self.frames_at([i % n], hue, agents):
            return tuple(rest)
        raise IndexError("frame %d: %s has fewer frames" % (i, self.path))

    def read_all(self, hue=False, agents=False):
        """Returns (steps (F,) int64, positions (F, N, dims) float32,
        velocities (F, N, dims) float32); with hue=True also the hues
        (F, N) float32, or None when the file has none.

        A file with agents cannot be stacked so, as its frames differ in
        count: it raises TrajectoryError unless agents=True, which returns
        (steps (F,) int64, positions, velocities, [hues,] ids, groups),
        each of the last being a list of F arrays, one per frame, as
        iter_frames(agents=True) gives them (hues: a list of None without a
        hue)."""
        if agents:
            return self._read_lists(hue)
        self._no_agents()
        steps, pos, vel, hues = [], [], [], []
        for s, p, v, h, _, _ in self._each_frame():
            steps.append(s)
            pos.append(p)
            vel.append(v)
            hues.append(h)
        shape = (0, self.count or 0, self.dims)
        out = (np.array(steps, dtype=np.int64),
               np.stack(pos) if pos else np.empty(shape, np.float32),
               np.stack(vel) if vel else np.empty(shape, np.float32))
        if not hue:
            return out
        if not self.has_hue:
            return out + (None,)
        return out + (np.stack(hues) if hues else np.empty(shape[:2], np.float32),)

    def _read_lists(self, hue):
        cols = [[] for _ in range(6 if hue else 5)]
        for rec in self.iter_frames(hue=hue, agents=True):
            for c, x in zip(cols, rec):
                c.append(x)
        return (np.array(cols[0], dtype=np.int64),) + tuple(cols[1:])

    def frames_at(self, indexes, hue=False, agents=False):
        """Yields (index, step, positions, velocities), and with hue=True
        the hues, with agents=True the ids and groups, for the given frame
        indexes (non-negative, any order; each is yielded once, in file
        order). The default streams through the file; subclasses that can
        seek do better."""
        if not agents:
            self._no_agents()
        wanted = set(indexes)
        if not wanted:
            return
        last = max(wanted)
        for i, rec in enumerate(self._each_frame()):
            if i in wanted:
                yield (i,) + self._shape(rec, hue, agents)
            if i >= last:
                return

    def track(self, id, group=GROUP_BOID):
        """Follows one agent, (group, id), through the file: a Track of the
        frame indexes where it is present, their steps, and its positions,
        velocities and hues (None without a hue) there. In a file without
        agents, boid id is row id of every frame. Reads every frame."""
        want = np.uint64(int(group) << 32 | int(id))
        frames, steps, pos, vel, hues = [], [], [], [], []
        for k, (s, p, v, h, ids, groups) in enumerate(self._each_frame()):
            if ids is None:
                i = int(id) if group == GROUP_BOID and 0 <= int(id) < len(p) else -1
            else:
                keys = _agent_keys(ids, groups)
                i = int(np.searchsorted(keys, want))
                if i >= len(keys) or keys[i] != want:
                    i = -1
            if i >= 0:
                frames.append(k)
                steps.append(s)
                pos.append(p[i])
                vel.append(v[i])
                hues.append(None if h is None else h[i])
        d = self.dims
        return Track(np.array(frames, dtype=np.int64), np.array(steps, dtype=np.int64),
                     np.array(pos, np.float32).reshape(-1, d),
                     np.array(vel, np.float32).reshape(-1, d),
                     np.array(hues, np.float32) if self.has_hue else None)

    def digest(self):
        """The content digest that ``boidsim info`` prints, "sha256:" and
        64 hex digits: SHA-256 over each frame's step (u64 LE), count (u32
        LE), float32 arrays (x, y, [z], vx, vy, [vz], [hue], LE) and, with
        agents, ids and groups (u32 LE). Reads every frame."""
        md = hashlib.sha256()
        for s, p, v, h, ids, groups in self._each_frame():
            arrays = [p.T, v.T] + ([h[None, :]] if h is not None else [])
            md.update(struct.pack("<QI", s, len(p)))
            md.update(np.concatenate(arrays).view(np.uint32).astype("<u4").tobytes())
            if ids is not None:
                md.update(ids.astype("<u4").tobytes() + groups.astype("<u4").tobytes())
        return "sha256:" + md.hexdigest()

    def check(self):
        """Reads every frame with every check (CRCs, steps, values), as
        ``boidsim verify`` does; returns the number of frames, raising
        TrajectoryError on damage (and on a cut, when strict)."""
        return sum(1 for _ in self._each_frame())

    def _each_frame(self):
        """The frames of _raw_frames, each checked: steps strictly
        increasing, and what _check_values checks."""
        last = None
        for k, rec in enumerate(self._raw_frames()):
            if last is not None and rec[0] <= last:
                raise TrajectoryError("%s: frame %d (step %d): not after step %d, the frame "
                                      "before's" % (self.path, k, rec[0], last))
            self._check_values(rec, k)
            last = rec[0]
            yield rec

    _finite = False             # a boidsim scenario: every value finite
    _box = None                 # (lo, hi) positions must be within, or None
    _lossy = False              # the frame decoded last was lossy

    def _check_values(self, rec, index):
        """Under a boidsim scenario, finite values, hues in [0, 1] and
        positions inside the box when its bounds keep them there, lossy
        frames within their precision more (as boidsim checks)."""
        if not self._finite:
            return
        step, p, v, h = rec[:4]
        d = self.dims
        tol = self.header["precision"] if self._lossy else 0.0
        arrays = [p[:, k] for k in range(d)] + [v[:, k] for k in range(d)]
        arrays += [h] if h is not None else []
        for f, a in enumerate(arrays):
            lo, hi = -math.inf, math.inf
            if f < d and self._box is not None:
                lo, hi = self._box[0][f] - tol, self._box[1][f] + tol
            elif f == 2 * d:
                lo, hi = 0.0, 1.0 + tol
            x = a.astype(np.float64)
            bad = np.flatnonzero(~(np.isfinite(x) & (x >= lo) & (x <= hi)))
            if len(bad):
                i = int(bad[0])
                raise TrajectoryError("%s: frame %d (step %d): damaged values: %s of row %d "
                                      "is %.9g, %s" % (self.path, index, step,
                                                       self.header["fields"][f], i, x[i],
                                                       "not finite" if not math.isfinite(x[i])
                                                       else "outside the scenario's box"
                                                       if f < d else "outside [0, 1]"))

    def _cut(self, message):
        """A file that ends part way through a record."""
        self.truncated = True
        if self.strict:
            raise TrajectoryError(message)

    def __repr__(self):
        return "<%s %r dims=%s count=%s%s>" % (type(self).__name__, self.path,
                                               self.header.get("dims"),
                                               self.header.get("count"),
                                               " agents" if self.header.get("agents") else "")


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _first_keys(pairs):
    d = {}
    for k, v in pairs:
        d.setdefault(k, v)
    return d


def _refuse_constant(name):
    raise ValueError("%s is not JSON" % name)


def _load_scenario(path, text, seed):
    """The embedded scenario: a JSON object without NUL whose seed is the
    header's (a number, compared in binary64, or a string of digits,
    compared exactly), as boidsim requires."""
    if "\0" in text:
        raise TrajectoryError("%s: damaged header: a NUL byte in the embedded scenario" % path)
    try:
        # the first of repeated keys, as boidsim's JSON parser takes it
        sc = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_first_keys)
    except ValueError:
        sc = None
    if not isinstance(sc, dict):
        raise TrajectoryError("%s: damaged header: the embedded scenario is not a JSON object"
                              % path)
    s = sc.get("seed")
    if not (float(s) == float(seed) if _is_number(s) else
            isinstance(s, str) and s == str(seed)):
        raise TrajectoryError("%s: damaged header: the embedded scenario's seed is not the "
                              "header's (%d)" % (path, seed))
    return sc


class _Entry(tuple):
    """What is known of a frame without decoding it: (offset, step, codec,
    back), back being how many frames before it its key frame is."""
    __slots__ = ()
    offset = property(lambda self: self[0])
    step = property(lambda self: self[1])
    codec = property(lambda self: self[2])
    back = property(lambda self: self[3])


class BinaryTrajectory(_Trajectory):
    """A trajectory in boidsim's binary format, version 1, 2 or 3."""

    def __init__(self, path, strict=True):
        super().__init__(path, strict)
        self._index = None
        self._index_off = None      # where the frame index starts, once loaded
        self._cache = None          # (frame index, decoder state) of the last frame read
        with open(path, "rb") as f:
            fixed = f.read(_HEADER.size)
            if len(fixed) < _HEADER.size:
                raise TrajectoryError("%s: header cut short" % path)
            (magic, version, dims, flags, count, seed, fields, glen,
             jlen) = _HEADER.unpack(fixed)
            if magic != MAGIC:
                raise TrajectoryError("%s: not a boidsim binary trajectory (bad magic)" % path)
            if version not in VERSIONS:
                raise TrajectoryError("%s: format version %d, this reader knows %d to %d"
                                      % (path, version, VERSIONS[0], VERSIONS[-1]))
            if flags & ~_FLAGS_KNOWN[version]:
                raise TrajectoryError("%s: header flags 0x%x are unknown to this reader"
                                      % (path, flags))
            agents = bool(flags & FLAG_AGENTS)
            # positions and velocities, and perhaps the hue; with agents
            # then the id and the group
            nff = fields - (_AGENT_FIELDS if agents else 0)
            if (dims not in (2, 3) or nff not in (2 * dims, 2 * dims + 1)
                    or not 0 < count < 2**32
                    or glen > _GENERATOR_MAX or jlen > _SCENARIO_MAX):
                raise TrajectoryError("%s: damaged header" % path)
            strings = f.read(glen + jlen)
            crc = f.read(4)
            if len(strings) < glen + jlen or len(crc) < 4:
                raise TrajectoryError("%s: header cut short" % path)
            if struct.unpack("<I", crc)[0] != zlib.crc32(fixed + strings):
                raise TrajectoryError("%s: header CRC mismatch" % path)
            self._data_start = f.tell()
        try:
            generator = strings[:glen].decode("utf-8")
            text = strings[glen:].decode("utf-8")
        except UnicodeDecodeError as e:
            raise TrajectoryError("%s: damaged header: %s" % (path, e))
        if jlen:
            self.scenario = _load_scenario(path, text, seed)
            self._scenario_checks(self.scenario, dims)
        self._fields = fields       # stored, id and group included
        self._nff = nff             # the float fields
        self.header = {"format": "bin", "version": version, "dims": dims,
                       "count": count, "seed": seed, "flags": flags,
                       "fields": _field_names(dims, nff > 2 * dims),
                       "hue": nff > 2 * dims, "agents": agents,
                       "generator": generator, "status": None, "complete": None,
                       "frames": None, "indexed": None, "precision": None}

    def _scenario_checks(self, sc, dims):
        """What a boidsim scenario says of the values: finite (it has
        bounds), and with bounds.mode wrap or reflect within the box."""
        b = sc.get("bounds")
        self._finite = isinstance(b, dict)
        if not self._finite or b.get("mode") not in ("wrap", "reflect"):
            return
        lo, hi = b.get("min"), b.get("max")
        if not (isinstance(lo, list) and isinstance(hi, list) and len(lo) == dims == len(hi)
                and all(_is_number(x) for x in lo + hi)):
            return
        # the box the run kept its boids in: binary32 corners, a side too
        # narrow for them given the smallest binary32 width (bounds_side32)
        with np.errstate(over="ignore"):
            lo = [float(np.float32(a)) for a in lo]
            hi = [float(np.float32(z)) if np.float32(z) > np.float32(a)
                  else float(np.nextafter(np.float32(a), np.float32(np.inf)))
                  for a, z in zip(lo, hi)]
        tol = [math.ldexp(max(abs(a), abs(z)), -20) for a, z in zip(lo, hi)]
        self._box = ([a - t for a, t in zip(lo, tol)], [z + t for z, t in zip(hi, tol)])

    def _record_end(self, status, frames):
        self.header["status"] = status
        self.header["complete"] = status == "complete"
        self.header["frames"] = frames
        if self.header["indexed"] is None:
            self.header["indexed"] = False

    def _cut_in_frame(self, index):
        self._cut("%s: file cut short in frame %d"
                  % (self.path, index))
        self._record_end("missing", index)

    def _read_end(self, f, tag, frames, last_step):
        """Checks the end record (tag already read) against what was read."""
        rest = f.read(_END.size - 4)
        if len(rest) < _END.size - 4:
            self._cut("%s: end record cut short after %d frames" % (self.path, frames))
            self._record_end("missing", frames)
            return
        _, status, n, last, crc = _END.unpack(tag + rest)
        if (crc != zlib.crc32(tag + rest[:20]) or status not in _STATUS_NAMES
                or n != frames or (frames and last != last_step)):
            raise TrajectoryError("%s: damaged end record after %d frames" % (self.path, frames))
        # The C reader ignores what follows; anything there is a sign of a
        # botched concatenation or copy, worth hearing about.
        if self.strict and f.read(1):
            raise TrajectoryError("%s: data after the end record" % self.path)
        self._record_end(_STATUS_NAMES[status], frames)

    def _read_index_record(self, f, tag, seen):
        """The frame index (tag already read), met after the frames: its CRC,
        and every entry equal to what the frames said. False when cut."""
        rest = f.read(_INDEX_HEAD.size - 4)
        if len(rest) == _INDEX_HEAD.size - 4:
            n = _INDEX_HEAD.unpack(tag + rest)[1]
            if n != len(seen):
                raise TrajectoryError("%s: damaged frame index: %d entries for %d frames"
                                      % (self.path, n, len(seen)))
            body = f.read(n * _INDEX_ENTRY.itemsize + 4)
            if len(body) == n * _INDEX_ENTRY.itemsize + 4:
                crc = struct.unpack("<I", body[-4:])[0]
                if zlib.crc32(body[:-4], zlib.crc32(tag + rest)) != crc:
                    raise TrajectoryError("%s: frame index CRC mismatch" % self.path)
                e = np.frombuffer(body[:-4], _INDEX_ENTRY)
                want = np.array([(s, o, c, b) for o, s, c, b in seen], _INDEX_ENTRY)
                if not np.array_equal(e, want):
                    raise TrajectoryError("%s: damaged frame index: it differs from the "
                                          "frames" % self.path)
                self.header["indexed"] = True
                return True
        self._cut("%s: frame index cut short after %d frames" % (self.path, len(seen)))
        self._record_end("missing", len(seen))
        return False

    def _frame_header(self, f, seen):
        """Reads the next record's 40-byte header, seen being the entries of
        the frames before it. Returns (header bytes, entry, payload length),
        or None at the end of the frames (the frame index and end record
        checked) or where the file is cut short (non-strict)."""
        index = len(seen)
        last_step = seen[-1].step if seen else None
        after_index = False
        while True:
            offset = f.tell()
            tag = f.read(4)
            if not tag:
                self._record_end("missing", index)    # killed run: no end record
                return None
            if len(tag) < 4:
                self._cut_in_frame(index)
                return None
            if tag == b"TEND":
                self._read_end(f, tag, index, last_step)
                return None
            if tag == b"FIDX" and self.header["version"] >= 2 and not after_index:
                if not self._read_index_record(f, tag, seen):
                    return None
                after_index = True
                continue
            if tag != b"FRAM" or after_index:
                raise TrajectoryError("%s: frame %d: bad record tag %r" % (self.path, index, tag))
            break
        rest = f.read(_FRAME.size - 4)
        if len(rest) < _FRAME.size - 4:
            self._cut_in_frame(index)
            return None
        hdr = tag + rest
        self._check_frame_header(hdr, index)
        _, step, _, codec, _, zlen, _ = _FRAME.unpack(hdr)
        if codec in _KEY_CODECS:
            back = 0
        elif seen:
            back = seen[-1].back + 1
        else:
            raise TrajectoryError("%s: frame 0: a delta frame without the frame it depends on"
                                  % self.path)
        return hdr, _Entry((offset, step, codec, back)), zlen

    def _check_frame_header(self, hdr, index):
        """The frame's count (the header's, or with agents at most that),
        codec and lengths."""
        _, step, count, codec, raw_len, zlen, _ = _FRAME.unpack(hdr)
        ok = ((count <= self.count if self.has_agents else count == self.count)
              and (codec == CODEC_ZLIB_F32 or
                   (self.header["version"] >= 2 and codec <= CODEC_QUANT_DELTA) or
                   (self.header["version"] >= 3 and codec == CODEC_PREDICT)))
        if ok and codec <= CODEC_XOR:
            ok = raw_len == count * self._fields * 4
        elif ok and codec == CODEC_PREDICT:
            ok = raw_len == 8 + count * self._fields * 4
        elif ok:
            ok = (_QUANT_PRELUDE.size + self._fields <= raw_len
                  <= _QUANT_PRELUDE.size + self._fields + count * self._fields * 20)
        if ok:
            ok = (zlen <= _compress_bound(raw_len) if codec == CODEC_ZLIB_F32
                  else 8 <= zlen <= _payload_max(raw_len))
        # deflate's (Zstandard's) largest expansion bounds the stream a
        # payload may claim
        ok = ok and raw_len // (_ZSTD_RATIO if self.header["flags"] & FLAG_ZSTD
                                and codec != CODEC_ZLIB_F32 else _INFLATE_RATIO) <= zlen
        if not ok:
            raise TrajectoryError("%s: frame %d: damaged frame header" % (self.path, index))

    def _inflate(self, data, size, index, step):
        d = zlib.decompressobj()
        try:
            out = d.decompress(data, size + 1)
        except zlib.error:
            out = b""
        if len(out) != size or not d.eof or d.unused_data or d.unconsumed_tail:
            raise TrajectoryError("%s: frame %d (step %d): payload does not decompress"
                                  % (self.path, index, step))
        return out

    def _unzstd(self, data, size, index, step):
        """One chunk of a file with FLAG_ZSTD: one whole Zstandard frame that
        decompresses to exactly size bytes, or (as long as the chunk) the
        bytes themselves."""
        if len(data) == size:
            return data
        try:
            import zstandard
        except ImportError:
            raise TrajectoryError("%s: its chunks are Zstandard frames, which need Python's "
                                  "zstandard module (Debian: python3-zstandard)" % self.path)
        out = b""
        try:
            # the frame's header gives its size (so the output is bounded)
            if len(data) < size and zstandard.frame_content_size(data) == size:
                # (any window a frame may have, as boidsim's reader,
                # which decodes into the chunk: the content size bounds
                # what is allocated)
                d = zstandard.ZstdDecompressor(max_window_size=2**31).decompressobj()
                out = d.decompress(data)
                if not d.eof or d.unused_data:
                    out = b""
        except zstandard.ZstdError:
            out = b""
        if len(out) != size:
            raise TrajectoryError("%s: frame %d (step %d): payload does not decompress"
                                  % (self.path, index, step))
        return out

    def _unchunk(self, payload, raw_len, index, step):
        """The chunked payload of codecs 1 to 5: the stream it holds."""
        csize, n = struct.unpack_from("<II", payload, 0)
        if (not _CHUNK_MIN <= csize <= _CHUNK_MAX or n != -(-raw_len // csize)
                or 8 + 4 * n > len(payload)):
            raise TrajectoryError("%s: frame %d: damaged chunk table" % (self.path, index))
        lens = np.frombuffer(payload, "<u4", n, 8).astype(np.int64)
        if 8 + 4 * n + int(lens.sum()) != len(payload):
            raise TrajectoryError("%s: frame %d: damaged chunk table" % (self.path, index))
        out, off = [], 8 + 4 * n
        chunk = self._unzstd if self.header["flags"] & FLAG_ZSTD else self._inflate
        for k, ln in enumerate(lens.tolist()):
            out.append(chunk(payload[off:off + ln], min(csize, raw_len - k * csize),
                             index, step))
            off += ln
        return b"".join(out)

    def _decode(self, hdr, payload, index, step, state):
        """Checks the CRC and decodes the payload, state being the decoder
        state after the frame before (None when there is none). Returns
        (positions, velocities, hues or None, ids or None, groups or None,
        the new state)."""
        _, _, n, codec, raw_len, _, crc = _FRAME.unpack(hdr)
        if zlib.crc32(payload, zlib.crc32(hdr[:36])) != crc:
            raise TrajectoryError("%s: frame %d (step %d): CRC mismatch"
                                  % (self.path, index, step))
        nf = self._fields
        if codec not in _KEY_CODECS and state is None:
            raise TrajectoryError("%s: frame %d: a delta frame without the frame it depends on"
                                  % (self.path, index))
        if codec not in _KEY_CODECS and state[0].shape[1] != n:
            raise TrajectoryError("%s: frame %d: a delta frame of %d agents after a frame "
                                  "of %d" % (self.path, index, n, state[0].shape[1]))
        q = prec = None
        if codec == CODEC_ZLIB_F32:
            raw = self._inflate(payload, raw_len, index, step)
            bits = np.frombuffer(raw, "<u4").reshape(nf, n).astype(np.uint32)
        else:
            t = np.frombuffer(self._unchunk(payload, raw_len, index, step), np.uint8)
            if codec in _PLANE_CODECS:
                t0 = 8 if codec == CODEC_PREDICT else 0
                p = t[t0:].reshape(nf, 4, n).astype(np.uint32)
                bits = p[:, 0] | p[:, 1] << 8 | p[:, 2] << 16 | p[:, 3] << 24
                if codec != CODEC_SHUFFLE:
                    bits ^= state[0]
                if codec == CODEC_PREDICT:
                    h = struct.unpack_from("<d", t, 0)[0]
                    d = self.dims
                    bits[:d] ^= state[0][:d] ^ _predict(state[0][:d], bits[d:2 * d], h)
            else:
                bits, q, prec = self._unquantise(t, codec, index, state, n)
        d, nff = self.dims, self._nff
        pos = np.ascontiguousarray(bits[:d].T).view(np.float32)
        vel = np.ascontiguousarray(bits[d:2 * d].T).view(np.float32)
        hue = bits[2 * d].copy().view(np.float32) if nff > 2 * d else None
        ids = groups = None
        if self.has_agents:
            ids, groups = bits[nff].copy(), bits[nff + 1].copy()
            bad = _check_agents(ids, groups)
            if bad:
                raise TrajectoryError("%s: frame %d: damaged agents: %s"
                                      % (self.path, index, bad))
        self._lossy = codec not in _PLANE_CODECS and codec != CODEC_ZLIB_F32
        return pos, vel, hue, ids, groups, (bits, q, prec)

    def _unquantise(self, t, codec, index, state, n):
        """Codecs 3 and 4: integers of the precision back to float32 bits;
        with agents, the id and group fields are the integers themselves."""
        nf, nff = self._fields, self._nff
        prec, nexc = _QUANT_PRELUDE.unpack_from(t, 0)
        ks = t[_QUANT_PRELUDE.size:_QUANT_PRELUDE.size + nf].astype(np.int64)
        start = _QUANT_PRELUDE.size + nf
        # exceptions only in the float fields' slots
        if (not 0 < prec <= _PRECISION_MAX or (ks > 8).any() or nexc > nff * n
                or len(t) != start + int(ks.sum()) * n + nexc * _EXCEPTION.itemsize):
            raise TrajectoryError("%s: frame %d: damaged lossy frame" % (self.path, index))
        if codec == CODEC_QUANT_DELTA and (state is None or state[1] is None
                                           or state[2] != prec):
            raise TrajectoryError("%s: frame %d: a lossy delta frame without the lossy frame "
                                  "of the same precision it depends on" % (self.path, index))
        q = np.zeros((nf, n), np.uint64)
        off = start
        for f in range(nf):
            for b in range(int(ks[f])):
                q[f] |= t[off:off + n].astype(np.uint64) << np.uint64(8 * b)
                off += n
        # Zigzag back to two's complement differences; uint64 wraps as the
        # format's arithmetic does.
        q = (q >> np.uint64(1)) ^ (np.uint64(0) - (q & np.uint64(1)))
        if codec == CODEC_QUANT_DELTA:
            q += state[1]
        # To binary64 (exact within 2^53), times the precision, to binary32:
        # each step rounds to nearest even, as the format says.
        vals = (q[:nff].view(np.int64).astype(np.float64) * prec).astype(np.float32)
        bits = np.empty((nf, n), np.uint32)
        bits[:nff] = vals.view(np.uint32)
        if nf > nff:
            # id and group: exact u32 integers, no precision applied
            if (q[nff:] > np.uint64(0xFFFFFFFF)).any():
                raise TrajectoryError("%s: frame %d: damaged lossy frame: an id or group "
                                      "beyond 32 bits" % (self.path, index))
            bits[nff:] = q[nff:].astype(np.uint32)
        if nexc:
            e = np.frombuffer(t.tobytes()[off:], _EXCEPTION)
            slots = e["slot"].astype(np.uint64)
            if (slots >= nff * n).any() or (np.diff(slots.astype(np.float64)) <= 0).any():
                raise TrajectoryError("%s: frame %d: damaged lossy frame" % (self.path, index))
            bits.reshape(-1)[slots.astype(np.int64)] = e["bits"]
        self.header["precision"] = prec
        return bits, q, prec

    def _raw_frames(self):
        """Yields (step, positions, velocities, hues or None, ids or None,
        groups or None), one frame at a time, checking each frame's CRC."""
        self.truncated = False
        seen, state = [], None
        with open(self.path, "rb") as f:
            f.seek(self._data_start)
            while True:
                got = self._frame_header(f, seen)
                if got is None:
                    return
                hdr, entry, zlen = got
                payload = f.read(zlen)
                if len(payload) < zlen:
                    self._cut_in_frame(len(seen))
                    return
                pos, vel, hue, ids, groups, state = self._decode(hdr, payload, len(seen),
                                                                 entry.step, state)
                seen.append(entry)
                yield entry.step, pos, vel, hue, ids, groups

    def _load_frame_index(self):
        """The frame index at the end of a complete version 2 or 3 file, as a list
        of entries, or None when there is none. Raises when it is damaged."""
        if self.header["version"] < 2:
            return None
        with open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < self._data_start + 16 + _END.size:
                return None
            f.seek(size - _END.size)
            end = f.read(_END.size)
            tag, status, n, last, crc = _END.unpack(end)
            if tag != b"TEND" or crc != zlib.crc32(end[:24]) or status not in _STATUS_NAMES:
                return None
            length = 16 + n * _INDEX_ENTRY.itemsize
            off = size - _END.size - length
            if n > size // (_INDEX_ENTRY.itemsize + _FRAME.size) or off < self._data_start:
                return None
            f.seek(off)
            rec = f.read(length)
        tag, m = _INDEX_HEAD.unpack_from(rec, 0)
        if tag != b"FIDX" or m != n:
            return None
        if zlib.crc32(rec[:-4]) != struct.unpack("<I", rec[-4:])[0]:
            raise TrajectoryError("%s: frame index CRC mismatch" % self.path)
        e = np.frombuffer(rec[12:-4], _INDEX_ENTRY)
        entries = [_Entry((int(o), int(s), int(c), int(b)))
                   for s, o, c, b in e.tolist()]
        prev = None
        for k, x in enumerate(entries):
            if prev is not None and x.step <= prev.step:
                raise TrajectoryError("%s: damaged frame index: steps not increasing" % self.path)
            lo = prev.offset + _FRAME.size if prev else self._data_start
            if (not lo <= x.offset <= off - _FRAME.size or x.codec > CODEC_PREDICT
                    or (x.back == 0) != (x.codec in _KEY_CODECS)
                    or (x.back and (prev is None or prev.back != x.back - 1))):
                raise TrajectoryError("%s: damaged frame index at entry %d" % (self.path, k))
            prev = x
        if entries and entries[-1].step != last:
            raise TrajectoryError("%s: damaged frame index: last step" % self.path)
        self._record_end(_STATUS_NAMES[status], n)
        self.header["indexed"] = True
        self._index_off = off
        return entries

    def index(self):
        """The frames' entries (offset, step, codec, back), from the frame
        index at the end of a complete file, or else by scanning the frame
        headers without decompressing anything. Also learns how the file
        ends (header["status"]). Payload CRCs are checked only when a frame
        is read."""
        if self._index is not None:
            return self._index
        index = self._load_frame_index()
        if index is not None:
            self._index = index
            return index
        index = []
        with open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            f.seek(self._data_start)
            while True:
                got = self._frame_header(f, index)
                if got is None:
                    break
                _, entry, zlen = got
                if entry.offset + _FRAME.size + zlen > size:
                    self._cut_in_frame(len(index))
                    break
                index.append(entry)
                f.seek(zlen, os.SEEK_CUR)
        self._index = index
        return index

    def frame_count(self):
        return len(self.index())

    def steps(self):
        return np.array([e.step for e in self.index()], dtype=np.int64)

    def read_frame(self, i, hue=False, agents=False):
        """Frame i (negative counts from the end) as (step, positions,
        velocities), and with hue=True the hues (None without), with
        agents=True the ids and groups, found through index(), decoding only
        the frames from its key frame on (or from the frame read last, when
        that is on the way)."""
        if not agents:
            self._no_agents()
        index = self.index()
        entry = index[i]
        i = i % len(index)
        start, state = i - entry.back, None
        if self._cache is not None and start <= self._cache[0] < i:
            start, state = self._cache[0] + 1, self._cache[1]
        with open(self.path, "rb") as f:
            for j in range(start, i + 1):
                e = index[j]
                f.seek(e.offset)
                hdr = f.read(_FRAME.size)
                if len(hdr) < _FRAME.size or hdr[:4] != b"FRAM":
                    raise TrajectoryError("%s: frame %d is not where the index says"
                                          % (self.path, j))
                self._check_frame_header(hdr, j)
                _, step, _, codec, _, zlen, _ = _FRAME.unpack(hdr)
                if step != e.step or codec != e.codec:
                    raise TrajectoryError("%s: frame %d is not where the index says"
                                          % (self.path, j))
                end = index[j + 1].offset if j + 1 < len(index) else self._index_off
                if end is not None and e.offset + _FRAME.size + zlen != end:
                    raise TrajectoryError("%s: damaged frame index: frame %d does not end "
                                          "where the next record starts" % (self.path, j))
                payload = f.read(zlen)
                if len(payload) < zlen:
                    raise TrajectoryError("%s: file cut short in frame %d" % (self.path, j))
                rec = self._decode(hdr, payload, j, step, state)
                state = rec[-1]
                self._cache = (j, state)
        self._check_values((entry.step,) + rec[:-1], i)
        return self._shape((entry.step,) + rec[:-1], hue, agents)

    def frames_at(self, indexes, hue=False, agents=False):
        if not agents:
            self._no_agents()
        for i in sorted(set(indexes)):
            yield (i,) + self.read_frame(i, hue, agents)

    def read_all(self, hue=False, agents=False):
        if agents:
            return self._read_lists(hue)
        self._no_agents()
        # Knowing the frame count first lets the result be filled in place
        # rather than stacked, halving the peak memory.
        n = self.frame_count()
        steps = np.empty(n, np.int64)
        pos = np.empty((n, self.count, self.dims), np.float32)
        vel = np.empty_like(pos)
        hues = np.empty((n, self.count), np.float32) if self.has_hue else None
        for i, s, p, v, h in self.frames_at(range(n), hue=True):
            steps[i], pos[i], vel[i] = s, p, v
            if hues is not None:
                hues[i] = h
        return (steps, pos, vel, hues) if hue else (steps, pos, vel)


# The CSV grammar of boidsim-trajectory(5), as boidsim's reader has it:
# unsigned decimal integers; values with an optional sign, digits with an
# optional point (digits on at least one side) and an optional exponent.
_CSV_UINT = r"[0-9]+"
_CSV_VALUE = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_F32_OVERFLOW = float.fromhex("0x1.ffffffp+127")


@functools.lru_cache(maxsize=None)
def _csv_line_re(nint, nf):
    return re.compile(",".join([_CSV_UINT] * nint + [_CSV_VALUE] * nf) + "\n")


def _csv_row_ok(line, nint, nf):
    """Whether a CSV row (with its newline) is in the grammar, its step
    and (without agents) id at most 2^64-1, with agents its group and id at
    most 2^32-1, as boidsim's reader checks each row it reads."""
    if not _csv_line_re(nint, nf).fullmatch(line):
        return False
    f = line.split(",")
    # (binary32's largest value and half an ulp above round to it)
    return (int(f[0]) < 2**64 and all(int(x) < (2**32 if nint == 3 else 2**64)
                                      for x in f[1:nint])
            and all(abs(float(x)) < _F32_OVERFLOW for x in f[nint:]))


def _csv_bad_column(line, nint, nf):
    """The 1-based column at which boidsim's reader refuses a CSV row, as
    it reports it: the start of the first field that is not a number in
    the grammar (or out of range), or that the right separator does not
    follow (a comma; after the last field, the end of the line); 0 when
    the row is sound."""
    fields = (line[:-1] if line.endswith("\n") else line).split(",")
    want, start = nint + nf, 0
    for k, x in enumerate(fields[:want]):
        if k < nint:
            ok = (re.fullmatch(_CSV_UINT, x) is not None
                  and int(x) < (2**32 if nint == 3 and k > 0 else 2**64))
        else:
            ok = (re.fullmatch(_CSV_VALUE, x) is not None
                  and abs(float(x)) < _F32_OVERFLOW)
        if not ok:
            return start + 1
        if k + 1 < min(len(fields), want):
            start += len(x) + 1
    return start + 1 if len(fields) != want else 0


def _csv_row_error(path, line_no, line, nint, nf):
    """boidsim's one line for a CSV row that is not in the grammar."""
    return TrajectoryError("%s:%d:%d: expected %d comma-separated numbers "
                           "(see boidsim-trajectory(5))"
                           % (path, line_no, max(1, _csv_bad_column(line, nint, nf)),
                              nint + nf))


def _step_key(line):
    """The step of a CSV row, as boidsim compares it: a number when the
    first field is digits."""
    s = line.split(",", 1)[0]
    return int(s) if s.isdigit() and s.isascii() else s


class _GzipTail(io.RawIOBase):
    """A gzip file's text up to where its stream stops, even when it stops
    without its end (then .cut is True), so that the last line of a cut
    file is seen, as boidsim's reader sees it."""

    def __init__(self, path):
        super().__init__()
        self._g = gzip.open(path, "rb")
        self.cut = False
        self._done = False

    def readable(self):
        return True

    def readinto(self, b):
        if self.cut:
            return 0
        if self._done:
            return 0
        try:
            data = self._g.read1(len(b))
        except EOFError:
            self.cut = True
            return 0
        except gzip.BadGzipFile as e:
            # Bytes after a whole gzip member that do not start another
            # member: zlib's gzread (boidsim's reader) ignores them as
            # trailing garbage, and so does this. (The first member's
            # magic was checked when the file was opened.)
            if not str(e).startswith("Not a gzipped file"):
                raise
            self._done = True
            return 0
        b[:len(data)] = data
        return len(data)

    def close(self):
        self._g.close()
        super().close()


class CsvTrajectory(_Trajectory):
    """A trajectory written as CSV, `step,id,x,y,[z,]vx,vy[,vz][,hue]`, one
    row per boid per frame in id order; or, with agents,
    `step,group,id,x,y,...`, a frame being the run of rows with one step,
    in (group, id) order. Optionally gzip'd."""

    def __init__(self, path, strict=True, compressed=False):
        super().__init__(path, strict)
        self._compressed = compressed
        self._frames = None
        self._scan = None           # with agents: (frames, cut) found at open
        self._first_cut = False     # cut inside the first frame
        try:
            self._read_head(path, compressed)
        except UnicodeDecodeError as e:
            # (the offset within the decoder's chunk is not the file's)
            raise TrajectoryError("%s: not a boidsim CSV trajectory: a byte that is not text"
                                  " (0x%02x)%s" % (path, e.object[e.start],
                                                   "; it is a binary trajectory, to be named .bin"
                                                   if e.object[:len(MAGIC)] == MAGIC else ""))
        except (EOFError, OSError, zlib.error) as e:
            raise TrajectoryError("%s: not a boidsim CSV trajectory: %s" % (path, e))

    def _read_head(self, path, compressed):
        with self._open() as f:
            first = f.readline()
            names = first.rstrip("\n").split(",") if first.endswith("\n") else []
            for agents, dims, hue in itertools.product((False, True), (2, 3), (False, True)):
                lead = ["step", "group", "id"] if agents else ["step", "id"]
                if names == lead + _field_names(dims, hue):
                    break
            else:
                raise TrajectoryError("%s: unexpected CSV header %r" % (path, first.rstrip("\n")))
            self.header = {"format": "csv.gz" if compressed else "csv", "version": None,
                           "dims": dims, "fields": names[len(lead):], "hue": hue,
                           "agents": agents, "flags": FLAG_AGENTS if agents else 0,
                           "count": None, "seed": None, "generator": None,
                           # CSV has no end record: an interrupted run is told
                           # only by the .partial name boidsim gives it.
                           "status": None, "complete": None, "frames": None,
                           "indexed": None, "precision": None}
            if agents:
                # As boidsim does: the whole file read through once, for
                # the most agents a frame holds.
                most, frames, cut = self._scan_runs(f)
                self.header["count"] = most or None
                self._scan = (frames, cut)
                if not most:
                    raise TrajectoryError("%s: no frames after the header" % path)
                return
            # The count is the length of the first frame: rows until the
            # step changes.
            count = 0
            step0 = None
            try:
                for line in f:
                    step = _step_key(line)
                    if not line.endswith("\n"):
                        # cut inside the first frame: its count is not
                        # known, so no frame is whole (as boidsim says),
                        # unless the cut line is of the next step
                        self._first_cut = step0 is None or step == step0
                        break
                    # each row checked as it is read, as boidsim does
                    if not _csv_row_ok(line, 2, len(names) - 2):
                        raise _csv_row_error(path, count + 2, line, 2, len(names) - 2)
                    if step0 is None:
                        step0 = step
                    elif step != step0:
                        break
                    count += 1
                else:
                    self._check_tail(f)
            except EOFError:
                self._first_cut = True
            self.header["count"] = count or None
            if not count and not self._first_cut:
                raise TrajectoryError("%s: no frames after the header" % path)

    @classmethod
    def _scan_runs(cls, f):
        """Reads the rest of f: (the longest run of rows with one step, the
        number of frames, whether the file is cut short), a last row without
        its newline taking its frame with it."""
        most = frames = run = 0
        step, cut = None, False
        try:
            for line in f:
                s = _step_key(line)
                if s != step:
                    frames += run > 0
                    run = 0
                    step = s
                if not line.endswith("\n"):
                    cut = True
                    run = 0
                    break
                run += 1
                most = max(most, run)
            else:
                cls._check_tail(f)
        except EOFError:
            # a gzip stream cut after a whole line: the last run is a
            # frame, as at the end of a plain file
            cut = True
        return most, frames + (run > 0), cut

    def _open(self):
        if self._compressed:
            return io.TextIOWrapper(io.BufferedReader(_GzipTail(self.path)), encoding="ascii",
                                    newline="\n")
        # lines end at LF only: a CR is a byte of the line, which the
        # grammar refuses
        return open(self.path, "r", encoding="ascii", newline="\n")

    @staticmethod
    def _check_tail(f):
        """At the end of the text: raises EOFError when it is that of a
        gzip stream cut short."""
        raw = getattr(getattr(f, "buffer", None), "raw", None)
        if isinstance(raw, _GzipTail) and raw.cut:
            raise EOFError("gzip stream cut short")

    def _load_rows(self, lines, index, nint, line0):
        """A frame's rows (the first on line line0 of the file), each
        checked against the CSV grammar of boidsim-trajectory(5) as boidsim
        checks it, and refused with its line and column: (the nint integer
        columns as lists of Python ints, the values as float32 (rows,
        fields)), each value read in binary64 and rounded to binary32."""
        nf = len(self.header["fields"])
        line_re = _csv_line_re(nint, nf)
        for k, line in enumerate(lines):
            if not line_re.fullmatch(line):
                raise _csv_row_error(self.path, line0 + k, line, nint, nf)
        cols = list(zip(*(line.split(",", nint)[:nint] for line in lines)))
        ints = [[int(x) for x in c] for c in cols]
        a = np.loadtxt(lines, delimiter=",", dtype=np.float64, ndmin=2,
                       usecols=range(nint, nint + nf))
        # binary32's largest value and half an ulp above round to it; a
        # step beyond 2^64-1, or with agents a group or id beyond 2^32-1
        big = (np.abs(a) >= _F32_OVERFLOW).any(axis=1).tolist()
        for k, line in enumerate(lines):
            if big[k] or ints[0][k] >= 2**64 or ints[1][k] >= (2**32 if nint == 3 else 2**64) \
                    or (nint == 3 and ints[2][k] >= 2**32):
                raise _csv_row_error(self.path, line0 + k, line, nint, nf)
        return ints, a.astype(np.float32)

    def _parse(self, lines, index, line0):
        ints, vals = self._load_rows(lines, index, 2, line0)
        if len(vals) != self.count:
            raise TrajectoryError("%s: frame %d: expected %d rows" % (self.path, index,
                                                                      self.count))
        step = ints[0][0]
        if any(s != step for s in ints[0]) or ints[1] != list(range(self.count)):
            raise TrajectoryError("%s: frame %d: rows are not one step's boids in id order"
                                  % (self.path, index))
        # Values were printed with %.9g, so double then single rounding
        # gives back the very float32 the simulator wrote.
        d = self.dims
        return (step, vals[:, :d].copy(), vals[:, d:2 * d].copy(),
                vals[:, 2 * d].copy() if self.has_hue else None, None, None)

    def _check_cut_frame(self, lines, index, line0):
        """The whole rows of a frame that the file's end cuts short, each
        checked as boidsim's reader checks a row as it reads it: in the
        grammar, and without agents of the frame's step and the next id."""
        if not lines:
            return
        nint = 3 if self.has_agents else 2
        ints, _ = self._load_rows(lines, index, nint, line0)
        if self.has_agents:
            bad = _check_agents(np.array(ints[2], np.uint32), np.array(ints[1], np.uint32))
            if bad:
                raise TrajectoryError("%s: frame %d: %s" % (self.path, index, bad))
        elif any(s != ints[0][0] for s in ints[0]) or ints[1] != list(range(len(lines))):
            raise TrajectoryError("%s: frame %d: rows are not one step's boids in id order"
                                  % (self.path, index))

    def _parse_agents(self, lines, index, line0):
        ints, vals = self._load_rows(lines, index, 3, line0)
        if len(vals) > self.count:
            raise TrajectoryError("%s: frame %d: expected at most %d rows"
                                  % (self.path, index, self.count))
        step, g, i = ints
        if any(s != step[0] for s in step) or any(x > GROUP_PREDATOR for x in g):
            raise TrajectoryError("%s: frame %d: rows are not one step's agents with "
                                  "groups 0 or 1" % (self.path, index))
        ids, groups = np.array(i, np.uint32), np.array(g, np.uint32)
        bad = _check_agents(ids, groups)
        if bad:
            raise TrajectoryError("%s: frame %d: %s" % (self.path, index, bad))
        d = self.dims
        return (step[0], vals[:, :d].copy(), vals[:, d:2 * d].copy(),
                vals[:, 2 * d].copy() if self.has_hue else None, ids, groups)

    def _read_frames(self, split, parse):
        """Yields parse(lines, index, line0) for each frame's rows, as
        split(f) cuts the file after its header row into (rows, whole) per
        frame, line0 being the line number of the frame's first row, with
        the cut and damage handling both layouts share."""
        index, line0 = 0, 2
        with self._open() as f:
            try:
                f.readline()
                for lines, whole in split(f):
                    # A missing final newline means the last number may be cut.
                    if not whole or not lines[-1].endswith("\n"):
                        # the rows before the cut are read and checked
                        # first, as boidsim reads them: a bad one there is
                        # damage, not a cut
                        self._check_cut_frame([x for x in lines if x.endswith("\n")], index,
                                              line0)
                        self._cut("%s: file cut short in frame %d"
                                  % (self.path, index))
                        break
                    yield parse(lines, index, line0)
                    index += 1
                    line0 += len(lines)
                else:
                    self._check_tail(f)
            except EOFError:
                self._cut("%s: gzip stream cut short in frame %d"
                          % (self.path, index))
            except (OSError, zlib.error, UnicodeDecodeError) as e:
                raise TrajectoryError("%s: frame %d: damaged file: %s"
                                      % (self.path, index, e))
        self.header["frames"] = index

    def _split_by_step(self, f):
        """With agents: a frame is the run of rows with one step; a row
        that is not in the grammar is damage in the frame it is read in."""
        lines, step = [], None
        for line_no, line in enumerate(f, 2):
            if line.endswith("\n") and not _csv_row_ok(line, 3, len(self.header["fields"])):
                raise _csv_row_error(self.path, line_no, line, 3, len(self.header["fields"]))
            s = _step_key(line)
            if lines and s != step:
                yield lines, True
                lines = []
            step = s
            lines.append(line)
        try:
            self._check_tail(f)
        except EOFError:
            # a gzip stream cut after a whole line ends the last run there,
            # as the end of a plain file does (a frame's count is not
            # known; boidsim's reader alike); the cut is said after it
            if lines:
                yield lines, True
            raise
        if lines:
            yield lines, True

    def _raw_frames(self):
        """Yields (step, positions, velocities, hues or None, ids or None,
        groups or None), reading one frame's rows at a time."""
        self.truncated = False
        if self.has_agents:
            yield from self._read_frames(self._split_by_step, self._parse_agents)
            return
        if self._first_cut:
            self.header["frames"] = 0
            self._cut("%s: file cut short in frame 0" % self.path)
            return
        count = self.count
        if count is None:          # header only: no frames
            self.header["frames"] = 0
            return

        def split(f):
            """Without agents: every frame has count rows."""
            while True:
                lines = list(itertools.islice(f, count))
                if not lines:
                    return
                yield lines, len(lines) == count
        yield from self._read_frames(split, self._parse)

    def frame_count(self):
        """Counts the frames, reading the file through without parsing it
        (with agents, as it was when the file was opened)."""
        if self._frames is None and self._scan is not None:
            frames, cut = self._scan
            if cut:
                self._cut("%s: file cut short in frame %d"
                          % (self.path, frames))
            self._frames = frames
        if self._frames is None and self._first_cut:
            self._cut("%s: file cut short in frame 0" % self.path)
            self._frames = 0
        if self._frames is None:
            rows, cut = 0, False
            with self._open() as f:
                f.readline()
                try:
                    for line in f:
                        rows += 1
                    if rows and not line.endswith("\n"):
                        rows -= 1
                        cut = True
                    self._check_tail(f)
                except EOFError:
                    cut = True
                except (OSError, zlib.error, UnicodeDecodeError) as e:
                    raise TrajectoryError("%s: damaged file: %s" % (self.path, e))
            frames, rest = divmod(rows, self.count) if self.count else (0, 0)
            if cut or rest:
                self._cut("%s: file cut short in frame %d"
                          % (self.path, frames))
            self._frames = frames
        return self._frames
