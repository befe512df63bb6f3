#!/usr/bin/env python3
"""The timeline cases' oracle of the profiler's samples (COUNTER rows: memory_record, npu_mem,
npu_module_mem) in a chrome-trace export (tests/cli/cases/timeline.test): one counter per
(process, device, sample track, series), one series per event in MB, in time order although the
rows are not; at a coarser resolution each tick keeps its highest value; a window starts each
with the values held then; a PLAN row (no time) moves neither the origin nor a window.
`gen OUT [--no-plan]` writes such a dump; `check TRACE INPUT [--from NS --to NS] [--tick NS]`
reads both independently. Prints 'ok N tracks, M samples' or 'FAIL: ...', exit 0/1.
"""
import csv, json, random, re, sys
from decimal import Decimal, ROUND_HALF_UP

H = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)"
T0 = 1736405443000000000
SERIES = {"used": "allocated", "total": "reserved", "active": "active"}

def gen(out, plan=True):
    rnd = random.Random(3)
    rows, rid = [], 0
    def row(ev, typ, name, ts, dev, attr, pid=100, tid="N/A", ptr="N/A"):
        nonlocal rid
        rid += 1
        rows.append(f'{rid},{ev},{typ},{name},{ts},{pid},{tid},{dev},{ptr},"{{{attr}}}",,')
    ts, used, ptr = T0 + 5000, 1 << 30, 0x1000
    for i in range(1500):
        ts += rnd.randrange(100, 2000)
        used += rnd.choice([-1, 1]) * rnd.choice([512, 1 << 20, 3 << 20, 1234567])
        dev = i % 3 // 2  # device 1 every third sample
        row("COUNTER", "POOL", "PTA", ts, dev, f"used:{used},total:{4 << 30},active:{used + 4096}")
        if i % 7 == 0:
            row("COUNTER", "POOL", "APP", ts, 0, f"total:{(5 << 30) + rnd.randrange(1 << 20)}")
            for n in ("APP/Memory", "Device/HBM"):
                row("COUNTER", "NPU_MEM", n, ts, 0, f"used:{rnd.randrange(-5, 1 << 34)}")
            row("COUNTER", "MODULE", "HCCL", ts, 0, f"total:{rnd.randrange(400 << 20)}")
        if i % 50 == 0:
            ptr += 0x1000
            row("MALLOC", "PTA", "N/A", ts, 0, f"allocation_id:{ptr},size:4096", tid=100, ptr=hex(ptr))
    # a second process, and rows out of time order
    row("COUNTER", "POOL", "GE", T0 + 20000, 0, "used:7,total:9", pid=200)
    head, tail = rows[:300], rows[300:]
    rnd.shuffle(head)
    rows = head + tail
    if plan:
        row("PLAN", "GE", "op", 0, "cpu", "size:100,graph:1", pid="N/A")
    open(out, "w").write("\n".join([H] + rows) + "\n")

def attrs(s):
    s = s.strip().strip("{}")
    return dict(kv.split(":", 1) for kv in s.split(",") if ":" in kv) if s else {}

def mb(v):
    """bytes as the trace's MB: v / 2^20 to six decimals, rounded half up"""
    q = (Decimal(abs(v)) / Decimal(1 << 20)).quantize(Decimal("0.000001"), ROUND_HALF_UP)
    return -q if v < 0 else q

def want(path, lo=None, hi=None):
    """{(pid, name): [(ns, MB)]} of the input's COUNTER rows, cut to [lo, hi]"""
    rows = list(csv.DictReader(open(path)))
    first = min(int(r["Timestamp(ns)"]) for r in rows if r["Event"] != "PLAN")
    tracks = {}
    for r in sorted(rows, key=lambda r: int(r["Timestamp(ns)"])):  # stable: file order at a time
        if r["Event"] != "COUNTER":
            continue
        dev, a, ts = r["Device Id"], attrs(r["Attr"]), int(r["Timestamp(ns)"])
        for key, word in SERIES.items():
            if key not in a:
                continue
            if r["Event Type"] == "POOL":
                name = f'NPU{dev} {r["Name"]} (memory_record) {word}'
            elif r["Event Type"] == "NPU_MEM":
                name = f'NPU{dev} {r["Name"]}'
            else:
                name = f'NPU{dev} module {r["Name"]}'
            tracks.setdefault((int(r["Process Id"]), name), []).append((ts, mb(int(a[key]))))
    if lo is None:
        return tracks, first
    lo, hi = first + lo, first + hi - 1
    span = {}  # a process with no row in the window is left out
    for r in rows:
        if r["Event"] != "PLAN":
            p, t = int(r["Process Id"]), int(r["Timestamp(ns)"])
            span[p] = (min(span.get(p, (t, t))[0], t), max(span.get(p, (t, t))[1], t))
    out = {}
    for k, s in tracks.items():
        if span[k[0]][0] > hi or span[k[0]][1] < lo:
            continue
        before = [v for t, v in s if t < lo]
        inside = [(t, v) for t, v in s if lo <= t <= hi]
        if before or inside:
            out[k] = ([(lo, before[-1])] if before else []) + inside
    return out, first

def got(path):
    d = json.load(open(path), parse_float=Decimal)
    origin = int(d["otherData"]["origin_s"]) * 10**9
    names = {e["pid"]: e["args"]["name"] for e in d["traceEvents"] if e.get("name") == "process_name"}
    tracks = {}
    for e in d["traceEvents"]:
        if e["ph"] != "C":
            continue
        # one unit for every counter of the trace: the samples' MB, live bytes too
        if list(e["args"]) != ["MB"] or e.get("tid") != 0:
            sys.exit(f"FAIL: {e}: not one series in MB on thread 0")
        if re.search(r" device \S+ (live|used|reserved)$", e["name"]):
            continue
        pid = int(names[e["pid"]].split()[1])
        tracks.setdefault((pid, e["name"]), []).append((origin + int(Decimal(e["ts"]) * 1000), Decimal(e["args"]["MB"])))
    return tracks, origin

def check(trace, inp, lo=None, hi=None, tick=None):
    w, first = want(inp, lo, hi)
    g, origin = got(trace)
    errs = []
    if origin != first // 10**9 * 10**9:
        errs.append(f"origin {origin}, the first row's second is {first // 10**9 * 10**9}")
    if set(w) != set(g):
        errs.append(f"tracks {sorted(set(w) ^ set(g))[:4]}")
    for k in sorted(set(w) & set(g)):
        a, b = w[k], g[k]
        if any(x[0] > y[0] for x, y in zip(b, b[1:])):
            errs.append(f"{k}: out of time order")
        if tick is None and a != b:
            errs.append(f"{k}: {b[:3]}..., wanted {a[:3]}...")
        elif tick is not None:
            # every sample one of the input's; in each tick of the input's the highest value,
            # the one held from before counted, and the last value are the same
            def highest(s):
                out, held = {}, None
                for t in sorted({u // tick for u, _ in a}):
                    vs = [v for u, v in s if u // tick == t] + ([held] if held is not None else [])
                    out[t] = max(vs)
                    held = ([v for u, v in s if u // tick <= t] or [held])[-1]
                return out
            if not set(b) <= set(a) or highest(a) != highest(b) or a[-1][1] != b[-1][1]:
                errs.append(f"{k}: not the same curve at {tick} ns")
    n = sum(len(v) for v in g.values())
    print("FAIL: " + "; ".join(errs[:4]) if errs else f"ok {len(g)} tracks, {n} samples")
    return 1 if errs else 0

if sys.argv[1] == "gen":
    gen(sys.argv[2], "--no-plan" not in sys.argv)
else:
    a, kw = sys.argv[4:], {}
    while a:
        kw[a[0][2:]] = int(a[1])
        a = a[2:]
    sys.exit(check(sys.argv[2], sys.argv[3], kw.get("from"), kw.get("to"), kw.get("tick")))
