#!/bin/sh
# Nsight Systems exports (formats/nsys.md) through the tools: databases built by make_nsys.py with
# both enum numberings and both column sets, converted and compared event by event with what the
# script inserted; bad rows strict and lenient; a step leak; the folded export; the batch walk.
# Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
C="$BIN/memscope-convert"
G="$SRC/tests/gpu"
D="$WORK/db"
cd "$WORK" || exit 1
if ! python3 "$G/make_nsys.py" "$D" >"$WORK/make.out" 2>&1; then
	bad "make_nsys.py: $(cat "$WORK/make.out")"
	finish
	exit 1
fi

# check CSV NAME: the CSV holds what make_nsys.py put in db/NAME.sqlite (db/NAME.json)
check() {
	if python3 "$G/check_nsys.py" "$1" "$D/$2.json" >"$WORK/check.out" 2>&1; then ok; else
		bad "$(cat "$WORK/check.out")"
	fi
}

# json NAME KEY...: a value of db/NAME.json
json() {
	f=$D/$1.json
	shift
	python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    v = v[k]
print(v)' "$f" "$@"
}

# 1. both numberings, both column sets, no enum tables: every event as inserted, in time order
for x in nsys_numbering cupti_numbering no_enums leak; do
	expect_status 0 "$C" -o "$x.csv" "$D/$x.sqlite"
	grep -q "(nsys)$" "$WORK/err" && ok || bad "$x: not read as nsys: $(cat "$WORK/err")"
	check "$x.csv" "$x"
	case $x in
	cupti_numbering)
		grep -q 'no session start time' "$WORK/err" && ok || bad "$x: no note of the session start" ;;
	no_enums)
		for t in ENUM_CUDA_MEM_KIND ENUM_CUDA_DEV_MEM_EVENT_OPER ENUM_NSYS_EVENT_TYPE; do
			grep -q "no $t table: .* read in nsys' numbering" "$WORK/err" && ok ||
				bad "$x: no note of $t: $(cat "$WORK/err")"
		done ;;
	*)
		grep -q "read in nsys' numbering\|no session start" "$WORK/err" && bad "$x: a note too many: $(cat "$WORK/err")" || ok ;;
	esac
done

# 2. a bad row: strict, one line naming the file, the rowid and why, nothing written; lenient,
# counted and the rest read as inserted
for x in bad_kind bad_oper bad_null bad_text bad_range; do
	rowid=$(json $x bad rowid)
	expect_status 3 "$C" -o "$x.csv" "$D/$x.sqlite"
	expect_err_line "^memscope-convert: .*/$x\.sqlite:$rowid: $(json $x bad table): $(json $x bad why)"
	expect_absent "$x.csv"
	expect_status 0 "$C" --lenient -o "$x.csv" "$D/$x.sqlite"
	grep -q "skipped 1 bad row (first: .*$x\.sqlite:$rowid: " "$WORK/err" && ok ||
		bad "$x: lenient: $(cat "$WORK/err")"
	check "$x.csv" "$x"
done
expect_status 3 "$C" -o bad_column.csv "$D/bad_column.sqlite"
expect_err_line "^memscope-convert: .*/bad_column\.sqlite: $(json bad_column error)$"
expect_status 3 "$C" --lenient -o bad_column.csv "$D/bad_column.sqlite"
expect_absent bad_column.csv

# 3. the block planted in step 3 of the `step N` ranges is a step leak of step 3
expect_status 0 "$BIN/memscope-leaks" -q --kinds step --pool cuda --format csv "$D/leak.sqlite"
want="^step,.*leak\.sqlite,$(json leak leak pid),0,CUDA,$(json leak leak ptr),$(json leak leak size),"
[ "$(grep -c "$want" "$WORK/out")" -eq 1 ] && ok || bad "leak: not reported: $(cat "$WORK/out")"
[ "$(grep "$want" "$WORK/out" | cut -d, -f12)" = "$(json leak leak step)" ] && ok ||
	bad "leak: not in step $(json leak leak step): $(cat "$WORK/out")"
[ "$(grep -c '^step,' "$WORK/out")" -eq 1 ] && ok || bad "leak: other step leaks: $(cat "$WORK/out")"

# 4. the folded export: each pool's allocated bytes are the bytes the script allocated in it
expect_status 0 "$BIN/memscope-export" -q --format folded -o - "$D/cupti_numbering.sqlite"
for pool in CUDA CUDA_MANAGED HOST_PINNED HOST; do
	got=$(awk -v p="[$pool," 'index($0, p) == 1 { s += $NF } END { print s + 0 }' "$WORK/out")
	[ "$got" = "$(json cupti_numbering bytes "MALLOC $pool")" ] && ok ||
		bad "folded $pool: $got bytes, inserted $(json cupti_numbering bytes "MALLOC $pool")"
done

# 5. the batch finds the exports in a folder (a .sqlite that is no export is left out), one of
# them larger than the walk's look at a file's head
mkdir -p walk/sub
cp "$D/leak.sqlite" walk/
cp "$D/nsys_numbering.sqlite" walk/sub/
python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("CREATE TABLE t (a)"); c.commit()' walk/other.sqlite
python3 "$G/make_nsys.py" "$WORK/bigdb" --rows 20000 >/dev/null && cp "$WORK/bigdb/big.sqlite" walk/ ||
	bad "make_nsys.py --rows"
expect_status 0 "$BIN/memscope-batch" -q --format csv -o batch.csv walk
for x in leak nsys_numbering big; do
	json_file=$D/$x.json
	[ $x = big ] && json_file=$WORK/bigdb/big.json
	want=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["events"])' "$json_file")
	got=$(awk -F, -v s="/$x.sqlite" '$1 == "input" && substr($3, length($3) - length(s) + 1) == s { print $6 "," $7 "," $10 }' batch.csv)
	[ "$got" = "nsys,ok,$want" ] && ok || bad "batch: $x: '$got', wanted nsys,ok,$want"
done
grep -q other.sqlite batch.csv && bad "batch read other.sqlite" || ok

finish
