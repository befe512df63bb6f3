#!/usr/bin/env python3
"""The inputs of the memory-over-time page's cases (tests/cli/cases/memory_html.test), each the
same on every run (fixed seeds).

Usage: memory_html_gen.py run OUT        a training run: two ranks on two devices, PTA and HAL,
                                         mstx steps, ops on two threads, owner tags, Python and C
                                         stacks, rows in the reference's order (a MALLOC with its
                                         FREE); more points than pixels
       memory_html_gen.py ranks          job/rank0/ ... job/rank3/memscope_dump.csv: ranks of one
                                         job, the same file name and the same pid
       memory_html_gen.py ctr OUT NOPLAN the profiler's samples (COUNTER rows of memory_record,
                                         npu_mem, npu_module_mem) beside live bytes, rows out of
                                         time order; OUT ends in a PLAN row (no time), NOPLAN not
"""
import sys

if sys.argv[1] == "run":
    import random, sys
    random.seed(7)
    h = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)"
    out = [h]
    for rank, pid in enumerate((4100, 4200)):
        rid, aid, ts, live, pending = 0, 0, 1_000_000_000 + rank * 3_000, {}, []
        def row(*f):
            global rid
            rid += 1
            out.append(",".join([str(rid)] + [str(x) for x in f]))
        for step in range(1, 13):
            ts += 1000
            row("MSTX", "Range_start", '"step start"', ts, pid, pid, rank, "N/A", "", "", "")
            for op in range(60):
                tid = pid if op % 3 else pid + 1
                name = f"aten.op{op % 7}"
                ts += 500
                row("OP_LAUNCH", "ATEN_START", name, ts, pid, tid, rank, "N/A", "", "", "")
                for _ in range(random.randrange(3)):
                    ts += 100
                    aid += 1
                    size = random.choice((512, 4096, 1 << 20, 3 << 20)) * (1 + step % 3)
                    pool = "HAL" if random.random() < 0.1 else "PTA"
                    owner = random.choice(("", "", "PTA@model@weight", "PTA@optimizer"))
                    py = random.choice(("", "", f"train.py({op}): forward\nmain.py(3): <module>"))
                    c = random.choice(("", "", "/usr/lib/libtorch_npu.so(_ZN6c10_npu3fooEv+0x1c) [0x7f3a]"))
                    attr = f'"{{allocation_id:{aid},addr:0x{aid:x}000,size:{size}' + \
                           (f",owner:{owner}" if owner else "") + '}"'
                    m = [ts, pid, tid, rank, f"0x{aid:x}000", attr, f'"{py}"' if py else "",
                         f'"{c}"' if c else ""]
                    free_at = ts + random.randrange(200, 90000) if random.random() < 0.93 else None
                    pending.append((free_at, "MALLOC", pool, m, aid))
                ts += 500
                row("OP_LAUNCH", "ATEN_END", name, ts, pid, tid, rank, "N/A", "", "", "")
            ts += 1000
            row("MSTX", "Range_end", "Range end", ts, pid, pid, rank, "N/A", "", "", "")
        # the reference's order: each block's MALLOC written with its FREE
        for free_at, _, pool, m, a in pending:
            row("MALLOC", pool, "N/A", *m)
            if free_at:
                attr = m[4 + 1].split(",owner")[0].rstrip('}"') + '}"'
                row("FREE", pool, "N/A", free_at, m[1], m[2], m[3], m[4], attr, "", "")
    open(sys.argv[2], "w").write("\n".join(out) + "\n")
elif sys.argv[1] == "ranks":
    import os, random
    random.seed(3)
    h = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)"
    for rank in range(4):
        os.makedirs(f"job/rank{rank}", exist_ok=True)
        out, ts, rid, live = [h], 2_000_000_000 + rank * 1700, 0, []
        for step in range(1, 6):
            ts += 1000; rid += 1
            out.append(f'{rid},MSTX,Range_start,"step start",{ts},900,900,{rank},N/A,,,')
            for k in range(40):
                ts += 10_000; rid += 1
                if live and random.random() < 0.45:
                    a = live.pop(random.randrange(len(live)))
                    out.append(f'{rid},FREE,PTA,N/A,{ts},900,900,{rank},0x{a:x}0,"{{allocation_id:{a}}}",,')
                else:
                    live.append(rid)
                    size = random.choice((1 << 20, 3 << 20, 64 << 20)) * (rank + 1)
                    out.append(f'{rid},MALLOC,PTA,N/A,{ts},900,900,{rank},0x{rid:x}0,"{{allocation_id:{rid},size:{size}}}",,')
            ts += 1000; rid += 1
            out.append(f'{rid},MSTX,Range_end,"Range end",{ts},900,900,{rank},N/A,,,')
        open(f"job/rank{rank}/memscope_dump.csv", "w").write("\n".join(out) + "\n")
elif sys.argv[1] == "ctr":
    import os, random, sys
    rnd = random.Random(11)
    h = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)"
    rows, rid, ts, used, live = [h], 0, 1_736_405_443_000_000_000, 0, []
    def row(ev, typ, name, attr, dev=0, tid="N/A", ptr="N/A", t=None):
        global rid
        rid += 1
        rows.append(f'{rid},{ev},{typ},{name},{ts if t is None else t},100,{tid},{dev},{ptr},"{{{attr}}}",,')
    for step in range(1, 5):
        row("MSTX", "Range_start", '"step start"', "", tid=100)
        for i in range(150):
            ts += rnd.randrange(5_000, 60_000)
            if live and rnd.random() < 0.45:
                a, size = live.pop(rnd.randrange(len(live)))
                used -= size
                row("FREE", "PTA", "N/A", f"allocation_id:{a}", tid=100, ptr=hex(a))
            else:
                size = rnd.choice((1 << 20, 4 << 20, 512 << 10)) * step
                live.append((rid + 1, size))
                used += size
                row("MALLOC", "PTA", "N/A", f"allocation_id:{rid + 1},size:{size}", tid=100, ptr=hex(rid + 1))
            row("COUNTER", "POOL", "PTA", f"used:{used},total:{512 << 20},active:{used + 4096}")
            row("COUNTER", "POOL", "PTA+GE", f"used:{used + (70 << 20)},total:{582 << 20}")
            if i % 10 == 0:
                row("COUNTER", "POOL", "APP", f"total:{(900 << 20) + rnd.randrange(50 << 20)}")
                for n in ("APP/DDR", "APP/HBM", "APP/Memory"):
                    row("COUNTER", "NPU_MEM", n, f"used:{rnd.randrange(1 << 30)}")
                for m in range(30):  # modules: 27 above 0, 3 never
                    row("COUNTER", "MODULE", f"M{m:02d}", f"total:{rnd.randrange(1 << 20) * m if m > 2 else 0}")
        row("MSTX", "Range_end", "Range end", "", tid=100)
    os.makedirs("noplan", exist_ok=True)
    # rows out of time order, as a profiler folder delivers its files
    body = rows[1:]
    rnd.shuffle(body)
    open(sys.argv[3], "w").write("\n".join([h] + body) + "\n")
    rows = [h] + body
    row("PLAN", "GE", "op", "size:100,graph:1", dev="cpu", t=0)
    open(sys.argv[2], "w").write("\n".join(rows) + "\n")
else:
    sys.exit(__doc__)
