# readers.py: the C reader (boidsim verify) and the Python reader
# (scripts/boidsim_traj.py) side by side on generated files, for
# tests/readers.test. Each command prints one line per disagreement and
# exits 1 when there is any.
#   readers.py cuts BOIDSIM DIR FILE...   every file cut at many lengths
#   readers.py damage BOIDSIM DIR SRC K OUT   a byte of frame K changed
#   readers.py hostile BOIDSIM DIR CASES SRC.bin SRC.csv   the table of hostile files
#   readers.py make BOIDSIM DIR KIND SRC OUT   one hostile file
#   readers.py memory BOIDSIM DIR MB CMD...   CMD's peak memory at most MB
#   readers.py csvdiff BOIDSIM DIR FILE.csv...   CSV variants through both readers
import gzip
import os
import re
import struct
import subprocess
import sys
import zlib

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
    if p.returncode == 2 and ": damaged after " in out:
        return "damaged %s" % words[words.index("after") + 1]
    if p.returncode == 2 and not out:
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


GRAMMAR = re.compile(r"\S+:[0-9]+:[0-9]+: expected [0-9]+ comma-separated numbers "
                     r"\(see boidsim-trajectory\(5\)\)")


def same_grammar_line(boidsim, path, bad, name):
    """For a CSV row boidsim refuses as not in the grammar: the Python
    reader names the same line and column, in the same words."""
    p = subprocess.run([boidsim, "verify", path], capture_output=True, text=True)
    c = GRAMMAR.search(p.stdout + p.stderr)
    if c is None:
        return
    try:
        for _ in boidsim_traj.open_trajectory(path).frames():
            pass
        said = "(read it)"
    except boidsim_traj.TrajectoryError as e:
        said = str(e)
    if c.group(0) not in said:
        bad.append("%s: boidsim says %r, python %r" % (name, c.group(0), said))


def compare(boidsim, path, bad, name=None):
    c, p = c_verdict(boidsim, path), py_verdict(path)
    if c != p:
        bad.append("%s: boidsim %s, python %s" % (name or os.path.basename(path), c, p))
    return c


def cuts(boidsim, work, files):
    bad, seen = [], {}
    for src in files:
        data = open(src, "rb").read()
        # lengths near the start and the end, and a spread between (kept
        # few: the tests also run under the sanitizers)
        lengths = sorted(set(list(range(0, 40, 3)) + list(range(len(data) - 40, len(data)))
                             + list(range(0, len(data), max(1, len(data) // 60)))))
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


def split_bin(data):
    """(header, [frame records], the rest) of a binary trajectory."""
    offs = frame_offsets(data)
    end = offs[-1] + 40 + struct.unpack_from("<Q", data, offs[-1] + 28)[0]
    frames = [bytearray(data[o:o + 40 + struct.unpack_from("<Q", data, o + 28)[0]])
              for o in offs]
    return bytearray(data[:offs[0]]), frames, data[end:]


def frame_crc(fr):
    """The record with its CRC made right again."""
    fr[36:40] = struct.pack("<I", zlib.crc32(bytes(fr[40:]), zlib.crc32(bytes(fr[:36]))))
    return fr


def with_scenario(head, text):
    """A header holding another scenario text, its CRC right."""
    glen, jlen = struct.unpack_from("<II", head, 36)
    fixed = bytearray(head[:44])
    fixed[40:44] = struct.pack("<I", len(text))
    body = bytes(fixed) + bytes(head[44:44 + glen]) + text
    return bytearray(body + struct.pack("<I", zlib.crc32(body)))


def forge(kind, data):
    """A hostile file of the given kind, made from a sound one. The binary
    ones are cut after their frames (a killed run: no index to disagree),
    so that only what the frames hold can tell."""
    if kind.startswith("csv"):
        text = data.decode()
        lines = text.split("\n")
        if kind == "csv-nul":
            lines[3] = lines[3][:5] + "\0" + lines[3][5:]
        return "\n".join(lines).encode()
    if kind == "gz-damaged":
        b = bytearray(gzip.compress(data))
        b[len(b) // 2] ^= 0x55
        return bytes(b)
    head, fr, rest = split_bin(data)
    sc = bytes(head[44 + struct.unpack_from("<I", head, 36)[0]:-4])
    if kind == "swap-delta":
        fr[2], fr[3] = fr[3], fr[2]
    elif kind == "drop-delta":
        del fr[2]
    elif kind == "relabel-key":
        fr[2][16:20] = struct.pack("<I", 1)
        frame_crc(fr[2])
    elif kind == "steps-back":
        s1, s2 = fr[1][4:12], fr[2][4:12]
        fr[1][4:12], fr[2][4:12] = s2, s1
        frame_crc(fr[1])
        frame_crc(fr[2])
    elif kind == "huge-count":
        # a count of 10^8 in the header (valid for agents), the frames
        # left as they are: a bound the file does not hold
        head[16:24] = struct.pack("<Q", 10**8)
        head = with_scenario(head, sc)
        return bytes(head) + b"".join(bytes(f) for f in fr) + rest
    elif kind in ("huge-frame", "huge-payload"):
        # the header's count and frame 0's 10^8 boids, a stream of their
        # size; huge-payload also claims a payload of that size
        nf = struct.unpack_from("<I", head, 32)[0]
        head[16:24] = struct.pack("<Q", 10**8)
        head = with_scenario(head, sc)
        fr[0][12:16] = struct.pack("<I", 10**8)
        fr[0][20:28] = struct.pack("<Q", 10**8 * nf * 4)
        if kind == "huge-payload":
            fr[0][28:36] = struct.pack("<Q", 10**8 * nf * 4)
        frame_crc(fr[0])
    elif kind.startswith("zstd-"):
        # frame 1's first chunk, a Zstandard frame (a delta frame of boids
        # that moved as predicted), made into what the format refuses
        import zstandard
        pay = fr[1][40:]
        n = struct.unpack_from("<I", pay, 4)[0]
        lens = list(struct.unpack_from("<%dI" % n, pay, 8))
        off = 8 + 4 * n
        chunk = bytes(pay[off:off + lens[0]])
        size = zstandard.frame_content_size(chunk)
        assert len(chunk) < size, "frame 1's first chunk is stored"
        if kind == "zstd-trailing":
            chunk += b"\0"
        elif kind == "zstd-cut":
            chunk = chunk[:-1]
        elif kind == "zstd-nosize":
            raw = zstandard.ZstdDecompressor().decompress(chunk)
            chunk = zstandard.ZstdCompressor(level=19, write_content_size=False).compress(raw)
        elif kind == "zstd-longer":
            raw = zstandard.ZstdDecompressor().decompress(chunk)
            chunk = raw + b"\0"
        elif kind == "zstd-version2":
            head[8:10] = struct.pack("<H", 2)
            head = with_scenario(head, sc)
        elif kind == "zstd-empty":
            chunk = b""
        elif kind == "zstd-skippable":
            # a skippable frame (of content size 0 to a decoder) first
            chunk = b"\x50\x2a\x4d\x18" + struct.pack("<I", 0) + chunk
        elif kind == "zstd-two-frames":
            raw = zstandard.ZstdDecompressor().decompress(chunk)
            chunk = b"".join(zstandard.ZstdCompressor(level=1).compress(h)
                             for h in (raw[:size // 2], raw[size // 2:]))
        elif kind == "zstd-checksum":
            raw = zstandard.ZstdDecompressor().decompress(chunk)
            chunk = zstandard.ZstdCompressor(level=1, write_checksum=True).compress(raw)
        else:
            # the frame's blocks under a header of another kind: with a
            # dictionary ID, another content size, a large window (not a
            # single segment); or one more RLE block than the content size
            fhd = chunk[4]
            blocks = chunk[5 + (0 if fhd & 0x20 else 1) + (0, 1, 2, 4)[fhd & 3]
                           + ((1 if fhd & 0x20 else 0), 2, 4, 8)[fhd >> 6]:]
            fhd, mid, fcs = 0xe0, b"", size
            if kind == "zstd-dictid":
                fhd, mid = 0xe3, struct.pack("<I", 12345)
            elif kind in ("zstd-size-more", "zstd-size-less"):
                fcs = size + (1 if kind == "zstd-size-more" else -1)
            elif kind == "zstd-window":
                fhd, mid = 0xc0, bytes([(30 - 10) << 3])
            elif kind == "zstd-rle-more":
                assert blocks[0] & 1, "one block"
                blocks = (bytes([blocks[0] & 0xfe]) + blocks[1:]
                          + struct.pack("<I", (1000 << 3) | 2 | 1)[:3] + b"\0")
            else:
                raise SystemExit("unknown kind " + kind)
            chunk = b"\x28\xb5\x2f\xfd" + bytes([fhd]) + mid + struct.pack("<Q", fcs) + blocks
        lens[0] = len(chunk)
        pay = (bytes(pay[:8]) + struct.pack("<%dI" % n, *lens) + chunk
               + bytes(pay[off + struct.unpack_from("<I", pay, 8)[0]:]))
        fr[1] = bytearray(bytes(fr[1][:40]) + pay)
        fr[1][28:36] = struct.pack("<Q", len(pay))
        frame_crc(fr[1])
    elif kind == "scenario-array":
        head = with_scenario(head, b"[1, 2]")
    elif kind == "scenario-invalid":
        head = with_scenario(head, sc[:-1])
    elif kind == "scenario-nul":
        head = with_scenario(head, sc[:1] + b"\0" + sc[1:])
    elif kind == "scenario-seed":
        head = with_scenario(head, sc.replace(b'"seed":\t4', b'"seed":\t5'))
    else:
        raise SystemExit("unknown kind " + kind)
    return bytes(head) + b"".join(bytes(f) for f in fr)


VALUES = ["1.5", "+1.5", "-1.5", " 1.5", "1.5 ", "nan", "NaN", "inf", "-inf", "Infinity",
          "0x1p3", "1e39", "-1e39", "3.40282356e38", "3.4028235e38", "1e-50", "-0", "+0",
          "1.", ".5", "-.5", "+.5", ".", "+", "-", "", "1E5", "1e+5", "1e-5", "1e", "e5",
          "1.5.5", "--1", "+-1", "1_0", "0001.5", "1.5\r", "1,5", "1e5000", "1d5", "\t1"]
INTS = ["0", "+0", " 0", "00", "-0", "0.0", "1", "18446744073709551615",
        "18446744073709551616", "4294967296", "", "0x0", "0e0"]


def csv_variants(text, agents):
    """(name, text) of the file with one field changed: a value in a row
    of the first frame and of a later one, the step, the id, the group."""
    lines = text.split("\n")
    nint = 3 if agents else 2
    out = []
    for row in (2, len(lines) - 3):
        for v in VALUES:
            f = lines[row].split(",")
            f[nint] = v
            out.append(("value %r row %d" % (v, row), lines[:row] + [",".join(f)] + lines[row + 1:]))
        for col in range(nint if row == 2 else 1):
            for v in INTS:
                f = lines[row].split(",")
                f[col] = v
                out.append(("field %d %r row %d" % (col, v, row),
                            lines[:row] + [",".join(f)] + lines[row + 1:]))
    # whole-file variants: CRLF, steps going back, a repeated frame
    out.append(("crlf", [l + "\r" if l else l for l in lines]))
    body = lines[1:-1]
    out.append(("steps back", [lines[0]] + body[len(body) // 2:] + body[:len(body) // 2] + [""]))
    out.append(("frame twice", lines[:-1] + body[-len(body) // 3:] + [""]))
    # the file's end: a blank line after the last row; a cut inside the
    # last line (with agents boidsim took the rows before it for a whole
    # frame, and said ok); rows of a next frame, then a cut, the rows
    # before the cut sound or not (a bad one is damage, not a cut)
    nf = len(lines[0].split(",")) - nint
    step = str(int(lines[-2].split(",")[0]) + 1)

    def row(ident, value="1"):
        return ",".join([step] + ["0"] * (nint - 2) + [str(ident), value] + ["1"] * (nf - 1))
    out.append(("blank line at the end", lines + [""]))
    out.append(("cut in the last line", ["\n".join(lines)[:-5]]))
    out.append(("next frame, cut", lines[:-1] + [row(0), row(1)[:5]]))
    out.append(("next frame's first value too large", lines[:-1] + [row(0, "1e39"), ""]))
    out.append(("next frame, too large, cut", lines[:-1] + [row(0), row(1, "1e39"), row(2)[:5]]))
    out.append(("next frame, ids out of order, cut",
                lines[:-1] + [row(5), row(3), row(4)[:5]]))
    return [(name, "\n".join(ls)) for name, ls in out]


def csvdiff(boidsim, work, args):
    """csvdiff FILE.csv...: every variant through boidsim verify and the
    Python reader, as .csv and .csv.gz: the same verdict; and for a file
    both read, boidsim info's digest is the Python reader's."""
    bad, n, verdicts = [], 0, {}
    for src in args:
        text = open(src).read()
        agents = text.startswith("step,group,")
        for k, (name, body) in enumerate(csv_variants(text, agents)):
            # through gzip, the value variants of one row: the grammar is
            # the same, the reading of the stream is what differs
            for ext in ("csv", "csv.gz") if k < len(VALUES) else ("csv",):
                path = os.path.join(work, "v%d.%s" % (k, ext))
                data = body.encode("utf-8")
                with open(path, "wb") as f:
                    f.write(gzip.compress(data, mtime=0) if ext == "csv.gz" else data)
                n += 1
                c = compare(boidsim, path, bad, "%s %s" % (os.path.basename(src), name))
                verdicts[c.split()[0]] = verdicts.get(c.split()[0], 0) + 1
                if c.startswith("damaged"):
                    same_grammar_line(boidsim, path, bad,
                                      "%s %s (.%s)" % (os.path.basename(src), name, ext))
                if c.startswith("ok") and ext == "csv":
                    p = subprocess.run([boidsim, "info", path], capture_output=True, text=True)
                    want = [l.split()[-1] for l in p.stdout.splitlines() if l.startswith("digest:")]
                    got = boidsim_traj.open_trajectory(path).digest()
                    if want != [got]:
                        bad.append("%s %s: digests differ: boidsim %s, python %s"
                                   % (os.path.basename(src), name, want, got))
        # bytes after the gzip stream that start no other member: zlib's
        # gzread, and so boidsim, ignores them as trailing garbage
        for k, tail in enumerate((b"garbage\n", b"\x1f", b"\x00\x00garbage")):
            path = os.path.join(work, "t%d.csv.gz" % k)
            with open(path, "wb") as f:
                f.write(gzip.compress(text.encode("utf-8"), mtime=0) + tail)
            n += 1
            c = compare(boidsim, path, bad, "%s trailing %r" % (os.path.basename(src), tail))
            verdicts[c.split()[0]] = verdicts.get(c.split()[0], 0) + 1
    for line in bad:
        print(line)
    print("# %d variants: %s" % (n, verdicts))
    return 1 if bad or n == 0 else 0


def make(boidsim, work, args):
    """make KIND SRC OUT: one hostile file."""
    with open(args[2], "wb") as f:
        f.write(forge(args[0], open(args[1], "rb").read()))
    return 0


def memory(boidsim, work, args):
    """memory MB CMD...: runs CMD; fails when its peak resident memory
    passes MB megabytes. Prints its exit status and peak."""
    limit, cmd = float(args[0]), args[1:]
    pid = os.spawnvp(os.P_NOWAIT, cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    mb = usage.ru_maxrss / 1024.0
    print("exit %d, peak %.0f MB: %s" % (os.waitstatus_to_exitcode(status), mb, " ".join(cmd)))
    return 0 if mb <= limit else 1


def hostile(boidsim, work, args):
    """hostile CASES SRC.bin SRC.csv: each case of the table made, through
    boidsim verify (exit status, message) and the Python reader (the same
    verdict)."""
    import re
    cases, srcs = args[0], {"bin": open(args[1], "rb").read(), "csv": open(args[2], "rb").read()}
    bad, n = [], 0
    for line in open(cases):
        if not line.strip() or line.startswith("#"):
            continue
        kind, ext, status, pattern = [x.strip() for x in line.split("|", 3)]
        n += 1
        path = os.path.join(work, "hostile-%s.%s" % (kind, ext))
        with open(path, "wb") as f:
            f.write(forge(kind, srcs["csv" if ext.startswith("csv") else "bin"]))
        p = subprocess.run([boidsim, "verify", path], capture_output=True, text=True)
        said = (p.stdout + p.stderr).strip()
        if p.returncode != int(status) or not re.search(pattern, said):
            bad.append("%s: boidsim verify exit %d, said: %s" % (kind, p.returncode, said))
        want = {0: "ok", 2: "damaged", 3: "incomplete"}[int(status)]
        if py_verdict(path).split()[0] != want:
            bad.append("%s: python says %s, boidsim %s" % (kind, py_verdict(path), want))
    for line in bad:
        print(line)
    print("# %d cases" % n)
    return 1 if bad or n == 0 else 0


if __name__ == "__main__":
    cmd, boidsim, work = sys.argv[1:4]
    sys.exit({"cuts": cuts, "damage": damage, "hostile": hostile, "make": make,
              "memory": memory, "csvdiff": csvdiff}[cmd](boidsim, work, sys.argv[4:]))
