#!/bin/sh
# Every tool's diagnostics stay one printable line whatever the input holds (control bytes, escape
# sequences, invalid UTF-8, quoted line breaks), count lone-CR line ends, and name the file at
# fault: the input's row or the output. Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
cd "$WORK" || exit 1
HDR='ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)'

# printable: stderr holds no byte below 0x20 but LF, no 0x7f, no C1 control, only valid UTF-8
printable() {
	if python3 -c 'import re, sys
b = open(sys.argv[1], "rb").read()
b.decode("utf-8")
sys.exit(1 if re.search(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", b) else 0)' "$WORK/err" 2>/dev/null; then ok; else bad "stderr not printable: $(od -c "$WORK/err" | head -5)"; fi
}

# a value that sets the terminal title and colours, invalid UTF-8, a C1 control (CSI as UTF-8)
# and a quoted line break, in a
# size (an error in every tool) and in a file name
printf '%s\n1,MALLOC,PTA,N/A,1,1,1,0,0x1,"{size:1\033]0;pwned\007\033[31m\377\376x\302\233\ny}",,\n' "$HDR" >evil.csv
cp evil.csv "$(printf 'ev\033[31mil\n2.csv')"
for t in convert leaks inefficient db export; do
	case $t in db) set -- -o out.db ;; convert) set -- -o - ;; *) set -- ;; esac
	expect_status 3 "$BIN/memscope-$t" "$@" evil.csv
	expect_err_line "^memscope-$t: evil.csv:2: invalid size \"1\\\\x1b]0;pwned\\\\x07\\\\x1b\[31m\\\\xff\\\\xfex\\\\xc2\\\\x9b\\\\x0ay\"$"
	printable
	expect_status 3 "$BIN/memscope-$t" "$@" ev*il?2.csv
	expect_err_line "^memscope-$t: ev\\\\x1b\[31mil\\\\x0a2.csv:2: invalid size"
	printable
done
expect_status 3 "$BIN/memscope-compare" -o out.csv --input evil.csv,evil.csv
expect_err_line '^memscope-compare: evil.csv:2: invalid size "1\\x1b'
printable
# --lenient's note quotes the first bad row: one printable line too
expect_status 0 "$BIN/memscope-convert" -q --lenient -o - evil.csv
expect_err_line '^memscope-convert: evil.csv: skipped 1 bad row \(first: evil.csv:2: invalid size "1\\x1b\]0;pwned\\x07'
printable

# rows ended by a lone CR are counted as lines (CR LF as one, LF as one)
printf '%s\r1,MALLOC,PTA,N/A,1,1,1,0,0x1,"{size:1}",,\r2,MALLOC,PTA,N/A,2,1,1,0,0x2,"{size:12x}",,\r' "$HDR" >cr.csv
expect_status 3 "$BIN/memscope-convert" -o - cr.csv
expect_err_line '^memscope-convert: cr.csv:3: invalid size "12x"$'
printf '%s\r\n1,MALLOC,PTA,N/A,1,1,1,0,0x1,"{size:1}","a\rb\r\nc",\r\r\n\r2,MALLOC,PTA,N/A,2,1,1,0,0x2,"{size:12x}",,\r' "$HDR" >mixed.csv
expect_status 3 "$BIN/memscope-convert" -o - mixed.csv
expect_err_line '^memscope-convert: mixed.csv:7: invalid size "12x"$'
# python_trace files too: a lone CR ends a line
tr '\n' '\r' <"$SRC/testdata/db/python_trace.csv" >pt_cr.csv
expect_status 0 "$BIN/memscope-db" -o pt_cr.db pt_cr.csv
expect_err_line '6 python_trace rows \(tables: 2\)$'
{ head -n 3 "$SRC/testdata/db/python_trace.csv"; echo 'bad'; } | tr '\n' '\r' >pt_bad.csv
expect_status 3 "$BIN/memscope-db" -o pt_bad.db pt_bad.csv
expect_err_line '^memscope-db: pt_bad.csv:4: '

# more attrs than the capture format holds: invalid input (3) naming the row, not the output
python3 -c 'import sys
print(sys.argv[1])
print("1,MALLOC,PTA,N/A,1,1,1,0,0x1,\"{size:1," + ",".join("k%d:%d" % (i, i) for i in range(5000)) + "}\",,")' "$HDR" >attrs.csv
expect_status 3 "$BIN/memscope-convert" -t capture -o attrs.cap attrs.csv
expect_err_line '^memscope-convert: attrs.csv:2: 5001 attrs in one event, more than the capture format holds \(4096\)$'
expect_absent attrs.cap

# a write that fails names the output, not the input
if [ -w /dev/full ]; then
	expect_status 4 "$BIN/memscope-inefficient" -q --annotate /dev/full -o /dev/null \
		"$SRC/testdata/inefficient/rules.csv"
	expect_err_line '^memscope-inefficient: /dev/full: write failed: No space left on device$'
	expect_status 4 "$BIN/memscope-convert" -q -t csv -o /dev/full "$SRC/testdata/leaks.csv"
	expect_err_line '^memscope-convert: /dev/full: write failed'
fi

# byte totals that saturate say so, in every format
{
	echo "$HDR"
	for i in 1 2 3; do
		echo "$i,MALLOC,PTA,N/A,$i,1,1,0,0x$i,\"{size:9223372036854775807,total:1,used:1}\",,"
	done
} >huge.csv
OVER='more than 16.0 EiB \(the total overflowed\)'
expect_status 0 "$BIN/memscope-export" --format folded -o /dev/null huge.csv
expect_err_line "^memscope-export: allocated: 1 path, $OVER$"
expect_status 0 "$BIN/memscope-export" -q --format svg -o huge.svg huge.csv
grep -qF 'allocated bytes (total: more than 16.0 EiB (the total overflowed))' huge.svg && ok || bad "svg title: no overflow"
expect_status 0 "$BIN/memscope-leaks" -o huge.txt huge.csv
grep -Eq "^memscope-leaks: .* 3 unreleased at exit \\(PTA $OVER\\), from 3 events$" "$WORK/err" && ok || bad "leaks summary: no overflow: $(cat "$WORK/err")"
grep -Eq "^summary: .*unreleased at exit 3 \(PTA $OVER\);" huge.txt && grep -Eq "^#1 PTA $OVER in 3 blocks$" huge.txt && ok || bad "leaks text: no overflow"
expect_status 0 "$BIN/memscope-leaks" -q --format json -o huge.json huge.csv
expect_status 0 python3 -c 'import json, sys
e = json.load(open(sys.argv[1]))["summary"]["exit"]
sys.exit(0 if e["bytes_overflowed"] is True and e["groups"][0]["bytes_overflowed"] is True else 1)' huge.json
sed -E 's/size:[0-9]+/size:9223372036854775807/g' "$SRC/testdata/inefficient/rules.csv" >hrules.csv
expect_status 0 "$BIN/memscope-inefficient" -o hrules.txt hrules.csv
expect_err_line "^memscope-inefficient: 4 inefficient block\(s\), $OVER: "
grep -Eq "^Inefficient memory: 4 block\(s\), $OVER " hrules.txt && grep -Eq '^flagged blocks +4 +overflowed$' hrules.txt && ok || bad "inefficient text: no overflow"
expect_status 0 "$BIN/memscope-inefficient" -q --format json -o hrules.json hrules.csv
expect_status 0 python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["summary"]
sys.exit(0 if d["bytes_overflowed"] is True and d["types"]["early_allocation"]["bytes_overflowed"] is True and "bytes_overflowed" not in d["types"]["late_deallocation"] else 1)' hrules.json
# compare's total difference saturates at the int64 ends: said so too
{
	echo "$HDR"
	echo '1,OP_LAUNCH,ATEN_START,op0,10,1,1,0,N/A,,,'
	echo '2,MALLOC,PTA,N/A,20,1,1,0,0x10,"{allocation_id:1,size:9223372036854775807,total:0,used:9223372036854775807}",,'
	echo '3,OP_LAUNCH,ATEN_END,op0,50,1,1,0,N/A,,,'
	echo '4,OP_LAUNCH,ATEN_START,op1,110,1,1,0,N/A,,,'
	echo '5,MALLOC,PTA,N/A,120,1,1,0,0x20,"{allocation_id:2,size:9223372036854775807,total:0,used:9223372036854775807}",,'
	echo '6,OP_LAUNCH,ATEN_END,op1,150,1,1,0,N/A,,,'
} >big_op.csv
printf '%s\n1,OP_LAUNCH,ATEN_START,op0,10,1,1,0,N/A,,,\n2,OP_LAUNCH,ATEN_END,op0,50,1,1,0,N/A,,,\n3,OP_LAUNCH,ATEN_START,op1,110,1,1,0,N/A,,,\n4,OP_LAUNCH,ATEN_END,op1,150,1,1,0,N/A,,,\n' "$HDR" >no_op.csv
expect_status 0 "$BIN/memscope-compare" -o cmp.csv --input no_op.csv,big_op.csv
grep -q '^memscope-compare: device 0: 2 ops in both inputs, .* over 8.00 EiB more (the total overflowed) in compare than in base' "$WORK/err" && ok || bad "compare: no overflow: $(cat "$WORK/err")"

finish
