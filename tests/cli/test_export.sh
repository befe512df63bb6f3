#!/bin/sh
# Golden CLI cases of memscope-export: valid speedscope and folded files whose weights sum to the
# metric's independent total, paths by stack and owner, and bad input. Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
E="$BIN/memscope-export"
TOOL=$E
CHECK_SS="$SRC/tests/cli/check_speedscope.py"
CHECK_FOLDED="$SRC/tests/cli/check_folded.py"
cd "$WORK" || exit 1
cp "$SRC"/testdata/baseline.csv "$SRC"/testdata/leaks.csv "$SRC"/testdata/db/hostile.csv .

# the stand-alone validators (tests/cli/check_*.py) accept every format and metric; weights sum to the totals an
# independent reading of the CSV gives (export_oracle.py) and that memscope-leaks reports
for f in baseline leaks; do
	set -- $(python3 "$SRC/tests/cli/export_oracle.py" $f.csv)
	want_allocated=$2 want_count=$4 want_peak=$6
	"$BIN/memscope-leaks" -q --kinds exit --format csv $f.csv >leaks.out
	want_leaked=$(python3 -c 'import csv, sys
print(sum(int(r["size"]) for r in csv.DictReader(open(sys.argv[1])) if r["kind"] == "exit"))' leaks.out)
	for m in allocated peak leaked count; do
		expect_status 0 "$E" -q --format folded --metric $m -o $f.$m.folded $f.csv
		eval want=\$want_$m
		expect_status 0 python3 "$CHECK_FOLDED" $f.$m.folded "$want"
	done
	expect_status 0 "$E" -q --metric allocated,peak,leaked,count -o $f.json $f.csv
	expect_status 0 python3 "$CHECK_SS" $f.json
	expect_status 0 python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); want = [int(x) for x in sys.argv[2:]]
got = [sum(p["weights"]) for p in d["profiles"]]
ends = [p["endValue"] for p in d["profiles"]]
units = [p["unit"] for p in d["profiles"]]
sys.exit(0 if got == want and ends == want and units == ["bytes"] * 3 + ["none"] else 1)' \
		$f.json "$want_allocated" "$want_peak" "$want_leaked" "$want_count"
done
# the peak profile names its moment
expect_status 0 python3 -c 'import json, sys
n = json.load(open(sys.argv[1]))["profiles"][1]["name"]
sys.exit(0 if n.startswith("peak live bytes: ") and " of process 3101864 " in n and n.endswith(" bytes live") else 1)' baseline.json

# the peak is the moment the highest (process, device, pool) went highest, not the end: process
# 7's PTA live bytes go 100, 300, 200, 250, 50, 60 (testdata/README.txt), process 8's HAL 250
cp "$SRC"/testdata/export/peak.csv .
printf '%s\n' 'b.py(2): B 200' 'a.py(1): A 100' >peak.expected
expect_out peak.expected --format folded --metric peak peak.csv
expect_status 0 "$E" -q --metric peak -o peak.json peak.csv
expect_status 0 python3 -c 'import json, sys
n = json.load(open(sys.argv[1]))["profiles"][0]["name"]
sys.exit(0 if n == "peak live bytes: PTA on device 0 of process 7 (input 0) at 1002 ns, 300 bytes live" else 1)' peak.json
printf '%s\n' 'e.py(5): E 250' >peak_hal.expected
expect_out peak_hal.expected --format folded --metric peak --pool hal peak.csv

# paths: the Python stack then the C stack, root first; owner levels; a placeholder without either
cat >hostile.folded.expected <<'X'
[HAL, no stack] 4096
b.py(2): g;a.py(1): f;libx.so(+0x1) [0x7f] 512
[PTA, no stack] 384
X
expect_out hostile.folded.expected --format folded hostile.csv
printf '%s\n' '[HAL, no stack] 4096' 'b.py(2): g;a.py(1): f 512' '[PTA, no stack] 384' >py.expected
expect_out py.expected --format folded --stack python hostile.csv
printf '%s\n' 'libx.so(+0x1) [0x7f] 512' '[PTA, no stack] 384' >c.expected
expect_out c.expected --format folded --stack c --pool pta hostile.csv
printf '%s\n' '[HAL, no owner] 4096' 'PTA;model;weight 512' '[PTA, no owner] 384' >owner.expected
expect_out owner.expected --format folded --group-by owner hostile.csv
# speedscope splits Python frames into name, file and line
expect_status 0 "$E" -q -o h.json hostile.csv
expect_status 0 python3 -c 'import json, sys
fr = json.load(open(sys.argv[1]))["shared"]["frames"]
sys.exit(0 if {"name": "f", "file": "a.py", "line": 1} in fr and {"name": "libx.so(+0x1) [0x7f]"} in fr else 1)' h.json
# frames that would break a folded line: ';', a trailing " <digits>", blanks, invalid UTF-8
python3 -c 'import sys
open(sys.argv[1], "wb").write(b"ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)\n"
  b"1,MALLOC,PTA,N/A,1000,7,7,0,0x0000000000001000,\"{allocation_id:1,addr:0x0000000000001000,size:64}\",\"f 12\n  a;b  \",\"\xff\"\n")' frames.csv
expect_status 0 "$E" -q --format folded --stack python -o frames.folded frames.csv
expect_status 0 python3 "$CHECK_FOLDED" frames.folded 64
grep -q '^a:b;f_12 64$' frames.folded && ok || bad "frames.folded: $(cat frames.folded)"
expect_status 0 "$E" -q --format folded -o frames2.folded frames.csv
expect_status 0 python3 "$CHECK_FOLDED" frames2.folded 64
grep -q '^a:b;f 12;? 64$' frames2.folded && ok || bad "frames2.folded: $(cat frames2.folded)"

# grouped by op: the ops open on the MALLOC's thread when it ran, outermost first, whatever
# order the rows come in (ops.csv is derived in testdata/README.txt); the same paths as an
# independent replay of each thread's op rows up to every MALLOC (export_oracle.py --by-op)
cp "$SRC"/testdata/export/ops.csv .
printf '%s\n' 'aten.linear;aten.addmm 64' 'LinearOperation 32' '[PTA, no op] 16' 'a;b 8' >ops.expected
expect_out ops.expected --format folded --group-by op ops.csv
printf '%s\n' 'aten.linear;aten.addmm 64' >ops.peak.expected
expect_out ops.peak.expected --format folded --group-by op --metric peak ops.csv
printf '%s\n' 'LinearOperation 32' '[PTA, no op] 16' 'a;b 8' >ops.leaked.expected
expect_out ops.leaked.expected --format folded --group-by op --metric leaked ops.csv
for f in ops baseline leaks; do
	python3 "$SRC/tests/cli/export_oracle.py" --by-op $f.csv | sort >$f.op.want
	"$E" -q --format folded --group-by op $f.csv | sort >$f.op.got
	[ -s $f.op.want ] && cmp -s $f.op.want $f.op.got && ok || bad "$f: by op differs from the replay"
done
# 70 nested ops: the outermost 64 are frames, and the end of the outermost closes them all
python3 - deep.csv <<'X'
import sys
h = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)"
rows = [f"{k + 1},OP_LAUNCH,ATEN_START,op{k},{100 + k},7,7,0,N/A,,," for k in range(70)]
rows.append('71,MALLOC,PTA,N/A,200,7,7,0,0x1000,"{allocation_id:1,addr:0x1000,size:64}",,')
rows.append("72,OP_LAUNCH,ATEN_END,op0,300,7,7,0,N/A,,,")
rows.append("73,OP_LAUNCH,ATEN_END,zzz,310,7,7,0,N/A,,,")
rows.append('74,MALLOC,PTA,N/A,400,7,7,0,0x2000,"{allocation_id:2,addr:0x2000,size:16}",,')
open(sys.argv[1], "w").write("\n".join([h] + rows) + "\n")
X
python3 -c 'print(";".join(f"op{k}" for k in range(64)) + " 64")' >deep.expected
echo '[PTA, no op] 16' >>deep.expected
expect_out deep.expected --format folded --group-by op deep.csv
python3 "$SRC/tests/cli/export_oracle.py" --by-op deep.csv | sort >deep.want
sort deep.expected | cmp -s - deep.want && ok || bad "deep.csv: the replay differs"
expect_status 0 "$E" --format folded --group-by op -o deep.folded deep.csv
grep -qx 'memscope-export: op rows that made no frame: 1 ends with no open op of their name, 69 ops without an end of their own, 6 ops past 64 open on their thread' "$WORK/err" &&
	ok || bad "deep.csv: op rows not reported: $(cat "$WORK/err")"
# several inputs are apart: an op of one is not open in another
expect_status 0 "$E" -q --format folded --group-by op -o ops2.folded ops.csv ops.csv
python3 -c 'import sys
a = dict(l.rsplit(" ", 1) for l in open(sys.argv[1]).read().splitlines())
b = dict(l.rsplit(" ", 1) for l in open(sys.argv[2]).read().splitlines())
sys.exit(0 if a.keys() == b.keys() and all(int(b[k]) == 2 * int(a[k]) for k in a) else 1)' ops.op.got ops2.folded
expect_status 0 "$E" -q --group-by op --metric allocated,peak,leaked,count -o ops.json baseline.csv
expect_status 0 python3 "$CHECK_SS" ops.json
expect_status 0 python3 -c 'import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
tot = lambda d: [sum(p["weights"]) for p in d["profiles"]]
sys.exit(0 if tot(a) == tot(b) else 1)' ops.json baseline.json

# svg: the flame graph of each metric has the frames, widths, tooltips and labels the folded
# stacks of the same metric make (check_svg.py); its script, run by headless Chromium, shows a
# frame's tooltip on hover, zooms on a click, searches and resets (tests/cli/svg_harness.html)
CHECK_SVG="python3 $SRC/tests/cli/check_svg.py"
HARNESS="$SRC/tests/cli/svg_harness.html"
for m in allocated peak leaked count; do
	expect_status 0 "$E" -q --format svg --metric $m -o baseline.$m.svg baseline.csv
	unit=bytes
	[ $m = count ] && unit=allocations
	expect_status 0 $CHECK_SVG baseline.$m.svg baseline.$m.folded $unit
done
expect_status 0 $CHECK_SVG baseline.allocated.svg baseline.allocated.folded bytes "$HARNESS" \
	'[HAL, no stack]' 'PTA'
"$E" -q --format folded --group-by op -o ops.folded ops.csv
expect_status 0 "$E" -q --format svg --group-by op -o ops.svg ops.csv
expect_status 0 $CHECK_SVG ops.svg ops.folded bytes "$HARNESS" 'aten.linear' '^a'
grep -q '>peak live bytes: PTA on device 0 of process 7 (input 0) at 1002 ns, 300 bytes live<' \
	"$(expect_status 0 "$E" -q --format svg --metric peak -o peak.svg peak.csv; echo peak.svg)" &&
	ok || bad "peak.svg: no peak title"
grep -q '<title>all (78,330,548 bytes, 100.00%)</title>' baseline.allocated.svg && ok ||
	bad "baseline.allocated.svg: root tooltip"
# names that are markup or not UTF-8 stay well-formed XML
printf '%s\n' 'ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)' \
	'1,MALLOC,PTA,N/A,1000,7,7,0,0x1000,"{allocation_id:1,addr:0x1000,size:64}","<a&b> ""q"" ]]>",' >markup.csv
printf '\377\001\357\277\276,\n' | sed 's/^/2,MALLOC,PTA,N\/A,1001,7,7,0,0x2000,"{allocation_id:2,addr:0x2000,size:32}",/' >>markup.csv
expect_status 0 "$E" -q --format svg -o markup.svg markup.csv
expect_status 0 python3 -c 'import sys, xml.etree.ElementTree as ET
t = [e.text for e in ET.parse(sys.argv[1]).getroot().iter("{http://www.w3.org/2000/svg}title")]
sys.exit(0 if "<a&b> \"q\" ]]> (64 bytes, 66.67%)" in t and "? ? (32 bytes, 33.33%)" in t else 1)' markup.svg
# a graph stays one a browser opens: a 1000-frame stack is cut at 256 levels, and of 110,000
# frames the 100,000 widest, then shallowest, are drawn (here: the 90 outermost levels)
python3 - deep1.csv many.csv <<'X'
import sys
h = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)"
row = lambda i, size, frames: (f'{i},MALLOC,PTA,N/A,{i},7,7,0,{hex(i)},"{{allocation_id:{i},addr:{hex(i)},size:{size}}}","'
                               + "\n".join(frames) + '",')
open(sys.argv[1], "w").write(h + "\n" + row(1, 1000000, [f"deep.py({k}): f" for k in range(1000)]) + "\n")
open(sys.argv[2], "w").write("\n".join([h] + [row(i + 1, 1, [f"s{i}.py({k}): f" for k in range(100)])
                                         for i in range(1100)]) + "\n")
X
expect_status 0 "$E" -q --format svg -o deep1.svg deep1.csv
"$E" -q --format folded -o deep1.folded deep1.csv
expect_status 0 $CHECK_SVG deep1.svg deep1.folded bytes
[ "$(grep -c '<g data-n' deep1.svg)" -eq 257 ] && grep -q '<title>\[deeper frames\] (1,000,000 bytes' deep1.svg &&
	ok || bad "deep1.svg: not cut at 256 levels"
expect_status 0 "$E" -q --format svg -o many.svg many.csv
"$E" -q --format folded -o many.folded many.csv
expect_status 0 $CHECK_SVG many.svg many.folded bytes
[ "$(grep -c '<g data-n' many.svg)" -eq 99001 ] && grep -q '; 11000 frames left out (the narrowest, then the deepest)<' many.svg &&
	ok || bad "many.svg: $(grep -c '<g data-n' many.svg) frames"

# nothing allocated: the root alone
head -1 baseline.csv >empty.csv
expect_status 0 "$E" -q --format svg -o empty.svg empty.csv
grep -q '<title>all (0 bytes, 100.00%)</title>' empty.svg && ok || bad "empty.svg: no root"

# several inputs add up
expect_status 0 "$E" -q --format folded --metric count -o both.folded baseline.csv leaks.csv
expect_status 0 python3 "$CHECK_FOLDED" both.folded 48

# chrome-trace: live bytes per process, device and pool over time (peak.csv's are derived in
# testdata/README.txt), the pools' used/reserved attrs, op slices; valid for trace viewers
expect_status 0 "$E" -q --format chrome-trace -o peak.trace.json peak.csv
expect_status 0 python3 "$SRC/tests/cli/check_chrome_trace.py" peak.trace.json
expect_status 0 python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
s = lambda n: [e["args"]["bytes"] for e in ev if e.get("name") == n]
sys.exit(0 if s("PTA device 0 live") == [100, 300, 200, 250, 50, 60] and s("HAL device 0 live") == [250, 0] and [e["ts"] for e in ev if e.get("name") == "PTA device 0 live"][:2] == [1.001, 1.002] else 1)' peak.trace.json
expect_status 0 "$E" -q --format chrome-trace -o baseline.trace.json baseline.csv
expect_status 0 python3 "$SRC/tests/cli/check_chrome_trace.py" baseline.trace.json
expect_status 0 python3 -c 'import csv, json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
rows = list(csv.DictReader(open(sys.argv[2])))
used = sum(1 for r in rows if r["Event"] in ("MALLOC", "FREE") and ",used:" in r["Attr"])
starts = sum(1 for r in rows if r["Event Type"] in ("ATEN_START", "ATB_START"))
got_used = sum(1 for e in ev if e.get("ph") == "C" and "used" in e["args"])
got_b = sum(1 for e in ev if e.get("ph") == "B")
sys.exit(0 if used and got_used == used and got_b == starts else 1)' baseline.trace.json baseline.csv

# usage and bad input
expect_status 2 "$E" --format svg --metric peak,leaked baseline.csv
expect_err_line 'svg holds one metric, 2 given'
expect_status 2 "$E" --format png baseline.csv
expect_err_line "expected speedscope, folded, svg or chrome-trace, got 'png'"
expect_status 2 "$E" --format folded --metric allocated,count baseline.csv
expect_err_line 'folded holds one metric, 2 given'
expect_status 2 "$E" --metric bytes baseline.csv
expect_err_line "^memscope-export: --metric: expected allocated, peak, leaked and/or count, got 'bytes'$"
expect_status 2 "$E" --group-by nothing baseline.csv
expect_err_line "^memscope-export: --group-by: expected stack, owner or op, got 'nothing'$"
expect_status 2 "$E" --stack java baseline.csv
expect_err_line "^memscope-export: --stack: expected python, c or both, got 'java'$"
expect_status 2 "$E" --stack python,c baseline.csv
expect_status 2 "$E" --pool nopool baseline.csv
expect_status 2 "$E" -o baseline.csv baseline.csv
expect_status 0 "$E" -q -o exists.json baseline.csv
expect_status 2 "$E" -o exists.json baseline.csv
expect_err_line 'exists'
sed '9s/,1764753084427185510,/,17647530844x,/' baseline.csv >bad.csv
expect_status 3 "$E" -o bad.json bad.csv
expect_err_line '^memscope-export: bad.csv:9: invalid Timestamp "17647530844x"$'
expect_absent bad.json
expect_status 4 "$E" -o x.json missing.csv
expect_absent x.json
finish
