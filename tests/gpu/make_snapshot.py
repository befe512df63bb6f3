#!/usr/bin/env python3
"""Writes PyTorch-style CUDA memory snapshots and, beside each, the JSON of what memscope must
read from it, computed here from what was put in by following formats/torch-snapshot.md.

usage: make_snapshot.py [-p PROTOCOL] [--size BYTES] [--json PATH] [--no-events] SCENARIO OUT

The snapshots are shaped as torch writes them (formats/torch-snapshot.md "The file"): one dict
with segments, device_traces, allocator_settings and external_annotations; frame dicts shared
between frames lists (one dict object per distinct frame, so pickle writes it once and memo
references after), key strings shared, time_us past 2^31 and addresses past 2^32 (LONG1),
floats in allocator_settings, segment_pool_id tuples.

Every scenario but "stream" is pickled by Python's own pickle at PROTOCOL (2 to 5, default 4):
pickle is the oracle of the byte format. "stream" is the benchmark's loop, written by
StreamPickler below (protocol 4 only): pickle needs the whole object in memory, which for a
1 GB file is tens of GB of Python dicts, so the big one is written opcode by opcode as it is
generated; `--selfcheck` (small sizes only) builds the same object in memory too and checks that
pickle.load of the file gives it back. "opcodes" is assembled by hand (Asm below) out of the
subset's rarer opcodes; its expectations come from pickle.loads of those bytes.

The JSON (default OUT + ".json"): "figures" (Figures below: counts and byte sums per event kind
and pool, before_trace blocks, live bytes at the end, the distinct frame texts, devices, first
and last ts), "events" (every expected event, unless --no-events), and what the scenario
planted ("planted": the leaked tensor of "loop").
"""
import argparse
import json
import os
import pickle
import random
import struct
import sys

BASE_US = 1738780408789613  # a real snapshot's time_us: past 2^31, so LONG1
ADDR_BASE = 0x7F3A00000000  # device memory addresses are past 2^32 (LONG1 too)
DEV_STRIDE = 0x1000000000  # distinct address ranges per device, as CUDA's unified addresses are
SEG_SIZE = 20 << 20  # a "large" segment, as the caching allocator rounds them
STREAM = 94366710315824  # a cudaStream_t printed as an int: past 2^32


# ------------------------------------------------------------------------------------------
# The expected events (formats/torch-snapshot.md "Events"), restated independently of the reader


def is_python_frame(f):
    """The spec's rule: a filename ending in .py or starting with '<' is a Python frame."""
    fn = f.get("filename", "")
    return fn.endswith(".py") or fn.startswith("<")


# The C frames left out of the stacks (formats/torch-snapshot.md "Stacks"): the recorder's, the
# caching allocator's and the interpreter's own
OWN_NAMES = ("unwind::unwind", "CapturedTraceback::gather", "gather_with_cpp",
             "CUDACachingAllocator", "__libc_start_main", "PyEval_", "PyObject_", "PyFunction_")
OWN_FILES = ("core/boxing", "/Register", "/Redispatch", "pythonrun.c", "Modules/main.c",
             "Objects/call.c", "Objects/methodobject.c", "pycore_ceval.h", "ceval.c",
             "cpython/abstract.h")


def is_own_frame(f):
    """A C frame of the recorder, the allocator or the interpreter: left out."""
    name, fn = f.get("name", ""), f.get("filename", "")
    return (not is_python_frame(f) and
            (name == "_start" or any(w in name for w in OWN_NAMES) or
             any(w in fn for w in OWN_FILES)))


def frame_text(f):
    """A frame as the dump writes it: Python `{filename}({line}): {name}`, C `{name}
    ({filename}:{line})`, or `{name}` when the filename is empty or '??'."""
    fn, line, name = f.get("filename", ""), f.get("line", 0), f.get("name", "")
    if is_python_frame(f):
        return f"{fn}({line}): {name}"
    if fn in ("", "??"):
        return name
    return f"{name} ({fn}:{line})"


def block_bytes(b):
    """A block's bytes by the spec's rule: its requested size (a history's last real_size in
    the older form), its size when it has none."""
    if "frames" not in b and b.get("history"):
        return b["history"][-1].get("real_size", b.get("requested_size", b["size"]))
    return b.get("requested_size", b["size"])


class Figures:
    """The figures of a stream of events, the same for the oracle's events and for the dump CSV
    check_snapshot.py reads: counts and byte sums per "KIND TYPE" (the name too for MSTX and
    OP_LAUNCH), before_trace MALLOCs per pool, blocks and bytes alive at the end per pool (MALLOC
    and FREE paired by pool and address in delivery order), FREEs that found nothing alive, the
    distinct frame texts, devices, first and last ts."""

    def __init__(self):
        self.n_events = 0
        self.counts = {}
        self.bytes = {}
        self.before_trace = {}
        self.alive = {}
        self.unmatched_free = 0
        self.double_malloc = 0
        self.python_frames = set()
        self.c_frames = set()
        self.devices = set()
        self.first_ts = None
        self.last_ts = None

    def add(self, ev):
        self.n_events += 1
        kind, typ = ev["kind"], ev["type"] or ""
        key = f"{kind} {typ}".strip()
        if kind in ("MSTX", "OP_LAUNCH"):
            key += f" {ev['name']}"
        self.counts[key] = self.counts.get(key, 0) + 1
        size = ev["attrs"].get("size")
        if size is not None:
            self.bytes[key] = self.bytes.get(key, 0) + int(size)
        if kind == "MALLOC" and ev["attrs"].get("before_trace") == "1":
            self.before_trace[typ] = self.before_trace.get(typ, 0) + 1
        if kind in ("MALLOC", "FREE"):
            pool = self.alive.setdefault(typ, {})
            if kind == "MALLOC":
                if ev["ptr"] in pool:
                    self.double_malloc += 1
                pool[ev["ptr"]] = int(size or 0)
            elif pool.pop(ev["ptr"], None) is None:
                self.unmatched_free += 1
        self.python_frames.update(ev["py"])
        self.c_frames.update(ev["c"])
        if ev["device"] is not None:
            self.devices.add(ev["device"])
        ts = ev["ts"]
        self.first_ts = ts if self.first_ts is None else min(self.first_ts, ts)
        self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)

    def result(self):
        return {
            "n_events": self.n_events,
            "counts": dict(sorted(self.counts.items())),
            "bytes": dict(sorted(self.bytes.items())),
            "before_trace": dict(sorted(self.before_trace.items())),
            "live_blocks": {p: len(a) for p, a in sorted(self.alive.items())},
            "live_bytes": {p: sum(a.values()) for p, a in sorted(self.alive.items())},
            "unmatched_free": self.unmatched_free,
            "double_malloc": self.double_malloc,
            "python_frames": sorted(self.python_frames),
            "c_frames": sorted(self.c_frames),
            "devices": sorted(self.devices),
            "first_ts": self.first_ts,
            "last_ts": self.last_ts,
        }


class Oracle:
    """The events memscope delivers for a snapshot, fed as the reader streams it: trace entries
    device by device, then the external annotations, then finish() with the segments and the
    oom entries. Keeps the events themselves when keep_events (small files), the figures
    always."""

    POOL_OF = {
        "alloc": ("MALLOC", "CUDA_CACHING"),
        "free_completed": ("FREE", "CUDA_CACHING"),
    }

    def __init__(self, keep_events=True):
        self.events = [] if keep_events else None
        self.fig = Figures()
        self.blocks = {}  # CUDA_CACHING: addr -> (device, bytes)
        self.mapped = {}  # CUDA: addr -> [bytes, device, frames]
        self.live = {}  # device -> {"CUDA": bytes, "CUDA_CACHING": bytes} alive from the trace
        self.before = {}  # device -> the same, delivered as allocated before the trace
        self.ooms = []  # (device, entry, live, before) kept for finish()
        self.requested_ns = {}  # addr -> ts_ns of the free_requested not yet completed
        self.first_us = {}  # device -> time_us of its first trace entry
        self.stack_cache = {}  # caller's key (the big loop's call site) -> (Python, C texts)
        self.unknown = 0

    def stacks(self, frames, cache=None):
        if frames is None:
            return [], []
        if cache is not None and cache in self.stack_cache:
            return self.stack_cache[cache]
        py = [frame_text(f) for f in frames if is_python_frame(f)]
        c = [frame_text(f) for f in frames if not is_python_frame(f) and not is_own_frame(f)]
        if cache is not None:
            self.stack_cache[cache] = (py, c)
        return py, c

    def count(self, table, device, pool, n):
        d = table.setdefault(device, {"CUDA": 0, "CUDA_CACHING": 0})
        d[pool] += n

    def emit(self, kind, typ, ts, device, ptr=None, size=None, attrs=None, frames=None,
             name=None, trace=False, cache=None, stacks=None):
        attrs = {"size": str(size), **(attrs or {})} if size is not None else dict(attrs or {})
        py, c = stacks if stacks is not None else self.stacks(frames, cache)
        ev = {"kind": kind, "type": typ, "name": name, "ts": ts, "device": device, "ptr": ptr,
              "attrs": attrs, "py": py, "c": c, "trace": trace}
        if kind == "MALLOC" and attrs.get("before_trace") == "1":
            self.count(self.before, device, typ, size)
        self.fig.add(ev)
        if self.events is not None:
            self.events.append(ev)

    def before_ns(self, device):
        """When blocks alive before the trace are said to be allocated: the device's first trace
        entry less 1 µs, 0 when the device has none."""
        us = self.first_us.get(device)
        return 0 if us is None else max(us - 1, 0) * 1000

    # the CUDA pool, by range
    def map(self, addr, size, device, frames):
        old = self.mapped.get(addr)
        if old:
            self.count(self.live, old[1], "CUDA", -old[0])
        self.mapped[addr] = [size, device, frames]
        self.count(self.live, device, "CUDA", size)

    def pieces(self, lo, hi):
        """The mapped pieces reaching into [lo, hi), by address."""
        return sorted(a for a, p in self.mapped.items()
                      if a < hi and (a + p[0] > lo or a == lo))

    def cuda_free(self, device, e, ts, attrs, frames, cache):
        lo, size = e["addr"], e["size"]
        hi = lo + size
        at = lo

        def gap(a, n):
            self.emit("MALLOC", "CUDA", self.before_ns(device), device, a, n,
                      {"before_trace": "1"}, trace=True)
            self.emit("FREE", "CUDA", ts, device, a, n, attrs, frames, trace=True, cache=cache)

        if size == 0:
            if lo in self.mapped:
                self.free_piece(device, lo, lo, lo + self.mapped[lo][0], ts, attrs, frames, cache)
            else:
                gap(lo, 0)
            return
        for a in self.pieces(lo, hi):
            if a > at:
                gap(at, a - at)
            end = a + self.mapped[a][0]
            self.free_piece(device, a, lo, hi, ts, attrs, frames, cache)
            at = max(at, end)
        if at < hi:
            gap(at, hi - at)

    def free_piece(self, device, a, lo, hi, ts, attrs, frames, cache):
        size, dev, pframes = self.mapped.pop(a)
        self.count(self.live, dev, "CUDA", -size)
        self.emit("FREE", "CUDA", ts, device, a, size, attrs, frames, trace=True, cache=cache)
        for x, y in ((a, lo), (hi, a + size)):
            if a <= x < y <= a + size:
                self.map(x, y - x, dev, pframes)
                self.emit("MALLOC", "CUDA", ts, dev, x, y - x, {"remains_of": f"0x{a:016x}"},
                          pframes, trace=True)

    def entry(self, device, e, cache=None):
        """One trace entry of device_traces[device]; cache: a key naming its frames (the big
        loop's call site), whose texts are then computed once."""
        action = e.get("action")
        ts = e.get("time_us", 0) * 1000
        if device not in self.first_us:
            self.first_us[device] = e.get("time_us", 0)
        attrs = {}
        if "stream" in e:
            attrs["stream"] = str(e["stream"])
        extra = {k: str(e[k]) for k in ("user_metadata", "compile_context")
                 if e.get(k) and e[k] != "N/A"}
        frames = e.get("frames")
        addr, size = e.get("addr"), e.get("size")
        if action == "free_requested":
            self.requested_ns[addr] = ts
            return
        if action in ("segment_alloc", "segment_map"):
            self.map(addr, size, device, frames)
            self.emit("MALLOC", "CUDA", ts, device, addr, size, {**attrs, **extra}, frames,
                      trace=True, cache=cache)
        elif action in ("segment_free", "segment_unmap"):
            self.cuda_free(device, e, ts, {**attrs, **extra}, frames, cache)
        elif action in self.POOL_OF:
            kind, pool = self.POOL_OF[action]
            if kind == "MALLOC":
                old = self.blocks.get(addr)
                if old:
                    self.count(self.live, old[0], pool, -old[1])
                self.blocks[addr] = (device, size)
                self.count(self.live, device, pool, size)
            elif addr in self.blocks:
                old = self.blocks.pop(addr)
                self.count(self.live, old[0], pool, -old[1])
            else:
                # a block of the ring buffer's past: its MALLOC made up just before its FREE
                self.emit("MALLOC", pool, self.before_ns(device), device, addr, size,
                          {"before_trace": "1"}, trace=True)
            if action == "free_completed" and addr in self.requested_ns:
                attrs["free_requested"] = str(self.requested_ns.pop(addr))
            self.emit(kind, pool, ts, device, addr, size, {**attrs, **extra}, frames,
                      trace=True, cache=cache)
        elif action == "oom":
            # kept for the end, with its device's figures now
            live = dict(self.live.get(device, {"CUDA": 0, "CUDA_CACHING": 0}))
            before = dict(self.before.get(device, {"CUDA": 0, "CUDA_CACHING": 0}))
            self.ooms.append((device, e, ts, {**attrs, **extra}, live, before, cache))
        elif action == "snapshot":
            self.emit("SNAPSHOT", "SNAPSHOT", ts, device, None, None, {**attrs, **extra}, frames,
                      trace=True, cache=cache)
        elif action == "annotate":
            name = e.get("name") or e.get("user_metadata") or "annotate"
            self.emit("MSTX", "Mark", ts, device, None, None, {**attrs, **extra}, frames,
                      name=name, trace=True, cache=cache)
        else:
            self.unknown += 1
            self.emit(action, None, ts, device, addr, size, {**attrs, **extra}, frames,
                      trace=True, cache=cache)

    def annotation(self, a):
        sub = {"START": "ATEN_START", "END": "ATEN_END"}[a["stage"]]
        self.emit("OP_LAUNCH", sub, a["time_us"] * 1000, a["device"], name=a["name"])

    def finish(self, segments):
        """The segments and blocks alive when the snapshot was taken that the trace did not
        allocate (a segment's parts no piece of the trace holds): MALLOCs at the device's first
        entry less 1 µs; then the oom entries with the state at their time."""
        for s in segments:
            dev = s["device"]
            lo, hi = s["address"], s["address"] + s["total_size"]
            attrs = {"before_trace": "1", "segment_type": s["segment_type"]}
            parts, at = [], lo
            if lo == hi:
                parts = [] if lo in self.mapped else [(lo, lo)]
            else:
                for a in self.pieces(lo, hi):
                    if a > at:
                        parts.append((at, a))
                    at = max(at, a + self.mapped[a][0])
                if at < hi:
                    parts.append((at, hi))
            for x, y in parts:
                self.emit("MALLOC", "CUDA", self.before_ns(dev), dev, x, y - x, attrs,
                          s.get("frames"))
                self.map(x, y - x, dev, s.get("frames"))
            for b in s["blocks"]:
                if b["state"] not in ("active_allocated", "active_pending_free"):
                    continue
                if b["address"] in self.blocks:
                    continue
                frames = b["frames"] if "frames" in b else b["history"][-1]["frames"]
                n = block_bytes(b)
                battrs = {"before_trace": "1"}
                if n != b["size"]:
                    battrs["block_size"] = str(b["size"])
                battrs["state"] = b["state"]
                self.emit("MALLOC", "CUDA_CACHING", self.before_ns(dev), dev, b["address"], n,
                          battrs, frames)
                self.blocks[b["address"]] = (dev, n)
        for device, e, ts, attrs, live, before, cache in self.ooms:
            end = self.before.get(device, {"CUDA": 0, "CUDA_CACHING": 0})
            oattrs = {"size": str(e["size"]), "device_free": str(e["device_free"]),
                      "reserved": str(live["CUDA"] + end["CUDA"] - before["CUDA"]),
                      "allocated": str(live["CUDA_CACHING"] + end["CUDA_CACHING"] -
                                       before["CUDA_CACHING"]), **attrs}
            self.emit("OOM_DETAIL", "OOM_TRIGGER", ts, device, None, None, oattrs,
                      e.get("frames"), trace=True, cache=cache)

    def run(self, snap):
        """All of a snapshot held in memory, in the order the reader meets it."""
        for dev, trace in enumerate(snap.get("device_traces", [])):
            for e in trace:
                self.entry(dev, e)
        for a in snap.get("external_annotations", []):
            self.annotation(a)
        self.finish(snap.get("segments", []))
        return self


# ------------------------------------------------------------------------------------------
# Building snapshots: shared frames, and a small model of the caching allocator


class FrameBank:
    """One dict per distinct frame, handed out again whenever the frame recurs, as torch's
    _snapshot() does: pickle then writes each once and memo references after."""

    def __init__(self):
        self.cache = {}

    def frame(self, filename, line, name, **newer):
        key = (filename, line, name, tuple(sorted(newer.items())))
        f = self.cache.get(key)
        if f is None:
            f = {"filename": sys.intern(filename), "line": line, "name": sys.intern(name)}
            f.update(newer)
            self.cache[key] = f
        return f


class Stacks:
    """The call stacks of a training script: innermost first, the allocator's C++ frames, the
    Python frames of the script, then the interpreter's C frames, as torch records them with
    context="all", stacks="all"."""

    def __init__(self, bank):
        fr = bank.frame
        self.alloc_c = [
            fr("??", 0, "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc"
               "(signed char, unsigned long, CUstream_st*)"),
            fr("??", 0, "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc"
               "(void**, signed char, unsigned long, CUstream_st*)"),
            fr("aten/src/ATen/EmptyTensor.cpp", 46, "at::detail::empty_generic"),
            fr("", 0, "at::native::empty_cuda"),
        ]
        self.free_c = [
            fr("??", 0, "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::free"
               "(c10::cuda::CUDACachingAllocator::Native::Block*)"),
            fr("c10/core/StorageImpl.h", 58, "c10::StorageImpl::~StorageImpl()"),
        ]
        self.outer_c = [
            fr("Python/ceval.c", 4769, "_PyEval_EvalFrameDefault"),
            fr("Modules/main.c", 680, "Py_RunMain"),
            fr("??", 0, "_start"),
        ]
        self.root_py = [
            fr("train.py", 212, "main"),
            fr("train.py", 240, "<module>"),
            fr("<frozen runpy>", 88, "_run_code"),
        ]
        self.sites = {}
        for i, (fn, line, name) in enumerate([
            ("model.py", 31, "forward"), ("model.py", 44, "forward"),
            ("torch/nn/modules/linear.py", 116, "forward"),
            ("torch/nn/functional.py", 1500, "relu"),
            ("<eval_with_key>.3", 7, "forward"),
            ("torch/optim/adam.py", 410, "_single_tensor_adam"),
            ("torch/autograd/graph.py", 768, "_engine_run_backward"),
            ("model.py", 52, "<lambda>"),
        ]):
            self.sites[name + str(i)] = fr(fn, line, name)
        self.layer = fr("torch/nn/modules/module.py", 1750, "_call_impl",
                        fx_node_op="call_module", fx_node_name="layer1",
                        fx_original_trace="model.py:31")
        self.step_py = fr("train.py", 120, "train_step")

    def alloc(self, site):
        """A fresh frames list for an allocation at site (a key of self.sites)."""
        return (self.alloc_c + [self.sites[site], self.layer, self.step_py] + self.root_py +
                self.outer_c)

    def free(self, site):
        return self.free_c + [self.sites[site], self.step_py] + self.root_py + self.outer_c


class Block:
    def __init__(self, seg, address, size, requested, frames):
        self.seg, self.address, self.size, self.requested = seg, address, size, requested
        self.frames, self.state = frames, "active_allocated"


class Segment:
    def __init__(self, device, address, size, frames, expandable=False):
        self.device, self.address, self.total_size, self.frames = device, address, size, frames
        self.expandable, self.blocks, self.top = expandable, [], 0


class Device:
    """One device's trace, and the allocator state it leads to: blocks are carved from segments
    by a bump pointer, a freed block's address is handed out again to the next request of the
    same size (so addresses repeat step after step, as the caching allocator's do)."""

    def __init__(self, snap, index):
        self.snap, self.index = snap, index
        self.trace = []
        self.segments = []
        self.cached = {}  # size -> [freed blocks]
        self.live = []  # blocks allocated and not completely freed, oldest first

    def entry(self, action, addr, size, frames, **extra):
        e = {"action": action, "addr": addr, "size": size, "stream": STREAM,
             "time_us": self.snap.tick(), "frames": frames}
        e.update(extra)
        self.trace.append(e)
        return e

    def segment_alloc(self, frames, size=SEG_SIZE):
        addr = ADDR_BASE + self.index * DEV_STRIDE + len(self.snap.seg_addrs) * (64 << 20)
        self.snap.seg_addrs.append(addr)
        seg = Segment(self.index, addr, size, frames)
        self.segments.append(seg)
        self.entry("segment_alloc", addr, size, frames)
        return seg

    def segment_free(self, seg, frames):
        assert not any(b.state != "inactive" for b in seg.blocks)
        self.segments.remove(seg)
        for size, blocks in self.cached.items():
            self.cached[size] = [b for b in blocks if b.seg is not seg]
        self.entry("segment_free", seg.address, seg.total_size, frames)

    def alloc(self, requested, frames, **extra):
        size = (requested + 511) // 512 * 512
        if self.cached.get(size):
            b = self.cached[size].pop(0)
            b.requested, b.frames, b.state = requested, frames, "active_allocated"
        else:
            seg = next((s for s in self.segments if s.top + size <= s.total_size), None)
            if seg is None:
                seg = self.segment_alloc(frames, max(SEG_SIZE, size))
            b = Block(seg, seg.address + seg.top, size, requested, frames)
            seg.top += size
            seg.blocks.append(b)
        self.live.append(b)
        # the trace's size is the requested one (the block's size is in segments)
        self.entry("alloc", b.address, b.requested, frames, **extra)
        return b

    def free(self, b, frames, complete=True):
        """free_requested, then (unless not complete: still waiting for a stream)
        free_completed."""
        self.entry("free_requested", b.address, b.requested, frames)
        b.state = "active_pending_free"
        if complete:
            self.complete(b, frames)

    def complete(self, b, frames):
        self.entry("free_completed", b.address, b.requested, frames)
        b.state = "inactive"
        self.live.remove(b)
        self.cached.setdefault(b.size, []).append(b)

    def state(self):
        """The segments list of the snapshot, as _snapshot() gives it at the end."""
        out = []
        for s in self.segments:
            blocks, top = [], 0
            for b in sorted(s.blocks, key=lambda b: b.address):
                blocks.append({"address": b.address, "size": b.size,
                               "requested_size": b.requested if b.state != "inactive" else 0,
                               "state": b.state, "frames": b.frames if b.state != "inactive"
                               else []})
                top = b.address + b.size - s.address
            if top < s.total_size:
                blocks.append({"address": s.address + top, "size": s.total_size - top,
                               "requested_size": 0, "state": "inactive", "frames": []})
            alloc = sum(b.size for b in s.blocks if b.state == "active_allocated")
            active = sum(b.size for b in s.blocks if b.state != "inactive")
            out.append({
                "device": s.device, "address": s.address, "total_size": s.total_size,
                "allocated_size": alloc, "active_size": active,
                "requested_size": sum(b.requested for b in s.blocks if b.state != "inactive"),
                "stream": STREAM, "segment_type": "large" if s.total_size >= 1 << 20 else "small",
                "segment_pool_id": POOL_ID, "is_expandable": s.expandable, "frames": s.frames,
                "blocks": blocks})
        return out


POOL_ID = (0, 0)  # one tuple object, as torch's default pool id is: pickled once, then memo refs

ALLOCATOR_SETTINGS = {
    "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:False,garbage_collection_threshold:0.6",
    "max_split_size": -1,
    "garbage_collection_threshold": 0.6,
    "expandable_segments": False,
    "pinned_num_register_threads": 1,
    "release_lock_on_cudamalloc": False,
    "pinned_use_cuda_host_register": False,
    "roundup_power2_divisions": {"1": 0, "2": 0, "4": 0, "8": 0, "16": 0, "32": 0, "64": 0,
                                 "128": 0, "256": 0, "512": 0, "1024": 0, "2048": 0, "4096": 0,
                                 "8192": 0, "16384": 0, "32768": 0},
    "last_allocator_settings_ratio": 1.5e-3,
}


class Snap:
    """A snapshot under construction: devices, a clock in µs, the external annotations."""

    def __init__(self, n_devices):
        self.us = BASE_US
        self.seg_addrs = []
        self.devices = [Device(self, i) for i in range(n_devices)]
        self.annotations = []
        self.planted = None
        self.known = {}  # figures known by construction, checked against the oracle's

    def tick(self, us=3):
        self.us += us
        return self.us

    def annotate(self, stage, name, devices=None):
        t = self.tick()
        for d in devices if devices is not None else range(len(self.devices)):
            self.annotations.append({"device": d, "stage": stage, "name": name, "time_us": t})

    def build(self, segments=None):
        if segments is None:
            segments = [s for d in self.devices for s in d.state()]
        return {
            "segments": segments,
            "device_traces": [d.trace for d in self.devices],
            "allocator_settings": ALLOCATOR_SETTINGS,
            "external_annotations": self.annotations,
        }


# ------------------------------------------------------------------------------------------
# Scenarios: each returns (snapshot dict, Snap)


def training_loop(snap, stacks, steps, plant=None):
    """A training loop on every device of snap: weights before the first step, then per step
    (ProfilerStep#N, a record_function "forward" range inside) activations, gradients freed
    within the step, optimizer state in step 1, a temporary segment freed by empty_cache in
    step 3, a tensor still pending free at the end. plant=(device, step): a tensor allocated
    then and never freed."""
    weights = {d.index: [d.alloc(1 << 20, stacks.alloc("forward2")) for _ in range(3)]
               for d in snap.devices}
    tmp_seg = {}
    for step in range(1, steps + 1):
        snap.annotate("START", f"ProfilerStep#{step}")
        snap.annotate("START", "## forward ##")
        acts = {}
        for d in snap.devices:
            acts[d.index] = [d.alloc(size, stacks.alloc(site)) for size, site in
                             ((300000, "forward0"), (1 << 19, "relu3"), (4096, "forward4"),
                              (1000, "forward1"))]
            if plant == (d.index, step):
                b = d.alloc(3 * (1 << 20) + 100, stacks.alloc("<lambda>7"))
                snap.planted = {"device": d.index, "addr": b.address, "size": b.requested,
                                "block_size": b.size, "step": step}
        snap.annotate("END", "## forward ##")
        for d in snap.devices:
            grads = [d.alloc(s, stacks.alloc("_engine_run_backward6")) for s in (1 << 19, 2048)]
            for b in acts[d.index]:
                d.free(b, stacks.free("_engine_run_backward6"))
            if step == 1:
                for _ in range(2):
                    d.alloc(1 << 20, stacks.alloc("_single_tensor_adam5"))
                seg = d.segment_alloc(stacks.alloc("_single_tensor_adam5"), 2 << 20)
                tmp_seg[d.index] = seg
            if step == 3:
                d.segment_free(tmp_seg.pop(d.index), stacks.free("_single_tensor_adam5"))
            for b in grads[:-1] if step == steps else grads:
                d.free(b, stacks.free("_single_tensor_adam5"))
            if step == steps:
                d.free(grads[-1], stacks.free("_single_tensor_adam5"), complete=False)
        snap.annotate("END", f"ProfilerStep#{step}")
    return weights


def scenario_loop(args):
    """Training on 2 devices, 5 steps, one tensor planted in step 2 on device 0 and never
    freed (memscope-leaks must report it as a leak of step 2)."""
    snap = Snap(2)
    stacks = Stacks(FrameBank())
    training_loop(snap, stacks, 5, plant=(0, 2))
    return snap.build(), snap


def scenario_ringcut(args):
    """The ring buffer cut the trace in the middle of step 2: frees of blocks allocated before
    it (made-up MALLOCs), a free_completed whose free_requested was cut, a segment_free of a
    segment allocated before it, and segments and blocks alive before it and still alive at
    the end (delivered after the file, before_trace)."""
    snap = Snap(2)
    stacks = Stacks(FrameBank())
    training_loop(snap, stacks, 4)
    segments = [s for d in snap.devices for s in d.state()]
    # cut each device at the first entry of its step 2 forward pass + 3 entries, after a
    # free_requested whose free_completed is kept (device 0) and anywhere else (device 1)
    known_cuda, known_cc = 0, 0
    for d, skip in zip(snap.devices, (0, 5)):
        t = d.trace
        starts = [i for i, e in enumerate(t) if e["action"] == "alloc" and e["size"] == 300000]
        cut = starts[1] + 3 + skip
        if d.index == 0:  # move the cut just after a free_requested of a completed free
            cut = next(i for i in range(cut, len(t)) if t[i]["action"] == "free_requested") + 1
        # what was alive at the cut, counted by replaying the cut part: each is delivered once
        # as a before_trace MALLOC (when freed later, or when still in segments at the end)
        alive_seg, alive_blk = set(), set()
        for e in t[:cut]:
            a = e["action"]
            if a == "segment_alloc":
                alive_seg.add(e["addr"])
            elif a == "segment_free":
                alive_seg.discard(e["addr"])
            elif a == "alloc":
                alive_blk.add(e["addr"])
            elif a == "free_completed":
                alive_blk.discard(e["addr"])
        known_cuda += len(alive_seg)
        known_cc += len(alive_blk)
        del t[:cut]
    snap.known = {"before_trace": {"CUDA": known_cuda, "CUDA_CACHING": known_cc}}
    return snap.build(segments), snap


def scenario_nohistory(args):
    """A snapshot taken without history: segments and blocks only, two empty device traces;
    device 1's blocks in the older `history` form. Every segment and active block is a
    MALLOC at 0, with its stack; inactive blocks give nothing."""
    bank = FrameBank()
    stacks = Stacks(bank)
    a0, a1 = ADDR_BASE, ADDR_BASE + DEV_STRIDE
    blk = lambda addr, size, state, frames: {
        "address": addr, "size": size, "requested_size": size - 100 if state != "inactive"
        else 0, "state": state, "frames": frames}
    hist = lambda addr, size, state, frames: {
        "address": addr, "size": size, "requested_size": size - 4 if state != "inactive" else 0,
        "state": state, "history": [
            {"addr": addr, "real_size": size, "frames": stacks.alloc("forward0")},
            {"addr": addr, "real_size": size - 4, "frames": frames}]}
    seg = lambda dev, addr, size, blocks, expandable=False, typ="large": {
        "device": dev, "address": addr, "total_size": size,
        "allocated_size": sum(b["size"] for b in blocks if b["state"] == "active_allocated"),
        "active_size": sum(b["size"] for b in blocks if b["state"] != "inactive"),
        "requested_size": sum(b["requested_size"] for b in blocks), "stream": 0,
        "segment_type": typ, "segment_pool_id": POOL_ID, "is_expandable": expandable,
        "frames": stacks.alloc("forward2"), "blocks": blocks}
    segments = [
        seg(0, a0, 2 << 20, [blk(a0, 1 << 20, "active_allocated", stacks.alloc("forward1")),
                             blk(a0 + (1 << 20), 512 << 10, "active_pending_free",
                                 stacks.alloc("relu3")),
                             blk(a0 + (3 << 19), 512 << 10, "inactive", [])]),
        seg(0, a0 + (64 << 20), 1 << 20, [blk(a0 + (64 << 20), 1 << 20, "inactive", [])]),
        seg(0, a0 + (128 << 20), 512 << 10,
            [blk(a0 + (128 << 20), 512, "active_allocated", [])], typ="small"),
        seg(1, a1, 2 << 20, [hist(a1, 1 << 20, "active_allocated", stacks.alloc("<lambda>7")),
                             hist(a1 + (1 << 20), 1 << 20, "inactive", [])], expandable=True),
    ]
    snap = Snap(2)
    snap.known = {"before_trace": {"CUDA": 4, "CUDA_CACHING": 4}}
    return snap.build(segments), snap


def scenario_empty(args):
    """No segment, four empty device traces (a real sample has this shape)."""
    snap = Snap(4)
    snap.known = {"n_events": 0}
    return snap.build([]), snap


def scenario_special(args):
    """The rarer entries: expandable segments (segment_map pieces, an unmap of a range mapped
    in two pieces), snapshot, annotate (by name, by user_metadata, by neither), oom with
    device_free, compile_context and user_metadata attrs, an entry without time_us, pool_id,
    and keys memscope ignores holding bytes (protocol 3+), a bytearray (protocol 5), None,
    booleans, nested tuples and negative numbers."""
    snap = Snap(2)
    stacks = Stacks(FrameBank())
    d = snap.devices[0]
    base = ADDR_BASE + (512 << 20)
    fr = stacks.alloc("forward0")
    d.entry("segment_map", base, 2 << 20, fr)
    d.entry("alloc", base, 1 << 20, fr, compile_context="N/A", user_metadata="")
    d.entry("segment_map", base + (2 << 20), 2 << 20, fr)
    d.entry("alloc", base + (2 << 20), 512, fr, compile_context="Torch-Compiled Region: 0/0",
            pool_id=(1, 2))
    d.entry("snapshot", 0, 0, fr)
    d.entry("annotate", 0, 0, [], user_metadata="warmup done")
    d.entry("annotate", 0, 0, [], name="phase two", user_metadata="meta")
    d.entry("annotate", 0, 0, [])
    d.entry("free_requested", base, 1 << 20, stacks.free("forward0"))
    d.entry("free_completed", base, 1 << 20, stacks.free("forward0"))
    d.entry("free_requested", base + (2 << 20), 512, stacks.free("forward0"))
    d.entry("free_completed", base + (2 << 20), 512, stacks.free("forward0"),
            user_metadata="step=3")
    d.entry("segment_unmap", base, 4 << 20, stacks.free("forward0"))
    d.entry("segment_map", base, 2 << 20, fr)
    e = d.entry("alloc", base, 8192, fr)
    oom = d.entry("oom", 0, 80 << 30, fr, device_free=123456789)
    del oom["addr"]  # an oom entry gives device_free instead of addr
    late = d.entry("alloc", base + 8192, 1000, [])  # the block's 1024 bytes, 1000 requested
    del late["time_us"]  # no time: ts 0
    d1 = snap.devices[1]
    d1.entry("oom", 0, 1 << 40, [], device_free=0)
    del d1.trace[-1]["addr"]
    segments = [{
        "device": 0, "address": base, "total_size": 2 << 20, "allocated_size": 9216,
        "active_size": 9216, "requested_size": 9216, "stream": STREAM, "segment_type": "large",
        "segment_pool_id": POOL_ID, "is_expandable": True, "frames": fr, "blocks": [
            {"address": base, "size": 8192, "requested_size": 8192, "state": "active_allocated",
             "frames": e["frames"]},
            {"address": base + 8192, "size": 1024, "requested_size": 1000,
             "state": "active_allocated", "frames": []}]}]
    out = snap.build(segments)
    extra = {"none": None, "flags": (True, False), "nested": ((1, (2, -3)), [], {}),
             "negative": -2 ** 40, "small_negative": -1, "float": -0.5, "pi": 3.25}
    if args.protocol >= 3:
        extra["bytes"] = b"\x00\x01 raw"
        extra["long_bytes"] = bytes(300)
    if args.protocol >= 5:
        extra["bytearray"] = bytearray(b"abc")
    out["memscope_ignores_this"] = extra
    snap.known = {"counts": {"SNAPSHOT SNAPSHOT": 1, "OOM_DETAIL OOM_TRIGGER": 2,
                             "MSTX Mark warmup done": 1, "MSTX Mark phase two": 1,
                             "MSTX Mark annotate": 1}}
    return out, snap


def scenario_expandable(args):
    """Expandable segments, mapped and unmapped by range, and blocks of a rounded size
    (formats/torch-snapshot.md "End state"). Device 0: a 40 MiB segment whose first 20 MiB were
    mapped before the trace (holding a block of 1024 bytes, 1000 requested) and its second 20
    MiB in it (a block of the same size): 40 MiB reserved, 2 blocks of 2000 bytes. Device 1: a
    60 MiB piece whose middle 20 MiB are unmapped (two segments left), a range of 40 MiB
    unmapped at once whose first half was mapped before the trace and second half in it, and a
    segment allocated before the trace and freed in it."""
    snap = Snap(2)
    stacks = Stacks(FrameBank())
    mib = 1 << 20
    d0, d1 = snap.devices
    fr, fr_free = stacks.alloc("forward0"), stacks.free("forward0")
    a = ADDR_BASE
    d0.entry("segment_map", a + 20 * mib, 20 * mib, fr)
    d0.entry("alloc", a + 20 * mib, 1000, fr)
    d0.entry("alloc", a + 20 * mib + 1024, 4000, fr)
    d0.entry("free_requested", a + 20 * mib + 1024, 4000, fr_free)
    d0.entry("free_completed", a + 20 * mib + 1024, 4000, fr_free)
    c = ADDR_BASE + DEV_STRIDE
    dd, e = c + (1 << 30), c + (2 << 30)
    d1.entry("segment_map", c, 60 * mib, fr)
    d1.entry("segment_map", dd + 20 * mib, 20 * mib, fr)
    d1.entry("alloc", c, 100, fr)
    d1.entry("segment_unmap", c + 20 * mib, 20 * mib, fr_free)
    d1.entry("segment_unmap", dd, 40 * mib, fr_free)
    d1.entry("segment_free", e, SEG_SIZE, fr_free)
    pre = stacks.alloc("relu3")

    def blk(addr, size, requested, frames):
        return {"address": addr, "size": size, "requested_size": requested,
                "state": "active_allocated" if requested else "inactive", "frames": frames}

    def seg(dev, addr, size, blocks):
        act = [b for b in blocks if b["state"] != "inactive"]
        return {"device": dev, "address": addr, "total_size": size,
                "allocated_size": sum(b["size"] for b in act),
                "active_size": sum(b["size"] for b in act),
                "requested_size": sum(b["requested_size"] for b in act), "stream": STREAM,
                "segment_type": "large", "segment_pool_id": POOL_ID, "is_expandable": True,
                "frames": fr, "blocks": blocks}

    segments = [
        seg(0, a, 40 * mib, [blk(a, 1024, 1000, pre), blk(a + 1024, 20 * mib - 1024, 0, []),
                             blk(a + 20 * mib, 1024, 1000, fr),
                             blk(a + 20 * mib + 1024, 20 * mib - 1024, 0, [])]),
        seg(1, c, 20 * mib, [blk(c, 512, 100, fr), blk(c + 512, 20 * mib - 512, 0, [])]),
        seg(1, c + 40 * mib, 20 * mib, [blk(c + 40 * mib, 20 * mib, 0, [])]),
    ]
    snap.known = {"before_trace": {"CUDA": 3, "CUDA_CACHING": 1},
                  "live_bytes": {"CUDA": 80 * mib, "CUDA_CACHING": 2100}}
    return snap.build(segments), snap


def scenario_shared(args):
    """One list object holding two devices' traces (device_traces = [L, L]: pickle writes L
    once and a memo reference after it): Python reads its entries on both devices, and so
    must memscope."""
    snap = Snap(1)
    stacks = Stacks(FrameBank())
    d = snap.devices[0]
    fr, fr_free = stacks.alloc("forward0"), stacks.free("forward0")
    s = d.segment_alloc(fr)
    b = d.alloc(4000, fr)
    d.free(b, fr_free)
    d.segment_free(s, fr_free)
    d.entry("annotate", 0, 0, [], name="shared trace")
    out = snap.build([])
    out["device_traces"] = [d.trace, d.trace]
    snap.known = {"devices": [0, 1], "counts": {"MALLOC CUDA": 2, "MALLOC CUDA_CACHING": 2,
                                                "MSTX Mark shared trace": 2}}
    return out, snap


def scenario_deep(args):
    """Deep stacks: 3000 frames in one list (APPENDS in batches of 1000), 1001 in another (a
    batch, then a batch of one), a list of one frame (a lone APPEND), the first list used again
    by a later entry (a memo reference to a whole list), an empty frames list, an entry without
    frames, more than 1000 entries on one device, and an action memscope does not know."""
    snap = Snap(1)
    bank = FrameBank()
    d = snap.devices[0]
    deep = [bank.frame(f"lib/layer{i % 700}.py" if i % 3 else "??", i % 997,
                       f"fn_{i}" if i % 5 else f"op<{i}, float>") for i in range(3000)]
    mid = [bank.frame("deep.py", i, f"rec_{i}") for i in range(1001)]
    d.entry("segment_alloc", ADDR_BASE, SEG_SIZE, deep)
    d.entry("alloc", ADDR_BASE, 4096, deep)
    d.entry("alloc", ADDR_BASE + 4096, 4096, mid)
    d.entry("gc_collect", ADDR_BASE + 4096, 77, [])
    no_frames = d.entry("alloc", ADDR_BASE + 8192, 512, None)
    del no_frames["frames"]
    small = [bank.frame("loop.py", 3, "tick")]
    for i in range(1200):
        d.entry("alloc", ADDR_BASE + (1 << 20) + 512 * (i % 7), 512, small)
        d.entry("free_completed", ADDR_BASE + (1 << 20) + 512 * (i % 7), 512, small)
    d.entry("free_completed", ADDR_BASE, 4096, deep)
    snap.known = {"counts": {"gc_collect": 1}}
    return snap.build([]), snap


# ------------------------------------------------------------------------------------------
# Hand-assembled pickles: the subset's rarer opcodes (also used by make_hostile.py)


class Asm:
    """Pickle bytes opcode by opcode, for files Python's pickler would never write. Offsets of
    the opcodes are kept (at(name)) so hostile files can say where the reader must stop."""

    def __init__(self, protocol=2, frame=False):
        self.b = bytearray(b"\x80" + bytes([protocol]))
        self.frame_at = None
        if frame:  # the length is patched by end_frame()
            self.frame_at = len(self.b)
            self.b += b"\x95" + bytes(8)
        self.marks = {}
        self.memo = 0

    def here(self, label):
        self.marks[label] = len(self.b)
        return self

    def op(self, code, operand=b""):
        self.b += code + operand
        return self

    def end_frame(self):
        """The frame opened by frame=True ends here."""
        n = len(self.b) - self.frame_at - 9
        self.b[self.frame_at + 1:self.frame_at + 9] = struct.pack("<Q", n)
        return self

    def frame(self, body):
        """A complete FRAME holding body (bytes)."""
        return self.op(b"\x95", struct.pack("<Q", len(body)) + body)

    # values
    def none(self): return self.op(b"N")
    def true(self): return self.op(b"\x88")
    def false(self): return self.op(b"\x89")
    def binint(self, v): return self.op(b"J", struct.pack("<i", v))
    def binint1(self, v): return self.op(b"K", bytes([v]))
    def binint2(self, v): return self.op(b"M", struct.pack("<H", v))
    def binfloat(self, v): return self.op(b"G", struct.pack(">d", v))

    def long1(self, v, n=None):
        n = n or (v.bit_length() >> 3) + 1
        return self.op(b"\x8a", bytes([n]) + v.to_bytes(n, "little", signed=True))

    def long4(self, v, n=None):
        n = n or (v.bit_length() >> 3) + 1
        return self.op(b"\x8b", struct.pack("<i", n) + v.to_bytes(n, "little", signed=True))

    def short_binunicode(self, s):
        u = s.encode()
        return self.op(b"\x8c", bytes([len(u)]) + u)

    def binunicode(self, s):
        u = s.encode()
        return self.op(b"X", struct.pack("<I", len(u)) + u)

    def binunicode8(self, s):
        u = s.encode()
        return self.op(b"\x8d", struct.pack("<Q", len(u)) + u)

    def short_binstring(self, s):
        u = s.encode()
        return self.op(b"U", bytes([len(u)]) + u)

    def binstring(self, s):
        u = s.encode()
        return self.op(b"T", struct.pack("<i", len(u)) + u)

    def short_binbytes(self, v): return self.op(b"C", bytes([len(v)]) + v)
    def binbytes(self, v): return self.op(b"B", struct.pack("<I", len(v)) + v)
    def binbytes8(self, v): return self.op(b"\x8e", struct.pack("<Q", len(v)) + v)
    def bytearray8(self, v): return self.op(b"\x96", struct.pack("<Q", len(v)) + v)

    # structure
    def mark(self): return self.op(b"(")
    def empty_dict(self): return self.op(b"}")
    def empty_list(self): return self.op(b"]")
    def empty_tuple(self): return self.op(b")")
    def dict(self): return self.op(b"d")
    def list(self): return self.op(b"l")
    def tuple(self): return self.op(b"t")
    def tuple1(self): return self.op(b"\x85")
    def tuple2(self): return self.op(b"\x86")
    def tuple3(self): return self.op(b"\x87")
    def setitem(self): return self.op(b"s")
    def setitems(self): return self.op(b"u")
    def append(self): return self.op(b"a")
    def appends(self): return self.op(b"e")
    def pop(self): return self.op(b"0")
    def pop_mark(self): return self.op(b"1")
    def dup(self): return self.op(b"2")
    def stop(self): return self.op(b".")

    # memo
    def memoize(self):
        self.memo += 1
        return self.op(b"\x94")

    def binput(self, i=None):
        i = self.memo if i is None else i
        self.memo = max(self.memo, i + 1)
        return self.op(b"q", bytes([i]))

    def long_binput(self, i=None):
        i = self.memo if i is None else i
        self.memo = max(self.memo, i + 1)
        return self.op(b"r", struct.pack("<I", i))

    def binget(self, i): return self.op(b"h", bytes([i]))
    def long_binget(self, i): return self.op(b"j", struct.pack("<I", i))

    def bytes(self):
        return bytes(self.b)


def scenario_opcodes(args):
    """A snapshot assembled from the subset's rarer opcodes (protocol 4 header, then two
    FRAMEs): SHORT_BINSTRING and BINSTRING keys, DICT, LIST, TUPLE/TUPLE1/TUPLE2/TUPLE3, DUP,
    POP, POP_MARK, SETITEM, APPEND, BINPUT and LONG_BINPUT (each the next index), BINGET and
    LONG_BINGET, BININT2, LONG4, a negative BININT, BINUNICODE8, the bytes opcodes under an
    ignored key. What it holds is what pickle.loads gives."""
    a = Asm(4)
    a.b = bytearray()  # the frames' contents, assembled alone and framed below
    a.empty_dict().binput()  # the root: memo 0
    a.short_binstring("segments").empty_list().long_binput().setitem()
    a.binstring("device_traces").mark()  # device_traces = [trace0], built with LIST
    a.mark()  # trace0's entries
    # entry 1: an alloc built with DICT; frames a LIST of two frame dicts built with DICT
    a.mark()
    k = {}
    for key in ("action", "addr", "size", "stream", "time_us", "frames"):
        k[key] = a.memo
        a.short_binunicode(key).binput()
        if key == "action":
            a.short_binunicode("alloc").binput()
        elif key == "addr":
            a.long1(ADDR_BASE + 0x1200)
        elif key == "size":
            a.binint(1 << 20)
        elif key == "stream":
            a.binint1(0)
        elif key == "time_us":
            a.long4(BASE_US + 10, 8)
    a.mark()  # the frames list
    a.mark()  # its first frame
    k["filename"] = a.memo
    a.short_binunicode("filename").binput().binunicode8("net.py").binput()
    k["line"] = a.memo
    a.short_binunicode("line").binput().binint2(60000)
    k["name"] = a.memo
    a.short_binunicode("name").binput().short_binstring("step").dict().binput()
    a.mark().binget(k["filename"]).binunicode("??").binget(k["line"]).binint1(0)
    a.binget(k["name"]).binunicode("cudaMalloc").dict()
    f2 = a.memo
    a.long_binput()
    a.list()
    frames1 = a.memo
    a.binput()
    a.dict().binput()
    # entry 2: free_completed of entry 1's block, its frames the same list (a memo reference),
    # built as EMPTY_DICT + SETITEM; junk pushed and POPped, a MARK group POP_MARKed
    a.here("split")
    a.empty_dict().binput()
    a.binget(k["action"]).short_binunicode("free_completed").setitem()
    a.binget(k["addr"]).long1(ADDR_BASE + 0x1200).setitem()
    a.none().pop()
    a.mark().binint(-5).binint(7).pop_mark()
    a.binget(k["size"]).binint(1 << 20).setitem()
    a.binget(k["stream"]).binint1(0).setitem()
    a.binget(k["time_us"]).long1(BASE_US + 20).setitem()
    a.binget(k["frames"]).long_binget(frames1).setitem()
    # entry 3: a segment_free of a segment alive before the trace, a negative stream; values
    # built with TUPLE, TUPLE1, DUP + TUPLE2 and TUPLE3, each POPped
    a.mark()
    a.binget(k["action"]).short_binunicode("segment_free")
    a.binget(k["addr"]).long1(ADDR_BASE)
    a.binget(k["size"]).binint(SEG_SIZE)
    a.binget(k["stream"]).binint(-1)
    a.binget(k["time_us"]).long1(BASE_US + 30)
    a.binget(k["frames"]).empty_list().binput().long_binget(f2).append()
    a.mark().binint1(1).binint1(2).tuple().pop()
    a.empty_tuple().tuple1().pop().binint1(1).dup().tuple2().pop()
    a.binint1(1).binint1(2).binint1(3).tuple3().pop()
    a.dict().binput()
    a.list().binput()  # trace0 = LIST of the three entries
    a.list().binput()  # device_traces = LIST of trace0
    a.setitem()
    a.short_binstring("memscope_ignores_this").mark()
    a.binbytes(b"ab").short_binbytes(b"c").binbytes8(b"de").bytearray8(b"fg").none().true()
    a.false().binfloat(-1.5).long1(-(1 << 60)).long4(1 << 62, 8)
    a.tuple().setitem()
    a.stop()
    body, split = bytes(a.b), a.marks["split"]
    data = Asm(4).frame(body[:split]).frame(body[split:]).bytes()
    obj = pickle.loads(data)
    snap = Snap(1)
    snap.known = {"before_trace": {"CUDA": 1, "CUDA_CACHING": 0}, "n_events": 4}
    return data, snap, obj


# ------------------------------------------------------------------------------------------
# The benchmark's big snapshot, streamed


class StreamPickler:
    """Protocol 4 byte for byte as CPython's pickle.dump writes the same objects (MEMOIZE after
    every str, dict, list and tuple, memo references for objects met again, MARK ... APPENDS /
    SETITEMS batches of 1000), but for where its 64 KiB frames are cut (between entries here),
    streamed: a transient object (a trace entry: keep=False) is written and forgotten, and
    forget() drops an object no later entry uses, so memory stays flat whatever the size.
    Remembered objects are held alive, so their ids stay theirs."""

    FRAME = 64 * 1024

    def __init__(self, f):
        self.f = f
        self.buf = bytearray()
        self.ref = {}  # id(remembered object) -> its memo reference (BINGET/LONG_BINGET bytes)
        self.held = {}  # id -> the object, kept alive while remembered
        self.n_memo = 0
        self.written = 2
        f.write(b"\x80\x04")

    def commit(self, force=False):
        """Ends the frame once it holds 64 KiB (or now, with force)."""
        if self.buf and (force or len(self.buf) >= self.FRAME):
            self.f.write(b"\x95" + struct.pack("<Q", len(self.buf)))
            self.f.write(self.buf)
            self.written += 9 + len(self.buf)
            self.buf = bytearray()

    def memoize(self, obj, keep):
        self.buf += b"\x94"
        if keep:
            i = self.n_memo
            self.ref[id(obj)] = b"h" + bytes([i]) if i < 256 else b"j" + struct.pack("<I", i)
            self.held[id(obj)] = obj
        self.n_memo += 1

    def forget(self, obj):
        self.ref.pop(id(obj), None)
        self.held.pop(id(obj), None)

    def save(self, obj, keep=True):
        r = self.ref.get(id(obj))
        if r is not None:
            self.buf += r
            return
        t = type(obj)
        if t is int:
            self.buf += int_op(obj)
        elif t is str:
            u = obj.encode()
            self.buf += (b"\x8c" + bytes([len(u)]) if len(u) < 256 else
                         b"X" + struct.pack("<I", len(u))) + u
            self.memoize(obj, keep)
        elif t is dict:
            self.buf += b"}"
            self.memoize(obj, keep)
            self.batches(list(obj.items()), b"s", b"u", pair=True)
        elif t is list:
            self.buf += b"]"
            self.memoize(obj, keep)
            self.batches(obj, b"a", b"e")
        elif t is tuple and 0 < len(obj) <= 3:
            for x in obj:
                self.save(x)
            self.buf += b"\x85\x86\x87"[len(obj) - 1:len(obj)]
            self.memoize(obj, keep)
        elif obj is None:
            self.buf += b"N"
        elif obj is True or obj is False:
            self.buf += b"\x88" if obj else b"\x89"
        elif t is float:
            self.buf += b"G" + struct.pack(">d", obj)
        else:
            raise TypeError(t)

    def batches(self, items, one, many, pair=False):
        """Items as CPython's pickler writes them: a lone item with APPEND / SETITEM, any
        other count in MARK ... APPENDS / SETITEMS batches of 1000 (a last batch of one too)."""
        if len(items) == 1:
            if pair:
                self.save(items[0][0])
                self.save(items[0][1])
            else:
                self.save(items[0])
            self.buf += one
            return
        for i in range(0, len(items), 1000):
            self.buf += b"("
            for x in items[i:i + 1000]:
                if pair:
                    self.save(x[0])
                    self.save(x[1])
                else:
                    self.save(x)
            self.buf += many
            self.commit()

    def stream_list(self, items):
        """A list whose items (transient dicts) come from an iterator, batched as batches()
        does. Each item is written before the next is made, so what making it forgets
        (forget()) is already written; the first batch's MARK goes in front of its first item
        once a second one comes (a list of one item has none)."""
        self.buf += b"]\x94"
        self.n_memo += 1
        it = iter(items)
        x = next(it, None)
        if x is None:
            return
        at = len(self.buf)
        self.save(x, keep=False)  # no commit: the MARK may still go in front
        x = next(it, None)
        if x is None:
            self.buf += b"a"
            return
        self.buf[at:at] = b"("
        n = 1
        while x is not None:
            if n == 1000:
                self.buf += b"e("
                n = 0
            self.save(x, keep=False)
            self.commit()
            n += 1
            x = next(it, None)
        self.buf += b"e"
        self.commit()

    def stop(self):
        self.buf += b"."
        self.commit(force=True)


def int_op(v):
    """The opcode pickle writes for an int at protocol 2+."""
    if 0 <= v < 256:
        return b"K" + bytes([v])
    if 0 <= v < 65536:
        return b"M" + struct.pack("<H", v)
    if -2 ** 31 <= v < 2 ** 31:
        return b"J" + struct.pack("<i", v)
    n = (v.bit_length() >> 3) + 1
    data = v.to_bytes(n, "little", signed=True)
    if v < 0 and n > 1 and data[-1] == 0xFF and data[-2] & 0x80:
        data = data[:-1]
    return b"\x8a" + bytes([len(data)]) + data


class BigLoop:
    """The benchmark's loop: one device, 3200 shared frame dicts, 600 call sites each a frames
    list of 20 to 60 frames (mean 40), 64 tensors per step at fixed addresses (allocated, then
    free_requested and free_completed), ProfilerStep#N annotations. Half the entries use a
    fresh copy of their site's frames list, half the site's last list again (a memo reference
    to the whole list, as torch's shared tracebacks give): ~150 bytes per entry, as real files
    have (formats/torch-snapshot.md cites 170-196)."""

    def __init__(self, seed=20):
        rnd = random.Random(seed)
        self.rnd = rnd
        bank = FrameBank()
        py = [bank.frame(f"pkg/mod{i % 97}/file{i % 211}.py", 10 + i % 900,
                         ("forward", "__call__", "_call_impl", "step", f"fn{i}")[i % 5])
              for i in range(2400)]
        c = [bank.frame("??" if i % 4 else f"csrc/unit{i % 50}.cpp", i % 400,
                        f"at::native::kernel_{i}(at::Tensor const&, c10::Scalar)")
             for i in range(800)]
        self.sites = []
        for _ in range(600):
            n = rnd.randint(20, 60)
            k = rnd.randint(2, 6)
            self.sites.append(rnd.sample(c, k) + rnd.sample(py, n - k - 3) + rnd.sample(c, 3))
        self.last_list = [None] * len(self.sites)  # the site's last frames list written
        self.slot_size = [512 * rnd.choice((1, 2, 8, 64, 512, 2048, 8192)) for _ in range(64)]
        self.slot_site = [rnd.randrange(len(self.sites)) for _ in range(64)]
        self.free_site = [rnd.randrange(len(self.sites)) for _ in range(64)]
        self.n_weights = 16
        self.w_size, self.w_site = 1 << 20, 7
        # fixed addresses: weights then slots, packed into 20 MiB segments
        self.addr, top, self.segs = [], SEG_SIZE, []
        for size in [self.w_size] * self.n_weights + self.slot_size:
            if top + size > SEG_SIZE:
                self.segs.append(ADDR_BASE + len(self.segs) * (64 << 20))
                top = 0
            self.addr.append(self.segs[-1] + top)
            top += size
        self.us = BASE_US
        self.annotations = []
        self.steps = 0

    def frames(self, site, pickler):
        """The site's last list again (a memo reference) or a fresh copy, at random; a list
        replaced is forgotten by the pickler (no later entry refers to it)."""
        last = self.last_list[site]
        if last is not None and self.rnd.random() < 0.5:
            return last
        if last is not None:
            pickler.forget(last)
        self.last_list[site] = list(self.sites[site])
        return self.last_list[site]

    def trace(self, pickler, size):
        """(entry, its call site), step after step until the file reaches size bytes."""

        def entry(action, addr, nbytes, site):
            self.us += 2
            return {"action": action, "addr": addr, "size": nbytes, "stream": 0,
                    "time_us": self.us, "frames": self.frames(site, pickler)}, site

        for s in self.segs:
            yield entry("segment_alloc", s, SEG_SIZE, self.w_site)
        for i in range(self.n_weights):
            yield entry("alloc", self.addr[i], self.w_size, self.w_site)
        base = self.n_weights
        while pickler.written + len(pickler.buf) < size:
            self.steps += 1
            self.us += 5
            self.annotations.append({"device": 0, "stage": "START",
                                     "name": f"ProfilerStep#{self.steps}", "time_us": self.us})
            for i, sz in enumerate(self.slot_size):
                yield entry("alloc", self.addr[base + i], sz, self.slot_site[i])
            for i, sz in enumerate(self.slot_size):
                yield entry("free_requested", self.addr[base + i], sz, self.free_site[i])
                yield entry("free_completed", self.addr[base + i], sz, self.free_site[i])
            self.us += 5
            self.annotations.append({"device": 0, "stage": "END",
                                     "name": f"ProfilerStep#{self.steps}", "time_us": self.us})

    def segments(self):
        """The segments at the end: the weights alive, the slots cached (inactive)."""
        out = []
        for s in self.segs:
            blocks = []
            for i, a in enumerate(self.addr):
                if s <= a < s + SEG_SIZE:
                    live = i < self.n_weights
                    size = self.w_size if live else self.slot_size[i - self.n_weights]
                    blocks.append({"address": a, "size": size,
                                   "requested_size": size if live else 0,
                                   "state": "active_allocated" if live else "inactive",
                                   "frames": self.sites[self.w_site] if live else []})
            active = sum(b["size"] for b in blocks if b["state"] != "inactive")
            out.append({"device": 0, "address": s, "total_size": SEG_SIZE,
                        "allocated_size": active, "active_size": active,
                        "requested_size": active, "stream": 0, "segment_type": "large",
                        "segment_pool_id": POOL_ID, "is_expandable": False,
                        "frames": self.sites[self.w_site], "blocks": blocks})
        return out


def write_stream(path, size, oracle, selfcheck=False, seed=20):
    """Streams the big loop to path, feeding oracle as it goes. With selfcheck, also keeps
    the object and checks that pickle.load gives it back (small sizes only)."""
    loop = BigLoop(seed)
    kept = [] if selfcheck else None
    with open(path, "wb") as f:
        p = StreamPickler(f)
        p.buf += b"}\x94("  # the root dict, memo 0, its items in one SETITEMS
        p.n_memo += 1
        p.save("segments")
        segs = loop.segments()  # fixed addresses: known before the trace, written first
        p.save(segs)
        p.save("device_traces")
        p.buf += b"]\x94"  # device_traces: one list, so a lone APPEND after it
        p.n_memo += 1

        def entries():
            for e, site in loop.trace(p, size):
                oracle.entry(0, e, cache=site)
                if kept is not None:
                    kept.append(e)
                yield e

        p.stream_list(entries())
        p.buf += b"a"
        p.save("allocator_settings")
        p.save(ALLOCATOR_SETTINGS)
        p.save("external_annotations")
        p.save(loop.annotations)
        p.buf += b"u"
        p.stop()
    for a in loop.annotations:
        oracle.annotation(a)
    oracle.finish(segs)
    if selfcheck:
        want = {"segments": segs, "device_traces": [kept],
                "allocator_settings": ALLOCATOR_SETTINGS,
                "external_annotations": loop.annotations}
        with open(path, "rb") as f:
            got = pickle.load(f)
        if got != want:
            sys.exit("make_snapshot: selfcheck: pickle.load does not give the object back")
        import pickletools  # its dis() checks the memo and the stack as it goes
        with open(path, "rb") as f, open(os.devnull, "w") as null:
            pickletools.dis(f, out=null)
    return loop


# ------------------------------------------------------------------------------------------

SCENARIOS = {
    "loop": scenario_loop,
    "ringcut": scenario_ringcut,
    "nohistory": scenario_nohistory,
    "empty": scenario_empty,
    "special": scenario_special,
    "expandable": scenario_expandable,
    "shared": scenario_shared,
    "deep": scenario_deep,
    "opcodes": scenario_opcodes,
    "stream": None,
}


def check_known(known, figures):
    """Figures the scenario knows by construction must be the oracle's too (a check of the
    oracle itself)."""
    for k, v in known.items():
        got = figures[k]
        if isinstance(v, dict):
            got = {kk: got.get(kk, 0) for kk in v}
        if got != v:
            sys.exit(f"make_snapshot: oracle disagrees with the scenario on {k}: {got} != {v}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    ap.add_argument("out")
    ap.add_argument("-p", "--protocol", type=int, default=4, choices=(2, 3, 4, 5))
    ap.add_argument("--size", type=int, default=1 << 20, help="stream: bytes to write")
    ap.add_argument("--json", help="where the expectations go (default OUT.json)")
    ap.add_argument("--no-events", action="store_true", help="figures only (big files)")
    ap.add_argument("--selfcheck", action="store_true", help="stream: pickle.load it back")
    args = ap.parse_args()
    oracle = Oracle(keep_events=not args.no_events)
    planted = None
    if args.scenario == "stream":
        if args.protocol != 4:
            ap.error("stream writes protocol 4 only")
        write_stream(args.out, args.size, oracle, args.selfcheck)
        known = {}
    elif args.scenario == "opcodes":
        data, snap, obj = scenario_opcodes(args)
        with open(args.out, "wb") as f:
            f.write(data)
        oracle.run(obj)
        known = snap.known
    else:
        obj, snap = SCENARIOS[args.scenario](args)
        with open(args.out, "wb") as f:
            pickle.dump(obj, f, protocol=args.protocol)
        oracle.run(obj)
        known, planted = snap.known, snap.planted
    figures = oracle.fig.result()
    check_known(known, figures)
    out = {"scenario": args.scenario, "protocol": args.protocol, "figures": figures,
           "unknown_actions": oracle.unknown, "planted": planted}
    if oracle.events is not None:
        out["events"] = oracle.events
    with open(args.json or args.out + ".json", "w") as f:
        json.dump(out, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
