#!/usr/bin/env python3
"""Oracle of the Ascend profiler readers: the figures of a profiler output computed from its CSVs
with Python's csv module and exact decimal arithmetic, against those of memscope-convert's dump
CSV and memscope-leaks' JSON report of the same folder.

Usage: check_msprof.py BIN_DIR WORK_DIR [--lenient] [--expect-fail REGEX] DIR...
Each DIR is checked; one line per figure that differs, a closing line per folder; exit 1 when any
figure differs. With --expect-fail, each DIR must instead fail (exit 3, one stderr line matching
REGEX) strictly.

The rules restated from formats/msprof.md (tests/ must not share code with the readers):
- operator_memory row: MALLOC at Allocation Time (size, allocation totals), FREE at Release Time
  (release totals). msprof's own layout has no Release Time: released at Allocation + Duration
  unless Duration is 0 and the release totals are 0 or missing (not released). A row with a
  negative Size or no Allocation Time is a FREE alone (|Size|). Pool: MINDSPORE in a *_ascend_ms
  output, GE for `cann::` names and msprof's own layout, else PTA.
- memory_record row: a POOL sample named after its component (used = Total Allocated, total =
  Total Reserved); MindSpore's MB are 1000 KB.
- npu_mem row: three NPU_MEM samples <event>/DDR, /HBM, /Memory (used).
- npu_module_mem row: a MODULE sample (total), left out when negative or >= 2^53 bytes.
- static_op_mem row: a PLAN block (size).
- timeline: "NPU MEM" counters are NPU_MEM samples; cpu_op slices are an ATEN_START and an
  ATEN_END each.
Sizes are value * unit (1024 per KB, 2^20 per MB) rounded to the nearest byte; times are exact ns
from the µs text, decimals past the third rounded (half up).
"""
import csv
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from fractions import Fraction

KB = 1024
MB = 1024 * 1024
MODULE_MAX = 1 << 53
PREFIXES = [
    ("operator_memory", "opmem"),
    ("ge_operator_memory", "opmem"),
    ("memory_record", "record"),
    ("ge_memory_record", "record"),
    ("npu_module_mem", "module"),
    ("npu_mem", "npumem"),
    ("static_op_mem", "static"),
]


class Bad(Exception):
    """A row the reader must reject (strict) or skip (lenient)."""


def clean(s):
    return s.strip(" \t\r\n")


def missing(s):
    return s == "" or s == "N/A"


def number(s):
    if not re.fullmatch(r"-?(\d+\.?\d*|\.\d+)", s):
        raise Bad("not a plain decimal: %r" % s)
    return Decimal(s)


def parse_ns(s):
    d = number(s)
    if d < 0:
        raise Bad("negative time")
    return int((d * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def parse_bytes(s, unit):
    """(bytes, exact) of a decimal amount of units; halves round away from zero."""
    f = Fraction(number(s)) * unit
    mag = abs(f)
    q = int(mag)
    r = mag - q
    exact = r == 0
    if r * 2 >= 1:
        q += 1
    return (q if f >= 0 else -q), exact


def unit_of(header):
    if header.endswith("(KB)"):
        return KB
    if header.endswith("(MB)"):
        return MB
    return None


def output_folder(path):
    """The folder holding the memory files, as the tools find it."""
    def has_files(d):
        return any(kind_of(n) for n in os.listdir(d)) or any(
            n == "trace_view.json" or re.fullmatch(r"msprof(_slice_\d+)?_\d+\.json", n)
            for n in os.listdir(d))

    if has_files(path):
        return path
    for sub in ("ASCEND_PROFILER_OUTPUT", "mindstudio_profiler_output"):
        p = os.path.join(path, sub)
        if os.path.isdir(p) and has_files(p):
            return p
    profs = [n for n in os.listdir(path) if n.startswith("PROF_")]
    if len(profs) == 1:
        p = os.path.join(path, profs[0], "mindstudio_profiler_output")
        if os.path.isdir(p) and has_files(p):
            return p
    return None


def kind_of(name):
    """(kind, slice, stamp) of a memory CSV's name, or None."""
    for prefix, kind in PREFIXES:
        m = re.fullmatch(re.escape(prefix) + r"(?:_slice_(\d+))?(?:_(\d+))?\.csv", name)
        if m:
            return kind, int(m.group(1) or -1), int(m.group(2) or -1)
    return None


def chosen_files(out):
    """Per kind the newest export's files, slices in order (msprof.md §1.1, §8.9)."""
    by_kind = defaultdict(list)
    for n in os.listdir(out):
        k = kind_of(n)
        if k:
            by_kind[k[0]].append((k[2], k[1], n))
    files = {}
    for kind, lst in by_kind.items():
        newest = max(s for s, _, _ in lst)
        files[kind] = [os.path.join(out, n) for s, k, n in sorted(lst) if s == newest]
    return files


def device_of(row, cols):
    for c in ("Device_id", "Device", "Device Type"):
        if c in cols:
            v = clean(row[cols[c]])
            if missing(v):
                continue
            if v in ("host", "cpu"):
                return "cpu"
            if v.startswith("NPU:"):
                v = v[4:]
            return str(int(v))
    return "N/A"


class Figures:
    def __init__(self):
        self.f = defaultdict(lambda: defaultdict(int))
        self.names = Counter()
        self.devices = Counter()
        self.blocks = 0
        self.leak_count = 0
        self.leak_bytes = 0
        self.skipped = 0
        self.pids = Counter()

    def add(self, key, **vals):
        d = self.f[key]
        d["count"] += 1
        for k, v in vals.items():
            if v is not None:
                d["sum_" + k] += v
                d["n_" + k] += 1


def read_table(path, fig, mindspore, lenient):
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header = [clean(h) for h in rows[0]]
    cols = {}
    for i, h in enumerate(header):
        cols.setdefault(re.sub(r"\((KB|MB)\)$", "", h), i)
        cols.setdefault(h, i)
    units = {re.sub(r"\((KB|MB)\)$", "", h): unit_of(h) for h in header if unit_of(h)}
    kind = kind_of(os.path.basename(path))[0]
    if kind == "record" and (mindspore or ("Total Active" in cols and "Stream Ptr" not in cols)):
        units = {k: (1000 * KB if u == MB else u) for k, u in units.items()}
    native = kind == "opmem" and "Release Time(us)" not in cols
    pending_leaks = []
    for line, row in enumerate(rows[1:], start=2):
        if len(row) == len(header) + 1 and row[-1] == "":
            row = row[:-1]
        try:
            if len(row) != len(header):
                raise Bad("field count")

            def get(c):
                return clean(row[cols[c]]) if c in cols else ""

            def b(c):
                v = get(c)
                return None if missing(v) else parse_bytes(v, units[c])[0]

            def t(c):
                v = get(c)
                return None if missing(v) else parse_ns(v)

            def u(c):
                v = get(c)
                if missing(v):
                    return None
                if not re.fullmatch(r"\d+", v):
                    raise Bad("not an integer: %r" % v)
                return int(v)

            dev = device_of(row, cols)
            if kind == "opmem":
                name = get("Name")
                size = b("Size")
                alloc = t("Allocation Time(us)")
                release = t("Release Time(us)")
                dur = t("Duration(us)")
                at = (b("Allocation Total Reserved"), b("Allocation Total Allocated"))
                rt = (b("Release Total Reserved"), b("Release Total Allocated"))
                if "Stream Ptr" in cols and not missing(get("Stream Ptr")):
                    int(get("Stream Ptr"))
                if size is None:
                    raise Bad("no size")
                if native and alloc is not None and dur is not None and (dur or rt[0] or rt[1]):
                    release = alloc + dur
                if alloc is None and release is None:
                    raise Bad("no time")
                if alloc is not None and release is not None and release < alloc:
                    raise Bad("release before allocation")
                pool = ("MINDSPORE" if mindspore else
                        "GE" if native or name.startswith("cann::") else "PTA")
                fig.blocks += 1
                fig.devices[dev] += 1 + (alloc is not None and size >= 0 and release is not None)
                if size < 0 or alloc is None:
                    fig.add(("FREE", pool), size=abs(size), ts=release, total=rt[0], used=rt[1])
                    continue
                fig.add(("MALLOC", pool), size=size, ts=alloc, total=at[0], used=at[1])
                fig.names[(pool, "N/A" if missing(name) else name)] += 1
                if release is not None:
                    fig.add(("FREE", pool), size=size, ts=release, total=rt[0], used=rt[1])
                else:
                    pending_leaks.append(size)
            elif kind == "record":
                ts = t("Timestamp(us)")
                vals = dict(used=b("Total Allocated"), total=b("Total Reserved"),
                            active=b("Total Active"))
                if "Stream Ptr" in cols and not missing(get("Stream Ptr")):
                    if not re.fullmatch(r"\d+", get("Stream Ptr")):
                        raise Bad("stream")
                if ts is None:
                    raise Bad("no time")
                fig.devices[dev] += 1
                fig.add(("POOL", get("Component")), ts=ts, **vals)
            elif kind == "npumem":
                ts = t("timestamp(us)") if "timestamp(us)" in cols else t("Timestamp(us)")
                vals = [b(c) for c in ("ddr", "hbm", "memory")]
                if ts is None:
                    raise Bad("no time")
                ev = {"0": "APP", "1": "Device"}.get(get("event"), get("event"))
                for series, v in zip(("DDR", "HBM", "Memory"), vals):
                    if v is not None:
                        fig.devices[dev] += 1
                        fig.add(("NPU_MEM", ev + "/" + series), ts=ts, used=v)
            elif kind == "module":
                ts = t("Timestamp(us)")
                v = b("Total Reserved")
                if ts is None:
                    raise Bad("no time")
                if v is None or v < 0 or v >= MODULE_MAX:
                    fig.f["module_left_out"]["count"] += 1
                    continue
                fig.devices[dev] += 1
                fig.add(("MODULE", get("Component")), ts=ts, total=v)
            elif kind == "static":
                size = b("Size")
                if size is None:
                    raise Bad("no size")
                fig.devices[dev] += 1
                fig.add(("PLAN", "GE"), size=size, start=u("Node Index Start"),
                        end=u("Node Index End"), graph=u("Graph ID"))
                fig.names[("PLAN", get("Op Name"))] += 1
        except (Bad, InvalidOperation, ValueError) as e:
            if not lenient:
                raise Bad("%s:%d: %s" % (path, line, e))
            fig.skipped += 1
    for s in pending_leaks:
        fig.leak_count += 1
        fig.leak_bytes += s


def read_timeline(path, fig):
    """NPU MEM counters and cpu_op slices of a timeline; the APP/Memory samples as {ts: bytes}.
    The counters are on the device of the output's first memory row."""
    dev = next(iter(fig.devices), "N/A")
    with open(path, encoding="utf-8") as fh:
        evs = json.load(fh)
    if isinstance(evs, dict):
        evs = evs["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in evs
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    app = {}
    for e in evs:
        if e.get("ph") == "C" and names.get(e.get("pid")) == "NPU MEM":
            for key, v in e["args"].items():
                ts = parse_ns(str(e["ts"]))
                v = parse_bytes(str(v), KB if key == "KB" else MB)[0]
                fig.add(("NPU_MEM", e["name"]), ts=ts, used=v)
                fig.devices[dev] += 1
                if e["name"] == "APP/Memory":
                    app[ts] = v
        elif e.get("ph") == "X" and e.get("cat") == "cpu_op":
            fig.add(("OP_LAUNCH", "ATEN_START"))
            fig.add(("OP_LAUNCH", "ATEN_END"))
    return app


def oracle(path, lenient):
    out = output_folder(path)
    if out is None:
        raise Bad("%s: no memory files" % path)
    mindspore = any(p.endswith("_ascend_ms") for p in os.path.abspath(out).split(os.sep)[-3:])
    fig = Figures()
    files = chosen_files(out)
    for kind in ("opmem", "record", "npumem", "module", "static"):
        for f in files.get(kind, []):
            read_table(f, fig, mindspore, lenient)
    app = {}
    tl = os.path.join(out, "trace_view.json")
    if os.path.exists(tl):
        app = read_timeline(tl, fig)
    return fig, app, files


def parse_attr(s):
    if not s.startswith("{"):
        return {}
    body = s[1:-1]
    out = {}
    for part in re.split(r",(?=[A-Za-z0-9_]+:)", body) if body else []:
        k, _, v = part.partition(":")
        out[k] = v
    return out


def dump_rows(path):
    """The rows of a memscope_dump CSV as dicts, in its own dialect (formats/dump-csv.md): a
    quote inside a quoted field ends it only before a comma, a line end or the end, so inner
    quotes are not doubled; "" is one quote."""
    with open(path, newline="", encoding="utf-8") as fh:
        text = fh.read()
    rows, row, field, i, n = [], [], [], 0, len(text)
    while i < n:
        if not field and text[i] == '"' and (i == 0 or text[i - 1] in ",\n"):
            i += 1
            while i < n:
                ch = text[i]
                if ch == '"' and i + 1 < n and text[i + 1] == '"':
                    field.append('"')
                    i += 2
                elif ch == '"' and (i + 1 == n or text[i + 1] in ",\r\n"):
                    i += 1
                    break
                else:
                    field.append(ch)
                    i += 1
            continue
        ch = text[i]
        if ch == ",":
            row.append("".join(field))
            field = []
        elif ch == "\n":
            row.append("".join(field))
            rows.append(row)
            row, field = [], []
        else:
            field.append(ch)
        i += 1
    if field or row:
        row.append("".join(field))
        rows.append(row)
    header = rows[0]
    for r in rows[1:]:
        if len(r) != len(header):
            raise Bad("%s: row %r has %d fields" % (path, r[:1], len(r)))
        yield dict(zip(header, r))


def tool_figures(dump):
    """The same figures from memscope-convert's dump CSV, and its APP samples."""
    fig = Figures()
    mallocs = {}
    frees = set()
    pool_app = {}
    npu_app = {}
    for r in dump_rows(dump):
        ev, sub, name = r["Event"], r["Event Type"], r["Name"]
        fig.pids[r["Process Id"]] += 1
        ts = int(r["Timestamp(ns)"])
        a = parse_attr(r["Attr"])

        def iv(k):
            return int(a[k]) if k in a else None

        if ev in ("MALLOC", "FREE"):
            pool = sub
            bid = iv("allocation_id")
            fig.devices[r["Device Id"]] += 1
            fig.add((ev, pool), size=iv("size"), ts=ts, total=iv("total"), used=iv("used"))
            if ev == "MALLOC":
                fig.names[(pool, name)] += 1
                if bid in mallocs:
                    raise Bad("%s: allocation_id %d allocated twice" % (dump, bid))
                mallocs[bid] = (iv("size"), ts)
            else:
                if name != "N/A":
                    raise Bad("%s: FREE %s named %r" % (dump, r["ID"], name))
                if bid in frees:
                    raise Bad("%s: allocation_id %d freed twice" % (dump, bid))
                frees.add(bid)
                m = mallocs.get(bid)
                if m and (m[0] != iv("size") or m[1] > ts):
                    raise Bad("%s: FREE %s does not match its MALLOC" % (dump, r["ID"]))
        elif ev == "COUNTER":
            fig.devices[r["Device Id"]] += 1
            if sub == "POOL":
                fig.add(("POOL", name), ts=ts, used=iv("used"), total=iv("total"),
                        active=iv("active"))
                if name == "APP":
                    pool_app[ts] = iv("total")
            elif sub == "NPU_MEM":
                fig.add(("NPU_MEM", name), ts=ts, used=iv("used"))
                if name == "APP/Memory":
                    npu_app[ts] = iv("used")
            elif sub == "MODULE":
                fig.add(("MODULE", name), ts=ts, total=iv("total"))
            else:
                raise Bad("%s: COUNTER %s of subtype %s" % (dump, r["ID"], sub))
        elif ev == "PLAN":
            fig.devices[r["Device Id"]] += 1
            fig.add(("PLAN", sub), size=iv("size"), start=iv("start"), end=iv("end"),
                    graph=iv("graph"))
            fig.names[("PLAN", name)] += 1
            if ts != 0:
                raise Bad("%s: PLAN %s has a time" % (dump, r["ID"]))
        elif ev == "OP_LAUNCH":
            fig.add(("OP_LAUNCH", sub))
        else:
            fig.add(("OTHER", ev + "/" + sub))
    fig.blocks = len(set(mallocs) | frees)
    for bid, (size, _) in mallocs.items():
        if bid not in frees:
            fig.leak_count += 1
            fig.leak_bytes += size
    return fig, pool_app, npu_app


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


class Check:
    def __init__(self, label):
        self.label = label
        self.n = 0
        self.failed = 0

    def eq(self, what, want, got):
        self.n += 1
        if want != got:
            self.failed += 1
            print("FAIL: %s: %s: oracle %r, tool %r" % (self.label, what, want, got))

    def true(self, what, cond):
        self.n += 1
        if not cond:
            self.failed += 1
            print("FAIL: %s: %s" % (self.label, what))


def compare(c, want, got):
    for k in sorted((set(want.f) | set(got.f)) - {"module_left_out"}, key=str):
        w, g = dict(want.f.get(k, {})), dict(got.f.get(k, {}))
        c.eq("%s %s" % k, w, g)
    c.eq("blocks", want.blocks, got.blocks)
    c.eq("MALLOC names", {k: v for k, v in want.names.items() if k[0] != "PLAN"},
         {k: v for k, v in got.names.items() if k[0] != "PLAN"})
    c.eq("PLAN names", {k: v for k, v in want.names.items() if k[0] == "PLAN"},
         {k: v for k, v in got.names.items() if k[0] == "PLAN"})
    c.eq("devices of memory events", want.devices, got.devices)
    c.eq("exit leaks (count, bytes)", (want.leak_count, want.leak_bytes),
         (got.leak_count, got.leak_bytes))


def summary_line(label, fig):
    m = sum(v["count"] for k, v in fig.f.items() if k[0] == "MALLOC")
    mb = sum(v.get("sum_size", 0) for k, v in fig.f.items() if k[0] == "MALLOC")
    fr = sum(v["count"] for k, v in fig.f.items() if k[0] == "FREE")
    fb = sum(v.get("sum_size", 0) for k, v in fig.f.items() if k[0] == "FREE")
    pools = sum(v["count"] for k, v in fig.f.items() if k[0] == "POOL")
    mods = sum(v["count"] for k, v in fig.f.items() if k[0] == "MODULE")
    npu = sum(v["count"] for k, v in fig.f.items() if k[0] == "NPU_MEM")
    plan = sum(v["count"] for k, v in fig.f.items() if k[0] == "PLAN")
    return ("%s: %d blocks, %d MALLOC (%d B), %d FREE (%d B), %d POOL, %d NPU_MEM, %d MODULE, "
            "%d PLAN samples; exit leaks %d (%d B); %d rows skipped"
            % (label, fig.blocks, m, mb, fr, fb, pools, npu, mods, plan, fig.leak_count,
               fig.leak_bytes, fig.skipped))


def check_dir(bindir, work, path, lenient):
    label = os.path.basename(os.path.normpath(path))
    c = Check(label)
    want, app, files = oracle(path, lenient)
    print(summary_line("oracle " + label, want))
    dump = os.path.join(work, label + ".dump.csv")
    cmd = [os.path.join(bindir, "memscope-convert"), "-f", "-o", dump, path]
    if lenient:
        cmd.insert(1, "--lenient")
    rc, _, err = run(cmd)
    c.eq("memscope-convert exit status", 0, rc)
    if rc:
        print("  " + err.strip())
        return c
    if want.skipped:
        c.true("stderr says %d rows were skipped: %r" % (want.skipped, err),
               re.search(r"skipped %d bad rows" % want.skipped, err) is not None)
    try:
        got, pool_app, npu_app = tool_figures(dump)
    except Bad as e:
        c.true(str(e), False)
        return c
    compare(c, want, got)
    c.eq("processes of the events (one pid for the whole output)", 1, len(got.pids))
    if want.f.get(("OP_LAUNCH", "ATEN_START")):
        c.true("the events' pid is the timeline's: %r" % dict(got.pids), "N/A" not in got.pids)
    if app:
        # msprof.md §5.4: the APP/Memory counter equals memory_record's APP row at the same time
        matched = {ts: v for ts, v in app.items() if ts in pool_app}
        c.true("APP/Memory counters all have an APP row at their time (%d of %d)"
               % (len(matched), len(app)), len(matched) == len(app))
        c.eq("APP/Memory counters (bytes) = APP rows of memory_record (oracle)",
             matched, {ts: pool_app[ts] for ts in matched})
        c.eq("APP/Memory NPU_MEM events = APP POOL samples at the same time (tool)",
             {ts: pool_app.get(ts) for ts in npu_app}, npu_app)
        print("%s: %d APP/Memory counters equal the APP rows of memory_record" % (label,
              len(matched)))
        c.eq("APP/Memory samples compared", len(app), len(npu_app))
    # memscope-leaks: exit leaks in bytes
    cmd = [os.path.join(bindir, "memscope-leaks"), "-q", "--kinds", "exit", "--format", "json",
           path]
    if lenient:
        cmd.insert(1, "--lenient")
    rc, out, err = run(cmd)
    c.eq("memscope-leaks exit status", 0, rc)
    if rc == 0:
        rep = json.loads(out)
        ex = rep["summary"]["exit"]
        c.eq("memscope-leaks exit leaks (count, bytes)", (want.leak_count, want.leak_bytes),
             (ex["leaks"], ex["bytes"]))
        c.eq("memscope-leaks allocations", sum(v["count"] for k, v in want.f.items()
                                               if k[0] == "MALLOC"),
             rep["summary"]["allocations"])
    print("%s: %d checks, %d failed" % (label, c.n, c.failed))
    return c


def check_fail(bindir, path, pattern):
    label = os.path.basename(os.path.normpath(path))
    c = Check(label)
    rc, _, err = run([os.path.join(bindir, "memscope-convert"), "-f", "-o", "-", path])
    c.eq("memscope-convert exit status", 3, rc)
    lines = err.splitlines()
    c.true("one stderr line matching %r: %r" % (pattern, err),
           len(lines) == 1 and re.search(pattern, lines[0]) is not None)
    print("%s: fails as it must (%d checks, %d failed)" % (label, c.n, c.failed))
    return c


def main(argv):
    bindir, work = argv[1], argv[2]
    lenient = False
    expect = None
    failed = 0
    n = 0
    args = argv[3:]
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--lenient":
            lenient = True
        elif a == "--expect-fail":
            i += 1
            expect = args[i]
        else:
            c = check_fail(bindir, a, expect) if expect else check_dir(bindir, work, a, lenient)
            n += c.n
            failed += c.failed
        i += 1
    print("check_msprof: %d checks, %d failed" % (n, failed))
    return 1 if failed or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
