#!/usr/bin/env python3
"""Nsight Systems-style SQLite exports for the tests (formats/nsys.md), python3 stdlib only.

Writes into OUTDIR databases shaped as `nsys export --type sqlite` writes them, each with a JSON
beside it (same name, .json) of what memscope must read from it, computed here from what was
inserted: every event in delivery order (unless --rows is large) and the figures (counts and
byte sums per event and pool, ranges, marks, processes, devices, first and last time).

  make_nsys.py OUTDIR                  every test database
  make_nsys.py OUTDIR --tiny           fewer rows, 512-byte pages (the fuzz corpus)
  make_nsys.py OUTDIR --rows 1000000   one database big.sqlite of about that many memory rows

The databases (rows inserted out of time order):
  nsys_numbering   enums numbered as nsys does, the older column set (no streamId)
  cupti_numbering  enums numbered as CUPTI does, resolved by name or label; the newer column
                   set in another order; other NVTX event type ids; no session start time
  no_enums         no ENUM_* tables: nsys' numbering, with notices
  leak             `step N` ranges and a device block allocated in step 3, never freed
  bad_kind, bad_oper, bad_null, bad_text, bad_range: one bad row each (its rowid in the JSON)
  bad_column       no `bytes` column
"""
import json
import os
import random
import sqlite3
import sys

# memory kinds in nsys' numbering: (enum name suffix, label, memscope pool)
KINDS = [
    ("PAGEABLE", "Pageable", "HOST"),
    ("PINNED", "Pinned", "HOST_PINNED"),
    ("DEVICE", "Device", "CUDA"),
    ("ARRAY", "Array", "CUDA"),
    ("MANAGED", "Managed", "CUDA_MANAGED"),
    ("DEVICE_STATIC", "Device Static", "CUDA"),
    ("MANAGED_STATIC", "Managed Static", "CUDA_MANAGED"),
    ("UNKNOWN", "Unknown", "CUDA"),
]
DEVICE = 2
EPOCH = 1_750_000_000_000_000_000
NV_TYPES = {"mark": ("NvtxMark", 34), "pushpop": ("NvtxPushPopRange", 59),
            "startend": ("NvtxStartEndRange", 60)}

OLD_COLS = ["start", "globalPid", "deviceId", "contextId", "address", "pc", "bytes", "memKind",
            "memoryOperationType", "name", "correlationId", "localMemoryPoolAddress",
            "localMemoryPoolReleaseThreshold", "localMemoryPoolSize",
            "localMemoryPoolUtilizedSize", "importedMemoryPoolAddress",
            "importedMemoryPoolProcessId"]
NEW_COLS = ["globalPid", "start", "deviceId", "contextId", "streamId", "address", "bytes",
            "memoryOperationType", "memKind", "pc", "name", "correlationId",
            "localMemoryPoolAddress", "localMemoryPoolReleaseThreshold", "localMemoryPoolSize",
            "localMemoryPoolUtilizedSize", "localMemoryPoolMaxSize", "importedMemoryPoolAddress",
            "importedMemoryPoolProcessId"]


def gpid(pid):
    return (1 << 56) | (pid << 24)


def gtid(pid, tid):
    return gpid(pid) | tid


class Run:
    """What a program did: memory rows and NVTX events, in nsys' terms (kind index, op 0/1)."""

    def __init__(self, seed):
        self.rnd = random.Random(seed)
        self.mem = []   # dicts: start pid dev ctx stream addr bytes kind op name corr
        self.nvtx = []  # dicts: start end type text gtid (text None: a StringIds id)
        self.t = 1000
        self.next_addr = {}

    def tick(self, lo=1, hi=500):
        self.t += self.rnd.randint(lo, hi)
        return self.t

    def alloc(self, pid, dev, kind, size=None, name=None, t=None):
        key = (pid, kind)
        base = 0xffff800000000000 if kind == 4 and pid == 2 else 0x7f0000000000 + kind * (1 << 36)
        addr = self.next_addr.get(key, base + dev * (1 << 32))
        size = size if size is not None else self.rnd.choice([512, 4096, 1 << 20, 3 << 21]) + \
            self.rnd.randint(0, 7) * 256
        self.next_addr[key] = addr + size + 4096
        row = dict(start=t if t is not None else self.tick(), pid=pid, dev=dev, ctx=1 + dev,
                   stream=7 + dev, addr=addr, bytes=size, kind=kind, op=0, name=name,
                   corr=len(self.mem) + 100)
        self.mem.append(row)
        return row

    def free(self, blk, t=None):
        row = dict(blk, start=t if t is not None else self.tick(), op=1, name=None,
                   corr=len(self.mem) + 100)
        self.mem.append(row)
        return row

    def range(self, kind, text, pid, tid, start, end, by_id=False):
        self.nvtx.append(dict(start=start, end=end, type=kind, text=text, by_id=by_id,
                              gtid=gtid(pid, tid)))

    def mark(self, text, pid, tid, t):
        self.nvtx.append(dict(start=t, end=None, type="mark", text=text, by_id=False,
                              gtid=gtid(pid, tid)))


def training(run, steps, rows_per_step):
    """Process 1 (devices 0 and 1): `step N` ranges on thread 11 with nested push/pop ranges,
    start/end ranges and marks on thread 12; process 2 (device 0): ProfilerStep#N ranges."""
    live = []
    for s in range(1, steps + 1):
        s_start = run.t if s > 1 else run.tick()  # back to back: step s starts as s - 1 ends
        fwd_start = run.tick()
        for _ in range(rows_per_step):
            kind = run.rnd.choice([2, 2, 2, 3, 5, 0, 1, 4, 6, 7])
            pid = run.rnd.choice([1, 1, 2])
            dev = run.rnd.choice([0, 1]) if pid == 1 else 0
            live.append(run.alloc(pid, dev, kind, name=run.rnd.choice([None, "", "weights"])))
            if len(live) > 6:
                run.free(live.pop(run.rnd.randrange(len(live))))
        run.range("pushpop", "forward", 1, 11, fwd_start, run.tick(), by_id=True)
        run.range("startend", "io %d" % s, 1, 12, run.tick(), run.tick() + 700)
        run.mark("checkpoint %d" % s, 1, 12, run.tick())
        run.range("pushpop", "ProfilerStep#%d" % (9 + s), 2, 21, s_start + 1, run.tick())
        run.range("pushpop", "Step_%d" % s if s % 2 else "step %d" % s, 1, 11, s_start,
                  run.tick())
    for blk in live:
        run.free(blk)
    # planted: a tie of a memory row and a mark, a range without an end, an empty range, a
    # range that ends at the same time as a memory row, a text id that StringIds lacks
    t = run.tick()
    run.alloc(1, 0, DEVICE, size=256, t=t)
    run.mark("tie", 1, 11, t)
    run.range("startend", "open", 1, 12, run.tick(), None)
    t = run.tick()
    run.range("pushpop", "empty", 1, 12, t, t)
    t0 = run.tick()
    run.range("pushpop", None, 1, 11, t0, t0 + 50, by_id=True)
    run.alloc(1, 1, DEVICE, size=512, t=t0 + 50)


def leak_run(run):
    """Process 3, device 0: six `step N` ranges on thread 31, three blocks allocated and freed
    in each; in step 3 one more block that is never freed."""
    planted = None
    for s in range(1, 7):
        s_start = run.tick()
        blocks = [run.alloc(3, 0, DEVICE, size=1 << 20) for _ in range(3)]
        if s == 3:
            planted = run.alloc(3, 0, DEVICE, size=5 << 20, name="kept")
        for b in blocks:
            run.free(b)
        run.range("pushpop", "step %d" % s, 3, 31, s_start, run.tick())
    return planted


class Db:
    """How a database numbers and lays things out."""

    def __init__(self, numbering="nsys", cols=OLD_COLS, enums=True, session=True, page=4096):
        self.numbering, self.cols, self.enums, self.session, self.page = \
            numbering, cols, enums, session, page

    def kind_id(self, k):
        return k if self.numbering == "nsys" else (k + 1) % 8

    def op_id(self, op):
        return op if self.numbering == "nsys" else op + 1

    def nv_id(self, t):
        return NV_TYPES[t][1] + (0 if self.numbering == "nsys" else 1000)


def create(path, db, run, rnd, hooks=None):
    """Write run into a new database at path as db says; hooks(conn, rowids) may spoil it.
    Returns the rowid each memory row and NVTX row got (rows are inserted shuffled)."""
    if os.path.exists(path):
        os.remove(path)
    c = sqlite3.connect(path)
    c.execute("PRAGMA page_size = %d" % db.page)
    c.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
    if db.enums:
        enums(c, db)
    if db.session:
        c.execute("CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, "
                  "utcTime TEXT, localTime TEXT)")
        c.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, '', '')", (EPOCH,))
    c.execute("CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (%s)" %
              ", ".join("%s INTEGER" % n if n != "name" else "name TEXT" for n in db.cols))
    c.execute("CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType "
              "INTEGER NOT NULL, rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, "
              "globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, "
              "uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value "
              "INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT)")
    strings = {}
    order = [("m", i) for i in range(len(run.mem))] + [("n", i) for i in range(len(run.nvtx))]
    rnd.shuffle(order)
    rowid = {}
    for what, i in order:
        if what == "m":
            r = run.mem[i]
            vals = dict(start=r["start"], globalPid=gpid(r["pid"]), deviceId=r["dev"],
                        contextId=r["ctx"], streamId=r["stream"], address=to_i64(r["addr"]),
                        pc=0x400000 + i, bytes=r["bytes"], memKind=db.kind_id(r["kind"]),
                        memoryOperationType=db.op_id(r["op"]), name=r["name"],
                        correlationId=r["corr"])
            cur = c.execute("INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (%s) VALUES (%s)" % (
                ", ".join(db.cols), ", ".join("?" * len(db.cols))),
                [vals.get(n) for n in db.cols])
        else:
            r = run.nvtx[i]
            text, text_id = r["text"], None
            if r["by_id"]:
                text_id = strings.setdefault(text, 5000 + len(strings)) if text else 999999
                if text:
                    c.execute("INSERT OR IGNORE INTO StringIds VALUES (?, ?)", (text_id, text))
                text = None
            cur = c.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, "
                            "textId, domainId) VALUES (?, ?, ?, ?, ?, ?, 0)",
                            (r["start"], r["end"], db.nv_id(r["type"]), text, r["gtid"], text_id))
        rowid[(what, i)] = cur.lastrowid
    # rows of other event types (a domain, a category) are no events
    c.execute("INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid) VALUES (5, ?, 'dom', "
              "?)", (75 if db.numbering == "nsys" else 1075, gtid(1, 11)))
    if hooks:
        hooks(c, rowid)
    c.commit()
    c.close()
    return rowid


def enums(c, db):
    c.execute("CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
              "label TEXT NOT NULL)")
    for k, (suffix, label, _) in enumerate(KINDS):
        name = "CUDA_MEMOPR_MEMORY_KIND_" + suffix
        if db.numbering == "cupti" and suffix.endswith("STATIC"):
            name = "CUPTI_ACTIVITY_MEMORY_KIND_X%d" % k  # resolved by its label
        c.execute("INSERT INTO ENUM_CUDA_MEM_KIND VALUES (?, ?, ?)", (db.kind_id(k), name, label))
    c.execute("CREATE TABLE ENUM_CUDA_DEV_MEM_EVENT_OPER (id INTEGER PRIMARY KEY, name TEXT NOT "
              "NULL, label TEXT NOT NULL)")
    ops = [(0, "CUDA_DEV_MEM_EVENT_OPR_ALLOCATION", "Allocation"),
           (1, "CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION", "Deallocation")]
    if db.numbering == "cupti":
        ops = [(0, "CUDA_DEV_MEM_EVENT_OPR_INVALID", "Invalid"),
               (1, "CUDA_DEV_MEM_EVENT_OPR_ALLOCATION", "Allocation"),
               (2, "CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_FREED", "Deallocation")]
    c.executemany("INSERT INTO ENUM_CUDA_DEV_MEM_EVENT_OPER VALUES (?, ?, ?)", ops)
    c.execute("CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
    for t in NV_TYPES:
        c.execute("INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (?, ?)", (db.nv_id(t), NV_TYPES[t][0]))
    c.execute("INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (?, 'NvtxDomainCreate')",
              (75 if db.numbering == "nsys" else 1075,))


def to_i64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def expected(run, db, rowid, skip=(), full=True):
    """What memscope must read: events in delivery order (formats/nsys.md "Events") and the
    figures. skip: (what, index) of rows that are bad."""
    epoch = EPOCH if db.session else 0
    items = []  # (ts, class, rowid, what, index): class 0 memory, 1 range end, 2 NVTX start
    for i, r in enumerate(run.mem):
        if ("m", i) not in skip:
            items.append((r["start"], 0, rowid[("m", i)], "m", i))
    for i, r in enumerate(run.nvtx):
        if ("n", i) in skip:
            continue
        items.append((r["start"], 2, rowid[("n", i)], "n", i))
        if r["type"] != "mark" and r["end"] is not None and r["end"] > r["start"]:
            items.append((r["end"], 1, rowid[("n", i)], "e", i))
    items.sort()
    events, start_of = [], {}
    for ts, _, _, what, i in items:
        if what == "m":
            events.append(mem_event(run.mem[i], epoch, db))
            continue
        r = run.nvtx[i]
        if what == "e":
            events.append(end_event(r, epoch, start_of[i]))
            continue
        events.append(nvtx_event(r, epoch))
        start_of[i] = (len(events), events[-1])
        if r["type"] != "mark" and r["end"] == r["start"]:
            events.append(end_event(r, epoch, start_of[i]))
    for n, e in enumerate(events):
        e[0] = n + 1
    return figures(events, full)


def mem_event(r, epoch, db):
    attr = ["size:%d" % r["bytes"], "kind:" + KINDS[r["kind"]][1]]
    if r["name"]:
        attr.append("name:" + r["name"])
    attr.append("correlation:%d" % r["corr"])
    if "streamId" in db.cols:
        attr.append("stream:%d" % r["stream"])
    attr.append("context:%d" % r["ctx"])
    return [0, "MALLOC" if r["op"] == 0 else "FREE", KINDS[r["kind"]][2], "N/A",
            r["start"] + epoch, r["pid"], "N/A", r["dev"], "0x%016x" % r["addr"], attr]


def nvtx_event(r, epoch):
    text = r["text"] or ""
    pid, tid = (r["gtid"] >> 24) & 0xffffff, r["gtid"] & 0xffffff
    attr = []
    if r["type"] == "mark":
        ev, sub, name = "MSTX", "Mark", text
    elif text.startswith("ProfilerStep#"):
        ev, sub, name = "OP_LAUNCH", "ATEN_START", text
    else:
        ev, sub, name = "MSTX", "Range_start", text
        low = text.lower()
        if low.startswith("step") and (low == "step" or low[4:].lstrip(" _#-:").isdigit()):
            name, attr = "step start", ["nvtx:" + text]
    return [0, ev, sub, name, r["start"] + epoch, pid, tid, "N/A", "N/A", attr]


def end_event(r, epoch, start):
    start_id, s = start
    if s[1] == "OP_LAUNCH":
        ev, sub, name = "OP_LAUNCH", "ATEN_END", s[3]
    else:
        ev, sub, name = "MSTX", "Range_end", "Range end from id %d" % start_id
    return [0, ev, sub, name, r["end"] + epoch, s[5], s[6], "N/A", "N/A", []]


def figures(events, full):
    f = {"events": len(events), "count": {}, "bytes": {}, "kind_labels": {}, "marks": 0,
         "range_starts": 0, "range_ends": 0, "step_starts": 0, "aten_starts": 0,
         "aten_ends": 0, "pids": set(), "devices": set(),
         "first_ts": min((e[4] for e in events), default=None),
         "last_ts": max((e[4] for e in events), default=None)}
    for e in events:
        f["pids"].add(e[5])
        if e[1] in ("MALLOC", "FREE"):
            key = e[1] + " " + e[2]
            f["count"][key] = f["count"].get(key, 0) + 1
            f["bytes"][key] = f["bytes"].get(key, 0) + int(e[9][0][5:])
            label = e[9][1][5:]
            f["kind_labels"][label] = f["kind_labels"].get(label, 0) + 1
            f["devices"].add(e[7])
        elif e[2] == "Mark":
            f["marks"] += 1
        elif e[2] == "Range_start":
            f["range_starts"] += 1
            f["step_starts"] += e[3] == "step start"
        elif e[2] == "Range_end":
            f["range_ends"] += 1
        elif e[2] == "ATEN_START":
            f["aten_starts"] += 1
        elif e[2] == "ATEN_END":
            f["aten_ends"] += 1
    f["pids"], f["devices"] = sorted(f["pids"]), sorted(f["devices"])
    if full:
        f["list"] = [[str(x) for x in e[:9]] + ["{" + ",".join(e[9]) + "}" if e[9] else ""]
                     for e in events]
    return f


def write(outdir, name, db, run, seed, extra=None, hooks=None, skip=(), full=True):
    path = os.path.join(outdir, name + ".sqlite")
    rowid = create(path, db, run, random.Random(seed), hooks)
    want = expected(run, db, rowid, skip, full)
    if extra:
        want.update(extra(rowid) if callable(extra) else extra)
    with open(os.path.join(outdir, name + ".json"), "w") as f:
        json.dump(want, f, indent=1)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    outdir, tiny, rows = args[0], "--tiny" in args, None
    if "--rows" in args:
        rows = int(args[args.index("--rows") + 1])
    os.makedirs(outdir, exist_ok=True)
    page = 512 if tiny else 4096
    if rows:
        run = Run(7)
        training(run, max(1, rows // 2000), 1000)
        write(outdir, "big", Db(page=page), run, 7, full=False)
        return
    steps, per = (2, 2) if tiny else (6, 12)
    for seed, name, db in [(1, "nsys_numbering", Db(page=page)),
                           (2, "cupti_numbering", Db("cupti", NEW_COLS, session=False,
                                                     page=page)),
                           (3, "no_enums", Db(enums=False, page=page))]:
        run = Run(seed)
        training(run, steps, per)
        write(outdir, name, db, run, seed)
    run = Run(4)
    planted = leak_run(run)
    write(outdir, "leak", Db(page=page), run, 4,
          extra={"leak": {"ptr": "0x%016x" % planted["addr"], "size": planted["bytes"],
                          "step": 3, "pid": 3}})
    bad(outdir, page)


def bad(outdir, page):
    """One bad row each, or a missing column: the JSON names the rowid and the complaint."""
    cases = [
        ("bad_kind", "memKind", 42, "memKind 42 is not a memory kind of ENUM_CUDA_MEM_KIND"),
        ("bad_oper", "memoryOperationType", 7,
         "memoryOperationType 7 is neither an allocation nor a deallocation"),
        ("bad_null", "address", None, "no address"),
        ("bad_text", "bytes", "12abc", 'bytes "12abc" is not an integer'),
    ]
    for n, (name, col, value, why) in enumerate(cases):
        run = Run(10 + n)
        training(run, 2, 4)
        victim = 3

        def spoil(c, rowid, col=col, value=value):
            c.execute("UPDATE CUDA_GPU_MEMORY_USAGE_EVENTS SET %s = ? WHERE rowid = ?" % col,
                      (value, rowid[("m", victim)]))

        write(outdir, name, Db(page=page), run, 10 + n, hooks=spoil, skip={("m", victim)},
              extra=lambda rowid: {"bad": {"rowid": rowid[("m", victim)],
                                           "table": "CUDA_GPU_MEMORY_USAGE_EVENTS",
                                           "why": why}})
    run = Run(20)
    training(run, 2, 4)
    victim = next(i for i, r in enumerate(run.nvtx) if r["type"] == "startend")

    def backwards(c, rowid):
        c.execute("UPDATE NVTX_EVENTS SET end = start - 5 WHERE rowid = ?",
                  (rowid[("n", victim)],))

    write(outdir, "bad_range", Db(page=page), run, 20, hooks=backwards, skip={("n", victim)},
          extra=lambda rowid: {"bad": {"rowid": rowid[("n", victim)], "table": "NVTX_EVENTS",
                                       "why": "end [0-9]+ is before start [0-9]+"}})
    run = Run(21)
    training(run, 2, 4)
    cols = [c for c in OLD_COLS if c != "bytes"]
    path = os.path.join(outdir, "bad_column.sqlite")
    create(path, Db(cols=cols, page=page), run, random.Random(21))
    with open(os.path.join(outdir, "bad_column.json"), "w") as f:
        json.dump({"error": 'table CUDA_GPU_MEMORY_USAGE_EVENTS has no column "bytes"'}, f)


if __name__ == "__main__":
    main()
