#!/usr/bin/env python3
"""Writes PyTorch profiler traces (Kineto Chrome trace JSON) in the layouts of the real ones
(formats/kineto.md): memscope's tests and benchmark read these, never the real files.

  make_kineto.py OUT [--layout new|old|rocm|cpu] [--steps N] [--ops N] [--gzip] [--pretty]

new: torch >= 1.13 (cat cpu_op, cpu_instant_event [memory] with Addr, Total Allocated/Reserved,
Ev Idx; CUDA on Device Id 1; a harness "metadata" object first). old: torch 1.9 (cat Operator,
[memory] with Bytes and the device only, tid as a string). rocm: Device Type 6. cpu: CPU only.
Each step is a ProfilerStep#N slice holding ops; every op allocates a block; aten::_to_copy's
block (1 MiB + step) is never freed, the others are freed in the next op. Slices are written in
reverse order and the [memory] events after all of them, as Kineto lists them.
"""
import argparse
import gzip
import json
import sys


def build(layout, steps, ops):
    pid, tid = 4242, 4243
    dev_type = {"new": 1, "old": 1, "rocm": 6, "cpu": 0}[layout]
    dev_id = {"new": 1, "old": 0, "rocm": 0, "cpu": -1}[layout]
    op_cat = "Operator" if layout == "old" else "cpu_op"
    step_cat = "Operator" if layout == "old" else "user_annotation"
    slices, mems = [], []
    t = 1700000000000000.0
    addr = 0x7F0000000000
    allocated, reserved = 0, 64 << 20
    names = ["aten::empty", "aten::add", "aten::_to_copy", "aten::mul"]
    for s in range(steps):
        step_ts = t
        t += 1.5
        prev = None
        for k in range(ops):
            name = names[k % len(names)]
            op_ts = t
            size = (1 << 20) + s if name == "aten::_to_copy" else 4096 * (k % 7 + 1)
            a = addr
            addr += 1 << 21
            allocated += size
            mems.append((t + 0.25, a, size, allocated, reserved))
            if prev:
                allocated -= prev[1]
                mems.append((t + 0.5, prev[0], -prev[1], allocated, reserved))
            prev = None if name == "aten::_to_copy" else (a, size)
            t += 1.0
            slices.append({"ph": "X", "cat": op_cat, "name": name, "pid": pid,
                           "tid": str(tid) if layout == "old" else tid,
                           "ts": round(op_ts, 3), "dur": round(t - op_ts, 3),
                           "args": {"External id": k + 1}})
            t += 0.125
        if prev:
            allocated -= prev[1]
            mems.append((t, prev[0], -prev[1], allocated, reserved))
        t += 1.0
        slices.append({"ph": "X", "cat": step_cat, "name": "ProfilerStep#%d" % (s + 1),
                       "pid": pid, "tid": str(tid) if layout == "old" else tid,
                       "ts": round(step_ts, 3), "dur": round(t - step_ts, 3),
                       "args": {"External id": 0}})
        t += 2.0
    events = list(reversed(slices))
    for i, (ts, a, b, al, rs) in enumerate(mems):
        args = {"Device Type": dev_type, "Device Id": dev_id, "Bytes": b}
        if layout != "old":
            args = {"Ev Idx": len(slices) + i, "Device Type": dev_type, "Device Id": dev_id,
                    "Addr": a, "Bytes": b, "Total Allocated": al, "Total Reserved": rs}
        ev = {"ph": "i", "s": "t", "name": "[memory]", "pid": pid, "tid": tid,
              "ts": round(ts, 3), "args": args}
        if layout != "old":
            ev["cat"] = "cpu_instant_event"
        events.append(ev)
    events.append({"name": "process_name", "ph": "M", "ts": 0, "pid": pid, "tid": 0,
                   "args": {"name": "python"}})
    top = {}
    if layout in ("new", "rocm"):
        top["metadata"] = {"profiler": {"profile_memory": True}, "errors": {}}
    top["schemaVersion"] = 1
    if layout != "cpu":
        top["deviceProperties"] = [{"id": 0, "name": "GPU", "totalGlobalMem": 1 << 34}]
    top["traceEvents"] = events
    top["traceName"] = "generated.pt.trace.json"
    return top


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layout", default="new", choices=["new", "old", "rocm", "cpu"])
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--ops", type=int, default=4)
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--pretty", action="store_true")
    a = ap.parse_args()
    doc = build(a.layout, a.steps, a.ops)
    text = json.dumps(doc, indent=1 if a.pretty else None)
    data = text.encode()
    if a.gzip:
        data = gzip.compress(data, mtime=0)
    if a.out == "-":
        sys.stdout.buffer.write(data)
    else:
        with open(a.out, "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
