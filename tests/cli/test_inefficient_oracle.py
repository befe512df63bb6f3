#!/usr/bin/env python3
"""memscope-inefficient against a port of the reference's offline check_inefficient
(msMemScope python/msmemscope/analyzer/inefficient.py; formats/analyses.md, the "Inefficient
memory" sections) on random
single-process dumps whose rows are ordered the way the reference's dump writer orders them.

Per random dump, the set {(allocation_id, types in the order found)} must be the same from
  1. the port, run with the dump's --idle-threshold, --min-size and --types,
  2. memscope-inefficient --format csv (columns allocation_id and types, split on ';'),
  3. memscope-inefficient --annotate OUT.csv (MALLOC rows' inefficient_type:..., split on ','),
and OUT.csv with the inefficient_type insertions taken out must be the input byte for byte.
The port is first checked against the reference's worked example (formats/analyses.md
"Inefficient memory: worked example").
Not generated (documented differences): shadow:true rows, ACCESS of pools other than PTA/ATB,
ACCESS after a block's FREE, more than one process.
Args: BIN_DIR [CASES] [SEED], or --self-test [DIR]: only the port's checks, samples in DIR."""
import collections
import csv
import io
import itertools
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

HEADER = ("ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,"
          "Call Stack(Python),Call Stack(C)\n")
TYPES = ("early_allocation", "late_deallocation", "temporary_idleness")
UNSET = (1 << 64) - 1
T0 = 1795298319079456651
STRIP = re.compile(rb",inefficient_type:[a-z_,]*(?=\})")


# ---- the port ---------------------------------------------------------------------------------

def ref_int(text):
    """int() or None, as the reference's safe_convert_int."""
    try:
        return int(text)
    except (ValueError, TypeError):
        return None


def ref_attr(raw):
    """(allocation_id, size, type) read the reference's naive way: drop the first and last
    character, split on ',', each piece on its first ':'; missing or non-numeric ids are -1."""
    if not raw or not raw.strip():
        return -1, -1, ""
    fields = {}
    for piece in raw.strip()[1:-1].strip().split(","):
        kv = piece.strip().split(":", 1)
        if len(kv) == 2:
            fields[kv[0].strip().strip('"')] = kv[1].strip().strip('"')
    aid, size = ref_int(fields.get("allocation_id", "-1")), ref_int(fields.get("size", "-1"))
    return (-1 if aid is None else aid), (-1 if size is None else size), fields.get("type", "")


class State:
    """One (family, pid): the API counter, the last APIs that allocated / freed, the open API."""

    def __init__(self):
        self.api, self.malloc_api, self.free_api, self.in_op, self.tmp = 0, UNSET, UNSET, False, []

    def classify(self):
        if self.tmp:
            if any(e.event == "MALLOC" for e in self.tmp):
                self.malloc_api = self.api
            if any(e.event == "FREE" for e in self.tmp):
                self.free_api = self.api
            self.tmp = []


class Ev:  # one MALLOC/FREE/ACCESS; types: the flags of a block, kept on its MALLOC
    def __init__(self, event, aid, size, api):
        self.event, self.aid, self.size, self.api, self.types = event, aid, size, api, []


def port_check_inefficient(path, idle_threshold, min_size, types):
    """The reference's offline analysis; returns {(allocation_id, (type, ...))} of the blocks
    whose MALLOC it would annotate."""
    with open(path, encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if ref_int(r["ID"]) is not None]
    rows.sort(key=lambda r: int(r["ID"]))
    families = {"PTA": {}, "ATB": {}}
    blocks = {}

    def flag(block, kind):
        if block[0].size >= min_size and kind in types:
            block[0].types.append(kind)

    for r in rows:
        event, etype, pid = r["Event"], r["Event Type"], r["Process Id"]
        if event == "OP_LAUNCH":
            fam = "PTA" if etype in ("ATEN_START", "ATEN_END") else "ATB"
            st = families[fam].setdefault(pid, State())
            if etype in ("ATB_START", "ATEN_START"):
                st.in_op = True
                st.api += 1
            elif etype in ("ATB_END", "ATEN_END"):
                st.in_op = False
                st.classify()
            continue
        if event not in ("MALLOC", "FREE", "ACCESS"):
            continue
        if event != "ACCESS" and etype not in ("PTA", "ATB"):
            continue
        aid, size, access_type = ref_attr(r["Attr"])
        fam = "PTA" if etype == "PTA" or (event == "ACCESS" and access_type == "PTA") else "ATB"
        st = families[fam].setdefault(pid, State())
        if not st.in_op:
            st.api += 1  # a memory event outside an op is an API of its own
        ev = Ev(event, aid, size, st.api)
        st.tmp.append(ev)
        block = blocks.setdefault(f"{pid}_{aid}", [])
        block.append(ev)
        if not st.in_op:
            st.classify()
        if block[0].event != "MALLOC":
            continue
        if event == "ACCESS":
            if ("temporary_idleness" not in block[0].types and len(block) >= 2
                    and block[-2].event == "ACCESS" and block[-1].api > block[-2].api
                    and block[-1].api - block[-2].api > idle_threshold):
                flag(block, "temporary_idleness")
            if st.free_api == UNSET or "early_allocation" in block[0].types:
                continue
            m, fa = 0, UNSET
            for e in block:
                if fa != UNSET:
                    break
                if e.event == "MALLOC":
                    m = e.api
                elif e.event == "ACCESS" and e.api != m:
                    fa = e.api
            if fa != UNSET and m != st.free_api and fa > st.free_api and m < st.free_api:
                flag(block, "early_allocation")
        elif event == "FREE" and st.malloc_api != UNSET:
            la = block[-2].api if len(block) >= 2 and block[-2].event == "ACCESS" else UNSET
            if la not in (UNSET, st.api) and la < st.malloc_api and st.api > st.malloc_api:
                flag(block, "late_deallocation")
    return {(b[0].aid, tuple(b[0].types)) for b in blocks.values() if b[0].types}


# ---- random dumps -----------------------------------------------------------------------------

OPS = {"PTA": ["torch._ops.aten.add.Tensor", "torch._ops.aten.mm.default",
               "torch._ops.aten.copy_.default", "torch._ops.aten.empty.memory_format"],
       "ATB": ["ElewiseOperation", "LinearOperation", "SelfAttentionOperation", "GraphOperation"]}
SIZES = [512, 1024, 4096, 65536, 1 << 20, 3 << 20, 4 << 20]
BASE = {"PTA": 0x12c000000000, "ATB": 0x13c000000000, "HAL": 0x14c000000000}


def make_case(seed, path):
    """One process, 1-2 threads: ops (nested, interleaved, some unbalanced), PTA/ATB blocks (a
    few HAL ones), accesses in and out of ops, unmatched FREEs, orphan ACCESSes, double FREEs.
    IDs and timestamps are in event order; the file holds a block's MALLOC and ACCESS rows with
    its FREE and blocks never freed at the end. Returns (idle_threshold, min_size, types)."""
    rng = random.Random(seed)
    pid = 20000 + rng.randrange(10000)
    tids = [pid] + ([pid + 1 + rng.randrange(64)] if rng.random() < 0.5 else [])
    stacks = {t: [] for t in tids}  # each thread's open ops: (family, name)
    used, reserved = collections.Counter(), collections.Counter()
    out, live, freed = [], [], []  # out: the rows in file order
    ids, serial = itertools.count(), itertools.count(1)

    def row(ev, et, name, tid, ptr="N/A", attr=""):
        k = next(ids)
        ts = T0 + k * 1000 + rng.randrange(1000)
        return f"{k},{ev},{et},{name},{ts},{pid},{tid},0,{ptr},{attr},,\n"

    def block(fam, size):  # a new allocation id (from 1, never reused), its address
        aid = next(serial)
        return dict(aid=aid, fam=fam, size=size, ptr="0x%016x" % (BASE[fam] + aid * 0x400000))

    def pool_row(ev, b, tid):
        extra = ("page_type:normal,alloc_type:alloc" if b["fam"] == "HAL"
                 else f"total:{reserved[b['fam']]},used:{used[b['fam']]}")
        return row(ev, b["fam"], "N/A", tid, b["ptr"], f'"{{allocation_id:{b["aid"]},'
                   f'addr:{b["ptr"]},size:{b["size"]},{extra}}}"')

    def access_row(b, size, tid):
        shape = "torch.Size([2, 3])" if b["fam"] == "PTA" else "[2,3,]"
        return row("ACCESS", rng.choice(["READ", "WRITE", "UNKNOWN"]),
                   stacks[tid][-1][1] if stacks[tid] else "N/A", tid, b["ptr"],
                   f'"{{allocation_id:{b["aid"]},addr:{b["ptr"]},size:{size},type:{b["fam"]},'
                   f'dtype:torch.float32,shape:{shape}}}"')

    w_op = rng.uniform(0.5, 3)
    weights = [w_op, w_op, 3, rng.uniform(3, 8), 2.5, 0.2, 0.4, 0.3]
    for _ in range(rng.randint(20, 400)):
        tid = rng.choice(tids)
        act = rng.choices(range(8), weights)[0]
        if act == 0:  # op start, maybe nested
            fam = rng.choice(["PTA", "ATB"])
            name = rng.choice(OPS[fam])
            stacks[tid].append((fam, name))
            attr = ('"{path:0_%d/1/0_GraphOperation/1_%s,workspace_ptr:0x%016x,workspace_size:%d}"'
                    % (pid, name, 0x12c0f0000000, rng.choice([0, 4096])) if fam == "ATB" else "")
            out.append(row("OP_LAUNCH", fam.replace("PTA", "ATEN") + "_START", name, tid,
                           attr=attr))
        elif act == 1:  # op end; now and then one without a start
            open_ = [t for t in tids if stacks[t]]
            if open_ and rng.random() > 0.05:
                tid = rng.choice(open_)
                fam, name = stacks[tid].pop()
            else:
                fam = rng.choice(["PTA", "ATB"])
                name = rng.choice(OPS[fam])
            out.append(row("OP_LAUNCH", fam.replace("PTA", "ATEN") + "_END", name, tid))
        elif act == 2:  # MALLOC
            b = block(rng.choices(["PTA", "ATB", "HAL"], [10, 9, 1])[0],
                      rng.choice(SIZES + [rng.randint(512, 4 << 20)]))
            used[b["fam"]] += b["size"]
            reserved[b["fam"]] = max(reserved[b["fam"]], (used[b["fam"]] + 0x1fffff) & ~0x1fffff)
            b["rows"] = [pool_row("MALLOC", b, tid)]
            live.append(b)
        elif act == 3:  # ACCESS of a live PTA/ATB block
            cands = [b for b in live if b["fam"] != "HAL"]
            if cands:
                b = rng.choice(cands)
                size = rng.choice([b["size"], max(1, b["size"] // 4), 24])
                b["rows"].append(access_row(b, size, tid))
        elif act == 4 and live:  # FREE: the block's rows are written now
            b = live.pop(rng.randrange(len(live)))
            used[b["fam"]] -= b["size"]
            out.extend(b["rows"] + [pool_row("FREE", b, tid)])
            freed.append(b)
        elif act == 5 and freed:  # a second FREE of a freed block
            out.append(pool_row("FREE", freed.pop(rng.randrange(len(freed))), tid))
        elif act == 6:  # a FREE or an ACCESS of a block never allocated
            b = block(rng.choice(["PTA", "ATB"]), 4096)
            out.append(pool_row("FREE", b, tid) if rng.random() < 0.5 else access_row(b, 24, tid))
        elif act == 7:  # rows the analysis ignores
            k = rng.randrange(100)
            out.append(row("MSTX", "Mark", f'"step {k}"', tid) if rng.random() < 0.5 else
                       row("KERNEL_LAUNCH", "KERNEL_LAUNCH", f"AddKernel_{k}", tid,
                           attr=f'"{{streamId:0,taskId:{k}}}"'))
    rng.shuffle(live)
    for b in live:  # never freed: written at exit, no FREE
        out.extend(b["rows"])
    with open(path, "w", newline="") as f:
        f.write(HEADER + "".join(out))
    types = list(TYPES) if rng.random() < 0.5 else rng.sample(TYPES, rng.randint(1, 3))
    rng.shuffle(types)
    return rng.randint(1, 6), (0 if rng.random() < 0.5 else rng.choice(SIZES)), types


# ---- our tool ---------------------------------------------------------------------------------

def read_annotated(data):
    """{(allocation_id, types)} from the MALLOC rows of an --annotate output (bytes), and the
    bytes with the inefficient_type insertions removed."""
    marks = set()
    for r in csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")):
        attr = r["Attr"] or ""
        if r["Event"] == "MALLOC" and "inefficient_type:" in attr:
            tail = attr.split("inefficient_type:", 1)[1]
            aid = ref_attr(attr)[0]
            marks.add((aid, tuple(tail[:tail.index("}")].split(","))))
    return marks, STRIP.sub(b"", data)


def differences(binary, path, ann, settings, want):
    """How memscope-inefficient's CSV report and --annotate output differ from want."""
    idle, min_size, types = settings
    p = subprocess.run([binary, "-q", "--format", "csv", "--idle-threshold", str(idle),
                        "--min-size", str(min_size), "--types", ",".join(types),
                        "--annotate", ann, path], capture_output=True, text=True)
    if p.returncode != 0:
        return [f"exit {p.returncode}: {p.stderr.strip()}"]
    got_csv = {(int(r["allocation_id"]), tuple(r["types"].split(";")))
               for r in csv.DictReader(io.StringIO(p.stdout))}
    with open(ann, "rb") as f, open(path, "rb") as g:
        (got_ann, stripped), data = read_annotated(f.read()), g.read()
    return ([f"{what}: missing {sorted(want - got)}, extra {sorted(got - want)}"
             for what, got in (("--format csv", got_csv), ("--annotate", got_ann)) if got != want]
            + ["--annotate changed more than the inefficient_type insertions"] * (stripped != data))


def tally(result, totals):
    """Adds a result's flagged blocks to the running totals; returns the totals as text."""
    for _, kinds in result:
        totals.update(kinds + ("blocks",) + (("multi",) if len(kinds) > 1 else ()))
    return (f"{totals['blocks']} flagged blocks: " + ", ".join(f"{t} {totals[t]}" for t in TYPES)
            + f"; {totals['multi']} with 2+ types")


# ---- self-test --------------------------------------------------------------------------------

def worked_example(path):
    """The worked example: Y (aid 1) MALLOC api 1, FREE api 3; X (aid 2) MALLOC api 2, ACCESS
    api 4, FREE api 6; W (aid 3, 4096 bytes) MALLOC api 5, ACCESS api 7 and 10; Z (aid 4) MALLOC
    and ACCESS inside an aten op (api 8), ACCESS api 9; an ATB op in between counts on the ATB side
    only. Rows in the writer's order: Y and X at their FREE, W and Z at the end."""
    ev = [("MALLOC", 1, 2048), ("MALLOC", 2, 1 << 20), ("FREE", 1, 2048), ("ACCESS", 2, 64),
          ("MALLOC", 3, 4096), ("FREE", 2, 1 << 20), ("ACCESS", 3, 64),
          ("ATEN_START", "torch._ops.aten.mm.default"), ("MALLOC", 4, 512), ("ACCESS", 4, 64),
          ("ATB_START", "ElewiseOperation"), ("ATEN_END", "torch._ops.aten.mm.default"),
          ("ACCESS", 4, 64), ("ATB_END", "ElewiseOperation"), ("ACCESS", 3, 64)]
    lines = []
    for k, (what, a, *size) in enumerate(ev):
        ts = f"{T0 + k * 1000},7,7,0"
        if not size:  # an op, a is its name
            lines.append(f"{k},OP_LAUNCH,{what},{a},{ts},N/A,,,\n")
            continue
        ptr = "0x%016x" % (0x12c040000000 + a * 0x200000)
        et, extra = (("WRITE", "type:PTA,shape:torch.Size([2, 3])") if what == "ACCESS"
                     else ("PTA", "total:8388608,used:0"))
        lines.append(f'{k},{what},{et},N/A,{ts},{ptr},"{{allocation_id:{a},addr:{ptr},'
                     f'size:{size[0]},{extra}}}",,\n')
    order = (0, 2, 1, 3, 5, 7, 10, 11, 13, 4, 6, 14, 8, 9, 12)
    with open(path, "w", newline="") as f:
        f.write(HEADER + "".join(lines[i] for i in order))


def self_test(outdir):
    outdir = outdir or tempfile.mkdtemp(prefix="inefficient-oracle-")
    os.makedirs(outdir, exist_ok=True)
    ex = os.path.join(outdir, "worked_example.csv")
    worked_example(ex)
    E, L, I = TYPES
    checks = [((2, 0, TYPES), {(2, (E, L)), (3, (E, I))}),  # the documented output
              ((3, 0, TYPES), {(2, (E, L)), (3, (E,))}),    # gap 10 - 7 = 3 is not > 3
              ((2, 65536, TYPES), {(2, (E, L))}),           # W is 4096 bytes
              ((2, 0, [I]), {(3, (I,))}),
              ((2, 0, [L, E]), {(2, (E, L)), (3, (E,))})]   # order found, not order asked
    for args, want in checks:
        got = port_check_inefficient(ex, *args)
        assert got == want, (args, got, want)
    # the annotate reader on a hand-annotated copy of the example
    with open(ex, "rb") as f:
        data = f.read()
    ann = data.replace(b'used:0}"', b'used:0,inefficient_type:' + f"{E},{L}".encode() + b'}"', 1)
    assert read_annotated(ann) == ({(1, (E, L))}, data), read_annotated(ann)
    print(f"port: worked example ({ex}) and {len(checks) - 1} variations agree with formats/analyses.md \"Inefficient memory: worked example\"")

    totals, shuffled = collections.Counter(), 0
    for seed in range(300):
        path = os.path.join(outdir, f"sample{seed}.csv")
        idle, min_size, types = make_case(seed, path)
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
        assert rows[0] == HEADER.rstrip("\n").split(",") and all(len(r) == 12 for r in rows)
        ids = [int(r[0]) for r in rows[1:]]
        ts = [int(r[4]) for r in sorted(rows[1:], key=lambda r: int(r[0]))]
        assert sorted(ids) == list(range(len(ids))) and ts == sorted(set(ts))
        shuffled += ids != sorted(ids)
        result = port_check_inefficient(path, idle, min_size, types)
        tally(result, totals)
        if seed < 2:
            print(f"sample {path}: {len(ids)} rows, --idle-threshold {idle} --min-size "
                  f"{min_size} --types {','.join(types)}: {len(result)} flagged, e.g. "
                  f"{sorted(result, key=lambda x: -len(x[1]))[:2]}")
        else:
            os.remove(path)
    print(f"generator: 300 dumps, {shuffled} not in ID order, {tally((), totals)}")
    return 0 if min(totals[t] for t in TYPES) > 0 and totals["multi"] else 1


def main():
    if sys.argv[1:2] == ["--self-test"]:
        return self_test(sys.argv[2] if len(sys.argv) > 2 else None)
    binary = os.path.join(sys.argv[1], "memscope-inefficient")
    if not os.access(binary, os.X_OK):
        print(f"{binary}: not built", file=sys.stderr)
        return 1
    cases = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 20261122)
    failed, totals = 0, collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(cases):
            seed = rng.randrange(1 << 32)
            path, ann = os.path.join(tmp, f"case{i}.csv"), os.path.join(tmp, f"case{i}.ann.csv")
            settings = make_case(seed, path)
            want = port_check_inefficient(path, *settings)
            tally(want, totals)
            try:
                problems = differences(binary, path, ann, settings, want)
            except Exception as e:  # a crash or unreadable output is a difference too
                problems = [f"{type(e).__name__}: {e}"]
            if problems:
                failed += 1
                if failed <= 3:
                    keep = os.path.join(tempfile.gettempdir(), f"inefficient-oracle-{seed}.csv")
                    shutil.copyfile(path, keep)
                    idle, size, types = settings
                    print(f"FAIL case {i} (seed {seed}, --idle-threshold {idle} --min-size {size} "
                          f"--types {','.join(types)}), input kept at {keep}:\n  "
                          + "\n  ".join(problems), file=sys.stderr)
    print(f"{cases - failed} of {cases} random dumps agree with the reference's check_inefficient "
          f"({tally((), totals)}), {failed} differ")
    return 1 if failed or min(totals[t] for t in TYPES) == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
