#!/bin/sh
# Golden CLI cases of memscope-export --format html, the memory-over-time page: on every sample,
# a generated training run and hostile input, the page against an independent reading of the
# inputs (check_memory_html.py: curves, peak, steps, owners, nothing loaded), its hover in
# headless Chromium, its size on a big input, and the options it takes. Args: BIN_DIR SRC_DIR
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

# several inputs: two runs that do not overlap in time count from their own starts; the two
# legacy files of one job share a clock; curves are named after their input
expect_status 0 "$E" -q --format html -o two.html baseline.csv leaks.csv
expect_status 0 $CHECK --browser two.html baseline.csv leaks.csv
grep -q "seconds since each input's first" two.html && grep -q 'process 3290097, leaks.csv<' two.html &&
	ok || bad "two.html: clocks or names"
expect_status 0 "$E" -q -o legacy.html memscope_dump_20250428113810.csv \
	memscope_dump_20250428113811.csv
expect_status 0 $CHECK legacy.html memscope_dump_20250428113810.csv \
	memscope_dump_20250428113811.csv
grep -q 'seconds since the first' legacy.html && ok || bad "legacy.html: one clock"

# the format comes from -o's extension; the summary names the peak; standard output works
expect_status 0 "$E" -o ext.html peak.csv
head -c 15 ext.html | grep -qx '<!DOCTYPE html>' && ok || bad "ext.html: not HTML"
expect_err_line '^memscope-export: ext.html: peak 300 B of PTA on device 0 of process 7 at 0.000000 s; 1 track$'
expect_status 0 "$E" -q --format html peak.csv
expect_same "$WORK/out" ext.html
# options that do nothing for a page are usage errors
for opt in '--metric peak' '--group-by op' '--stack python'; do
	expect_status 2 "$E" -q --format html $opt peak.csv
done

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

finish
