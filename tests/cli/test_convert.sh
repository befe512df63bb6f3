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
expect_err_line '^memscope-convert: baseline.csv -> -: 121 events, 14505 -> 14505 bytes \(dump-csv, current layout\)$'
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
expect_err_line '^memscope-convert: badrow.csv: skipped 1 bad rows \(first: badrow.csv:6: invalid size "12x"\)$'

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
