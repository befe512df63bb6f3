#!/bin/sh
# Golden CLI cases of memscope-export --format chrome-trace: one process group per (input,
# process), training steps as slices, --step/--from/--to windows whose counters start at the
# value they had, samples left out without changing the curve, the pools counted, bad window
# values, and the profiler's samples (COUNTER rows). Expected values come from an independent reading of the CSV (the oracle below).
# Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
E="$BIN/memscope-export"
CHECK="python3 $SRC/tests/cli/check_chrome_trace.py"
cd "$WORK" || exit 1
cp "$SRC"/testdata/baseline.csv "$SRC"/testdata/leaks/steps_mstx.csv \
	"$SRC"/testdata/leaks/steps_system.csv "$SRC"/testdata/memscope_dump_20250428113810.csv .

# The oracle: `gen SEED PID OUT` writes a training-like dump (PTA blocks several to a
# microsecond, a few HAL blocks, nested ops on two threads, five mstx steps);
# `check TRACE [--step N | --from NS --to NS] INPUT...` compares a trace written with
# --resolution 0 with what the rows say: per (input, process) a group named after both, its
# live, used and reserved curves (the pools memscope_pools_default keeps), its op slices and its
# steps, all cut to the window (counters starting with their value at its start).
cat >oracle.py <<'X'
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
X
ORACLE="python3 $WORK/oracle.py"
$ORACLE gen 1 7 gen.csv && $ORACLE gen 2 7 gen2.csv || exit 1
# the oracle's own pieces fail when they should: a trace of another input is not gen.csv's
"$E" -q --format chrome-trace --resolution 0 -o gen2.json gen2.csv
expect_status 1 $ORACLE check gen2.json gen.csv

# every (input, process) its own group, also when two inputs' processes share a pid; each with
# its own curves, ops and steps; sorted by input
for f in gen.csv baseline.csv steps_mstx.csv steps_system.csv memscope_dump_20250428113810.csv; do
	expect_status 0 "$E" -q --format chrome-trace --resolution 0 -o $f.json $f
	expect_status 0 $CHECK $f.json
	expect_status 0 $ORACLE check $f.json $f
done
expect_status 0 "$E" -q --format chrome-trace --resolution 0 -o two.json gen.csv gen2.csv
expect_status 0 $CHECK two.json
expect_status 0 $ORACLE check two.json gen.csv gen2.csv
# one file named twice is one input, read once (tools/cli.c), and said
expect_status 0 "$E" -q --format chrome-trace --resolution 0 -o same.json gen.csv gen.csv
grep -qx 'memscope-export: gen.csv: the same as gen.csv, listed once' "$WORK/err" && ok || bad "gen.csv twice: $(cat "$WORK/err")"
expect_status 0 $ORACLE check same.json gen.csv
expect_status 0 python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = [e["args"]["name"] for e in ev if e.get("name") == "process_name"]
sys.exit(0 if names == ["pid 7"] or names == ["pid 7 (gen.csv)"] else 1)' same.json
# the legacy file's two processes: one group each, their steps on a thread named "steps"
expect_status 0 python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
steps = {(e["pid"], e["tid"], e["name"]) for e in ev if e.get("cat") == "step"}
named = {(e["pid"], e["tid"]) for e in ev if e.get("name") == "thread_name" and e["args"]["name"] == "steps"}
sys.exit(0 if steps == {(1, 1, "step 1"), (2, 1, "step 1")} and named == {(1, 1), (2, 1)} else 1)' \
	memscope_dump_20250428113810.csv.json
# steps from SYSTEM STEP rows: STEP row n ends step n, step n + 1 starts 1 ns after it
# (testdata/README.txt: rows 1-3)
expect_status 0 python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
s = [(e["name"], e["ts"], e["dur"], e["args"]["source"]) for e in ev if e.get("cat") == "step"]
sys.exit(0 if s == [("step 1", 0, 10, "SYSTEM STEP"), ("step 2", 10.001, 9.999, "SYSTEM STEP"), ("step 3", 20.001, 9.999, "SYSTEM STEP")] else 1)' \
	steps_system.csv.json

# windows: a step of each process, seconds after the first row, timestamps; counters start
# with their value at the window's start, ops open then start there
for n in 1 2 3 5; do
	expect_status 0 "$E" -q --format chrome-trace --resolution 0 --step $n -o step$n.json gen.csv gen2.csv
	expect_status 0 $CHECK step$n.json
	expect_status 0 $ORACLE check step$n.json --step $n gen.csv gen2.csv
done
for n in 2 4; do
	expect_status 0 "$E" -q --format chrome-trace --resolution 0 --step $n -o mstx$n.json steps_mstx.csv
	expect_status 0 $ORACLE check mstx$n.json --step $n steps_mstx.csv
done
# steps_mstx.csv step 2 (20 to 31 us): 3 MiB live then (blocks 1 and 2), used 3145728
expect_status 0 python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
first = lambda n: next((e["ts"], e["args"]["bytes"]) for e in ev if e.get("name") == n)
sys.exit(0 if first("PTA device 0 live") == (20, 3145728) and first("PTA device 0 used") == (20, 3145728) else 1)' mstx2.json
for n in 2 3; do
	expect_status 0 "$E" -q --format chrome-trace --resolution 0 --step $n -o sys$n.json steps_system.csv
	expect_status 0 $ORACLE check sys$n.json --step $n steps_system.csv
done
expect_status 0 "$E" -q --format chrome-trace --resolution 0 --from 0.0001 --to 0.00025 -o t1.json gen.csv gen2.csv
expect_status 0 $CHECK t1.json
expect_status 0 $ORACLE check t1.json --from 100000 --to 250000 gen.csv gen2.csv
expect_status 0 "$E" -q --format chrome-trace --resolution 0 --from 0.00031 -o t2.json gen.csv
expect_status 0 $ORACLE check t2.json --from 310000 gen.csv
first=$(python3 -c 'import csv, sys; print(min(int(r["Timestamp(ns)"]) for r in csv.DictReader(open(sys.argv[1]))))' gen.csv)
expect_status 0 "$E" -q --format chrome-trace --resolution 0 --from $((first + 50000))ns --to $((first + 120000))ns -o t3.json gen.csv
expect_status 0 $ORACLE check t3.json --from 50000 --to 120000 gen.csv
expect_status 0 "$E" -q --format chrome-trace --resolution 0 --to 0.00012 -o t4.json gen.csv
expect_status 0 $ORACLE check t4.json --to 120000 gen.csv
# the same window in seconds after the first row and as timestamps: the same trace
expect_status 0 "$E" -q --format chrome-trace --resolution 0 --from 0.00005 --to 0.00012 -o t5.json gen.csv
expect_same t5.json t3.json
# a window starting inside an op: the op starts with it, and so do the counters
lo=$(python3 -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
b = next(r for r in rows if r["Name"] == "aten.op3" and r["Event Type"] == "ATEN_START")
print(int(b["Timestamp(ns)"]) + 1)' gen.csv)
expect_status 0 "$E" -q --format chrome-trace --resolution 0 --from ${lo}ns -o t6.json gen.csv
expect_status 0 $ORACLE check t6.json --from $((lo - first)) gen.csv
expect_status 0 python3 -c 'import json, sys
from decimal import Decimal
d = json.load(open(sys.argv[1]), parse_float=Decimal)
lo = Decimal(int(sys.argv[2]) - int(d["otherData"]["origin_s"]) * 10**9) / 1000
ev = d["traceEvents"]
sys.exit(0 if any(e.get("name") == "aten.op3" and e["ts"] == lo for e in ev) and min(e["ts"] for e in ev if e["ph"] == "C") == lo else 1)' t6.json $lo

# samples left out: the curves of every track are the same at 1 us (the default for a trace of
# this size), at 100 us, and fewer samples are written
expect_status 0 "$E" -q --format chrome-trace -o gen.1us.json gen.csv
expect_status 0 $CHECK gen.1us.json
expect_status 0 $CHECK --same-curve gen.csv.json gen.1us.json 1000
expect_status 0 "$E" -q --format chrome-trace --resolution 100us -o gen.100us.json gen.csv
expect_status 0 $CHECK --same-curve gen.csv.json gen.100us.json 100000
expect_status 1 $CHECK --same-curve gen.csv.json gen.100us.json 1000
expect_status 0 "$E" -q --format chrome-trace --resolution 1ms --step 2 -o gen.step.json gen.csv gen2.csv
expect_status 0 $CHECK --same-curve step2.json gen.step.json 1000000
expect_status 0 python3 -c 'import json, sys
n = [sum(e["ph"] == "C" for e in json.load(open(f))["traceEvents"]) for f in sys.argv[1:]]
sys.exit(0 if n[0] > n[1] > n[2] > 0 else 1)' gen.csv.json gen.1us.json gen.100us.json
# a sample with the value of the one before is left out: the reserved bytes change seldom
expect_status 0 python3 -c 'import json, sys
s = lambda f: [e["args"]["bytes"] for e in json.load(open(f))["traceEvents"] if e.get("name") == "PTA device 0 reserved"]
full, red = s(sys.argv[1]), s(sys.argv[2])
changes = [v for k, v in enumerate(full) if not k or v != full[k - 1]]
sys.exit(0 if len(full) > 100 and red == changes and len(changes) > 1 else 1)' gen.csv.json gen.1us.json
# the summary counts them
expect_status 0 "$E" --format chrome-trace -o gen.s.json gen.csv
cp "$WORK/err" gen.s.err
expect_status 0 python3 -c 'import json, re, sys
full = sum(e["ph"] == "C" for e in json.load(open(sys.argv[1]))["traceEvents"])
got = sum(e["ph"] == "C" for e in json.load(open(sys.argv[2]))["traceEvents"])
m = re.search(r": process groups 1, counter samples (\d+) in bytes \(and (\d+) left out by --resolution 1us\), op slices (\d+), steps 5$", open(sys.argv[3]).read())
sys.exit(0 if m and int(m[1]) == got and int(m[1]) + int(m[2]) == full else 1)' gen.csv.json gen.s.json gen.s.err

# pools: by default each input's framework pools, not HAL (baseline.csv has both); HAL beside
# them is labelled and noted
expect_status 0 python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
sys.exit(0 if {e["name"] for e in ev if e["ph"] == "C"} == {"PTA device 0 live", "PTA device 0 used", "PTA device 0 reserved"} else 1)' baseline.csv.json
expect_status 0 "$E" -q --format chrome-trace --pool all -o all.json baseline.csv
expect_err_line '^memscope-export: baseline.csv: HAL memory holds the PTA blocks: its tracks are labelled \(--pool\)$'
expect_status 0 python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["name"] for e in ev if e["ph"] == "C"}
labels = [e["args"]["labels"] for e in ev if e.get("name") == "process_labels"]
sys.exit(0 if "HAL device 0 live (holds PTA)" in names and "PTA device 0 live" in names and labels[0].endswith("; HAL (holds PTA)") else 1)' all.json
expect_status 0 "$E" -q --format chrome-trace --pool hal -o hal.json baseline.csv
expect_status 0 python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
sys.exit(0 if {e["name"] for e in ev if e["ph"] == "C"} == {"HAL device 0 live"} else 1)' hal.json

# bad windows: one line each, usage (2) or input (3) errors, no output left
expect_status 2 "$E" --format chrome-trace --step 0 -o bad.json gen.csv
expect_err_line "^memscope-export: --step: expected a whole number from 1, got '0'$"
expect_status 3 "$E" --format chrome-trace --step 6 -o bad.json gen.csv
expect_err_line '^memscope-export: gen.csv: no step 6: it has steps 1 to 5$'
expect_status 3 "$E" --format chrome-trace --step 1 -o bad.json gen.csv baseline.csv
expect_err_line '^memscope-export: baseline.csv: no steps: neither mstx "step start" ranges, SYSTEM STEP rows nor ProfilerStep#N ops$'
expect_status 2 "$E" --format chrome-trace --from 20 --to 12.5 -o bad.json gen.csv
expect_err_line '^memscope-export: --from must come before --to$'
expect_status 2 "$E" --format chrome-trace --from 2 --to 2 -o bad.json gen.csv
expect_err_line '^memscope-export: --from must come before --to$'
expect_status 2 "$E" --format chrome-trace --from "$((first + 5000))ns" --to 0.000001 -o bad.json gen.csv
expect_err_line '^memscope-export: gen.csv: the window ends before it starts'
expect_status 3 "$E" --format chrome-trace --from 100 -o bad.json gen.csv
expect_err_line '^memscope-export: gen.csv: nothing in the window'
for v in 1x -1 1.2.3 . 1e3 0.0000000001 12.5ns 18446744073709551616ns 99999999999; do
	expect_status 2 "$E" --format chrome-trace --from "$v" -o bad.json gen.csv
	expect_err_line "^memscope-export: --from: expected seconds after the first row \(12.5\) or a timestamp in ns \(1764753084427185510ns\), got '"
done
for v in 5 1 us 1.5ns 1x 0s -1ms 99999999999s; do
	expect_status 2 "$E" --format chrome-trace --resolution "$v" -o bad.json gen.csv
	expect_err_line "^memscope-export: --resolution: expected 0 or a time with its unit"
done
expect_status 2 "$E" --format chrome-trace --step 1 --from 1 -o bad.json gen.csv
expect_err_line '^memscope-export: --step and --from/--to: give one window$'
for f in speedscope folded svg; do
	expect_status 2 "$E" --format $f --step 1 -o bad.out gen.csv
	expect_err_line "^memscope-export: --step does nothing for --format $f$"
	expect_status 2 "$E" --format $f --from 1 -o bad.out gen.csv
	expect_err_line "^memscope-export: --from does nothing for --format $f$"
	expect_status 2 "$E" --format $f --resolution 1ms -o bad.out gen.csv
	expect_err_line "^memscope-export: --resolution does nothing for --format $f$"
done
expect_absent bad.json
expect_absent bad.out
# an end closes the innermost open op of its name and those inside it, as memscope-leaks and the
# flame graphs read ops; the end of an op already closed is dropped; a window after it reopens
# nothing
cat >ends.csv <<'EOF2'
ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)
1,OP_LAUNCH,ATEN_START,opA,1000,7,7,0,N/A,,,
2,OP_LAUNCH,ATEN_START,opB,1500,7,7,0,N/A,,,
3,MALLOC,PTA,N/A,1600,7,7,0,0x1000,"{allocation_id:1,addr:0x1000,size:100,total:4096,used:100}",,
4,OP_LAUNCH,ATEN_END,opA,2200,7,7,0,N/A,,,
5,OP_LAUNCH,ATEN_END,opB,3500,7,7,0,N/A,,,
6,FREE,PTA,N/A,4000,7,7,0,0x1000,"{allocation_id:1,addr:0x1000,size:100,total:4096,used:0}",,
EOF2
expect_status 0 "$E" -q -f -o ends.trace.json ends.csv
expect_status 0 "$E" -q -f --from 2500ns -o ends2.trace.json ends.csv
expect_status 0 python3 -c 'import json, sys
ops = lambda f: sorted((e["name"], e["ts"], e["dur"]) for e in json.load(open(f))["traceEvents"] if e.get("ph") == "X" and e.get("cat") != "step")
sys.exit(0 if ops(sys.argv[1]) == [("opA", 1, 1.2), ("opB", 1.5, 0.7)] and ops(sys.argv[2]) == [] else 1)' ends.trace.json ends2.trace.json
# the profiler's samples (COUNTER rows: memory_record, npu_mem, npu_module_mem): one counter per
# (process, device, sample track, series), one series per event in MB, in time order although
# the rows are not; at a coarser resolution each tick keeps its highest value; a window starts
# each with the values held then; a PLAN row (no time) moves neither the origin nor a window.
# ctr.py gen OUT [--no-plan] writes them; ctr.py check TRACE INPUT [--from NS --to NS]
# [--tick NS] reads both independently.
cat >ctr.py <<'X'
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
X
CTR="python3 $WORK/ctr.py"
$CTR gen ctr.csv && mkdir -p noplan && $CTR gen noplan/ctr.csv --no-plan || exit 1
expect_status 0 "$E" -q --format chrome-trace --resolution 0 -o ctr.json ctr.csv
expect_status 0 $CHECK ctr.json
expect_status 0 $CTR check ctr.json ctr.csv
# the oracle fails when it should: another input's samples are not these
expect_status 1 $CTR check gen.csv.json ctr.csv
expect_status 0 python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["name"] for e in ev if e["ph"] == "C"}
want = {"NPU0 PTA (memory_record) allocated", "NPU0 PTA (memory_record) reserved",
	"NPU0 PTA (memory_record) active", "NPU1 PTA (memory_record) allocated",
	"NPU0 APP (memory_record) reserved", "NPU0 APP/Memory", "NPU0 Device/HBM", "NPU0 module HCCL",
	"NPU0 GE (memory_record) allocated", "NPU0 GE (memory_record) reserved", "PTA device 0 live"}
groups = [e["args"]["name"] for e in ev if e.get("name") == "process_name"]
sys.exit(0 if want <= names and groups == ["pid 100 (ctr.csv)", "pid 200 (ctr.csv)"] else 1)' ctr.json
for tick in 100us 1ms; do
	expect_status 0 "$E" -q --format chrome-trace --resolution $tick -o ctr.$tick.json ctr.csv
	expect_status 0 $CHECK ctr.$tick.json
done
expect_status 0 $CTR check ctr.100us.json ctr.csv --tick 100000
expect_status 0 $CTR check ctr.1ms.json ctr.csv --tick 1000000
expect_status 1 $CTR check ctr.1ms.json ctr.csv --tick 100000
expect_status 0 python3 -c 'import json, sys
n = [sum("MB" in e.get("args", {}) for e in json.load(open(f))["traceEvents"]) for f in sys.argv[1:]]
sys.exit(0 if n[0] > n[1] > n[2] > 0 else 1)' ctr.json ctr.100us.json ctr.1ms.json
# windows: the counters start at the window's start with the values held then
expect_status 0 "$E" -q --format chrome-trace --resolution 0 --from 0.0002 --to 0.0007 -o ctr.w.json ctr.csv
expect_status 0 $CTR check ctr.w.json ctr.csv --from 200000 --to 700000
expect_status 1 $CTR check ctr.w.json ctr.csv --from 200000 --to 800000
# an Ascend profiler output: every counter in MB (the samples' unit, the live bytes too); of
# npu_module_mem's modules those never above 0 carry nothing: left out, counted in the summary
# (torch_npu_level0: 4 of 77 drawn)
T0=$SRC/testdata/msprof/torch_npu_level0_rank0_ascend_pt
expect_status 0 "$E" --format chrome-trace -o t0.json "$T0"
cp "$WORK/err" t0.err
expect_status 0 $CHECK t0.json
expect_status 0 python3 - t0.json t0.err "$T0/ASCEND_PROFILER_OUTPUT/npu_module_mem.csv" <<'Y'
import csv, json, re, sys
from decimal import Decimal
ev = json.load(open(sys.argv[1]))["traceEvents"]
top = {}
for r in csv.DictReader(open(sys.argv[3], newline="")):
    v = Decimal(r["Total Reserved(MB)"].strip())
    top[r["Component"]] = max(top.get(r["Component"], v), v)
drawn = {e["name"][len("NPU0 module "):] for e in ev if e["ph"] == "C" and e["name"].startswith("NPU0 module ")}
idle = sum(v <= 0 for v in top.values())
m = re.search(r"t0.json: process groups 1, counter samples \d+ in MB \(and \d+ left out by --resolution 1us\), op slices 860, steps 1; (\d+) npu_module_mem tracks never above 0 left out$", open(sys.argv[2]).read())
units = {k for e in ev if e["ph"] == "C" for k in e["args"]}
ok = drawn == {c for c, v in top.items() if v > 0} and len(drawn) == 4 and m and int(m[1]) == idle == 73
sys.exit(0 if ok and units == {"MB"} and "PTA device 0 live" in {e["name"] for e in ev} else f"{drawn} {idle} {units} {open(sys.argv[2]).read()}")
Y
# an output without a timeline names no process: its group is named after the input alone
PROF=PROF_000001_20260605161708478_FRJKORBPFMHQMGLA
expect_status 0 "$E" -q --format chrome-trace -o prof.json "$SRC/testdata/msprof-quirks/$PROF"
expect_status 0 $CHECK prof.json
expect_status 0 python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
sys.exit(0 if [e["args"]["name"] for e in ev if e.get("name") == "process_name"] == [sys.argv[2]] else 1)' prof.json $PROF
# a dump without the profiler's samples: every counter in bytes
expect_status 0 python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
sys.exit(0 if {k for e in ev if e["ph"] == "C" for k in e["args"]} == {"bytes"} else 1)' gen.csv.json
# PLAN's time 0 is no row: the same origin, window and samples without it
expect_status 0 "$E" -q --format chrome-trace --resolution 0 --from 0.0002 --to 0.0007 -o ctr.np.json noplan/ctr.csv
expect_status 0 python3 -c 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
c = lambda d: [e for e in d["traceEvents"] if e["ph"] == "C"]
sys.exit(0 if a["otherData"] == b["otherData"] and c(a) == c(b) and c(a) else 1)' ctr.w.json ctr.np.json
finish
