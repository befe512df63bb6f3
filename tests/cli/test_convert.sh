#!/bin/sh
# Golden CLI cases of memscope-convert: round trips, safe outputs, and bad input exits. Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
C="$BIN/memscope-convert"
TOOL=$C
cd "$WORK" || exit 1

# round trips of the bundled samples: byte-identical for current-layout files
for f in baseline leaks; do
	cp "$SRC/testdata/$f.csv" .
	expect_status 0 "$C" "$f.csv"
	expect_status 0 "$C" -o "$f.back.csv" "$f.mscap"
	expect_same "$f.csv" "$f.back.csv"
done
# the legacy layout is normalised once; converting the result again changes nothing
cp "$SRC/testdata/memscope_dump_20250428113810.csv" legacy.csv
expect_status 0 "$C" -q legacy.csv
expect_status 0 "$C" -q -o legacy.norm.csv legacy.mscap
expect_status 0 "$C" -q -t csv -o legacy.norm2.csv legacy.norm.csv
expect_same legacy.norm.csv legacy.norm2.csv
grep -q '^1,SYSTEM,ACL_INIT,N/A,1746006014162153000,' legacy.norm.csv && ok || bad "legacy ts/type"

# stdin to stdout
expect_status 0 sh -c "cat baseline.csv | '$C' -q -t csv -o - - > piped.csv"
expect_same baseline.csv piped.csv
# the summary: what went where, in figures (also when stdout is a pipe)
expect_status 0 sh -c "'$C' -t csv -o - baseline.csv | cat >/dev/null"
expect_err_line '^memscope-convert: baseline.csv -> -: 121 events, 14.2 KiB -> 14.2 KiB \(dump-csv, current layout\)$'
# --format names the output's format, as in every tool; -t and --to, its older spellings, do
# the same byte for byte
expect_alias 0 --format=csv -tcsv -o - baseline.csv
expect_alias 0 --format=csv --to=csv -o - baseline.mscap
expect_alias 0 --format=capture --to=capture -o - baseline.csv

# outputs: never overwritten without --force, never the input
expect_status 2 "$C" baseline.csv
expect_err_line '^memscope-convert: baseline.mscap: exists \(use --force to overwrite\)$'
expect_status 0 "$C" -q --force baseline.csv
expect_status 2 "$C" -t csv -f -o baseline.csv baseline.csv
expect_err_line 'output would overwrite the input'
expect_same baseline.csv "$SRC/testdata/baseline.csv"

# bad input: one stderr line naming the file, exit 3 (4 for I/O), no output left
: >empty.csv
expect_status 3 "$C" -o out1.mscap empty.csv
expect_err_line '^memscope-convert: empty.csv: empty file$'
expect_absent out1.mscap
head -c 3000 /dev/urandom >random.bin
printf '\0' >>random.bin
expect_status 3 "$C" -o out2.mscap random.bin
expect_err_line '^memscope-convert: random.bin: '
expect_absent out2.mscap
printf 'time,name,bytes\n1,a,3\n' >wrong.csv
expect_status 3 "$C" -o out3.mscap wrong.csv
# another tool's CSV is not taken for a dump: the error says what an input may be
expect_err_line "^memscope-convert: wrong.csv: not a capture file, .* or a memscope_dump CSV\$"
# a dump's header with a column missing is a dump CSV, and the reader names the column
printf 'Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr\n' >noid.csv
expect_status 3 "$C" -o out3.mscap noid.csv
expect_err_line "^memscope-convert: noid.csv:1: not a memscope_dump CSV: header has no 'ID' column"
# what the tokenizer reads is a dump too: blank lines (after a byte order mark) before the
# header, and a header line longer than the 256 KiB the format is recognised from
{ printf '\357\273\277\r\n\n'; cat baseline.csv; } >blank.csv
expect_status 0 "$C" -q -f --format csv -o blank.out.csv blank.csv
expect_same baseline.csv blank.out.csv
{ head -c 300000 /dev/zero | tr '\0' X; sed 's/^/,/' baseline.csv; } >longhdr.csv
expect_status 0 "$C" -q -f --format csv -o longhdr.out.csv longhdr.csv
expect_same baseline.csv longhdr.out.csv
expect_absent out3.mscap
expect_status 4 "$C" -o out4.mscap missing.csv
expect_err_line '^memscope-convert: missing.csv: cannot open: No such file or directory$'
expect_absent out4.mscap
{ head -n 5 baseline.csv; echo '99,MALLOC,PTA,N/A,1,2,3,0,0x10,"{size:12x}",,'; tail -n 3 baseline.csv; } >badrow.csv
expect_status 3 "$C" -o out5.mscap badrow.csv
expect_err_line '^memscope-convert: badrow.csv:6: invalid size "12x"$'
expect_absent out5.mscap
# ... and --lenient skips it, saying so
expect_status 0 "$C" -q --lenient -o out5.mscap badrow.csv
expect_err_line '^memscope-convert: badrow.csv: skipped 1 bad row \(first: badrow.csv:6: invalid size "12x"\)$'

# every prefix of a capture file (all of them): strict, exit 3 "truncated", never a crash, no
# output file; --lenient (every 7th past the 16-byte header), exit 0, every complete record (a prefix of the whole file's
# rows, as many as its one warning line counts) and that warning
size=$(wc -c <baseline.mscap)
"$C" -q -t csv -o full.csv baseline.mscap
mkdir lenient
cut=1
prefix_bad=0
while [ "$cut" -lt "$size" ]; do
	head -c "$cut" baseline.mscap >cut.mscap
	"$C" -o cut.csv cut.mscap >/dev/null 2>cut.err
	st=$?
	if [ "$st" -ne 3 ] || [ -e cut.csv ] || ! grep -q 'truncated' cut.err; then
		prefix_bad=$((prefix_bad + 1))
		echo "prefix $cut: exit $st: $(cat cut.err)" >&2
	fi
	rm -f cut.csv
	if [ "$cut" -ge 16 ] && [ $((cut % 7)) -eq 1 ]; then
		"$C" -q --lenient -t csv -o - cut.mscap >lenient/$cut.csv 2>lenient/$cut.err
		st=$?
		if [ "$st" -ne 0 ] || [ "$(wc -l <lenient/$cut.err)" -ne 1 ]; then
			prefix_bad=$((prefix_bad + 1))
			echo "lenient prefix $cut: exit $st: $(cat lenient/$cut.err)" >&2
		fi
	fi
	cut=$((cut + 1))
done
expect_status 0 python3 - lenient full.csv <<'X'
import csv, glob, re, sys
full = open(sys.argv[2], "rb").read()
bad = 0
for out in glob.glob(sys.argv[1] + "/*.csv"):
    err = open(out[:-4] + ".err").read()
    m = re.search(r"truncated capture file: .* \((\d+) events read\); every complete record "
                  r"before the cut was read \(--lenient\)$", err)
    data = open(out, "rb").read()
    rows = max(0, sum(1 for _ in csv.reader(open(out, newline=""))) - 1)
    if not m or int(m.group(1)) != rows or not full.startswith(data):
        print(out, rows, err, file=sys.stderr)
        bad += 1
sys.exit(bad != 0)
X
[ "$prefix_bad" -eq 0 ] && ok || bad "$prefix_bad prefixes misbehaved"

# a cut capture converted with --lenient into a capture: the new file is not a whole run either
# (a STOPPED record of cause 2): refused strictly, naming the input's cut; read with --lenient
head -c $((size - 5)) baseline.mscap >cut.mscap
expect_status 0 "$C" -q --lenient -o recut.mscap cut.mscap
expect_status 3 "$C" -o recut.csv recut.mscap
expect_err_line 'recut\.mscap: recording incomplete: stopped before it was converted \(truncated capture file: .*\) after [0-9]+ events; '
expect_absent recut.csv
expect_status 0 "$C" -q --lenient -t csv -o recut.csv recut.mscap
expect_status 0 "$C" -q --lenient -t csv -o cut.csv cut.mscap
expect_same recut.csv cut.csv
rm -f recut.csv cut.csv

# compressed inputs (gzip, zstd; by content, not name): the same output as the plain input
D="$BIN/memscope-db"
L="$BIN/memscope-leaks"
"$C" -q -f -o plain.mscap baseline.csv
for z in gz zst; do
	if [ $z = gz ]; then comp="gzip -c"; else comp="zstd -q -c"; fi
	$comp baseline.csv >b.csv.$z
	$comp plain.mscap >b.mscap.$z
	expect_status 0 "$C" -q -f -t csv -o b.$z.csv b.csv.$z
	expect_same b.$z.csv baseline.csv
	expect_status 0 "$C" -q -f -o b.$z.mscap b.csv.$z
	expect_same b.$z.mscap plain.mscap
	expect_status 0 "$C" -q -f -t csv -o b.$z.back.csv b.mscap.$z
	expect_same b.$z.back.csv baseline.csv
	# by content: a compressed file under a plain name, and standard input
	cp b.csv.$z hidden.csv
	expect_status 0 "$C" -q -f -t csv -o hidden.out.csv hidden.csv
	expect_same hidden.out.csv baseline.csv
	expect_status 0 sh -c "'$C' -q -t csv -o - - <b.csv.$z >stdin.$z.csv"
	expect_same stdin.$z.csv baseline.csv
	# the summary counts decompressed bytes and says how the input was compressed
	expect_status 0 "$C" -f -t csv -o b.$z.csv b.csv.$z
	expect_err_line "^memscope-convert: b.csv.$z -> b.$z.csv: 121 events, 14.2 KiB -> 14.2 KiB \(dump-csv, current layout, $([ $z = gz ] && echo gzip || echo zstd) input\)\$"
	# a python_trace CSV into a database: the same tables
	$comp "$SRC/testdata/db/python_trace.csv" >pt.csv.$z
	expect_status 0 "$D" -q -f -o pt.$z.db pt.csv.$z
done
expect_status 0 "$D" -q -f -o pt.db "$SRC/testdata/db/python_trace.csv"
for db in pt pt.gz pt.zst; do
	sqlite3 $db.db "SELECT name FROM sqlite_master WHERE name LIKE 'python_trace%' ORDER BY name" >$db.tables
	for t in $(cat $db.tables); do sqlite3 $db.db "SELECT * FROM $t ORDER BY rowid"; done >$db.rows
done
[ -s pt.rows ] && ok || bad "python_trace: no rows"
expect_same pt.gz.rows pt.rows
expect_same pt.zst.rows pt.rows
expect_same pt.gz.tables pt.tables
# several gzip members (pigz, bgzip) and zstd frames are one input
{ head -n 40 baseline.csv | gzip -c; tail -n +41 baseline.csv | head -n 40 | gzip -c; tail -n +81 baseline.csv | gzip -c; } >multi.csv.gz
{ head -n 40 baseline.csv | zstd -q -c; tail -n +41 baseline.csv | zstd -q -c; } >multi.csv.zst
expect_status 0 "$C" -q -f -t csv -o multi.gz.csv multi.csv.gz
expect_same multi.gz.csv baseline.csv
expect_status 0 "$C" -q -f -t csv -o multi.zst.csv multi.csv.zst
expect_same multi.zst.csv baseline.csv
# cut compressed data: strict exit 3 with one line naming the file, no output; --lenient keeps
# the prefix (rows of the plain file, in order) and says where it broke
for z in gz zst; do
	size=$(wc -c <b.csv.$z)
	head -c $((size - 40)) b.csv.$z >cut.csv.$z
	expect_status 3 "$C" -o cut.$z.out.csv -t csv cut.csv.$z
	expect_err_line "^memscope-convert: cut.csv.$z(:[0-9]+: .*; and the file is cut)?: truncated $([ $z = gz ] && echo gzip || echo zstd) data: the file ends inside (member|frame) 1 "
	expect_absent cut.$z.out.csv
	# (zstd decodes 128 KiB blocks whole: a second frame is cut, the first kept)
	if [ $z = gz ]; then
		cp b.mscap.gz twice.mscap.gz
	else
		{ head -c 1000 plain.mscap | zstd -q -c; tail -c +1001 plain.mscap | zstd -q -c; } >twice.mscap.zst
	fi
	size=$(wc -c <twice.mscap.$z)
	head -c $((size - 30)) twice.mscap.$z >cut.mscap.$z
	expect_status 3 "$C" -o cutcap.$z.csv cut.mscap.$z
	expect_err_line "^memscope-convert: cut.mscap.$z: truncated "
	expect_absent cutcap.$z.csv
	expect_status 0 "$C" -q --lenient -o cutcap.$z.csv cut.mscap.$z
	expect_err_line "^memscope-convert: cut.mscap.$z: truncated .* data: .*; every complete record before the cut was read \(--lenient\)\$"
	rows=$(($(wc -l <cutcap.$z.csv) - 1))
	[ "$rows" -gt 0 ] && head -c "$(wc -c <cutcap.$z.csv)" baseline.csv | cmp -s - cutcap.$z.csv && ok ||
		bad "lenient cut capture.$z: not a prefix of the plain rows ($rows rows)"
done
expect_status 0 "$C" -q --lenient -t csv -o cut.gz.lenient.csv cut.csv.gz
grep -q 'truncated gzip data' "$WORK/err" && ok || bad "lenient cut gz: no cut line: $(cat "$WORK/err")"
[ "$(head -n 100 cut.gz.lenient.csv)" = "$(head -n 100 baseline.csv)" ] && ok || bad "lenient cut gz: prefix lost"
# a bad row before the break: its line and complaint, and the cut (as the plain file's first)
{ head -4 baseline.csv; echo "5,bad,row"; tail -n +6 baseline.csv; } >bad5.csv
gzip -c bad5.csv | head -c -20 >bad5.csv.gz
expect_status 3 "$C" -o bad5.out -t csv bad5.csv.gz
expect_err_line '^memscope-convert: bad5.csv.gz:5: expected 12 fields, found 3; and the file is cut: truncated gzip data: '
# corrupt compressed data: exit 3, one line naming the file; a byte flipped inside the data
python3 -c "
import sys
for src, dst in (('b.csv.gz', 'bad.csv.gz'), ('b.csv.zst', 'bad.csv.zst')):
    d = bytearray(open(src, 'rb').read()); d[len(d) // 2] ^= 0x55; open(dst, 'wb').write(d)"
expect_status 3 "$C" -o bad.gz.out -t csv bad.csv.gz
# (the row the flipped byte garbled is named too: the gzip check fails only at the member's end)
expect_err_line '^memscope-convert: bad.csv.gz(:[0-9]+: .*; and the file is cut)?: corrupt gzip data in member 1: '
expect_absent bad.gz.out
expect_status 3 "$C" -o bad.zst.out -t csv bad.csv.zst
expect_err_line '^memscope-convert: bad.csv.zst: corrupt zstd data in frame 1: '
expect_absent bad.zst.out
{ cat b.csv.gz; printf 'not gzip'; } >trail.csv.gz
expect_status 3 "$C" -o trail.out -t csv trail.csv.gz
expect_err_line "^memscope-convert: trail.csv.gz: trailing garbage after gzip member 1 \\(compressed byte $(($(wc -c <b.csv.gz)))\\): neither another member nor zero padding\$"
printf '\037\213' >magic.gz
expect_status 3 "$C" -o magic.out magic.gz
expect_err_line '^memscope-convert: magic.gz: truncated gzip data'
gzip -c </dev/null >empty.csv.gz
expect_status 3 "$C" -o empty.out empty.csv.gz
expect_err_line '^memscope-convert: empty.csv.gz: empty file \(once decompressed\)$'
# a compressed database is refused, saying what to do
gzip -c pt.db >pt.db.gz
expect_status 3 "$D" -q --format csv -o ptdb.csv pt.db.gz
expect_err_line '^memscope-db: pt.db.gz: a compressed database cannot be read directly: decompress it first$'
# a decompression bomb streams: a dump's header, then 256 MiB of blank lines in a few hundred
# KiB of gzip, read in memory far below its size (the address space is limited to 160 MiB but
# under a sanitizer, which reserves more)
python3 -c "
import sys, zlib
z = zlib.compressobj(1, zlib.DEFLATED, 31)
out = [z.compress(open('baseline.csv', 'rb').readline())]
block = b'\n' * (1 << 20)
for _ in range(256):
    out.append(z.compress(block))
out.append(z.flush())
open('bomb.csv.gz', 'wb').write(b''.join(out))"
limit="ulimit -v 163840;"
grep -q __asan_init "$C" && limit=""
expect_status 0 sh -c "$limit '$C' -f -t csv -o bomb.out.csv bomb.csv.gz"
head -n 1 baseline.csv | cmp -s - bomb.out.csv && ok || bad "bomb: not the header alone"
# zero bytes after the last gzip member are padding (a tar block's), as gzip -t takes them; any
# other bytes after them are garbage
{ gzip -c leaks.csv; head -c 512 /dev/zero; } >pad.csv.gz
gzip -t pad.csv.gz && ok || bad "pad.csv.gz: gzip -t fails"
expect_status 0 "$C" -q -f -t csv -o pad.out.csv pad.csv.gz
expect_same pad.out.csv leaks.csv
{ cat pad.csv.gz; printf x; } >padx.csv.gz
expect_status 3 "$C" -o padx.out -t csv padx.csv.gz
expect_err_line "^memscope-convert: padx.csv.gz: trailing garbage after gzip member 1 \\(compressed byte $(($(wc -c <pad.csv.gz)))\\): "
expect_absent padx.out
# corrupt data names its frame or member, however many came whole before it
for z in gz zst; do
	if [ $z = gz ]; then comp="gzip -c"; else comp="zstd -q -c"; fi
	{ head -n 40 baseline.csv | $comp; tail -n +41 baseline.csv | head -n 40 | $comp; } >three.csv.$z
	tail -n +81 baseline.csv | $comp >third.$z
	python3 -c "
import sys
d = bytearray(open('third.$z', 'rb').read()); d[len(d) // 2] ^= 0x55
open('three.csv.$z', 'ab').write(d)"
	expect_status 3 "$C" -o three.$z.out -t csv three.csv.$z
	expect_err_line "^memscope-convert: three.csv.$z(:[0-9]+: .*; and the file is cut)?: corrupt $([ $z = gz ] && echo gzip data in member || echo zstd data in frame) 3: "
	expect_absent three.$z.out
done

# compressed capture output: by the name's extension or --compress, the same bytes as the plain
# capture under gzip or zstd, read back by every tool
expect_status 0 "$C" -q -f -o out.mscap.zst baseline.csv
zstd -q -d -c out.mscap.zst | cmp -s - plain.mscap && ok || bad "out.mscap.zst is not plain.mscap under zstd"
expect_status 0 "$C" -q -f -o out.mscap.gz baseline.csv
gzip -d -c out.mscap.gz | cmp -s - plain.mscap && ok || bad "out.mscap.gz is not plain.mscap under gzip"
expect_status 0 "$C" -q -f --compress zstd -o out.zcap baseline.csv
zstd -q -d -c out.zcap | cmp -s - plain.mscap && ok || bad "--compress zstd"
expect_status 0 "$C" -q -f --compress gzip -o out.gcap.gz baseline.csv
gzip -t out.gcap.gz && ok || bad "--compress gzip: not gzip"
expect_status 0 "$C" -q -f -t csv -o out.back.csv out.mscap.zst
expect_same out.back.csv baseline.csv
# (the report names its input: the same name in two folders)
mkdir -p lz lp
cp out.mscap.gz lz/run.mscap
cp plain.mscap lp/run.mscap
expect_status 0 sh -c "cd lz && '$L' -q -o ../out.leaks.txt run.mscap"
expect_status 0 sh -c "cd lp && '$L' -q -o ../plain.leaks.txt run.mscap"
expect_same out.leaks.txt plain.leaks.txt
# the default output name drops the input's .gz/.zst and adds --compress's
cp b.csv.gz dflt.csv.gz
expect_status 0 "$C" -q --compress zstd dflt.csv.gz
[ -f dflt.mscap.zst ] && ok || bad "default output of dflt.csv.gz with --compress zstd: $(ls dflt*)"
expect_status 0 "$C" -f -o - --compress gzip baseline.csv
gzip -d -c "$WORK/out" | cmp -s - plain.mscap && ok || bad "--compress gzip to standard output"
grep -q '14.2 KiB -> [0-9.]* [KMG]*i*B (dump-csv, current layout, gzip output)$' "$WORK/err" && ok || bad "summary: $(cat "$WORK/err")"
# a kind that contradicts the name is a usage error; so is an unknown kind
expect_status 2 "$C" -f --compress gzip -o x.mscap.zst baseline.csv
expect_err_line '^memscope-convert: --compress gzip contradicts the output name x.mscap.zst$'
expect_absent x.mscap.zst
expect_status 2 "$C" -f --compress xz -o x.mscap baseline.csv
expect_err_line "^memscope-convert: --compress: expected gzip or zstd, got 'xz'\$"

# progress on stderr when it is a terminal (script(1) gives the tool one), never into a file or
# with -q: a dump big enough for more than one chunk
{ cat baseline.csv; for i in $(seq 40); do tail -n +2 baseline.csv; done; } >big.csv
if command -v script >/dev/null; then
	script -qec "'$C' -f -t csv -o big.out.csv big.csv" /dev/null </dev/null >tty.log 2>&1
	grep -aq "$(printf '\r')memscope-convert: big.csv [0-9.]* KiB of [0-9.]* KiB" tty.log && ok ||
		bad "no progress line on a terminal: $(od -c tty.log | head -5)"
	cp big.csv big2.csv # (one file named twice is read once)
	script -qec "'$L' -o big.leaks.txt -f big.csv big2.csv" /dev/null </dev/null >tty2.log 2>&1
	grep -aq "memscope-leaks: \[1/2\] big.csv [0-9.]* KiB of [0-9.]* KiB" tty2.log && ok ||
		bad "no progress line of memscope-leaks on a terminal: $(od -c tty2.log | head -5)"
	script -qec "'$D' -f -o big.db big.csv" /dev/null </dev/null >tty3.log 2>&1
	grep -aq "memscope-db: big.csv [0-9.]* KiB of [0-9.]* KiB" tty3.log && ok ||
		bad "no progress line of memscope-db on a terminal: $(od -c tty3.log | head -5)"
	script -qec "'$C' -q -f -t csv -o big.out.csv big.csv" /dev/null </dev/null >tty4.log 2>&1
	grep -aq 'KiB of' tty4.log && bad "progress with -q: $(od -c tty4.log | head -5)" || ok
fi
expect_status 0 "$C" -f -t csv -o big.out.csv big.csv
grep -q "$(printf '\r')\|KiB of" "$WORK/err" && bad "progress into a file: $(cat "$WORK/err")" || ok
expect_err_line '^memscope-convert: big.csv -> big.out.csv: '

# usage errors
expect_status 2 "$C"
expect_status 2 "$C" --bogus baseline.csv
expect_status 2 "$C" -t xml baseline.csv
expect_err_line "^memscope-convert: --format: expected csv or capture, got 'xml'$"
expect_status 2 "$C" --format CSV baseline.csv
expect_err_line "^memscope-convert: --format: expected csv or capture, got 'CSV'$"
expect_status 2 "$C" --time-unit s baseline.csv
expect_err_line "^memscope-convert: --time-unit: expected auto, ns or us, got 's'$"
expect_status 0 "$C" --help
grep -q '^Usage: memscope-convert ' "$WORK/out" && ok || bad "--help on stdout"
finish
