#!/usr/bin/env python3
"""Independent totals of a dump CSV for memscope-export's tests: allocated bytes, allocations, and
the highest live bytes of any (process, device, pool), with blocks paired by allocation_id, of
the pools counted: those of --pool (a comma-separated list, or all), or by default the pools the
file has MALLOC or FREE rows in, HAL left out when a pool carved out of it (PTA, ATB, MINDSPORE,
PTA_WORKSPACE) is there.
Usage: export_oracle.py [--pool LIST] DUMP.csv -> 'allocated N count N peak N pools P,Q'
       export_oracle.py [--pool LIST] --by-op DUMP.csv -> folded lines of the allocated bytes by
       the ops (ATEN/ATB START..END) open on the MALLOC's thread at its time, the outermost 64 of
       them; rows of one time and ID: starts, then MALLOCs, then ends, each in file order"""
import csv, re, sys

POOLS = {"PTA", "ATB", "MINDSPORE", "HAL", "HOST_PINNED", "HOST", "GE"}
IN_HAL = {"PTA", "ATB", "MINDSPORE", "PTA_WORKSPACE"}


def counted(path, arg):
    """The pools counted for the file at path: --pool's, or the default of those it has blocks in."""
    if arg == "all":
        return POOLS
    if arg:
        return {p.upper() for p in arg.split(",")}
    with open(path, newline="") as fh:
        seen = {r["Event Type"] for r in csv.DictReader(fh)
                if r["Event"] in ("MALLOC", "FREE")} & POOLS
    return seen - {"HAL"} if seen & IN_HAL else seen


def attrs(text):
    text = text.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    return dict(re.findall(r"(\w+):(.*?)(?=,\w+:|$)", text))

def by_op(path, pools):
    """Replays each thread's op rows up to every MALLOC; an END closes the innermost open op of
    its name and the ops opened inside it."""
    ops, mallocs = {}, []
    with open(path, newline="") as fh:
        for row, r in enumerate(csv.DictReader(fh)):
            thread = (r["Process Id"], r["Thread Id"])
            pos = (int(r["Timestamp(ns)"]), int(r["ID"]))
            if r["Event"] == "OP_LAUNCH" and r["Event Type"] in ("ATEN_START", "ATB_START"):
                ops.setdefault(thread, []).append((pos, 0, row, r["Name"] or "[unnamed op]"))
            elif r["Event"] == "OP_LAUNCH" and r["Event Type"] in ("ATEN_END", "ATB_END"):
                ops.setdefault(thread, []).append((pos, 2, row, r["Name"] or "[unnamed op]"))
            elif r["Event"] == "MALLOC" and r["Event Type"] in pools:
                size = int(attrs(r["Attr"]).get("size", "0"))
                mallocs.append((thread, pos, r["Event Type"], max(size, 0)))
    weights = {}
    for thread, pos, pool, size in mallocs:
        open_ops = []
        for opos, kind, _, name in sorted(ops.get(thread, [])):
            if (opos, kind) > (pos, 1):
                break
            if kind == 0:
                open_ops.append(name)
            elif name in open_ops:
                del open_ops[len(open_ops) - 1 - open_ops[::-1].index(name):]
        key = ";".join(open_ops[:64]) or f"[{pool}, no op]"
        weights[key] = weights.get(key, 0) + size
    for key, w in sorted(weights.items()):
        if w:
            print(f"{key} {w}")

args = sys.argv[1:]
pool_arg = None
if args[0] == "--pool":
    pool_arg, args = args[1], args[2:]
POOLS_COUNTED = counted(args[-1], pool_arg)
if args[0] == "--by-op":
    by_op(args[1], POOLS_COUNTED)
    sys.exit(0)

alloc = count = 0
blocks = {}   # (pid, allocation_id) -> (group, size)
deltas = {}   # group -> [((ts, id), bytes)]
with open(args[0], newline="") as fh:
    for r in csv.DictReader(fh):
        if r["Event"] not in ("MALLOC", "FREE") or r["Event Type"] not in POOLS_COUNTED:
            continue
        a = attrs(r["Attr"])
        size = int(a.get("size", "0"))
        pos = (int(r["Timestamp(ns)"]), int(r["ID"]))
        key = (r["Process Id"], a.get("allocation_id"))
        group = (r["Process Id"], r["Device Id"], r["Event Type"])
        if r["Event"] == "MALLOC":
            count += 1
            alloc += max(size, 0)
            blocks[key] = (group, size)
            if size > 0:
                deltas.setdefault(group, []).append((pos, size))
        elif key in blocks:
            g, s = blocks.pop(key)
            if s > 0:
                deltas.setdefault(g, []).append((pos, -s))
peak = 0
for g, ds in deltas.items():
    live = 0
    for _, b in sorted(ds):
        live += b
        peak = max(peak, live)
print(f"allocated {alloc} count {count} peak {peak} pools {','.join(sorted(POOLS_COUNTED))}")
