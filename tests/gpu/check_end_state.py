#!/usr/bin/env python3
"""Checks memscope's end state of PyTorch snapshots against the snapshot's own `segments`
(formats/torch-snapshot.md "End state"): per device, the blocks holding a tensor (state
active_allocated or active_pending_free), their bytes (each block's requested_size) and the bytes
reserved (the segments' total_size), read here with Python's pickle; memscope's are the blocks
alive at the end that `memscope-leaks --format json --kinds exit` reports (pool CUDA_CACHING:
the blocks, CUDA: the reserved memory).

usage: check_end_state.py TOOLS_DIR SNAPSHOT...

Prints one line per device of each snapshot (memscope's figures, then Python's) and exits 1 when
any differs, 0 when all agree. An empty snapshot (no segments, trace entries or annotations)
must be refused as such (exit 3, "empty").
"""
import gzip
import json
import os
import pickle
import subprocess
import sys


def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        return pickle.load(f)


def python_end_state(snap):
    """{device: [blocks, bytes, reserved]} from the segments."""
    out = {}
    for seg in snap.get("segments", []):
        d = out.setdefault(seg["device"], [0, 0, 0])
        d[2] += seg["total_size"]
        for b in seg.get("blocks", []):
            if b["state"] in ("active_allocated", "active_pending_free"):
                d[0] += 1
                if "frames" not in b and b.get("history"):  # the older form
                    d[1] += b["history"][-1]["real_size"]
                else:
                    d[1] += b.get("requested_size", b["size"])
    return out


def is_empty(snap):
    """No segments, no trace entries, no annotations: memscope says so (exit 3)."""
    return not (snap.get("segments") or any(snap.get("device_traces", [])) or
                snap.get("external_annotations"))


def memscope_end_state(tools, path):
    """{device: [blocks, bytes, reserved]} from memscope-leaks' exit leaks."""
    r = subprocess.run([os.path.join(tools, "memscope-leaks"), "--format", "json", "--kinds",
                        "exit", "--pool", "all", "-q", "-o", "-", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if r.returncode != 0:
        return None, f"memscope-leaks exit {r.returncode}: {r.stderr.strip()[:300]}"
    out = {}
    for x in json.loads(r.stdout).get("leaks", []):
        if x.get("kind") != "exit":
            continue
        d = out.setdefault(int(x["device"]), [0, 0, 0])
        if x["pool"] == "CUDA_CACHING":
            d[0] += 1
            d[1] += x["size"]
        elif x["pool"] == "CUDA":
            d[2] += x["size"]
    return out, None


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.split("\n\n")[1])
    tools, bad = sys.argv[1], 0
    for path in sys.argv[2:]:
        name = os.path.basename(path)
        snap = load(path)
        want = python_end_state(snap)
        got, err = memscope_end_state(tools, path)
        if is_empty(snap):
            ok = err is not None and "exit 3" in err and "empty" in err
            print(f"{name}: empty: memscope {err or 'read it'}: {'ok' if ok else 'DIFFERS'}")
            bad += not ok
            continue
        if err:
            print(f"{name}: {err}")
            bad += 1
            continue
        for dev in sorted(set(want) | set(got)):
            g, w = got.get(dev, [0, 0, 0]), want.get(dev, [0, 0, 0])
            verdict = "ok" if g == w else "DIFFERS"
            print(f"{name} device {dev}: memscope {g[0]} blocks {g[1]} B reserved {g[2]} B; "
                  f"python {w[0]} blocks {w[1]} B reserved {w[2]} B: {verdict}")
            bad += g != w
        if not want and not got:
            print(f"{name}: no device holds memory at the end: ok")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
