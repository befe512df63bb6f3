#!/bin/sh
# Golden CLI cases of memscope-export --format html, the memory-over-time page: on every sample,
# a generated training run and hostile input, the page against an independent reading of the
# inputs (check_memory_html.py: curves, peak, steps, owners, the profiler's samples, nothing
# loaded), its hover in headless Chromium, its size on a big input, and the options it takes. Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
E="$BIN/memscope-export"
TOOL=$E
CHECK="python3 $SRC/tests/cli/check_memory_html.py"
cd "$WORK" || exit 1
T="$SRC/testdata"
cp "$T"/baseline.csv "$T"/leaks.csv "$T"/leaks/steps_mstx.csv "$T"/leaks/steps_system.csv \
	"$T"/leaks/late.csv "$T"/leaks/mark_legacy.csv "$T"/db/hostile.csv "$T"/export/peak.csv \
	"$T"/export/ops.csv "$T"/memscope_dump_20250428113810.csv \
	"$T"/memscope_dump_20250428113811.csv "$T"/stacks_crlf.csv .

# every sample: the page holds what an independent reading of the input gives
for f in baseline leaks steps_mstx steps_system late mark_legacy hostile peak ops \
	memscope_dump_20250428113810 stacks_crlf; do
	expect_status 0 "$E" -q --format html -o $f.html $f.csv
	expect_status 0 $CHECK $f.html $f.csv
done
# the pointer over the peak shows its time, curve and bytes; a legend click hides a curve
expect_status 0 $CHECK --browser baseline.html baseline.csv
expect_status 0 "$E" -q --format html --pool hal,pta -o hal_pta.html steps_mstx.csv
expect_status 0 $CHECK --pool hal,pta --browser hal_pta.html steps_mstx.csv
grep -q '<rect class="band" data-step="3" ' hal_pta.html && grep -c '<path class="curve"' hal_pta.html |
	grep -qx 2 && ok || bad "hal_pta.html: no step 3 band or not two curves"
# HAL is left out by default beside PTA, and the page says so
grep -q 'pools counted: PTA (HAL left out' steps_mstx.html && ok || bad "steps_mstx.html: pools"
# SYSTEM STEP steps, and steps that came out of time order (late.csv)
grep -q '<g id="steps" data-count="4" ' steps_system.html && ok || bad "steps_system.html: steps"
grep -q '<g id="steps" data-count="4" ' late.html && ok || bad "late.html: steps"

# several inputs: each counts from its own first row (as memscope-leaks and --from); curves are
# named after their input
expect_status 0 "$E" -q --format html -o two.html baseline.csv leaks.csv
expect_status 0 $CHECK --browser two.html baseline.csv leaks.csv
grep -q "seconds after each input's first row" two.html && grep -q 'process 3290097, leaks.csv<' two.html &&
	ok || bad "two.html: clocks or names"
expect_status 0 "$E" -q -o legacy.html memscope_dump_20250428113810.csv \
	memscope_dump_20250428113811.csv
expect_status 0 $CHECK legacy.html memscope_dump_20250428113810.csv \
	memscope_dump_20250428113811.csv

# the origin is the input's first row of any kind, not its first allocation, and times are
# memscope_seconds_text's (truncated to the microsecond, as memscope-leaks writes them): a time
# read on the page given to --from starts a window at the peak
H='ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)'
printf '%s\n' "$H" '1,OP_LAUNCH,ATEN_START,x,1000000000,7,7,0,N/A,,,' \
	'2,MALLOC,PTA,N/A,1100000000,7,7,0,0x1000,"{allocation_id:1,size:100}",,' \
	'3,MALLOC,PTA,N/A,1475869900,7,7,0,0x2000,"{allocation_id:2,size:400}",,' \
	'4,FREE,PTA,N/A,1600000000,7,7,0,0x2000,"{allocation_id:2}",,' \
	'5,MALLOC,PTA,N/A,1700000000,7,7,0,0x3000,"{allocation_id:3,size:50}",,' >origin.csv
expect_status 0 "$E" -o origin.html origin.csv
expect_err_line '^memscope-export: origin.html: live peak 500 B of PTA on device 0 of process 7 at 0.475869 s; 1 track$'
expect_status 0 $CHECK --browser origin.html origin.csv
grep -q '>peak 500 B at 0.475869 s<' origin.html && grep -q '>0.400000 s<' origin.html &&
	ok || bad "origin.html: peak label or axis ticks"
expect_status 0 "$E" -q --from 0.475869 -o from_peak.html origin.csv
expect_status 0 $CHECK --from 0.475869 from_peak.html origin.csv
grep -q '<g id="peak" data-track="0" data-bytes="500" data-ts-ns="1475869900"' from_peak.html &&
	ok || bad "from_peak.html: the window from the page's peak time misses the peak"

# the format comes from -o's extension; the summary names the peak; standard output works
expect_status 0 "$E" -o ext.html peak.csv
head -c 15 ext.html | grep -qx '<!DOCTYPE html>' && ok || bad "ext.html: not HTML"
expect_err_line '^memscope-export: ext.html: live peak 300 B of PTA on device 0 of process 7 at 0.000000 s; 1 track$'
expect_status 0 "$E" -q --format html peak.csv
expect_same "$WORK/out" ext.html
# options that do nothing for a page are usage errors
for opt in '--metric peak' '--group-by op' '--stack python'; do
	expect_status 2 "$E" -q --format html $opt peak.csv
done
expect_status 2 "$E" -q --format html --resolution 1us peak.csv
expect_err_line '^memscope-export: --resolution does nothing for --format html$'


# a generated training run: two ranks on two devices, PTA and HAL, mstx steps, ops on two
# threads, owner tags, Python and C stacks, rows in the reference's order (a MALLOC with its
# FREE); more points than pixels, so every curve is cut to columns
python3 - run.csv <<'X'
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
open(sys.argv[1], "w").write("\n".join(out) + "\n")
X
expect_status 0 "$E" -q --format html -o run.html run.csv
expect_status 0 $CHECK --browser run.html run.csv
expect_status 0 "$E" -q --format html --pool hal,pta -o run_all.html run.csv
expect_status 0 $CHECK --pool hal,pta run_all.html run.csv
grep -c '<path class="curve"' run_all.html | grep -qx 4 && grep -q 'named by' run.html &&
	grep -q '>owner tag<' run.html && ok || bad "run_all.html: curves or owners"

# the checker fails a page that lies: a peak one byte off, a curve that misses its peak
sed 's/<g id="peak" data-track="\([0-9]*\)" data-bytes="\([0-9]*\)"/<g id="peak" data-track="\1" data-bytes="\21"/' \
	run.html >lie1.html
expect_status 1 $CHECK lie1.html run.csv
python3 - run.html lie2.html <<'X'
import json, re, sys
s = open(sys.argv[1]).read()
m = re.search(r'(<script type="application/json" id="memscope-data">)(.*?)(</script>)', s, re.S)
d = json.loads(m.group(2))
v = d["curves"][0]["values"]
k = max(range(len(v)), key=lambda i: v[i] or 0)
v[k] -= 1
open(sys.argv[2], "w").write(s[: m.start(2)] + json.dumps(d) + s[m.end(2):])
X
expect_status 1 $CHECK lie2.html run.csv

# many processes: the 32 highest peaks are drawn, the page says how many more are not
python3 - many.csv <<'X'
import sys
h = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)"
rows = [h] + [f'1,MALLOC,PTA,N/A,{1000 + p},{100 + p},1,0,0x1000,"{{allocation_id:1,size:{1000 + p * 10}}}",,'
              for p in range(40)]
open(sys.argv[1], "w").write("\n".join(rows) + "\n")
X
expect_status 0 "$E" -q --format html -o many.html many.csv
expect_status 0 $CHECK many.html many.csv
grep -q '<p class="note" id="more-tracks" data-n="8">8 more tracks' many.html && ok ||
	bad "many.html: no note of the tracks not drawn"

# hostile names stay text: markup, quotes, invalid UTF-8 and control characters in owner tags,
# op names and frames, and in the input's name; nothing but the page's two scripts runs
python3 - '<b>&x".csv' <<'X'
import sys
h = b"ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)\n"
rows = [b'1,OP_LAUNCH,ATEN_START,</script><script>alert(1)</script>,100,7,7,0,N/A,,,',
        b'2,MALLOC,PTA,N/A,101,7,7,0,0x1000,"{allocation_id:1,size:64}",,',
        b'3,MALLOC,PTA,N/A,102,7,8,0,0x2000,"{allocation_id:2,size:32,owner:<img src=x>&amp;\xff\x01}",,',
        b'4,MALLOC,PTA,N/A,103,7,8,0,0x3000,"{allocation_id:3,size:16}","]]><!--\xef\xbf\xbe""q",']
open(sys.argv[1], "wb").write(h + b"\n".join(rows) + b"\n")
X
expect_status 0 "$E" -q --format html -o hostile2.html '<b>&x".csv'
expect_status 0 $CHECK hostile2.html '<b>&x".csv'
grep -q '&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;' hostile2.html &&
	grep -q '&lt;img src=x&gt;&amp;amp;? ' hostile2.html && grep -q '&lt;b&gt;&amp;x&quot;.csv' hostile2.html &&
	ok || bad "hostile2.html: names not escaped"

# no block with a size: a page that says so, no peak, no owners
printf '%s\n' 'ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)' \
	'1,OP_LAUNCH,ATEN_START,x,100,7,7,0,N/A,,,' >empty.csv
expect_status 0 "$E" --format html -o empty.html empty.csv
expect_err_line '^memscope-export: empty.html: no block with a size in the pools counted$'
expect_status 0 $CHECK empty.html empty.csv
grep -q 'no block with a size in the pools counted' empty.html && ok || bad "empty.html"
# a bad row is an error and leaves no page behind
printf '%s\n' 'ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)' \
	'1,MALLOC,PTA,N/A,12x,7,7,0,0x1,"{size:1}",,' >bad.csv
expect_status 3 "$E" -q --format html -o bad.html bad.csv
expect_absent bad.html

# the page's size follows the curves, not the rows: 4 times the rows, about the same size
python3 - big1.csv 25000 big4.csv 100000 <<'X'
import sys
h = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)"
for path, n in ((sys.argv[1], int(sys.argv[2])), (sys.argv[3], int(sys.argv[4]))):
    rows = [h]
    for i in range(n // 2):
        rows.append(f'{2 * i + 1},MALLOC,PTA,N/A,{1000 + 10 * i},7,7,0,0x{i:x}0,"{{allocation_id:{i + 1},size:{(i * 7919) % 100000 + 1}}}",,')
        rows.append(f'{2 * i + 2},FREE,PTA,N/A,{1000 + 10 * i + 15},7,7,0,0x{i:x}0,"{{allocation_id:{i + 1}}}",,')
    open(path, "w").write("\n".join(rows) + "\n")
X
expect_status 0 "$E" -q --format html -o big1.html big1.csv
expect_status 0 "$E" -q --format html -o big4.html big4.csv
expect_status 0 $CHECK big4.html big4.csv
s1=$(wc -c <big1.html) s4=$(wc -c <big4.html)
[ "$s4" -lt 100000 ] && [ "$s4" -lt $((s1 * 2)) ] && ok || bad "page sizes $s1 and $s4 bytes"

# windows (--step, --from, --to): each process's own step N, or [from, to) after the input's
# first row; curves start at their live bytes at the window's start, the peak and its owners
# are the window's, bands are clipped, the axis runs over the window
expect_status 0 "$E" -q --step 2 -o run_step2.html run.csv
expect_status 0 $CHECK --step 2 --browser --screenshot run_step2.png run_step2.html run.csv
grep -q '<g id="steps" data-count="1" ' run_step2.html && grep -q 'training step 2 of process' run_step2.html &&
	ok || bad "run_step2.html: bands"
expect_status 0 "$E" -q --from 0.0005 --to 0.0009 -o run_win.html run.csv
expect_status 0 $CHECK --from 0.0005 --to 0.0009 run_win.html run.csv
expect_status 0 "$E" -q --from 1000500000ns -o run_abs.html run.csv
expect_status 0 $CHECK --from 1000500000ns run_abs.html run.csv
expect_status 0 "$E" -q --step 3 -o mstx_step3.html steps_mstx.csv
expect_status 0 $CHECK --step 3 mstx_step3.html steps_mstx.csv
expect_status 0 "$E" -q --step 2 -o system_step2.html steps_system.csv
expect_status 0 $CHECK --step 2 system_step2.html steps_system.csv
# the counters' value at the window's start: 100 B live from 0.1 s, the window from 0.2 s
expect_status 0 "$E" -q --from 0.2 --to 0.65 -o origin_win.html origin.csv
expect_status 0 $CHECK --from 0.2 --to 0.65 origin_win.html origin.csv
grep -q '"from_ns":200000000,"span_ns":450000000,"curves":\[{"track":0,"values":\[100,' origin_win.html &&
	grep -q '<path class="curve" data-track="0" [^>]* d="M84.5 [0-9.]*H' origin_win.html &&
	ok || bad "origin_win.html: the curve does not start at 100 B"
# the peak within the window: up to 0.4 s the peak is the 100 B live since 0.1 s, at the start
expect_status 0 "$E" --from 0.2 --to 0.4 -o origin_early.html origin.csv
expect_err_line '^memscope-export: origin_early.html: live peak 100 B of PTA on device 0 of process 7 at 0.200000 s; 1 track$'
expect_status 0 $CHECK --from 0.2 --to 0.4 origin_early.html origin.csv
# the checker fails a page checked against another window
expect_status 1 $CHECK --from 0.2 --to 0.5 origin_early.html origin.csv
# bad windows, as for chrome-trace: usage errors exit 2, a window the input cannot give 3
expect_status 2 "$E" -q --from 0.4 --to 0.2 -o x.html origin.csv
expect_status 2 "$E" -q --step 1 --from 0.1 -o x.html steps_mstx.csv
expect_status 2 "$E" -q --from 0.9 --to 1000000000ns -o x.html origin.csv
expect_err_line '^memscope-export: origin.csv: the window ends before it starts'
expect_status 3 "$E" -q --from 5 -o x.html origin.csv
expect_err_line '^memscope-export: origin.csv: nothing in the window: the rows span 0.700000000 s$'
expect_status 3 "$E" -q --step 99 -o x.html steps_mstx.csv
expect_err_line '^memscope-export: steps_mstx.csv: no step 99: it has steps 1 to 4$'
expect_status 3 "$E" -q --step 1 -o x.html origin.csv
expect_absent x.html

# ranks of one job in rank0/ ... rank3/ with the same file name and the same pid: each named by
# the shortest path ending that tells them apart, in the legend, the title and the bands line
python3 - <<'X'
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
X
R="job/rank0/memscope_dump.csv job/rank1/memscope_dump.csv job/rank2/memscope_dump.csv job/rank3/memscope_dump.csv"
expect_status 0 "$E" -q -o ranks.html $R
expect_status 0 $CHECK --browser --screenshot ranks.png ranks.html $R
grep -q '<title>Live memory over time: rank0/memscope_dump.csv, rank1/memscope_dump.csv, rank2/memscope_dump.csv ...</title>' ranks.html &&
	grep -q 'process 900, rank3/memscope_dump.csv</td>' ranks.html &&
	grep -q 'training steps of process 900 of rank3/memscope_dump.csv' ranks.html &&
	ok || bad "ranks.html: inputs not told apart"
expect_status 0 "$E" -q --step 4 -o ranks_step4.html $R
expect_status 0 $CHECK --step 4 ranks_step4.html $R

# the peak's label has a halo, and the y axis room above the peak (the checker: 5% at least)
grep -q 'paint-order: stroke' origin.html && ok || bad "origin.html: no halo under the peak label"

# the profiler's samples (COUNTER rows of memory_record, npu_mem, npu_module_mem): thinner
# curves behind the live bytes, one per series, named after the file they come from; sums, the
# DDR and HBM parts and the modules hidden at first; 24 at most; they count for the axes; a PLAN
# row (no time) changes nothing
python3 - ctr.csv noplan/ctr.csv <<'X'
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
open(sys.argv[2], "w").write("\n".join([h] + body) + "\n")
rows = [h] + body
row("PLAN", "GE", "op", "size:100,graph:1", dev="cpu", t=0)
open(sys.argv[1], "w").write("\n".join(rows) + "\n")
X
expect_status 0 "$E" -q -o ctr.html ctr.csv
expect_status 0 $CHECK --browser --screenshot ctr.png ctr.html ctr.csv
grep -q '<title>Memory over time: ctr.csv</title>' ctr.html &&
	grep -q 'the profiler.s samples: [0-9]* of memory_record (6 series drawn), [0-9]* of npu_mem (3 series drawn), [0-9]* of npu_module_mem (15 series drawn)' ctr.html &&
	grep -q '<p class="note" id="more-samples" data-n="15">15 more series' ctr.html &&
	grep -q '>live peak ' ctr.html && ok || bad "ctr.html: title, sources, notes or peak label"
expect_status 0 "$E" -q -o noplan/ctr.html noplan/ctr.csv
expect_same ctr.html noplan/ctr.html
for w in "--step 2" "--from 0.005 --to 0.012"; do
	expect_status 0 "$E" -q -f $w -o ctr_w.html ctr.csv
	expect_status 0 $CHECK $w ctr_w.html ctr.csv
done
# the checker fails a page whose samples lie: a highest value one byte off, a column below a
# sample
sed 's/\(<tr class="entry sample" data-sample="[0-9]*" data-series="used" data-peak="\)\([0-9]*\)"/\1\21"/' \
	ctr.html >lie3.html
cmp -s ctr.html lie3.html && bad "lie3.html: nothing changed" || ok
expect_status 1 $CHECK lie3.html ctr.csv
python3 - ctr.html lie4.html <<'X'
import json, re, sys
s = open(sys.argv[1]).read()
m = re.search(r'(<script type="application/json" id="memscope-data">)(.*?)(</script>)', s, re.S)
d = json.loads(m.group(2))
v = next(c for c in d["curves"] if "sample" in c)["values"]
k = max(range(len(v)), key=lambda i: v[i] or 0)
v[k] -= 1
open(sys.argv[2], "w").write(s[: m.start(2)] + json.dumps(d) + s[m.end(2):])
X
expect_status 1 $CHECK lie4.html ctr.csv

# Ascend profiler outputs, read by the checker as memscope-convert writes them (the folder's page
# is that page but for the input's name): each block owned by the op its MALLOC names; live bytes
# beside memory_record's allocated with a note that they count only the blocks of the window; the
# whole process's and device's memory (APP, Device) hidden at first, so the y axis fits the pools
# (2.5 MiB, where APP is above 1 GiB); no process named when none is known; four identical ranks
# say which curve hides which
T0=$SRC/testdata/msprof/torch_npu_level0_rank0_ascend_pt
Q=$SRC/testdata/msprof-quirks
PROF=PROF_000001_20260605161708478_FRJKORBPFMHQMGLA
"$BIN/memscope-convert" -q -f "$T0" -o t0.csv &&
	"$BIN/memscope-convert" -q -f "$Q/$PROF" -o prof.csv &&
	"$BIN/memscope-convert" -q -f "$Q/rank0_ascend_ms" -o ms.csv || exit 1
for f in t0 prof ms; do
	expect_status 0 "$E" -q -o $f.html $f.csv
	expect_status 0 $CHECK --browser $f.html $f.csv
done
expect_status 0 "$E" -q -o t0.dir.html "$T0"
sed 's/torch_npu_level0_rank0_ascend_pt/t0.csv/g' t0.dir.html | cmp -s - t0.html && ok ||
	bad "t0.dir.html: not the page of its converted rows"
expect_status 0 "$E" -q -o prof.dir.html "$Q/$PROF"
sed "s/$PROF/prof.csv/g" prof.dir.html | cmp -s - prof.html && ok ||
	bad "prof.dir.html: not the page of its converted rows"
grep -q '>aten::_foreach_add</td><td>op</td>' t0.html &&
	grep -q '<p class="note" id="live-start">Live bytes count only the blocks allocated in the input' t0.html &&
	grep -q "memory_record's allocated then: 1.16 GiB" t0.html &&
	grep -q '<text class="ytick" x="78" y="48.0">2.5 MiB</text>' prof.html &&
	grep -q 'class="entry sample off"[^>]*><td>.*</td><td class="name">APP reserved (memory_record), device 0</td>' prof.html &&
	! grep -q 'process N/A' prof.html ms.html && ok ||
	bad "t0.html, prof.html: owners by op, the note, the axis or the process"
expect_status 0 "$E" -o t0s.html "$T0"
expect_err_line "^memscope-export: t0s.html: live peak 487 MiB of PTA on device 0 of process 3016828 at 0.164800 s; 2 tracks; memory_record's PTA allocated peaks at 1.16 GiB at 0.164800 s \(with the blocks allocated before the window\)$"
expect_status 0 "$E" -o profs.html "$Q/$PROF"
grep -qx "memscope-export: profs.html: live peak 1.25 MiB of GE on device 0 at 0.000500 s; 2 tracks; memory_record's GE allocated peaks at 64.0 KiB at 0.000000 s (with the blocks allocated before the window)" "$WORK/err" &&
	ok || bad "profs.html: summary: $(cat "$WORK/err")"
mkdir -p r4/rank0 r4/rank1 r4/rank2 r4/rank3 &&
	for r in 0 1 2 3; do cp t0.csv r4/rank$r/t0.csv; done
expect_status 0 "$E" -q -o r4.html r4/rank*/t0.csv
expect_status 0 $CHECK r4.html r4/rank0/t0.csv r4/rank1/t0.csv r4/rank2/t0.csv r4/rank3/t0.csv
grep -q '>PTA, device 0, process 3016828, rank0/t0.csv<span class="same"> (drawn under the same curve of rank3/t0.csv)</span>' r4.html &&
	ok || bad "r4.html: no note of the identical curves"
# a curve hidden at first that is higher than the axis: shown, the axis grows to it and the curves
# scale with it; hidden again, the page's axis comes back
cat >rescale.py <<'X'
import json, re, subprocess, sys, tempfile, html, os, shutil
page, = sys.argv[1:]
s = open(page).read()
probe = """<script>
var rows = document.querySelectorAll('#legend tr.entry.off'), hi = null, out = {};
try {
rows.forEach(function (r) { if (!hi || +r.getAttribute('data-peak') > +hi.getAttribute('data-peak')) hi = r; });
function top() { var t = document.querySelectorAll('#yaxis .ytick'); return t[t.length - 1].textContent; }
out.peak = +hi.getAttribute('data-peak'); out.before = top();
hi.click(); out.shown = top(); out.zoom = document.getElementById('zoom').getAttribute('transform');
out.dot = document.querySelector('#peak circle').getAttribute('cy');
hi.click(); out.after = top(); out.zoom2 = document.getElementById('zoom').getAttribute('transform');
} catch (e) { out.error = String(e); }
document.title = JSON.stringify(out);
</script></body>"""
with tempfile.TemporaryDirectory() as tmp:
    open(os.path.join(tmp, "p.html"), "w").write(s.replace("</body>", probe))
    p = subprocess.run([shutil.which("chromium"), "--headless", "--no-sandbox", "--disable-gpu",
                        f"--user-data-dir={tmp}/profile", "--virtual-time-budget=5000",
                        "--dump-dom", f"file://{tmp}/p.html"], capture_output=True, text=True, timeout=120)
m = re.search(r'<title>(\{.*?)</title>', p.stdout, re.S)
if not m:
    sys.exit("no probe: " + p.stdout[-300:] + p.stderr[-300:])
r = json.loads(html.unescape(m.group(1)))
units = ["B", "KiB", "MiB", "GiB", "TiB"]
val = lambda t: float(t.split()[0]) * 1024 ** units.index(t.split()[1])
ymax = json.loads(re.search(r'id="memscope-data">(.*?)</script>', s, re.S).group(1))["ymax"]
k = re.fullmatch(r"matrix\(1 0 0 ([\d.e-]+) 0 ([\d.e-]+)\)", r["zoom"] or "")
ok = val(r["before"]) == ymax and val(r["shown"]) >= r["peak"] * 1.05 and k and \
    abs(float(k[1]) - ymax / val(r["shown"])) < 1e-3 and abs(float(k[2]) - 444 * (1 - float(k[1]))) < 0.5 and \
    r["after"] == r["before"] and not r["zoom2"]
sys.exit(0 if ok else f"FAIL: {r}")
X
if command -v chromium >/dev/null; then
	for f in t0 prof ms; do
		expect_status 0 python3 rescale.py $f.html
	done
fi

# a FREE row notes its pool as a MALLOC does (as the trace and the flame graph note it): a PTA
# FREE beside a HAL MALLOC leaves HAL out by default, in the page as in the trace
cat >pk.csv <<'EOF2'
ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)
1,MALLOC,HAL,N/A,1000,7,7,0,0x1000,"{size:4096}",,
2,FREE,PTA,N/A,2000,7,7,0,0x2000,"{allocation_id:1,addr:0x2000,size:100,total:4096,used:0}",,
EOF2
expect_status 0 "$E" -f -o pk.html pk.csv
expect_err_line '^memscope-export: pk.html: no block with a size in the pools counted$'

finish
