#!/bin/sh
# memscope-batch on the tree of 64 ranks gen_ranks writes: every input's figures equal those of
# memscope-leaks, memscope-export --metric peak and memscope-inefficient on it alone
# (check_batch.py), the planted outliers are the ones that stand out, the corrupt and the empty
# file are named and counted, shards merged and -j1 equal one run byte for byte, and
# --fail-on-leak and --max-peak set the exit status. Args: BIN_DIR SRC_DIR GEN_RANKS
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
# the tree (13 MB) under the build tree, beside gen_ranks
TMPDIR=$(cd "$(dirname "$3")" && pwd)
GEN=$TMPDIR/$(basename "$3")
. "$SRC/tests/cli/lib.sh"
B="$BIN/memscope-batch"
TOOL=$B
cd "$WORK" || exit 1

"$GEN" tree tree || { echo "FAIL: gen_ranks tree" >&2; exit 1; }
# the folders of every rank but those of the corrupt and the empty file (30 and 50)
GOOD=$(ls -d tree/rank* | grep -v -e '/rank30$' -e '/rank50$')
NOLEAK=$(echo "$GOOD" | grep -v -e '/rank5$' -e '/rank23$' -e '/rank42$')
BAD30=$(ls tree/rank30/*/device_5/dump/memscope_dump_*.csv)
BAD50=$(ls tree/rank50/*/device_4/dump/memscope_dump_*.csv)

# 1. one run in each format: status 3, the two bad files named, one line each
for fmt in json csv text; do
	expect_status 3 "$B" -q -j 2 --format $fmt tree
	mv "$WORK/out" all.$fmt
	mv "$WORK/err" all.$fmt.err
	[ "$(wc -l <all.$fmt.err)" -eq 2 ] && ok || bad "$fmt: stderr not 2 lines: $(cat all.$fmt.err)"
	grep -q "^memscope-batch: $BAD30:[0-9][0-9]*: invalid size \"12x\"" all.$fmt.err && ok ||
		bad "$fmt: the corrupt file not named with its line: $(cat all.$fmt.err)"
	grep -q "^memscope-batch: $BAD50: " all.$fmt.err && ok ||
		bad "$fmt: the empty file not named: $(cat all.$fmt.err)"
done
# without -q, a summary line after them that counts the failed inputs
expect_status 3 "$B" --format csv -o all2.csv tree
[ "$(wc -l <"$WORK/err")" -eq 3 ] && grep -q '2 failed' "$WORK/err" && ok ||
	bad "summary line: $(cat "$WORK/err")"
expect_same all.csv all2.csv
# every figure against the other tools, the planted outliers, the CSV against the JSON
if python3 "$SRC/tests/batch/check_batch.py" "$BIN" tree all.json all.csv all.text >check.out 2>&1; then
	ok
	tail -1 check.out
else
	bad "check_batch.py: $(grep -v '^check_batch:' check.out | head -20)"
fi

# 2. --list: every input, its rank and device, its python_trace file
expect_status 0 "$B" --list tree
[ "$(wc -l <"$WORK/out")" -eq 128 ] && ok || bad "--list: $(wc -l <"$WORK/out") lines"
grep -q "^[0-9]*	17	2	tree/rank17/.*/device_2/dump/memscope_dump_[0-9]*\.csv$" "$WORK/out" && ok ||
	bad "--list: no line of rank 17 device 2"
[ "$(awk -F '\t' 'NF == 5 && $5 ~ /python_trace_[0-9]+\.csv$/' "$WORK/out" | wc -l)" -eq 5 ] && ok ||
	bad "--list: not 5 inputs with a python_trace"

# 3. shards merged equal the single run in every format, status too; -j 1 equals -j 2
# (a shard exits 0 once its part is written: failed inputs are the merge's to report)
for i in 0 1 2; do
	expect_status 0 "$B" -q --shard $i/3 -o part$i tree
done
for fmt in json csv text; do
	expect_status 3 "$B" -q --merge --format $fmt part2 part0 part1
	expect_same "$WORK/out" all.$fmt
	expect_status 3 "$B" -q -j 1 --format $fmt tree
	expect_same "$WORK/out" all.$fmt
done
# a missing or a repeated shard is named, and nothing is written
expect_status 3 "$B" -q --merge part0 part2
grep -q '1/3' "$WORK/err" && [ ! -s "$WORK/out" ] && ok || bad "missing shard: $(cat "$WORK/err")"
expect_status 3 "$B" -q --merge part0 part1 part1 part2
grep -q 'part1' "$WORK/err" && [ ! -s "$WORK/out" ] && ok || bad "repeated shard: $(cat "$WORK/err")"

# 4. exit status for pipelines, on the ranks without bad files: every rank has exit leaks (its
# weights at the end), only 5, 23 and 42 step leaks
expect_status 0 "$B" -q --format csv -o good.csv $GOOD
expect_status 1 "$B" -q --fail-on-leak $GOOD
expect_status 1 "$B" -q --fail-on-leak --kinds step $GOOD
expect_status 0 "$B" -q --fail-on-leak --kinds step $NOLEAK
expect_status 1 "$B" -q --fail-on-leak --kinds exit $NOLEAK
# bad inputs win over findings
expect_status 3 "$B" -q --fail-on-leak tree
# --max-peak: between the others' peaks and rank 17's, and at rank 17's (the peaks of all.json,
# which check_batch.py found equal to memscope-export's)
set -- $(python3 -c 'import json, sys
rows = [r for r in map(json.loads, open(sys.argv[1])) if r["type"] == "input" and r["peak_bytes"]]
big = [r["peak_bytes"] for r in rows if "/rank17/" in r["input"] and "/device_2/" in r["input"]]
rest = [r["peak_bytes"] for r in rows if not ("/rank17/" in r["input"] and "/device_2/" in r["input"])]
print(big[0] if big else 0, max(rest) if rest else 0)' all.json)
BIG=$1
REST=$2
[ "$BIG" -gt $((REST * 3)) ] && ok || bad "rank 17's peak $BIG not 3x the others' $REST"
expect_status 1 "$B" -q --max-peak $(((BIG + REST) / 2)) $GOOD
expect_status 0 "$B" -q --max-peak "$BIG" $GOOD
expect_status 1 "$B" -q --max-peak $((BIG - 1)) $GOOD
expect_status 0 "$B" -q --max-peak $((BIG / 1048576 + 1))M $GOOD
NOBIG="$(echo "$GOOD" | grep -v '/rank17$') $(ls -d tree/rank17/*/device_3)"
expect_status 0 "$B" -q --max-peak $(((BIG + REST) / 2)) $NOBIG
finish
