#!/usr/bin/env python3
"""Writes hostile PyTorch snapshots into DIR and DIR/hostile.tsv, what the reader must do with
each (formats/torch-snapshot.md "The pickle subset"): one line per file, tab-separated,

    NAME  STATUS  LO  HI  WHY

NAME.pickle is in DIR; STATUS the exit status memscope-convert must give (3: invalid input,
one stderr line naming the file and an offset in LO..HI; 0: valid; "0|3": either, never a
crash, what the spec leaves open). Every file starts the way a snapshot does (PROTO, for 4 and
5 a FRAME, then EMPTY_DICT), so it is read as one. Built byte by byte (make_snapshot.Asm);
nothing here is ever unpickled by Python, the code-running ones least of all.

usage: make_hostile.py DIR
"""
import os
import pickle
import pickletools
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_snapshot as ms  # noqa: E402
from make_snapshot import Asm  # noqa: E402

BIG = 1 << 20  # values on the stack
MARKS = 1 << 16  # open marks
HELD = 1 << 23  # values held


class Cases:
    def __init__(self, d):
        self.dir = d
        self.rows = []

    def add(self, name, data, status, lo=None, hi=None, why=""):
        """lo..hi: where the error must be said to be (hi defaults to lo, and both to the
        whole file); "-": no offset to name."""
        with open(os.path.join(self.dir, name + ".pickle"), "wb") as f:
            f.write(data)
        if status == 3 and lo is None:
            lo, hi = 0, len(data)
        hi = lo if hi is None else hi
        self.rows.append((name, str(status), "-" if lo is None else str(lo), str(hi), why))

    def write(self):
        with open(os.path.join(self.dir, "hostile.tsv"), "w") as f:
            for r in self.rows:
                f.write("\t".join(r) + "\n")


def root(protocol=2):
    """PROTO, the root dict (memo 0) and the MARK of its items, as pickle starts a snapshot."""
    return Asm(protocol).empty_dict().binput().mark()


def keyed(key="segments"):
    """root() and a first key, memoized (memo 1)."""
    return root().binunicode(key).binput()


def with_segments(a):
    """An empty segments list and one annotation as the next items: a snapshot has segments or
    device_traces, and one without any record is refused as empty."""
    a.binunicode("segments").empty_list()
    return with_annotation(a)


def with_annotation(a):
    """external_annotations holding one annotation as the next item."""
    a.binunicode("external_annotations").empty_list().empty_dict().mark()
    a.binunicode("device").binint1(0).binunicode("stage").binunicode("START")
    a.binunicode("name").binunicode("x").binunicode("time_us").binint1(1)
    return a.setitems().append()


def framed(body):
    """A protocol 4 file: PROTO, one FRAME holding body (which starts with EMPTY_DICT)."""
    return Asm(4).frame(body).bytes()


def refused_opcodes(c):
    """Every opcode outside the subset, right after the first key: refused at its offset. The
    code-running ones first (GLOBAL then REDUCE: os.system("ls") as protocol 2 writes it)."""
    a = keyed().here("bad").op(b"c", b"posix\nsystem\n").binput().binunicode("ls").tuple1()
    a.op(b"R").binput().setitems().stop()
    c.add("global_reduce", a.bytes(), 3, a.marks["bad"], why="GLOBAL posix system + REDUCE")
    a = keyed().empty_tuple().empty_tuple().here("bad").op(b"R").setitems().stop()
    c.add("reduce", a.bytes(), 3, a.marks["bad"], why="REDUCE")
    # protocol 4's STACK_GLOBAL, inside a frame
    a = Asm(4)
    a.b = bytearray()
    a.empty_dict().memoize().mark().short_binunicode("segments").memoize()
    a.short_binunicode("os").memoize().short_binunicode("system").memoize()
    a.here("bad").op(b"\x93").memoize().short_binunicode("ls").memoize().tuple1().op(b"R")
    a.setitems().stop()
    c.add("stack_global", framed(bytes(a.b)), 3, 11 + a.marks["bad"], why="STACK_GLOBAL")
    others = [
        ("build", b"b"), ("inst", b"ios\nsystem\n"), ("obj", b"o"), ("newobj", b"\x81"),
        ("newobj_ex", b"\x92"), ("ext1", b"\x82\x01"), ("ext2", b"\x83\x01\x00"),
        ("ext4", b"\x84\x01\x00\x00\x00"), ("persid", b"Pid\n"), ("binpersid", b"Q"),
        ("text_int", b"I1\n"), ("text_long", b"L1L\n"), ("text_string", b"S'a'\n"),
        ("text_unicode", b"Va\n"), ("text_float", b"F1.5\n"), ("text_put", b"p1\n"),
        ("text_get", b"g0\n"), ("empty_set", b"\x8f"), ("additems", b"\x90"),
        ("frozenset", b"\x91"), ("next_buffer", b"\x97"), ("readonly_buffer", b"\x98"),
        ("opcode_ff", b"\xff"), ("opcode_00", b"\x00"), ("proto_7", b"\x80\x07"),
        ("proto_1", b"\x80\x01"),
    ]
    for name, code in others:
        a = keyed().here("bad").op(code).none().setitems().stop()
        c.add(name, a.bytes(), 3, a.marks["bad"], why=f"opcode {code[:1].hex()} outside the subset")


def memo_cases(c):
    a = keyed().here("bad").binget(7).setitems().stop()
    c.add("binget_never_put", a.bytes(), 3, a.marks["bad"], why="BINGET 7, memo 0..1")
    a = keyed().here("bad").long_binget(0x7FFFFFFF).setitems().stop()
    c.add("long_binget_never_put", a.bytes(), 3, a.marks["bad"], why="LONG_BINGET 2^31-1")
    a = keyed().empty_list().here("bad").binput(5).setitems().stop()
    c.add("binput_out_of_order", a.bytes(), 3, a.marks["bad"], why="BINPUT 5 when 2 is next")
    a = keyed().empty_list().here("bad").long_binput(0xFFFFFFFF).setitems().stop()
    c.add("long_binput_huge", a.bytes(), 3, a.marks["bad"], why="LONG_BINPUT 2^32-1")
    # BINPUT of an index already put is allowed (pickle's memo is a dict): overwriting memo 1
    a = keyed().empty_list().binput(1).binunicode("device_traces").binget(1)
    with_annotation(a).setitems().stop()
    c.add("binput_again", a.bytes(), 0, why="BINPUT 1 twice (allowed: an existing index)")
    # a flood of memo entries for one value: the spec bounds values held, not memo slots
    a = keyed().none()
    a.b += b"\x94" * (HELD + 16)
    a.setitems().stop()
    c.add("memo_flood", a.bytes(), "0|3", why=f"{HELD + 16} MEMOIZE of one None")


def frame_cases(c):
    body = Asm(4)
    body.b = bytearray()
    body.empty_dict().memoize().mark().short_binunicode("segments").memoize().empty_list()
    data = b"\x80\x04\x95" + struct.pack("<Q", 4096) + bytes(body.b)
    # said at the FRAME, or where the file ends inside it
    c.add("frame_cut", data, 3, 2, len(data), why="FRAME of 4096 bytes, 30 in the file")
    data = b"\x80\x04\x95" + struct.pack("<Q", 1 << 33) + bytes(body.b)
    c.add("frame_huge", data, 3, 2, why="FRAME of 2^33 bytes")
    whole = pickle.dumps(ms.scenario_empty(None)[0], protocol=4)
    body = whole[11:]
    # the first frame ends at an opcode boundary past 40 bytes, the second is cut
    split = next(pos for _, _, pos in pickletools.genops(body) if pos >= 40)
    data = (b"\x80\x04\x95" + struct.pack("<Q", split) + body[:split] + b"\x95" +
            struct.pack("<Q", len(body) - split + 100) + body[split:])
    c.add("frame_cut_second", data, 3, 11 + split, len(data),
          why="the second FRAME cut by the end (its STOP inside)")
    # an opcode whose operand runs past its frame's end while the file goes on
    a = Asm(4)
    a.b = bytearray()
    a.empty_dict().memoize().mark().short_binunicode("segments").memoize()
    a.here("bad").short_binunicode("abcdef").memoize().setitems().stop()
    inner = bytes(a.b)
    cut = a.marks["bad"] + 3
    data = (b"\x80\x04" + b"\x95" + struct.pack("<Q", cut) + inner[:cut] + b"\x95" +
            struct.pack("<Q", len(inner) - cut) + inner[cut:])
    c.add("opcode_across_frames", data, "0|3", why="SHORT_BINUNICODE split by a FRAME")


def length_cases(c):
    """Lengths past the limits or the file: refused at the opcode."""
    for name, code in [("binunicode8_huge", b"\x8d" + struct.pack("<Q", 1 << 40)),
                       ("binunicode_huge", b"X" + struct.pack("<I", 0xFFFFFFFF)),
                       ("binunicode_64mib", b"X" + struct.pack("<I", (64 << 20) + 1)),
                       ("binbytes8_huge", b"\x8e" + struct.pack("<Q", 1 << 62)),
                       ("bytearray8_huge", b"\x96" + struct.pack("<Q", 1 << 63)),
                       ("binstring_negative", b"T" + struct.pack("<i", -1)),
                       ("long4_negative_len", b"\x8b" + struct.pack("<i", -4)),
                       ("short_binunicode_cut", b"\x8c\xff" + b"abc"),
                       ("binint_cut", b"J\x01\x02")]:
        a = keyed().here("bad").op(code)
        if not name.endswith("_cut"):
            a.op(b"abc").setitems().stop()
        c.add(name, a.bytes(), 3, a.marks["bad"], why=name.replace("_", " "))
    # the same inside a protocol 4 frame that ends with the file
    a = Asm(4)
    a.b = bytearray()
    a.empty_dict().memoize().mark().short_binunicode("segments").memoize()
    a.here("bad").op(b"\x8d" + struct.pack("<Q", 1 << 40) + b"abc")
    c.add("binunicode8_huge_framed", framed(bytes(a.b)), 3, 11 + a.marks["bad"],
          why="BINUNICODE8 of 2^40 bytes in a frame")
    # a 9-byte integer where a number is read (a trace entry's size), and where none is
    a = root().binunicode("device_traces").empty_list().empty_list().here("entry").empty_dict()
    a.mark().binunicode("action").binunicode("alloc").binunicode("addr").long1(ms.ADDR_BASE)
    a.binunicode("size").here("bad").long1(1 << 64, 9).binunicode("stream").binint1(0)
    a.binunicode("time_us").long1(ms.BASE_US).here("end").setitems().append().append()
    a.setitems().stop()
    c.add("long1_wide_size", a.bytes(), 3, a.marks["entry"], a.marks["end"] + 1,
          why="a trace entry's size in 9 bytes (said at the entry, the value, or its end)")
    a = with_segments(keyed("memscope_ignores_this").long1(1 << 70)).setitems().stop()
    c.add("long1_wide_ignored", a.bytes(), 0, why="9-byte LONG1 where no number is read")
    a = keyed("memscope_ignores_this").here("bad").long4(1 << 64, 9)
    with_segments(a).setitems().stop()
    c.add("long4_wide", a.bytes(), 3, a.marks["bad"], why="LONG4 of 9 bytes (at most 8)")


def stack_cases(c):
    a = keyed().here("first")
    a.b += b"]" * 1000000
    c.add("deep_open_lists", a.bytes(), 3, len(a.b) - 1, len(a.b),
          why="10^6 EMPTY_LIST never closed, no STOP")
    # 10^6 lists nested in each other under a key memscope ignores: valid, and no recursion
    # may walk them
    a = keyed("memscope_ignores_this")
    a.b += b"]" * 1000000 + b"a" * 999999
    with_segments(a).setitems().stop()
    c.add("deep_nested_ignored", a.bytes(), 0, why="a list nested 10^6 deep, ignored")
    a = keyed().empty_list().mark().here("first")
    a.b += b"N" * (2 * BIG)
    a.appends().setitems().stop()
    at = a.marks["first"] + BIG - 3  # root, key, list, then the 2^20+1th value
    c.add("stack_flood", a.bytes(), 3, at - 16, at + 16, why="2^21 NONE on the stack")
    a = keyed().here("first")
    a.b += b"(" * (MARKS + 16)
    at = a.marks["first"] + MARKS - 1  # the root's MARK, then the 2^16+1th
    c.add("mark_flood", a.bytes(), 3, at - 4, at + 4, why="2^16+16 open MARKs")
    a = keyed("allocator_settings").empty_list()
    n = HELD + (1 << 16)
    first = len(a.b)
    for i in range(0, n, 1000):
        a.b += b"(" + b"]" * min(1000, n - i) + b"e"
    a.setitems().stop()
    c.add("values_flood", a.bytes(), 3, first + HELD - (1 << 16), len(a.b),
          why=f"{n} lists held in allocator_settings")
    # stack misuse: each refused at its opcode
    for name, build in [
        ("append_to_dict", lambda a: a.empty_dict().none().here("bad").append()),
        ("setitem_on_list", lambda a: a.empty_list().none().none().here("bad").setitem()),
        ("setitems_odd", lambda a: a.empty_dict().mark().none().none().none().here("bad")
         .setitems()),
        ("appends_no_mark", lambda a: a.none().here("bad").appends()),
        ("tuple3_underflow", lambda a: a.binint1(1).here("bad").tuple3()),
        ("dict_odd", lambda a: a.mark().none().here("bad").dict()),
    ]:
        a = Asm(2).empty_dict().binput()
        build(a)
        a.setitem().stop()
        c.add(name, a.bytes(), 3, a.marks["bad"], why=name.replace("_", " "))
    a = Asm(2).empty_dict().pop().here("bad").pop().stop()
    c.add("pop_empty", a.bytes(), 3, a.marks["bad"], why="POP on an empty stack")
    a = Asm(2).empty_dict().here("bad").pop_mark().stop()
    c.add("pop_mark_none", a.bytes(), 3, a.marks["bad"], why="POP_MARK without a MARK")
    a = Asm(2).empty_dict().pop().here("bad").dup().stop()
    c.add("dup_empty", a.bytes(), 3, a.marks["bad"], why="DUP on an empty stack")
    a = Asm(2).empty_dict().pop().here("bad").stop()
    c.add("stop_empty", a.bytes(), 3, a.marks["bad"], why="STOP on an empty stack")
    a = Asm(2).empty_dict().pop().empty_list().stop()
    c.add("root_is_list", a.bytes(), 3, "-", "-",
          why="the value at STOP is a list, not the dict (no offset to name)")


def end_cases(c):
    valid = pickle.dumps(ms.scenario_empty(None)[0], protocol=2)
    c.add("bytes_after_stop", valid + b"\x00junk", 3, len(valid), why="bytes after STOP")
    c.add("two_pickles", valid + valid, 3, len(valid), why="a second pickle after STOP")
    c.add("no_stop", valid[:-1], 3, len(valid) - 2, len(valid) - 1, why="no STOP")


def type_cases(c):
    """Values of the wrong type where the spec names a shape: either refused (3) or ignored
    (0); what matters is no crash and, when refused, one line."""
    def snap(**over):
        s = {"segments": [], "device_traces": [[]], "allocator_settings": {},
             "external_annotations": []}
        s.update(over)
        return pickle.dumps(s, protocol=4)

    ent = lambda **kv: dict({"action": "alloc", "addr": ms.ADDR_BASE, "size": 512, "stream": 0,
                             "time_us": ms.BASE_US, "frames": []}, **kv)
    seg = {"device": 0, "address": ms.ADDR_BASE, "total_size": 2 << 20, "segment_type": "large",
           "frames": [], "blocks": []}
    for name, data in [
        ("entry_not_dict", snap(device_traces=[[1, "x", None]])),
        ("addr_is_str", snap(device_traces=[[ent(addr="0x10")]])),
        ("size_negative", snap(device_traces=[[ent(size=-5)]])),
        ("time_negative", snap(device_traces=[[ent(time_us=-1)]])),
        ("action_missing", snap(device_traces=[[{"addr": 1, "size": 2}]])),
        ("action_not_str", snap(device_traces=[[ent(action=7)]])),
        ("frames_of_ints", snap(device_traces=[[ent(frames=[1, 2])]])),
        ("frames_not_list", snap(device_traces=[[ent(frames="x.py")]])),
        ("frame_line_str", snap(device_traces=[[ent(frames=[{"filename": "a.py", "line": "x",
                                                           "name": "f"}])]])),
        ("frame_empty", snap(device_traces=[[ent(frames=[{}])]])),
        ("segment_empty", snap(segments=[{}])),
        ("segment_device_huge", snap(segments=[dict(seg, device=1 << 40)])),
        ("segment_device_negative", snap(segments=[dict(seg, device=-3)])),
        ("block_no_frames", snap(segments=[dict(seg, blocks=[
            {"address": ms.ADDR_BASE, "size": 512, "requested_size": 1,
             "state": "active_allocated"}])])),
        ("block_history_empty", snap(segments=[dict(seg, blocks=[
            {"address": ms.ADDR_BASE, "size": 512, "requested_size": 1,
             "state": "active_allocated", "history": []}])])),
        ("annotation_bad_stage", snap(external_annotations=[
            {"device": 0, "stage": "MIDDLE", "name": "x", "time_us": 1}])),
        ("annotation_empty", snap(external_annotations=[{}])),
        ("key_not_str", pickle.dumps({(1, 2): 3, "segments": [], "device_traces": []},
                                     protocol=4)),
        ("many_devices", snap(device_traces=[[]] * 100000)),
        ("oom_no_device_free", snap(device_traces=[[ent(action="oom")]])),
    ]:
        c.add(name, data, "0|3", why=name.replace("_", " "))


def value_at(data, key):
    """The offset of the opcode that begins the value of the root dict's key in a pickle that
    Python wrote (the first opcode after the key's string and its memo opcode)."""
    ops = list(pickletools.genops(data))
    i = next(i for i, (op, arg, _) in enumerate(ops) if arg == key)
    while ops[i + 1][0].name in ("MEMOIZE", "BINPUT", "LONG_BINPUT"):
        i += 1
    return ops[i + 1][2]


def shape_cases(c):
    """device_traces (and segments, external_annotations) of another shape than a list: exit 3
    naming the offset of the value (issue 35); a list shared by two devices is read for both
    (make_snapshot.py's "shared"), unless it is too long to be kept: then refused."""
    def snap(**over):
        s = {"segments": [], "device_traces": [[]], "allocator_settings": {},
             "external_annotations": []}
        s.update(over)
        return pickle.dumps(s, protocol=4)

    ent = {"action": "alloc", "addr": ms.ADDR_BASE, "size": 512, "stream": 0,
           "time_us": ms.BASE_US, "frames": []}
    for name, key, value in [
        ("traces_not_list", "device_traces", 5),
        ("traces_none", "device_traces", None),
        ("traces_dict", "device_traces", {0: [ent]}),
        ("traces_tuple", "device_traces", ([ent],)),
        ("trace_not_list", "device_traces", [5, None]),
        ("trace_dict", "device_traces", [[ent], {"device": 1}]),
        ("segments_not_list", "segments", "none"),
        ("annotations_not_list", "external_annotations", {"stage": "START"}),
    ]:
        data = snap(**{key: value})
        at = value_at(data, key)
        c.add(name, data, 3, at, why=f"{key} = {value!r}: not a list")
    # a trace list shared by two devices, longer than the entries kept (2^16): refused
    long = [dict(ent, addr=ms.ADDR_BASE + 512 * (i % 2), action=("alloc", "free_completed")[i % 2])
            for i in range((1 << 16) + 2)]
    c.add("shared_trace_too_long", snap(device_traces=[long, long]), 3,
          why="one list of 2^16+2 entries for two devices (a memo reference)")


def truncations(c):
    """A small real-shaped snapshot cut after every 97th byte, at protocols 2 and 4: each cut
    is invalid input (an offset within the file), never a crash."""
    obj = ms.scenario_loop(None)[0]
    for p in (2, 4):
        whole = pickle.dumps(obj, protocol=p)
        for n in range(97, len(whole), 97):
            c.add(f"cut_p{p}_{n:06d}", whole[:n], 3, 0, n, why=f"protocol {p} cut at {n}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[-1])
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    c = Cases(d)
    refused_opcodes(c)
    memo_cases(c)
    frame_cases(c)
    length_cases(c)
    stack_cases(c)
    end_cases(c)
    type_cases(c)
    shape_cases(c)
    truncations(c)
    c.write()


if __name__ == "__main__":
    main()
