#!/bin/sh
# Inputs as users give them (issue 29): a folder of any readable inputs, one section per input in
# name order (a profiler output folder stays one input); a folder with nothing to read; tools of
# one input say what they need; -o names export does not write; a spreadsheet's exponent
# notation; spaces after list commas; "did you mean"; default outputs in the current folder;
# every kind of input named by --help, the man pages and the "not a ..." message.
# Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
cd "$WORK" || exit 1
T=$SRC/testdata

# expect_out_has PATTERN: stdout matches PATTERN (grep -E)
expect_out_has() {
	if grep -Eq "$1" "$WORK/out"; then ok; else bad "stdout lacks '$1': $(head -c 300 "$WORK/out")"; fi
}
# expect_file FILE: FILE exists (and no temporary beside it)
expect_file() {
	if [ -f "$1" ] && [ -z "$(ls "$1".tmp.* 2>/dev/null)" ]; then ok; else bad "no $1"; fi
}

# --- 1. a folder of inputs: every tool, one section per input, natural order of the names ----
# (rank2 before rank10), a compressed dump and a capture found by their content, a PyTorch
# snapshot by its name, a python_trace file and a text file beside them
mkdir -p run/sub
cp "$T/leaks.csv" run/rank10.csv
cp "$T/baseline.csv" run/rank2.csv
gzip -c "$T/baseline.csv" >run/sub/rank3.csv.gz
"$BIN/memscope-convert" -q -o run/sub/rank4.mscap "$T/leaks.csv" || bad "convert to a capture"
cp "$T/db/python_trace.csv" run/python_trace_1.csv
echo "notes" >run/README.txt
if PYTHONDONTWRITEBYTECODE=1 python3 "$SRC/tests/gpu/make_snapshot.py" --json snap.json loop \
	run/sub/rank5.pickle >/dev/null 2>&1; then ok; else bad "make_snapshot.py"; fi
SECTIONS='run/rank2.csv run/rank10.csv run/sub/rank3.csv.gz run/sub/rank4.mscap run/sub/rank5.pickle'

expect_status 0 "$BIN/memscope-leaks" -q run
if [ "$(sed -n 's/^==> \(.*\) <==$/\1/p' "$WORK/out" | tr '\n' ' ')" = "$SECTIONS " ]; then ok; else
	bad "leaks run: sections $(grep '^==>' "$WORK/out" | tr '\n' ' ')"
fi
if grep -Eq '^memscope-leaks: run: 1 python_trace file left out \(function calls, no memory events; memscope-db stores them\)$' "$WORK/err"; then ok; else bad "leaks run: $(cat "$WORK/err")"; fi
# the same inputs named one by one give the same report
expect_status 0 "$BIN/memscope-leaks" -q $SECTIONS
mv "$WORK/out" one_by_one.out
expect_status 0 "$BIN/memscope-leaks" -q run
expect_same "$WORK/out" one_by_one.out
expect_status 0 "$BIN/memscope-export" -q --format folded run
if [ "$(cut -d';' -f1 "$WORK/out" | sort -u | wc -l)" -eq 5 ]; then ok; else bad "export run: $(cut -d';' -f1 "$WORK/out" | sort -u | tr '\n' ' ')"; fi
# inefficient over the dumps alone (a snapshot has no accesses): both dumps' events counted
mkdir -p dumps
cp "$T/leaks.csv" dumps/b.csv
cp "$T/baseline.csv" dumps/a.csv
n_events=$(($(wc -l <"$T/leaks.csv") + $(wc -l <"$T/baseline.csv") - 2))
expect_status 0 "$BIN/memscope-inefficient" -q --format json dumps
expect_out_has "\"events\":$n_events,"
# memscope-db: the inputs and the python_trace file, the database named after the folder
expect_status 0 "$BIN/memscope-db" -q run
expect_file run.db
if [ "$(python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM memscope_sources").fetchone()[0])' run.db)" = 6 ]; then ok; else bad "run.db: not 6 sources"; fi
# a profiler output folder, named so or not (a copy renamed), stays one input
cp -R "$T/msprof/insight_test_rank_0" renamed_copy
expect_status 0 "$BIN/memscope-leaks" -q renamed_copy
if grep -q '^==>' "$WORK/out"; then bad "renamed profiler folder read as several inputs"; else ok; fi
expect_status 0 "$BIN/memscope-batch" -q --format csv renamed_copy
if [ "$(grep -c renamed_copy "$WORK/out")" -eq 1 ] && ! grep -q ASCEND_PROFILER_OUTPUT "$WORK/out"; then ok; else bad "batch renamed_copy: $(cat "$WORK/out")"; fi
# a folder of profiler outputs: each its own input
expect_status 0 "$BIN/memscope-leaks" -q "$T/msprof"
expect_out_has '^summary of 4 inputs: '
# nothing to read: one line, exit 3
mkdir -p empty junk
echo "a,b" >junk/x.csv
echo "hello" >junk/readme.txt
for t in leaks inefficient export convert db; do
	expect_status 3 "$BIN/memscope-$t" empty
	expect_err_line "^memscope-$t: empty: an empty folder: nothing to read$"
	expect_status 3 "$BIN/memscope-$t" junk
	expect_err_line "^memscope-$t: junk: no profiler memory files in the folder nor any other input under it \(memscope_dump CSVs, .*PyTorch memory snapshots, Nsight Systems exports\): nothing to read, 2 entries skipped$"
done
# tools of one input: a folder of one is it, a folder of several says what is needed
mkdir -p one
cp "$T/leaks.csv" one/only.csv
expect_status 0 "$BIN/memscope-convert" -q one
expect_file only.mscap
expect_status 2 "$BIN/memscope-convert" dumps
expect_err_line '^memscope-convert: dumps: a folder of 2 inputs \(dumps/a.csv, \.\.\.\), read here as one input: give one of them$'
expect_status 2 "$BIN/memscope-compare" -o c.csv --input "dumps,$T/leaks.csv"
expect_err_line '^memscope-compare: dumps: a folder of 2 inputs \(dumps/a.csv, \.\.\.\), read here as one input: give one of them$'
expect_status 0 "$BIN/memscope-compare" -q -o c.csv --input "one,$T/baseline.csv"
expect_status 2 "$BIN/memscope-inefficient" --annotate ann.csv dumps
expect_err_line '^memscope-inefficient: dumps: --annotate takes one dump CSV and this folder holds 2 inputs$'

# --- 2. memscope-export -o with an ending it does not write -----------------------------------
expect_status 2 "$BIN/memscope-export" -o x.png "$T/leaks.csv"
expect_err_line '^memscope-export: -o x.png: \.png is no ending of a format memscope-export writes \(\.json, \.trace\.json, \.folded, \.txt, \.svg, \.html, \.htm\); give --format to write one there anyway$'
expect_absent x.png
# --format given: the name is the user's
expect_status 0 "$BIN/memscope-export" -q --format svg -o x.png "$T/leaks.csv"
if head -c 200 x.png | grep -q '<svg'; then ok; else bad "x.png: no SVG"; fi
# no ending: the default format, as before
expect_status 0 "$BIN/memscope-export" -q -o graph "$T/leaks.csv"
if head -c 100 graph | grep -q speedscope; then ok; else bad "graph: not speedscope"; fi

# --- 3. a dump re-saved by a spreadsheet: the profiler reader's hint ---------------------------
python3 -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
for r in rows[1:]:
    r[4] = "%.5E" % int(r[4])
csv.writer(open("sheet.csv", "w", newline=""), lineterminator="\n").writerows(rows)' "$T/leaks.csv"
HINT='is in exponent notation, so its digits are lost \(a spreadsheet re-saved the file\?\)$'
for t in leaks convert; do
	expect_status 3 "$BIN/memscope-$t" -o - sheet.csv
	expect_err_line "^memscope-$t: sheet.csv:2: Timestamp \"1\.76475E\+18\" $HINT"
done
sed 's/,1100,/,1.1E+03,/' "$T/db/python_trace.csv" >python_trace_sheet.csv
expect_status 3 "$BIN/memscope-db" -o pt.db python_trace_sheet.csv
expect_err_line "^memscope-db: python_trace_sheet.csv:3: StartTime \"1\.1E\+03\" $HINT"
# the profiler reader says the same words
printf 'Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),Release Total Active(MB),Stream Ptr,Device Type\naten::empty,4.0,1.69512E+15,,,,,1,2,1,,,,1,NPU:0\n' >operator_memory.csv
expect_status 3 "$BIN/memscope-leaks" operator_memory.csv
expect_err_line "^memscope-leaks: operator_memory.csv:2: column 3 \"Allocation Time\(us\)\": \"1\.69512E\+15\" $HINT"

# --- 4. spaces after the commas of a list --------------------------------------------------
expect_status 0 "$BIN/memscope-compare" -q -o sp.csv -i "$T/baseline.csv, $T/leaks.csv"
expect_status 0 "$BIN/memscope-compare" -q -o nosp.csv -i "$T/baseline.csv,$T/leaks.csv"
expect_same sp.csv nosp.csv
expect_status 0 "$BIN/memscope-leaks" -q --kinds "exit, step" "$T/leaks.csv"
expect_status 0 "$BIN/memscope-export" -q --format folded --pool " hal , pta" "$T/leaks.csv"
expect_status 2 "$BIN/memscope-compare" -o sp.csv -i "$T/baseline.csv, "
expect_err_line "^memscope-compare: --input: expected exactly two files.*BASE,COMPARE.*: "

# --- 5. a mistyped long option: the closest of the tool's, when close ----------------------
expect_status 2 "$BIN/memscope-leaks" --gruop-by op "$T/leaks.csv"
if [ "$(head -1 "$WORK/err")" = "memscope-leaks: unknown option '--gruop-by': did you mean --group-by?" ]; then ok; else bad "$(cat "$WORK/err")"; fi
expect_status 2 "$BIN/memscope-export" --group_by=op "$T/leaks.csv"
if [ "$(head -1 "$WORK/err")" = "memscope-export: unknown option '--group_by': did you mean --group-by?" ]; then ok; else bad "$(cat "$WORK/err")"; fi
expect_status 2 "$BIN/memscope-db" --fromat csv x.db
if [ "$(head -1 "$WORK/err")" = "memscope-db: unknown option '--fromat': did you mean --format?" ]; then ok; else bad "$(cat "$WORK/err")"; fi
# far from every option: no guess
expect_status 2 "$BIN/memscope-leaks" --colour "$T/leaks.csv"
if [ "$(head -1 "$WORK/err")" = "memscope-leaks: unknown option '--colour'" ]; then ok; else bad "$(cat "$WORK/err")"; fi
# a flag given a value is said so; an unknown short option in a bundle after a "--name=value"
# is that option, not the one before it
expect_status 2 "$BIN/memscope-leaks" --quiet=1 "$T/leaks.csv"
if [ "$(head -1 "$WORK/err")" = "memscope-leaks: option '--quiet' takes no argument" ]; then ok; else bad "$(cat "$WORK/err")"; fi
expect_status 2 "$BIN/memscope-leaks" --output=x.json -Zq "$T/leaks.csv"
if [ "$(head -1 "$WORK/err")" = "memscope-leaks: unknown option '-Z'" ]; then ok; else bad "$(cat "$WORK/err")"; fi

# --- 6. default outputs in the current folder, never beside the input -------------------------
mkdir -p data here
cp "$T/leaks.csv" data/x.csv
(cd here && "$BIN/memscope-db" -q ../data/x.csv) || bad "db ../data/x.csv"
expect_file here/x.db
expect_absent data/x.db
(cd here && "$BIN/memscope-convert" -q ../data/x.csv) || bad "convert ../data/x.csv"
expect_file here/x.mscap
expect_absent data/x.mscap
(cd here && "$BIN/memscope-db" -q --format csv x.db -o - >/dev/null) || bad "db --format csv"
(cd here && "$BIN/memscope-db" -q --format csv ../here/x.db) || bad "db --format csv x.db"
expect_file here/x.csv

# --- 7. every kind of input named: --help, the man pages, the "not a ..." message -------------
for t in leaks inefficient export db convert compare; do
	"$BIN/memscope-$t" --help >help.txt
	for kind in 'memscope_dump CSV' 'capture' 'database' 'PyTorch CUDA memory snapshots' \
		'Nsight Systems SQLite exports' 'gzip or zstd' '_ascend_pt' 'a folder'; do
		if tr '\n' ' ' <help.txt | grep -q "$kind"; then ok; else bad "$t --help: no '$kind'"; fi
	done
	# true for the tool: python_trace files for memscope-db only, a folder of several inputs
	# for those that take several, exactly two for compare, one for convert
	case $t in
	db) want='python_trace files.*a folder of any of them \(each its own input' ;;
	compare) want='a folder holding one of any of them.*Exactly two inputs: BASE and COMPARE' ;;
	convert) want='a folder holding one of any of them.*One input\.' ;;
	*) want='a folder of any of them \(each its own input' ;;
	esac
	if tr '\n' ' ' <help.txt | grep -Eq "$want"; then ok; else bad "$t --help: not '$want': $(cat help.txt)"; fi
	if [ $t = db ] || ! grep -q 'python_trace' help.txt; then ok; else bad "$t --help names python_trace files"; fi
	page=$SRC/man/man1/memscope-$t.1
	for kind in 'memory snapshot' 'Nsight Systems' 'ascend_pt' 'folder' 'gzip'; do
		if grep -q "$kind" "$page"; then ok; else bad "$page: no '$kind'"; fi
	done
done
echo "hello,world" >notes.csv
for t in leaks inefficient export convert db; do
	case $t in convert) ext=mscap ;; db) ext=db ;; *) ext=json ;; esac
	expect_status 3 "$BIN/memscope-$t" -o notes.$ext notes.csv
	expect_err_line "^memscope-$t: notes.csv: not a capture file, a database, an Nsight Systems export, a PyTorch memory snapshot, .* or a memscope_dump CSV$"
	if ! grep -q python_trace "$WORK/err"; then ok; else bad "$t: a python_trace CSV named as accepted: $(cat "$WORK/err")"; fi
done
"$BIN/memscope-convert" --help | grep -q 'PyTorch memory snapshot, Nsight' && ok || bad "convert --help: snapshots not named"

# --- 8. one file named twice (the same name, a link, a folder holding it) is read once --------
mkdir -p twice
cp "$T/leaks.csv" twice/a.csv
ln -s a.csv twice/b.csv
ln -s twice/a.csv twice-lnk.csv
expect_status 0 "$BIN/memscope-leaks" -q twice/a.csv twice/a.csv
expect_err_line "^memscope-leaks: twice/a.csv: the same as twice/a.csv, listed once$"
expect_out_has "^10 blocks unreleased at exit"
expect_status 0 "$BIN/memscope-leaks" -q --format json -o dup.json twice/a.csv twice-lnk.csv
expect_err_line "^memscope-leaks: twice-lnk.csv: the same as twice/a.csv, listed once$"
expect_status 0 "$BIN/memscope-leaks" -q --format json -o one.json twice/a.csv
if cmp -s dup.json one.json; then ok; else bad "a file named twice: not the report of it once"; fi
for t in inefficient export db; do
	case $t in db) ext=db ;; *) ext=json ;; esac
	"$BIN/memscope-$t" -q -o twice.$ext twice-lnk.csv twice >/dev/null 2>err.txt
	if grep -q "^memscope-$t: twice/a.csv: the same as twice-lnk.csv, listed once$" err.txt; then ok; else bad "$t: duplicate not said: $(cat err.txt)"; fi
done
"$BIN/memscope-db" -q -o once.db twice/a.csv 2>/dev/null || bad "db twice/a.csv"
if [ "$(sqlite3 twice.db 'select count(*) from memscope_dump')" = "$(sqlite3 once.db 'select count(*) from memscope_dump')" ]; then ok; else bad "db: a file named twice stored twice"; fi

# --- 9. a profiler folder's file a tool does not read is said, not silently passed over ---------
# (insight_test_rank_1's memory_record.csv holds spreadsheet-damaged timestamps, which the tools
# reading it refuse: memscope-leaks, which does not, names it as not read, so not checked)
expect_status 0 "$BIN/memscope-leaks" "$T/msprof/insight_test_rank_1"
if grep -q "^memscope-leaks: .*insight_test_rank_1: not read, so not checked (events this tool does not use): memory_record.csv" "$WORK/err"; then ok; else bad "leaks: unread memory_record.csv not said: $(cat "$WORK/err")"; fi
expect_status 3 "$BIN/memscope-batch" -q "$T/msprof/insight_test_rank_1"
if grep -q 'memory_record.csv:2: column 2 "Timestamp(us)": "1.69512E+15" is in exponent notation' "$WORK/err"; then ok; else bad "batch: damaged memory_record.csv: $(cat "$WORK/err")"; fi

expect_status 2 "$BIN/memscope-leaks"
expect_err_line "^memscope-leaks: no INPUT given \(a dump CSV, capture file, database, PyTorch memory snapshot, Nsight Systems export, Ascend profiler output or a folder of them; - for stdin\)$"
finish
