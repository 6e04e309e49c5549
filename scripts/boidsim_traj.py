# boidsim_traj.py: reads boidsim trajectories (binary, CSV, gzip'd CSV) into numpy arrays.
"""Read boidsim trajectories into numpy arrays.

boidsim writes a run's trajectory as a binary file (``.bin``, format version
1, described in boidsim-trajectory(5)), as CSV (``.csv``) or as gzip'd CSV
(``.csv.gz``). This module reads all three; it needs only numpy. The format
is detected from the file's first bytes, so a renamed file (or a CSV run's
``.partial`` leftover) still reads.

From a notebook::

    import sys; sys.path.insert(0, "/path/to/boidsim/scripts")
    import boidsim_traj

    t = boidsim_traj.open_trajectory("run.bin")
    t.header            # {'version': 1, 'dims': 2, 'count': 3000, 'seed': 1, ...}
    t.scenario          # the effective scenario as a dict (None for CSV)

    # Everything at once: steps (F,), positions and velocities (F, N, dims)
    steps, pos, vel = t.read_all()

    # Or frame by frame, holding one frame in memory at a time
    for step, pos, vel in t.iter_frames():
        print(step, pos.mean(axis=0), (vel ** 2).sum(axis=1).mean())

Positions and velocities are float32 arrays of shape (count, dims), row i
being boid i. ``t.frame_count()`` counts the frames; for a binary file,
``t.read_frame(k)`` reads frame k alone (negative k counts from the end).

``t.header`` holds version, dims, count, seed, generator and, once the end
of the file has been reached (by reading or by frame_count), status:
"complete", "interrupted" (stopped by SIGINT/SIGTERM, marked in the end
record) or "missing" (no end record), with complete True or False. A CSV
carries no version, seed, generator or status: those stay None, and so
does ``t.scenario``.

Binary files are checked as they are read: every CRC is verified, and a
damaged record raises TrajectoryError (a ValueError) naming the frame. A
file cut short part way through a frame (a full disk, an interrupted copy)
yields its complete frames and then raises; open it with ``strict=False``
to stop quietly instead, after which ``t.truncated`` is True. A run that
was killed outright leaves no end record; that is not an error in itself,
but as boidsim buffers its output such a file usually ends part way
through a frame too, so open it with strict=False. (It also keeps its
temporary name, ``.NAME.tmp.XXXXXX`` beside NAME.)
"""

import gzip
import itertools
import json
import os
import struct
import zlib

import numpy as np

__all__ = ["open_trajectory", "TrajectoryError", "BinaryTrajectory", "CsvTrajectory"]

MAGIC = b"\x89BOID\r\n\x1a"
GZIP_MAGIC = b"\x1f\x8b"
VERSION = 1
CODEC_ZLIB_F32 = 0

# Layouts, all little-endian; see src/traj.h.
_HEADER = struct.Struct("<8sHHIQQIII")       # magic .. scenario length: 44 bytes
_FRAME = struct.Struct("<4sQIIQQI")          # tag, step, count, codec, raw, payload, crc
_END = struct.Struct("<4sIQQI")              # tag, status, frames, last step, crc
_GENERATOR_MAX = 4096
_SCENARIO_MAX = 16 << 20
_STATUS_NAMES = {0: "complete", 1: "interrupted"}


class TrajectoryError(ValueError):
    """A file that is not a boidsim trajectory, or is damaged or cut short.
    The message names the file and, for a frame, its index (from 0)."""


def _compress_bound(n):
    """zlib's compressBound: no honest payload is longer than this."""
    return n + (n >> 12) + (n >> 14) + (n >> 25) + 13


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


class _Trajectory:
    """What both formats share: whole-file reads built on iter_frames."""

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
        return self.header["count"]

    def read_all(self):
        """Returns (steps (F,) int64, positions (F, N, dims) float32,
        velocities (F, N, dims) float32)."""
        steps, pos, vel = [], [], []
        for s, p, v in self.iter_frames():
            steps.append(s)
            pos.append(p)
            vel.append(v)
        shape = (0, self.count or 0, self.dims)
        return (np.array(steps, dtype=np.int64),
                np.stack(pos) if pos else np.empty(shape, np.float32),
                np.stack(vel) if vel else np.empty(shape, np.float32))

    def frames_at(self, indexes):
        """Yields (index, step, positions, velocities) for the given frame
        indexes (non-negative, any order; each is yielded once, in file
        order). The default streams through the file; subclasses that can
        seek do better."""
        wanted = set(indexes)
        if not wanted:
            return
        last = max(wanted)
        for i, (s, p, v) in enumerate(self.iter_frames()):
            if i in wanted:
                yield i, s, p, v
            if i >= last:
                return

    def _cut(self, message):
        """A file that ends part way through a record."""
        self.truncated = True
        if self.strict:
            raise TrajectoryError(message)

    def __repr__(self):
        return "<%s %r dims=%s count=%s>" % (type(self).__name__, self.path,
                                             self.header.get("dims"),
                                             self.header.get("count"))


class BinaryTrajectory(_Trajectory):
    """A trajectory in boidsim's binary format, version 1."""

    def __init__(self, path, strict=True):
        super().__init__(path, strict)
        self._index = None
        with open(path, "rb") as f:
            fixed = f.read(_HEADER.size)
            if len(fixed) < _HEADER.size:
                raise TrajectoryError("%s: header cut short" % path)
            (magic, version, dims, flags, count, seed, fields, glen,
             jlen) = _HEADER.unpack(fixed)
            if magic != MAGIC:
                raise TrajectoryError("%s: not a boidsim binary trajectory (bad magic)" % path)
            if version != VERSION:
                raise TrajectoryError("%s: format version %d, this reader knows %d"
                                      % (path, version, VERSION))
            if (dims not in (2, 3) or fields != 2 * dims or not 0 < count < 2**32
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
            self.scenario = json.loads(strings[glen:].decode("utf-8")) if jlen else None
        except (UnicodeDecodeError, ValueError) as e:
            raise TrajectoryError("%s: embedded scenario is not valid JSON: %s" % (path, e))
        self._raw_len = count * fields * 4
        self.header = {"format": "bin", "version": version, "dims": dims,
                       "count": count, "seed": seed, "flags": flags,
                       "generator": generator, "status": None, "complete": None,
                       "frames": None}

    def _record_end(self, status, frames):
        self.header["status"] = status
        self.header["complete"] = status == "complete"
        self.header["frames"] = frames

    def _cut_in_frame(self, index):
        self._cut("%s: file cut short in frame %d (%d complete frames)"
                  % (self.path, index, index))
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

    def _frame_header(self, f, index, last_step):
        """Reads the next record's 40-byte header. Returns (header bytes,
        step, payload length), or None at the end of the frames (the end
        record checked against index and last_step) or where the file is
        cut short (non-strict)."""
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
        if tag != b"FRAM":
            raise TrajectoryError("%s: frame %d: bad record tag %r" % (self.path, index, tag))
        rest = f.read(_FRAME.size - 4)
        if len(rest) < _FRAME.size - 4:
            self._cut_in_frame(index)
            return None
        hdr = tag + rest
        _, step, count, codec, raw_len, zlen, _ = _FRAME.unpack(hdr)
        if (count != self.count or codec != CODEC_ZLIB_F32 or raw_len != self._raw_len
                or zlen > _compress_bound(raw_len)):
            raise TrajectoryError("%s: frame %d: damaged frame header" % (self.path, index))
        return hdr, step, zlen

    def _decode(self, hdr, payload, index, step):
        crc = _FRAME.unpack(hdr)[6]
        if zlib.crc32(payload, zlib.crc32(hdr[:36])) != crc:
            raise TrajectoryError("%s: frame %d (step %d): CRC mismatch"
                                  % (self.path, index, step))
        try:
            raw = zlib.decompress(payload)
        except zlib.error:
            raw = b""
        if len(raw) != self._raw_len:
            raise TrajectoryError("%s: frame %d (step %d): payload does not decompress"
                                  % (self.path, index, step))
        # Field after field: x, y, [z], vx, vy, [vz]. The copies come out
        # row per boid, in native byte order, and writable.
        a = np.frombuffer(raw, dtype="<f4").reshape(2 * self.dims, self.count)
        return (np.ascontiguousarray(a[:self.dims].T, dtype=np.float32),
                np.ascontiguousarray(a[self.dims:].T, dtype=np.float32))

    def iter_frames(self):
        """Yields (step, positions (N, dims), velocities (N, dims)), one frame
        at a time, checking each frame's CRC."""
        self.truncated = False
        last_step = None
        with open(self.path, "rb") as f:
            f.seek(self._data_start)
            index = 0
            while True:
                got = self._frame_header(f, index, last_step)
                if got is None:
                    return
                hdr, step, zlen = got
                payload = f.read(zlen)
                if len(payload) < zlen:
                    self._cut_in_frame(index)
                    return
                pos, vel = self._decode(hdr, payload, index, step)
                last_step = step
                index += 1
                yield step, pos, vel

    def index(self):
        """Scans the frame headers without decompressing anything; returns a
        list of (file offset, step) per complete frame. Also learns how the
        file ends (header["status"]). Payload CRCs are checked only when a
        frame is read."""
        if self._index is not None:
            return self._index
        index = []
        last_step = None
        with open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            f.seek(self._data_start)
            while True:
                offset = f.tell()
                got = self._frame_header(f, len(index), last_step)
                if got is None:
                    break
                _, step, zlen = got
                if offset + _FRAME.size + zlen > size:
                    self._cut_in_frame(len(index))
                    break
                index.append((offset, step))
                last_step = step
                f.seek(zlen, os.SEEK_CUR)
        self._index = index
        return index

    def frame_count(self):
        return len(self.index())

    def steps(self):
        return np.array([s for _, s in self.index()], dtype=np.int64)

    def read_frame(self, i):
        """Frame i (negative counts from the end) as (step, positions,
        velocities), found through index() without reading the others."""
        offset, step = self.index()[i]
        i = i % len(self._index)
        with open(self.path, "rb") as f:
            f.seek(offset)
            hdr = f.read(_FRAME.size)
            payload = f.read(_FRAME.unpack(hdr)[5])
        return (step,) + self._decode(hdr, payload, i, step)

    def frames_at(self, indexes):
        for i in sorted(set(indexes)):
            yield (i,) + self.read_frame(i)

    def read_all(self):
        # Knowing the frame count first lets the result be filled in place
        # rather than stacked, halving the peak memory.
        n = self.frame_count()
        steps = np.empty(n, np.int64)
        pos = np.empty((n, self.count, self.dims), np.float32)
        vel = np.empty_like(pos)
        for i, s, p, v in self.frames_at(range(n)):
            steps[i], pos[i], vel[i] = s, p, v
        return steps, pos, vel


class CsvTrajectory(_Trajectory):
    """A trajectory written as CSV, `step,id,x,y,[z,]vx,vy[,vz]`, one row
    per boid per frame in id order; optionally gzip'd."""

    def __init__(self, path, strict=True, compressed=False):
        super().__init__(path, strict)
        self._compressed = compressed
        self._frames = None
        try:
            self._read_head(path, compressed)
        except (UnicodeDecodeError, EOFError, OSError, zlib.error) as e:
            raise TrajectoryError("%s: not a boidsim CSV trajectory: %s" % (path, e))

    def _read_head(self, path, compressed):
        with self._open() as f:
            first = f.readline()
            names = first.rstrip("\n").split(",")
            if names == ["step", "id", "x", "y", "vx", "vy"]:
                dims = 2
            elif names == ["step", "id", "x", "y", "z", "vx", "vy", "vz"]:
                dims = 3
            else:
                raise TrajectoryError("%s: unexpected CSV header %r" % (path, first.rstrip("\n")))
            self.header = {"format": "csv.gz" if compressed else "csv", "version": None,
                           "dims": dims, "count": None, "seed": None, "generator": None,
                           # CSV has no end record: an interrupted run is told
                           # only by the .partial name boidsim gives it.
                           "status": None, "complete": None, "frames": None}
            # The count is the length of the first frame: rows until the
            # step changes.
            count = 0
            step0 = None
            for line in f:
                step = line.split(",", 1)[0]
                if step0 is None:
                    step0 = step
                elif step != step0 or not line.endswith("\n"):
                    break
                count += 1
            self.header["count"] = count or None

    def _open(self):
        if self._compressed:
            return gzip.open(self.path, "rt", encoding="ascii", newline="")
        return open(self.path, "r", encoding="ascii", newline="")

    def _parse(self, lines, index):
        ncol = 2 + 2 * self.dims
        try:
            a = np.loadtxt(lines, delimiter=",", dtype=np.float64, ndmin=2)
        except ValueError as e:
            raise TrajectoryError("%s: frame %d: bad CSV row: %s" % (self.path, index, e))
        if a.shape != (self.count, ncol):
            raise TrajectoryError("%s: frame %d: expected %d rows of %d columns"
                                  % (self.path, index, self.count, ncol))
        step = a[0, 0]
        if (a[:, 0] != step).any() or (a[:, 1] != np.arange(self.count)).any():
            raise TrajectoryError("%s: frame %d: rows are not one step's boids in id order"
                                  % (self.path, index))
        # Values were printed with %.9g, so double then single rounding
        # gives back the very float32 the simulator wrote.
        vals = a[:, 2:].astype(np.float32)
        return int(step), vals[:, :self.dims].copy(), vals[:, self.dims:].copy()

    def iter_frames(self):
        """Yields (step, positions (N, dims), velocities (N, dims)), reading
        one frame's rows at a time."""
        count = self.count
        index = 0
        self.truncated = False
        if count is None:          # header only: no frames
            self.header["frames"] = 0
            return
        with self._open() as f:
            try:
                f.readline()
                while True:
                    lines = list(itertools.islice(f, count))
                    if not lines:
                        break
                    # A missing final newline means the last number may be cut.
                    if len(lines) < count or not lines[-1].endswith("\n"):
                        self._cut("%s: file cut short in frame %d (%d complete frames)"
                                  % (self.path, index, index))
                        break
                    yield self._parse(lines, index)
                    index += 1
            except EOFError:
                self._cut("%s: gzip stream cut short in frame %d (%d complete frames)"
                          % (self.path, index, index))
            except (OSError, zlib.error, UnicodeDecodeError) as e:
                raise TrajectoryError("%s: frame %d: damaged file: %s"
                                      % (self.path, index, e))
        self.header["frames"] = index

    def frame_count(self):
        """Counts the frames, reading the file through without parsing it."""
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
                except EOFError:
                    cut = True
            frames, rest = divmod(rows, self.count) if self.count else (0, 0)
            if cut or rest:
                self._cut("%s: file cut short in frame %d (%d complete frames)"
                          % (self.path, frames, frames))
            self._frames = frames
        return self._frames
