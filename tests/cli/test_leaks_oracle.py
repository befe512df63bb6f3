#!/usr/bin/env python3
"""memscope-leaks --format reference --pool hal --mark against a literal port of the reference's
offline check_leaks (formats/analyses.md "Marked-range leaks") on random single-process dumps: the
leaks found, and the lines that report them, must be the reference's, byte for byte.
Args: BIN_DIR [CASES] [SEED]"""
import csv
import io
import os
import random
import re
import subprocess
import sys
import tempfile

HEADER = ("ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,"
          "Call Stack(Python),Call Stack(C)\n")


def reference_check_leaks(path, mstx_info, start_index):
    """The reference's algorithm (see formats/analyses.md): rows grouped by the Device Id string
    (N/A skipped), sorted by int(ID), marks A, B, C by ID, HAL rows only, MALLOC with
    A <= ID <= B a candidate, FREE with A <= ID <= C removing every candidate of its Ptr."""
    out = []
    groups = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["Device Id"] == "N/A":
                continue
            groups.setdefault(row["Device Id"], []).append(row)
    verdicts = []
    for device, rows in groups.items():
        rows.sort(key=lambda r: int(r["ID"]))
        marks = [int(r["ID"]) for r in rows if r["Event"] == "MSTX"
                 and r["Event Type"] == "Mark" and r["Name"] == mstx_info]
        if len(marks) < 3 or start_index + 2 >= len(marks):
            continue
        a, b, c = marks[start_index:start_index + 3]
        candidates = {}
        for r in rows:
            rid = int(r["ID"])
            if rid > c or r["Event Type"] != "HAL":
                continue
            if r["Event"] == "MALLOC" and a <= rid <= b:
                size = re.search(r"size:(\d+)", r["Attr"])
                if not size:
                    raise ValueError("input data may broken")
                candidates[rid] = (r["Ptr"], int(size.group(1)) / 1048576)
            elif r["Event"] == "FREE" and a <= rid:
                for k in [k for k, v in candidates.items() if v[0] == r["Ptr"]]:
                    del candidates[k]
        verdicts.append((device, candidates))
    if verdicts:
        out.append("")
        out.append("Leak Analysis Results for the Custom Range:")
        for device, candidates in verdicts:
            if candidates:
                out.append(f"====== ERROR: Detected memory leaks on device {device} ======")
                for rid, (ptr, mb) in candidates.items():
                    out.append(f"Direct Hal memory leak of {mb} Mb(s) at {ptr} in Index {rid}.")
            else:
                out.append(f"No hal memory leaks detected on device {device}.")
    return out


def make_case(rng, path):
    """One process on 1-3 devices: HAL (and PTA) blocks, marks, rows written the way the
    reference writes them (a block's MALLOC with its FREE, live blocks at exit with a shadow
    FREE or none), IDs in time order."""
    pid = 4000 + rng.randrange(1000)
    devices = rng.sample(range(4), rng.randint(1, 3))
    t0 = 1764753080000000000
    events = []  # (id, ts, kind, ...)
    nid = 1
    t = t0
    live = []
    serial = 1
    text = rng.choice(["iter", "[mstx]: step", "a,b"])
    addrs = [0x12c040000000 + i * 0x200000 for i in range(12)]
    marks = {d: 0 for d in devices}
    for _ in range(rng.randint(5, 60)):
        t += rng.randint(1, 5000)
        d = rng.choice(devices)
        roll = rng.random()
        if roll < 0.18:
            name = text if rng.random() < 0.85 else "other"
            events.append(dict(id=nid, ts=t, ev="MSTX", et="Mark", dev=d, name=name))
            marks[d] += 1
        elif roll < 0.6:
            used = {b["ptr"] for b in live if b["dev"] == d}
            free_addrs = [a for a in addrs if a not in used]
            if not free_addrs:
                continue
            pool = "HAL" if rng.random() < 0.8 else "PTA"
            size = rng.choice([512, 1024, 4096, 65536, 1048576, 2097152, 3000000,
                               rng.randint(1, 1 << 26)])
            blk = dict(id=nid, ts=t, ev="MALLOC", et=pool, dev=d, ptr=rng.choice(free_addrs),
                       size=size, aid=serial)
            serial += 1
            events.append(blk)
            live.append(blk)
        elif live:
            blk = live.pop(rng.randrange(len(live)))
            events.append(dict(id=nid, ts=t, ev="FREE", et=blk["et"], dev=blk["dev"],
                               ptr=blk["ptr"], size=blk["size"], aid=blk["aid"], of=blk["id"]))
        else:
            continue
        nid += 1
    # file order: non-memory rows as they happen, a block's MALLOC just before its FREE, blocks
    # alive at exit at the end (half with the shadow FREE at exit)
    by_id = {e["id"]: e for e in events}
    rows = []
    for e in events:
        if e["ev"] == "MALLOC":
            continue
        if e["ev"] == "FREE":
            rows.append(by_id[e["of"]])
        rows.append(e)
    t += 10
    for blk in live:
        rows.append(blk)
        if rng.random() < 0.5:
            t += 1
            rows.append(dict(id=nid, ts=t, ev="FREE", et=blk["et"], dev=blk["dev"],
                             ptr=blk["ptr"], size=blk["size"], aid=blk["aid"], shadow=True))
            nid += 1
    with open(path, "w", newline="") as f:
        f.write(HEADER)
        for e in rows:
            if e["ev"] == "MSTX":
                name = '"%s"' % e["name"]
                ptr, attr = "N/A", ""
            else:
                name = "N/A"
                ptr = "0x%016x" % e["ptr"]
                attr = '"{allocation_id:%d,addr:%s,size:%d%s}"' % (
                    e["aid"], ptr, e["size"], ",shadow:true" if e.get("shadow") else "")
            f.write(f'{e["id"]},{e["ev"]},{e["et"]},{name},{e["ts"]},{pid},{pid},{e["dev"]},'
                    f'{ptr},{attr},,\n')
    return text


def ours(binary, path, text, start_index):
    """memscope-leaks' report in the reference's lines (--format reference), which for
    --kinds mark is the marked-range section alone."""
    p = subprocess.run([binary, "-q", "--format", "reference", "--kinds", "mark", "--pool", "hal",
                        "--mark", text, "--start-index", str(start_index), path],
                       capture_output=True, text=True)
    if p.returncode == 3 and "no device has" in p.stderr:
        return []
    if p.returncode != 0:
        raise RuntimeError(f"exit {p.returncode}: {p.stderr}")
    if p.stdout and not p.stdout.endswith("\n"):
        raise RuntimeError("last line without a line end")
    return p.stdout.split("\n")[:-1] if p.stdout else []


def main():
    binary = os.path.join(sys.argv[1], "memscope-leaks")
    cases = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 20261122)
    failed = leaks = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(cases):
            path = os.path.join(tmp, f"case{i}.csv")
            text = make_case(rng, path)
            start = rng.choice([0, 0, 0, 1, 2])
            want = reference_check_leaks(path, text, start)
            got = ours(binary, path, text, start)
            leaks += sum(1 for l in want if l.startswith("Direct"))
            if got != want:
                failed += 1
                if failed <= 3:
                    print(f"FAIL case {i} (--mark '{text}' --start-index {start}):\n"
                          f"  want {want}\n  got  {got}", file=sys.stderr)
                    with open(path) as f:
                        print(f.read(), file=sys.stderr)
    print(f"{cases - failed} of {cases} random dumps agree with the reference's check_leaks "
          f"({leaks} leaks found), {failed} differ")
    return 1 if failed or leaks == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
