#!/usr/bin/env python3
"""The timeline cases' oracle (tests/cli/cases/timeline.test): an independent reading of a dump's
rows that a chrome-trace export must agree with.
`gen SEED PID OUT` writes a training-like dump (PTA blocks several to a microsecond, a few HAL
blocks, nested ops on two threads, five mstx steps); `check TRACE [--step N | --from NS --to NS]
INPUT...` compares a trace written with --resolution 0 with what the rows say: per (input,
process) a group named after both, its live, used and reserved curves (the pools
memscope_pools_default keeps), its op slices and its steps, all cut to the window (counters
starting with their value at its start). Prints 'ok N groups' or 'FAIL: ...', exit 0/1.
"""
import csv, json, os, random, sys
from decimal import Decimal

H = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)"
T0 = 1764753084000000000

def gen(seed, pid, out):
    rnd = random.Random(seed)
    rows, ts, rid, live, used, total = [], T0 + rnd.randrange(1000), 0, {}, 1 << 20, 64 << 20
    def row(ev, typ, name, tid, ptr="N/A", attr=""):
        nonlocal rid
        rid += 1
        a = '"{' + attr + '}"' if attr else ""
        rows.append(f"{rid},{ev},{typ},{name},{ts},{pid},{tid},0,{ptr},{a},,")
    def block(pool, kind, ptr, size):
        nonlocal used
        if pool == "PTA":
            used += size if kind == "MALLOC" else -size
            extra = f",total:{total},used:{used}"
        else:
            extra = ""
        row(kind, pool, "N/A", pid, hex(ptr), f"allocation_id:{ptr},addr:{hex(ptr)},size:{size}{extra}")
    ptr = 0x1000
    for step in range(5):
        row("MSTX", "Range_start", '"step start"', pid)
        ts += 500
        for op in range(40):
            tid = pid if op % 3 else pid + 1
            row("OP_LAUNCH", "ATEN_START", f"aten.op{op % 7}", tid)
            if op % 5 == 0:
                row("OP_LAUNCH", "ATEN_START", "aten.inner", tid)
            for _ in range(rnd.randrange(1, 6)):
                ts += rnd.randrange(0, 300)
                if live and rnd.random() < 0.45:
                    p = rnd.choice(sorted(live))
                    block("PTA", "FREE", p, live.pop(p))
                else:
                    ptr += 0x1000
                    live[ptr] = rnd.choice([512, 512, 4096, 1 << 20, rnd.randrange(1, 99999)])
                    block("PTA", "MALLOC", ptr, live[ptr])
                if rnd.random() < 0.01:
                    total += 64 << 20
            if op % 5 == 0:
                ts += rnd.randrange(0, 200)
                row("OP_LAUNCH", "ATEN_END", "aten.inner", tid)
            ts += rnd.randrange(0, 300)
            row("OP_LAUNCH", "ATEN_END", f"aten.op{op % 7}", tid)
            ts += rnd.randrange(0, 3000)
            if op == 20:
                ptr += 0x1000
                block("HAL", "MALLOC", ptr, 8 << 20)
        ts += 800
        row("MSTX", "Range_end", f"Range end from id {step}", pid)
        ts += 20000
    open(out, "w").write("\n".join([H] + rows) + "\n")

def attrs(s):
    s = s.strip().strip("{}")
    return dict(kv.split(":", 1) for kv in s.split(",") if ":" in kv) if s else {}

def read(path):
    rows = []
    for r in csv.DictReader(open(path)):
        ts = int(r["Timestamp(ns)"])
        if len(r["Timestamp(ns)"]) <= 16:  # the legacy layout's microseconds
            ts *= 1000
        rows.append(dict(id=int(r["ID"]), ev=r["Event"], typ=r["Event Type"], name=r["Name"], ts=ts,
                         pid=int(r["Process Id"]), tid=int(r["Thread Id"]), dev=r["Device Id"],
                         ptr=r["Ptr"], a=attrs(r["Attr"])))
    rows.sort(key=lambda r: (r["ts"], r["id"]))
    return rows

POOLS = ("PTA", "HAL", "ATB", "MINDSPORE", "PTA_WORKSPACE", "HOST", "HOST_PINNED", "GE")
IN_HAL = {"PTA", "ATB", "MINDSPORE", "PTA_WORKSPACE"}

def process(rows, pid, counted):
    """{track: [(ns, v)]}, [(begin, end, name, tid)], [(n, start, end)] of one process."""
    rows = [r for r in rows if r["pid"] == pid]
    tracks, live, sums, ops, stacks = {}, {}, {}, [], {}
    for r in rows:
        if r["ev"] in ("MALLOC", "FREE") and r["typ"] in counted:
            key = f'{r["typ"]} device {r["dev"]}'
            if r["ev"] == "MALLOC":
                size = int(r["a"]["size"])
                live[(key, r["ptr"])] = size
            else:
                size = -live.pop((key, r["ptr"]), 0)
            if size:
                sums[key] = sums.get(key, 0) + size
                tracks.setdefault(key + " live", []).append((r["ts"], sums[key]))
            if "used" in r["a"]:
                tracks.setdefault(key + " used", []).append((r["ts"], int(r["a"]["used"])))
            if "total" in r["a"] and "used" in r["a"]:
                tracks.setdefault(key + " reserved", []).append((r["ts"], int(r["a"]["total"])))
        elif r["ev"] == "OP_LAUNCH":
            st = stacks.setdefault(r["tid"], [])
            if r["typ"].endswith("_START"):
                st.append(r)
            elif st:
                b = st.pop()
                ops.append((b["ts"], r["ts"], b["name"], r["tid"]))
    last = rows[-1]["ts"] if rows else 0
    # mstx steps: a "step start" range to the Range_end that closes it on its thread; SYSTEM
    # STEP row n ends step n; the first kind of boundary a process has wins
    kinds = [r["ev"] for r in rows if (r["ev"] == "MSTX" and r["typ"] == "Range_start" and
                                       r["name"].strip('"') == "step start") or
             (r["ev"] == "SYSTEM" and r["typ"] == "STEP")]
    steps, open_, depth, sys_steps = [], None, 0, []
    for r in rows:
        if r["ev"] == "SYSTEM" and r["typ"] == "STEP" and kinds[:1] == ["SYSTEM"]:
            sys_steps.append(r["ts"])
        elif kinds[:1] != ["MSTX"]:
            pass
        elif r["ev"] == "MSTX" and r["typ"] == "Range_start":
            if r["name"].strip('"') == "step start":
                if open_:
                    steps[-1][2] = None
                steps.append([len(steps) + 1, r["ts"], None])
                open_, depth = r["tid"], 0
            elif open_ == r["tid"]:
                depth += 1
        elif r["ev"] == "MSTX" and r["typ"] == "Range_end" and open_ == r["tid"]:
            if depth:
                depth -= 1
            else:
                steps[-1][2], open_ = r["ts"], None
    for k, s in enumerate(steps):
        if s[2] is None:
            s[2] = steps[k + 1][1] - 1 if k + 1 < len(steps) else last
    if not steps and sys_steps:
        first = rows[0]["ts"]
        # step n + 1 starts just after the STEP row that ended step n
        steps = [[n + 1, sys_steps[n - 1] + 1 if n else first, t] for n, t in enumerate(sys_steps)]
    return tracks, ops, [tuple(s) for s in steps], rows

def cut(tracks, ops, steps, lo, hi, last):
    out = {}
    for k, s in tracks.items():
        before = [v for t, v in s if t < lo]
        inside = [(t, v) for t, v in s if lo <= t <= hi]
        out[k] = ([(lo, before[-1])] if before else []) + inside
        if not out[k]:
            del out[k]
    end = min(hi, last)
    ops = [(max(b, lo), min(e, end), n, tid) for b, e, n, tid in ops if b <= hi and e >= lo]
    steps = [(n, max(s, lo), min(e, hi)) for n, s, e in steps
             if s <= hi and e >= lo and not ((s < lo or e > hi) and (e == lo or s == hi))]
    return out, ops, steps

def trace(path):
    d = json.load(open(path), parse_float=Decimal)
    origin = int(d["otherData"]["origin_s"]) * 10**9
    ns = lambda us: origin + int(Decimal(us) * 1000)
    groups = {}
    for e in d["traceEvents"]:
        g = groups.setdefault(e["pid"], dict(tracks={}, ops=[], steps=[], meta={}))
        if e["ph"] == "M":
            g["meta"][e["name"]] = e["args"]
        elif e["ph"] == "C":
            g["tracks"].setdefault(e["name"], []).append((ns(e["ts"]), int(e["args"]["bytes"])))
        elif e["ph"] == "X" and e["cat"] == "op":
            g["ops"].append((ns(e["ts"]), ns(e["ts"]) + int(Decimal(e["dur"]) * 1000), e["name"], e["tid"]))
        elif e["ph"] == "X" and e["cat"] == "step":
            g["steps"].append((e["args"]["step"], ns(e["ts"]), ns(e["ts"]) + int(Decimal(e["dur"]) * 1000)))
    return groups

def check(path, inputs, step=None, frm=None, to=None):
    groups, want, errs = trace(path), [], []
    for i, inp in enumerate(inputs):
        rows = read(inp)
        seen = {r["typ"] for r in rows if r["ev"] in ("MALLOC", "FREE") and r["typ"] in POOLS}
        counted = seen - {"HAL"} if seen & IN_HAL else seen
        first = rows[0]["ts"]
        for pid in sorted({r["pid"] for r in rows}):
            tracks, ops, steps, prow = process(rows, pid, counted)
            if not tracks and not ops and not steps:
                continue
            last = prow[-1]["ts"]
            if step is not None:
                s = [x for x in steps if x[0] == step]
                if not s:
                    continue
                sysstep = any(r["ev"] == "SYSTEM" and r["typ"] == "STEP" for r in prow)
                lo, hi = s[0][1], s[0][2]  # (a SYSTEM step's start is already 1 ns past its row)
            elif frm is not None or to is not None:
                lo = first + (frm or 0)
                hi = first + to - 1 if to is not None else 2**64
            else:
                lo, hi = 0, 2**64
            if prow[0]["ts"] > hi or last < lo:
                continue
            got = cut(tracks, ops, steps, lo, hi, last)
            if any(got):
                want.append((i, inp, pid) + got)
    if len(groups) != len(want):
        errs.append(f"{len(groups)} process groups, wanted {len(want)}")
    for tpid, (i, inp, pid, tracks, ops, steps) in enumerate(want, 1):
        g = groups.get(tpid)
        if not g:
            errs.append(f"no group {tpid}")
            continue
        name = f"pid {pid} ({os.path.basename(inp)})"
        if g["meta"].get("process_name") != {"name": name}:
            errs.append(f"group {tpid}: name {g['meta'].get('process_name')}, wanted {name}")
        if not g["meta"].get("process_labels", {}).get("labels", "").startswith(f"input {i + 1}: {inp}"):
            errs.append(f"group {tpid}: labels {g['meta'].get('process_labels')}")
        if g["meta"].get("process_sort_index") != {"sort_index": tpid}:
            errs.append(f"group {tpid}: sort index {g['meta'].get('process_sort_index')}")
        if g["tracks"] != tracks:
            for k in sorted(set(g["tracks"]) | set(tracks)):
                if g["tracks"].get(k) != tracks.get(k):
                    errs.append(f"group {tpid} {k}: {(g['tracks'].get(k) or [])[:4]}..., wanted {(tracks.get(k) or [])[:4]}...")
                    break
        if sorted(g["ops"]) != sorted(ops):
            errs.append(f"group {tpid}: {len(g['ops'])} op slices, wanted {len(ops)}: {sorted(set(g['ops']) ^ set(ops))[:3]}")
        if sorted(g["steps"]) != steps:
            errs.append(f"group {tpid}: steps {sorted(g['steps'])}, wanted {steps}")
    print("FAIL: " + "; ".join(errs[:4]) if errs else f"ok {len(want)} groups")
    return 1 if errs else 0

if sys.argv[1] == "gen":
    gen(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
else:
    a, kw = sys.argv[3:], {}
    while a and a[0].startswith("--"):
        kw[a[0][2:]] = int(a[1])
        a = a[2:]
    sys.exit(check(sys.argv[2], a, kw.get("step"), kw.get("from"), kw.get("to")))
