#!/bin/sh
# Runs every memscope tool but memscope-record in each of its output modes on every test input
# and keeps what each run gave, so that two builds can be shown byte-identical (compare.sh).
#
# usage: tests/compat/outputs.sh BUILD_DIR OUT_DIR [EXTRA_INPUT_DIR...]
#
# Not a ctest: it needs two builds. Run it on the old build and on the new one, then compare:
#   tests/compat/outputs.sh OLD_BUILD /tmp/compat-old /work/shared/testdata
#   tests/compat/outputs.sh NEW_BUILD /tmp/compat-new /work/shared/testdata
#   tests/compat/compare.sh /tmp/compat-old /tmp/compat-new
# Use this script (this checkout's inputs and generators) for both runs: the inputs are made
# from this source tree, so both builds read the same bytes (OUT_DIR/_inputs.sha256 lists them;
# compare.sh says so when they differ).
#
# BUILD_DIR is a CMake build with the tools in BUILD_DIR/tools and, with MEMSCOPE_TESTS on,
# tests/gen_ranks (without it the gen_ranks tree is left out, and said). OUT_DIR must not exist
# or be empty. Each EXTRA_INPUT_DIR is copied in whole (e.g. /work/shared/testdata: PyTorch
# snapshots, profiler folders, Kineto traces, nvprof exports); files and folders that are byte
# for byte the same as one already taken are skipped.
#
# Inputs (copied into the scratch folder as in/...): the repository's testdata/ (every dump,
# profiler file and folder; the expected outputs are not inputs), the fuzz corpora's seeds
# (tests/fuzz/corpus: captures, compressed, databases, dumps, profiler CSV and JSON, Nsight
# exports, pickles, python_trace, spool files, batch parts), what the test scripts generate
# (tests/gpu/make_snapshot.py scenarios, make_hostile.py's hostile pickles, make_nsys.py's
# exports, tests/batch/gen_ranks's tree of 64 ranks, testdata/db/reference_db.sql as a
# database), bad inputs made here (empty, header only, truncated, random bytes, NUL bytes, cut
# gzip/zstd/SQLite/pickle, an empty folder, a folder of several, a missing file) and the
# EXTRA dirs. Every input gets the main modes of every tool (convert csv/capture, leaks
# text/json/csv/reference, inefficient text/json/csv, export speedscope/folded/svg/
# chrome-trace/html, db, compare of the input with itself, batch json); inputs over 1 MiB and
# fuzz seeds a smaller set; hostile pickles one conversion. Then per tool a matrix of its
# options on chosen inputs (every --format, --group-by, --metric, --stack, --level, --measure,
# --kinds, --pool, --top, steps, windows, -o by ending, default output names, --force over an
# existing file, --compress, --annotate, --merge, --shard, --list, gates, standard input,
# several inputs, folders) and usage errors (bad options and values, --help, --version).
#
# OUT_DIR/<case>/ holds: cmd (the command line as run in the scratch folder, inputs named
# in/..., "<FILE" for standard input), stdout, stderr, status (the exit status; 152 when a run
# took over 120 s of CPU), and files/ (every file or folder the run left in its working
# folder). A file over 1 MiB (stdout too) is stored gzip -n compressed, with .gz added to its
# name. Case names are MODE@INPUT with the input's path under in/ and '/' written '~'.
#
# Paths: every run is in one scratch folder ($MEMSCOPE_COMPAT_SCRATCH, a folder to make, or a
# new mktemp -d folder), with its inputs copied in and named relative to it, so no output holds
# the scratch folder's, the build's, the source's or OUT_DIR's path: two runs of one build in
# different scratch folders give identical OUT_DIRs, and after the run the outputs are searched
# for those paths (a warning names the files that hold one).
#
# Masked, because it truly varies from run to run (nothing else does: two runs of one build
# give identical OUT_DIRs, diff -r):
# - memscope-compare's default output name holds the local time to the second
#   (memscopeDumpResults/compare/memory_compare_YYYYmmddHHMMSS.csv): the 14 digits are written
#   STAMP in file names and in stdout/stderr.
# - memscope-batch's last stderr line: "read in 0.2 s (46.4 MiB/s), 2 workers, the largest
#   3.09 MiB" (time, rate, a worker's peak RSS) is written "read in T s (R/s), 2 workers, the
#   largest RSS"; the bytes read, inputs and workers are kept.
# - memscope-batch with more than one worker (-j 2, or no -j): its stderr lines are stored
#   sorted, as the inputs' notes come in the order the workers finish them (its stdout and
#   files are in input order and kept as they are; -j 1 runs keep stderr's order too).
# Progress lines and rates are never written (standard error is not a terminal). After the run
# the inputs are checked unchanged (OUT_DIR/_inputs_unchanged).
#
# Time: with /work/shared/testdata, 8,152 cases from 1,286 input files: about 60 s of CPU, 4.5
# minutes on the shared 2-core machine under a load average of 15. OUT_DIR takes about 300 MB.
#
# The inputs come from this checkout: when testdata/, the fuzz corpora or the generators change,
# an older OUT_DIR no longer matches input for input (compare.sh says so); run this script
# again on the old build too.
set -u
LC_ALL=C
TZ=UTC
export LC_ALL TZ
unset NO_COLOR MEMSCOPE_RECORD_SPOOL MEMSCOPE_RECORD_OPTS MEMSCOPE_RECORD_MAIN
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE

die() {
	echo "outputs.sh: $*" >&2
	exit 2
}
[ $# -ge 2 ] || die "usage: outputs.sh BUILD_DIR OUT_DIR [EXTRA_INPUT_DIR...]"
BUILD=$(cd "$1" && pwd) || die "$1: no such build"
BIN=$BUILD/tools
[ -x "$BIN/memscope-leaks" ] || die "$BIN/memscope-leaks: not built"
mkdir -p "$2" || die "$2: cannot create"
OUT=$(cd "$2" && pwd)
[ -z "$(ls -A "$OUT")" ] || die "$OUT: not empty"
shift 2
SRC=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${MEMSCOPE_COMPAT_SCRATCH:-}" ]; then
	SCR=$MEMSCOPE_COMPAT_SCRATCH
	mkdir "$SCR" 2>/dev/null || die "$SCR exists: another run, or a run that was stopped"
else
	SCR=$(mktemp -d "${TMPDIR:-/tmp}/memscope-compat.XXXXXX") || die "no scratch folder"
fi
trap 'rm -rf "$SCR"' EXIT
trap 'exit 130' INT TERM
W=$SCR/w
IN=$W/in
mkdir -p "$W" "$IN"
START=$(date +%s)
N=0
STDIN=
PRE=

# ---- running one case ----

# q ARG: ARG as the shell would read it back
q() {
	case $1 in
	'' | *[!A-Za-z0-9_./,=:+@%^~-]*) printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")" ;;
	*) printf '%s' "$1" ;;
	esac
}

# run CASE TOOL ARG...: memscope-TOOL ARG... in $W, standard input $STDIN (a name in $W) or
# /dev/null, after making $PRE (a name in $W) an existing file; what it gave into $OUT/CASE
run() {
	r_c=$1 r_t=$2
	shift 2
	r_d=$OUT/$r_c
	mkdir "$r_d" 2>/dev/null || die "case $r_c: twice, or a bad name"
	{
		printf 'memscope-%s' "$r_t"
		for r_a; do
			printf ' '
			q "$r_a"
		done
		[ -n "$STDIN" ] && printf ' <%s' "$STDIN"
		[ -n "$PRE" ] && printf '   # %s existed' "$PRE"
		echo
	} >"$r_d/cmd"
	[ -n "$PRE" ] && echo 'a file that was there before' >"$W/$PRE"
	(cd "$W" && ulimit -t 120 && exec "$BIN/memscope-$r_t" "$@" <"${STDIN:-/dev/null}" \
		>"$r_d/stdout" 2>"$r_d/stderr")
	echo $? >"$r_d/status"
	for r_f in "$W"/* "$W"/.[!.]*; do
		[ "$r_f" = "$IN" ] && continue
		[ -e "$r_f" ] || [ -h "$r_f" ] || continue
		[ -d "$r_d/files" ] || mkdir "$r_d/files"
		mv "$r_f" "$r_d/files/"
	done
	if [ "$r_t" = batch ]; then
		# what varies: the time, rate and worker size of the summary; with more than one
		# worker, the order of the inputs' notes (they come as the workers finish)
		sed -i -E -e 's/ read in [0-9.]+ s \([^)]*\/s\), ([0-9]+ workers?), / read in T s (R\/s), \1, /' \
			-e 's/(read in T s .*, the largest) [^ ]+ [^ ]+$/\1 RSS/' "$r_d/stderr"
		case " $* " in
		*" -j 1 "*) ;;
		*) sort -o "$r_d/stderr" "$r_d/stderr" ;;
		esac
	fi
	N=$((N + 1))
}

# id PATH: PATH under in/ as a case name's part
id() {
	printf '%s' "${1#in/}" | tr '/' '~'
}

# ---- the modes of every input ----

# full INPUT: every tool's main modes
full() {
	i=$(id "$1")
	run "convert-csv@$i" convert -q --format csv -o - "$1"
	run "convert-csv-lenient@$i" convert -q --lenient --format csv -o - "$1"
	run "convert-capture@$i" convert --format capture -o out.mscap "$1"
	run "leaks-text@$i" leaks "$1"
	run "leaks-json@$i" leaks -q --format json "$1"
	run "leaks-csv@$i" leaks -q --format csv "$1"
	run "leaks-reference@$i" leaks -q --format reference "$1"
	run "leaks-json-lenient@$i" leaks -q --lenient --format json "$1"
	run "inefficient-text@$i" inefficient "$1"
	run "inefficient-json@$i" inefficient -q --format json "$1"
	run "inefficient-csv@$i" inefficient -q --format csv "$1"
	run "export-speedscope@$i" export "$1"
	run "export-folded@$i" export -q --format folded "$1"
	run "export-svg@$i" export -q --format svg "$1"
	run "export-chrome@$i" export -q --format chrome-trace "$1"
	run "export-html@$i" export -q --format html "$1"
	run "db@$i" db -o out.db "$1"
	run "compare-self@$i" compare -i "$1,$1" -o -
	run "batch-json@$i" batch -j 1 --format json "$1"
}

# big INPUT: the modes whose outputs stay small on a large input
big() {
	i=$(id "$1")
	run "convert-capture@$i" convert --format capture -o out.mscap "$1"
	run "leaks-text@$i" leaks "$1"
	run "leaks-json-top5@$i" leaks -q --format json --top 5 "$1"
	run "inefficient-json@$i" inefficient -q --format json "$1"
	run "export-speedscope@$i" export "$1"
	run "export-chrome@$i" export -q --format chrome-trace "$1"
	run "batch-json@$i" batch -j 1 --format json "$1"
}

# seed INPUT: a fuzz seed, mostly a reader's error paths
seed() {
	i=$(id "$1")
	run "convert-csv@$i" convert -q --format csv -o - "$1"
	run "convert-csv-lenient@$i" convert -q --lenient --format csv -o - "$1"
	run "leaks-json@$i" leaks --format json "$1"
	run "leaks-json-lenient@$i" leaks -q --lenient --format json "$1"
	run "inefficient-json@$i" inefficient --format json "$1"
	run "export-folded@$i" export --format folded "$1"
	run "db@$i" db -q -o out.db "$1"
}

# seed_csv INPUT: a seed of the CSV tokenizer
seed_csv() {
	i=$(id "$1")
	run "convert-csv@$i" convert -q --format csv -o - "$1"
	run "convert-csv-lenient@$i" convert -q --lenient --format csv -o - "$1"
	run "leaks-json@$i" leaks --format json "$1"
}

# folder DIR: a folder of inputs (or one profiler output)
folder() {
	i=$(id "$1")
	run "folder-convert-csv@$i" convert -q --format csv -o - "$1"
	run "folder-leaks-text@$i" leaks "$1"
	run "folder-leaks-json@$i" leaks -q --format json --top 5 "$1"
	run "folder-inefficient-json@$i" inefficient -q --format json --top 5 "$1"
	run "folder-export-speedscope@$i" export "$1"
	run "folder-export-chrome@$i" export -q --format chrome-trace "$1"
	run "folder-db@$i" db -q -o out.db "$1"
	run "folder-compare-self@$i" compare -i "$1,$1" -o -
	run "folder-batch-text@$i" batch -j 2 "$1"
	run "folder-batch-json@$i" batch -q -j 1 --format json "$1"
	run "folder-batch-list@$i" batch --list "$1"
}

# ---- the inputs ----

SEEN=$SCR/seen
: >"$SEEN"
# fresh PATH: PATH (a file) is not byte for byte an input already taken; remember it
fresh() {
	h=$(sha256sum <"$1" | cut -c1-64)
	if grep -qx "$h" "$SEEN"; then return 1; fi
	echo "$h" >>"$SEEN"
}
# fresh_dir PATH: the same for a folder (its file names and bytes)
fresh_dir() {
	h=$(cd "$1" && find . -type f | sort | while read -r f; do
		printf '%s %s\n' "$f" "$(sha256sum <"$f" | cut -c1-64)"
	done | sha256sum | cut -c1-64)
	if grep -qx "d$h" "$SEEN"; then return 1; fi
	echo "d$h" >>"$SEEN"
}
# each_file DIR FN [BIG_FN]: FN on every fresh input file under DIR (BIG_FN over 1 MiB)
each_file() {
	find "$1" -type f ! -name 'README*' ! -name '*.sql' ! -name '*_expected.csv' ! -name '*.txt' \
		! -name '*.ref' ! -name '*.pickle.json' ! -name '*.sqlite.json' | sort >"$SCR/list"
	while read -r f; do
		fresh "$W/$f" || continue
		if [ $# -ge 3 ] && [ "$(wc -c <"$W/$f")" -gt 1048576 ]; then
			"$3" "$f"
		else
			"$2" "$f"
		fi
	done <"$SCR/list"
}

echo "outputs.sh: making the inputs" >&2
cd "$W" || die "$W"
cp -R "$SRC/testdata" in/td
mkdir in/fz in/gen in/bad
for c in batch_part capture compressed csvtok db dump_csv export inefficient leaks msprof_csv \
	msprof_json nsys pickle python_trace spool; do
	cp -R "$SRC/tests/fuzz/corpus/$c" "in/fz/$c"
done
# the test scripts' generated inputs
G=$SRC/tests/gpu
mkdir in/gen/snap
for s in loop ringcut nohistory special deep opcodes expandable shared empty; do
	python3 "$G/make_snapshot.py" -p 4 "$s" "in/gen/snap/$s-p4.pickle" >/dev/null ||
		die "make_snapshot.py $s failed"
done
python3 "$G/make_snapshot.py" -p 2 loop in/gen/snap/loop-p2.pickle >/dev/null
python3 "$G/make_snapshot.py" -p 5 ringcut in/gen/snap/ringcut-p5.pickle >/dev/null
python3 "$G/make_snapshot.py" stream in/gen/snap/stream.pickle --size 300000 >/dev/null
gzip -n -c in/gen/snap/loop-p4.pickle >in/gen/snap/loop.gz
zstd -q -c in/gen/snap/ringcut-p4.pickle >in/gen/snap/ringcut.zst
python3 "$G/make_hostile.py" in/gen/hostile >/dev/null || die "make_hostile.py failed"
python3 "$G/make_nsys.py" in/gen/nsys >/dev/null || die "make_nsys.py failed"
rm -f in/gen/snap/*.json in/gen/nsys/*.json
mkdir in/gen/db
python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.executescript(open(sys.argv[2]).read()); c.commit()' \
	in/gen/db/reference.db in/td/db/reference_db.sql || die "reference.db"
if [ -x "$BUILD/tests/gen_ranks" ]; then
	(cd in/gen && "$BUILD/tests/gen_ranks" tree tree) || die "gen_ranks tree failed"
else
	echo "outputs.sh: $BUILD/tests/gen_ranks not built: no gen_ranks tree" >&2
fi
# bad inputs
B=in/bad
: >$B/empty.csv
: >$B/empty
head -n 1 in/td/baseline.csv >$B/header_only.csv
head -c 3000 in/td/baseline.csv >$B/cut_mid_row.csv
head -n 40 in/td/baseline.csv >$B/cut_at_row.csv
python3 -c 'import random, sys
r = random.Random(30)
data = bytes(r.getrandbits(8) for _ in range(4096))
for name in sys.argv[1:]:
    open(name, "wb").write(data)' $B/random.bin $B/random.csv $B/random.pickle $B/random.db
{
	head -n 20 in/td/baseline.csv
	printf '21,MALLOC,PTA,1,2,3\0\0\0,4\n'
	tail -n +21 in/td/baseline.csv
} >$B/nul_bytes.csv
{
	head -n 30 in/td/baseline.csv
	printf '%s\n' '31,"unterminated quote,PTA,1'
	tail -n +31 in/td/baseline.csv
} >$B/open_quote.csv
sed -n '1p;2,40s/^\([0-9]*\),\([A-Z_]*\),/\1,\2,,/p' in/td/baseline.csv >$B/extra_column.csv
python3 -c 'import sys
open(sys.argv[1], "w").write("ID,Event," + "x" * 300000 + "\n")' $B/long_line.csv
gzip -n -c in/td/baseline.csv | head -c 2000 >$B/cut.csv.gz
printf '\037\213\010\000garbage after a gzip magic\n' >$B/bad_magic.csv.gz
zstd -q -c in/td/leaks.csv | head -c 1500 >$B/cut.csv.zst
head -c 8192 in/gen/db/reference.db >$B/cut.db
echo 'not a database' >$B/text.db
head -c 5000 in/gen/snap/loop-p4.pickle >$B/cut.pickle
head -c 700 in/td/msprof/torch_npu_level0_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json \
	>$B/cut_trace_view.json
mkdir $B/empty_dir $B/several
cp in/td/baseline.csv in/td/leaks.csv $B/several/
mkdir -p $B/empty_ascend_pt/ASCEND_PROFILER_OUTPUT
# the extra folders
k=0
for x; do
	k=$((k + 1))
	cp -R "$x" "in/x$k-$(basename "$x")" || die "$x: cannot copy"
	chmod -R u+w "in/x$k-$(basename "$x")"
done
find in -type f | sort | xargs -d '\n' sha256sum >"$OUT/_inputs.sha256"
echo "outputs.sh: $(wc -l <"$OUT/_inputs.sha256") input files; running" >&2

# ---- every input, every tool ----

each_file in/td full
for f in in/bad/*; do
	[ -f "$f" ] && full "$f"
done
full in/bad/missing.csv
folder in/bad/empty_dir
folder in/bad/several
folder in/bad/empty_ascend_pt
# profiler folders and folders of inputs
for d in $(find in/td -type d | sort); do
	fresh_dir "$d" && folder "$d"
done
for d in $(find in/td/msprof in/td/msprof-quirks -mindepth 1 -maxdepth 1 -type d | sort); do
	full "$d"
done
each_file in/gen/snap full
each_file in/gen/nsys full
each_file in/gen/db full
folder in/gen/snap
folder in/gen/nsys
for f in $(find in/gen/hostile -type f | sort); do
	fresh "$W/$f" && run "convert-csv@$(id "$f")" convert -q --format csv -o - "$f"
done
for c in in/fz/*; do
	case $c in
	*/csvtok) each_file "$c" seed_csv ;;
	*) each_file "$c" seed ;;
	esac
done
for x in in/x*; do
	[ -d "$x" ] || continue
	each_file "$x" full big
	for d in $(find "$x" -type d | sort); do
		fresh_dir "$d" && folder "$d"
	done
done
if [ -d in/gen/tree ]; then
	for f in $(find in/gen/tree/rank3 in/gen/tree/rank5 in/gen/tree/rank17 in/gen/tree/rank30 \
		in/gen/tree/rank50 -name '*.csv' | sort); do
		fresh "$W/$f" && full "$f"
	done
fi
echo "outputs.sh: $N cases of every input; the option matrices" >&2

# ---- every tool's options ----

# with_stdin CASE TOOL ARG...: run with the last ARG (a file) as standard input, named -
with_stdin() {
	ws_c=$1 ws_t=$2
	shift 2
	ws_n=$#
	ws_k=0
	for ws_a; do
		ws_k=$((ws_k + 1))
		if [ $ws_k -eq $ws_n ]; then
			STDIN=$ws_a
			set -- "$@" -
		else
			set -- "$@" "$ws_a"
		fi
		shift
	done
	run "$ws_c" "$ws_t" "$@"
	STDIN=
}

# with_pre CASE NAME TOOL ARG...: run with NAME an existing file
with_pre() {
	PRE=$2
	wp_c=$1
	shift 2
	run "$wp_c" "$@"
	PRE=
}

# convert_opts INPUT
convert_opts() {
	i=$(id "$1")
	run "convert-default@$i" convert "$1"
	run "convert-o-csv@$i" convert -q -o out.csv "$1"
	run "convert-o-mscap@$i" convert -q -o out.mscap "$1"
	run "convert-o-csv.gz@$i" convert -o out.csv.gz "$1"
	run "convert-o-mscap.zst@$i" convert -q -o out.mscap.zst "$1"
	run "convert-gzip@$i" convert -q --compress gzip -o out.csv "$1"
	run "convert-zstd@$i" convert -q --compress zstd --format capture -o out.bin "$1"
	run "convert-to-csv@$i" convert -q -t csv -o - "$1"
	run "convert-to-capture@$i" convert -q --to capture -o - "$1"
	for u in auto ns us; do
		run "convert-time-$u@$i" convert -q --time-unit $u --format csv -o - "$1"
	done
	with_pre "convert-exists@$i" out.csv convert -o out.csv "$1"
	with_pre "convert-force@$i" out.csv convert -q -f -o out.csv "$1"
	[ -f "$1" ] && with_stdin "convert-stdin@$i" convert --format csv -o - "$1"
	run "convert-lenient@$i" convert --lenient -o out.mscap "$1"
}

# leaks_opts INPUT
leaks_opts() {
	i=$(id "$1")
	for fm in text json csv; do
		for g in stack op owner; do
			run "leaks-$fm-by-$g@$i" leaks -q --format $fm --group-by $g "$1"
		done
	done
	run "leaks-reference-summary@$i" leaks --format reference "$1"
	for tp in 0 1; do
		run "leaks-text-top$tp@$i" leaks -q --top $tp "$1"
		run "leaks-json-top$tp@$i" leaks -q --format json --top $tp "$1"
	done
	run "leaks-kinds-step@$i" leaks --kinds step "$1"
	run "leaks-kinds-exit@$i" leaks --kinds exit --format json "$1"
	run "leaks-kinds-step,exit@$i" leaks -q --kinds step,exit --format csv "$1"
	run "leaks-kinds-mark@$i" leaks --kinds mark --mark iter "$1"
	run "leaks-pool-all@$i" leaks --pool all "$1"
	run "leaks-pool-hal,pta@$i" leaks -q --pool hal,pta --format reference "$1"
	run "leaks-pool-host@$i" leaks -q --pool host --format json "$1"
	run "leaks-skip0@$i" leaks --skip-steps 0 "$1"
	run "leaks-alive2@$i" leaks -q --min-steps-alive 2 --format reference "$1"
	run "leaks-mark@$i" leaks --mark iter "$1"
	run "leaks-mark-json@$i" leaks -q --mark iter --format json "$1"
	run "leaks-mark-index1@$i" leaks -q --format reference --mark iter --start-index 1 \
		--kinds mark --pool hal "$1"
	run "leaks-mark-none@$i" leaks -q --mark nothing "$1"
	run "leaks-fail@$i" leaks --fail-on-finding "$1"
	run "leaks-fail-on-leak@$i" leaks -q --fail-on-leak --format json "$1"
	for o in r.json r.csv r.txt; do
		run "leaks-o-$o@$i" leaks -o $o "$1"
	done
	with_pre "leaks-exists@$i" r.json leaks -o r.json "$1"
	with_pre "leaks-force@$i" r.json leaks -q -f -o r.json "$1"
	run "leaks-lenient@$i" leaks --lenient "$1"
	[ -f "$1" ] && with_stdin "leaks-stdin@$i" leaks --format json "$1"
}

# inefficient_opts INPUT
inefficient_opts() {
	i=$(id "$1")
	for fm in text json csv; do
		run "inefficient-$fm-plain@$i" inefficient -q --format $fm "$1"
		run "inefficient-$fm-idle3@$i" inefficient -q --format $fm --idle-threshold 3 "$1"
		run "inefficient-$fm-min1K@$i" inefficient -q --format $fm --min-size 1K "$1"
		run "inefficient-$fm-early@$i" inefficient -q --format $fm --kinds early_allocation "$1"
		run "inefficient-$fm-late,idle@$i" inefficient -q --format $fm \
			--kinds late_deallocation,temporary_idleness --idle-threshold 1 "$1"
		run "inefficient-$fm-top0@$i" inefficient -q --format $fm --top 0 "$1"
		run "inefficient-$fm-top1@$i" inefficient -q --format $fm --top 1 "$1"
	done
	run "inefficient-types@$i" inefficient --types early_allocation,late_deallocation "$1"
	run "inefficient-min1M@$i" inefficient --min-size 1M "$1"
	run "inefficient-annotate@$i" inefficient --annotate ann.csv "$1"
	run "inefficient-annotate-o@$i" inefficient --annotate ann.csv -o r.json --idle-threshold 3 \
		"$1"
	run "inefficient-fail@$i" inefficient --fail-on-finding "$1"
	run "inefficient-o-csv@$i" inefficient -o r.csv "$1"
	with_pre "inefficient-exists@$i" r.json inefficient -o r.json "$1"
	with_pre "inefficient-force@$i" r.json inefficient -q -f -o r.json "$1"
	run "inefficient-lenient@$i" inefficient --lenient --idle-threshold 3 "$1"
	[ -f "$1" ] && with_stdin "inefficient-stdin@$i" inefficient --format json "$1"
}

# export_opts INPUT
export_opts() {
	i=$(id "$1")
	for m in allocated peak leaked count allocated,peak,leaked,count; do
		run "export-speedscope-$m@$i" export -q --metric $m "$1"
	done
	for m in allocated peak leaked count; do
		run "export-folded-$m@$i" export -q --format folded --metric $m "$1"
		run "export-svg-$m@$i" export -q --format svg --metric $m "$1"
	done
	for st in python c both; do
		run "export-folded-stack-$st@$i" export -q --format folded --stack $st "$1"
	done
	run "export-folded-by-owner@$i" export -q --format folded --group-by owner "$1"
	run "export-folded-by-op@$i" export -q --format folded --group-by op --metric peak "$1"
	run "export-speedscope-by-op@$i" export -q --group-by op --metric allocated,peak "$1"
	run "export-speedscope-by-owner@$i" export -q --group-by owner "$1"
	run "export-speedscope-pool-all@$i" export --pool all "$1"
	run "export-folded-pool-hal@$i" export --format folded --pool hal "$1"
	run "export-chrome-summary@$i" export --format chrome-trace "$1"
	run "export-chrome-res0@$i" export -q --format chrome-trace --resolution 0 "$1"
	run "export-chrome-res1ms@$i" export --format chrome-trace --resolution 1ms "$1"
	run "export-chrome-step1@$i" export --format chrome-trace --step 1 "$1"
	run "export-chrome-step2@$i" export -q --format chrome-trace --step 2 "$1"
	run "export-chrome-window@$i" export --format chrome-trace --from 0.0002 --to 0.0007 "$1"
	run "export-chrome-from-ns@$i" export -q --format chrome-trace --from 1000500000ns "$1"
	run "export-chrome-pool-all@$i" export -q --format chrome-trace --pool all "$1"
	run "export-html-summary@$i" export --format html "$1"
	run "export-html-step1@$i" export -q --format html --step 1 "$1"
	run "export-html-window@$i" export -q --format html --from 0.0002 --to 0.0007 "$1"
	run "export-html-pool-all@$i" export -q --format html --pool all "$1"
	for o in f.svg f.html f.json f.folded f.trace.json f.txt; do
		run "export-o-$o@$i" export -o $o "$1"
	done
	with_pre "export-exists@$i" f.svg export -o f.svg "$1"
	with_pre "export-force@$i" f.svg export -q -f -o f.svg "$1"
	run "export-lenient@$i" export --lenient --format folded "$1"
	[ -f "$1" ] && with_stdin "export-stdin@$i" export --format folded "$1"
}

# compare_opts BASE COMPARE
compare_opts() {
	i=$(id "$1")+$(id "$2")
	for l in op kernel op,kernel; do
		for m in reference delta peak; do
			run "compare-$l-$m@$i" compare -i "$1,$2" --level $l --measure $m -o -
		done
	done
	run "compare-quiet@$i" compare -q -i "$1,$2" -o -
	run "compare-swapped@$i" compare -i "$2,$1" -o -
	run "compare-o@$i" compare --input "$1,$2" -o cmp.csv
	run "compare-default@$i" compare -i "$1,$2"
	run "compare-output-dir@$i" compare -i "$1,$2" --output-dir outdir --level kernel
	run "compare-fullwidth-comma@$i" compare -q -i "$1，$2" -o -
	run "compare-metric@$i" compare -q -i "$1,$2" --metric delta -o -
	for s in 1 2 3; do
		run "compare-step$s@$i" compare -i "$1,$2" --step $s -o -
	done
	with_pre "compare-exists@$i" cmp.csv compare -i "$1,$2" -o cmp.csv
	with_pre "compare-force@$i" cmp.csv compare -q -f -i "$1,$2" -o cmp.csv
	run "compare-lenient@$i" compare --lenient -i "$1,$2" -o -
}

T=in/td
SNAP=in/gen/snap
PROF=$T/msprof/torch_npu_level0_rank0_ascend_pt
CAP=in/fz/capture/conv_sample_baseline_head.mscap
for f in $T/leaks/steps_mstx.csv $T/memscope_dump_20250428113810.csv $T/stacks_crlf.csv \
	$T/baseline.csv $PROF $T/msprof-quirks/PROF_000001_20260605161708478_FRJKORBPFMHQMGLA \
	$SNAP/loop-p4.pickle in/gen/nsys/leak.sqlite in/gen/db/reference.db $CAP \
	in/fz/compressed/dump_head.csv.gz; do
	convert_opts "$f"
done
for f in $T/leaks/steps_mstx.csv $T/leaks/steps_system.csv $T/leaks/late.csv \
	$T/leaks/mark_legacy.csv $T/leaks/groups.csv $T/leaks/profiler_steps.csv $T/leaks.csv \
	$T/memscope_dump_20250428113810.csv $T/stacks_crlf.csv $PROF $SNAP/loop-p4.pickle \
	in/gen/nsys/leak.sqlite in/gen/db/reference.db $CAP; do
	leaks_opts "$f"
done
for f in $T/inefficient/*.csv $T/baseline.csv $T/leaks/steps_mstx.csv in/gen/db/reference.db \
	$CAP; do
	inefficient_opts "$f"
done
for f in $T/export/ops.csv $T/export/peak.csv $T/leaks/steps_mstx.csv $T/leaks/groups.csv \
	$T/stacks_crlf.csv $T/baseline.csv $T/compare/steps_base.csv $SNAP/loop-p4.pickle $PROF \
	in/gen/nsys/leak.sqlite; do
	export_opts "$f"
done
while read -r a b; do
	compare_opts "$a" "$b"
done <<PAIRS
$T/baseline.csv $T/leaks.csv
$T/memscope_dump_20250428113810.csv $T/memscope_dump_20250428113811.csv
$T/compare/both_base.csv $T/compare/both_cmp.csv
$T/compare/hostile_base.csv $T/compare/hostile_cmp.csv
$T/compare/metric_base.csv $T/compare/metric_cmp.csv
$T/compare/ms_base.csv $T/compare/ms_cmp.csv
$T/compare/named_base.csv $T/compare/named_cmp.csv
$T/compare/steps_base.csv $T/compare/steps_cmp.csv
$T/compare/steps_base.csv $T/compare/steps_nested.csv
$T/compare/sysstep_base.csv $T/compare/sysstep_cmp.csv
$T/compare/tie_base.csv $T/compare/tie_cmp.csv
$T/compare/mixed_pools.csv $T/baseline.csv
$T/stacks_crlf.csv $T/stacks_crlf_twin.csv
$T/msprof/insight_test_rank_0 $T/msprof/insight_test_rank_1
$PROF $T/msprof/torch_npu_st_level2_rank_0_ascend_pt
$SNAP/loop-p4.pickle $SNAP/ringcut-p4.pickle
in/gen/nsys/nsys_numbering.sqlite in/gen/nsys/leak.sqlite
in/gen/db/reference.db $T/baseline.csv
$CAP $T/baseline.csv
PAIRS

# several inputs at once
L2="$T/leaks/steps_mstx.csv $T/leaks/steps_system.csv"
for fm in text json csv reference; do
	run "leaks-two-$fm@steps_mstx+steps_system" leaks --format $fm $L2
done
run "leaks-two-top1@steps_mstx+steps_system" leaks -q --format json --top 1 $L2
run "leaks-mixed@baseline+pickle+nsys+db" leaks $T/baseline.csv $SNAP/loop-p4.pickle \
	in/gen/nsys/leak.sqlite in/gen/db/reference.db
run "inefficient-two@rules+processes" inefficient $T/inefficient/rules.csv \
	$T/inefficient/processes.csv
run "inefficient-two-json@rules+processes" inefficient -q --format json \
	$T/inefficient/rules.csv $T/inefficient/processes.csv
E2="$T/export/ops.csv $T/export/peak.csv"
for fm in speedscope folded svg chrome-trace html; do
	run "export-two-$fm@ops+peak" export --format $fm $E2
	run "export-merge-$fm@ops+peak" export -q --merge --format $fm $E2
done
run "export-merge-mixed@baseline+pickle+nsys" export --merge $T/baseline.csv \
	$SNAP/loop-p4.pickle in/gen/nsys/leak.sqlite

# memscope-db
run "db-default@baseline" db $T/baseline.csv
run "db-multi@baseline+python_trace+leaks" db -o multi.db $T/baseline.csv \
	$T/db/python_trace.csv $T/leaks.csv
run "db-mixed@pickle+nsys+capture+profiler" db -o mixed.db $SNAP/loop-p4.pickle \
	in/gen/nsys/leak.sqlite $CAP $PROF
with_pre "db-exists@baseline" out.db db -o out.db $T/baseline.csv
with_pre "db-force@baseline" out.db db -q -f -o out.db $T/baseline.csv
run "db-hostile@hostile" db -o out.db $T/db/hostile.csv
run "db-hostile-lenient@hostile" db --lenient -o out.db $T/db/hostile.csv
with_stdin "db-stdin@baseline" db -o out.db $T/baseline.csv
for f in in/gen/db/reference.db $(find in/fz/db in/gen/nsys in/bad -name '*.db' -o \
	-name '*.sqlite' | sort); do
	i=$(id "$f")
	run "db-csv@$i" db --format csv -o - "$f"
	run "db-csv-default@$i" db --format csv "$f"
done
run "db-to-csv@reference.db" db --to-csv -o out.csv in/gen/db/reference.db
with_pre "db-csv-exists@reference.db" out.csv db --format csv -o out.csv in/gen/db/reference.db
run "db-csv-two@reference.db" db --format csv -o - in/gen/db/reference.db \
	in/fz/db/with_trace.db
run "db-csv-of-csv@baseline" db --format csv -o - $T/baseline.csv

# memscope-batch
if [ -d in/gen/tree ]; then
	R=in/gen/tree
	for fm in text json csv; do
		run "batch-$fm@tree" batch -j 2 --format $fm $R
	done
	run "batch-j1@tree" batch -q -j 1 --format json $R
	run "batch-list@tree" batch --list $R
	run "batch-fail-on-leak@tree" batch -q -j 2 --fail-on-leak $R
	run "batch-fail-step@tree" batch -q -j 2 --fail-on-leak --kinds step --format csv $R
	run "batch-fail-exit@tree" batch -q -j 2 --fail-on-leak --kinds exit --format json $R
	run "batch-max-peak-1G@tree" batch -q -j 2 --max-peak 1G $R
	run "batch-max-peak-100M@tree" batch -j 2 --max-peak 100M --format csv $R
	run "batch-o-json@tree" batch -j 2 -o out.json $R
	run "batch-o-csv@tree" batch -q -j 2 -o out.csv $R
	run "batch-lenient@tree" batch -j 2 --lenient --format json $R
	for s in 0/3 1/3 2/3; do
		run "batch-shard-$(echo $s | sed s,/,of,)@tree" batch -j 2 --shard $s -o part.json $R
	done
	GOOD=$(ls -d $R/rank* | grep -v -e '/rank30$' -e '/rank50$' | sort | head -n 12)
	run "batch-good@tree-ranks" batch -j 2 --fail-on-leak --max-peak 2G $GOOD
fi
run "batch-walk@td" batch -j 2 $T
run "batch-walk-json@td" batch -q -j 2 --format json $T
run "batch-list@td" batch --list $T
run "batch-walk@x" batch -j 2 in/x* in/gen/snap in/gen/nsys
P="$(find in/fz/batch_part -type f ! -name 'README*' | sort | tr '\n' ' ')"
for fm in text json csv; do
	run "batch-merge-$fm@corpus-parts" batch --merge --format $fm $P
done
run "batch-merge-fail@corpus-parts" batch --merge -q --fail-on-leak --max-peak 1M $P
for f in $P; do
	run "batch-merge-one@$(id "$f")" batch --merge --format json "$f"
done

# ---- usage errors, --help, --version ----
# every tool built but the recorder (it runs a program: tests/record/), so a new one is in by itself
for b in "$BIN"/memscope-*; do
	t=${b##*/memscope-}
	{ [ -f "$b" ] && [ -x "$b" ] && [ "$t" != record ]; } || continue
	run "usage-$t-help" $t --help
	run "usage-$t-h" $t -h
	run "usage-$t-version" $t -V
	run "usage-$t-none" $t
	run "usage-$t-bad-option" $t --no-such-option $T/baseline.csv
	run "usage-$t-bad-format" $t --format nope $T/baseline.csv
	run "usage-$t-missing" $t in/bad/missing.csv
	run "usage-$t-missing-arg" $t $T/baseline.csv -o
done
for a in "--time-unit s" "--compress lz4" "--format csv --format capture" "-o out.txt" \
	"--format capture -o out.csv"; do
	# shellcheck disable=SC2086
	run "usage-convert-$(echo "$a" | tr ' ' _)" convert $a $T/baseline.csv
done
run "usage-convert-two-inputs" convert -o - $T/baseline.csv $T/leaks.csv
run "usage-convert-folder-of-several" convert -o - in/bad/several
for a in "--level nope" "--measure bytes" "--step x" "--step 0" "--input $T/baseline.csv" \
	"--input $T/baseline.csv,$T/leaks.csv,$T/leaks.csv" "--input ,"; do
	run "usage-compare-$(echo "$a" | tr ' /' _~)" compare $a
done
run "usage-compare-two-i" compare -i $T/baseline.csv,$T/leaks.csv -i $T/leaks.csv,$T/baseline.csv
run "usage-compare-positional" compare $T/baseline.csv $T/leaks.csv
for a in "--top x" "--top -1" "--group-by nope" "--kinds nope" "--kinds mark" \
	"--start-index 1" "--pool nope" "--skip-steps 1x" "--min-steps-alive 0" "-o r.json --format csv" \
	"--format nope" "--top 99999999999999999999"; do
	run "usage-leaks-$(echo "$a" | tr ' ' _)" leaks $a $T/leaks.csv
done
for a in "--idle-threshold -1" "--idle-threshold x" "--min-size 12Q" "--min-size 1.5K" \
	"--kinds nope" "--top x" "-o r.csv --format json"; do
	run "usage-inefficient-$(echo "$a" | tr ' ' _)" inefficient $a $T/baseline.csv
done
for a in "--metric bytes" "--metric peak,count --format folded" "--stack does" \
	"--group-by nope" "--resolution 3" "--resolution does" "--from x" "--from 2 --to 1" \
	"--step x" "--step 1 --from 0.1" "-o f.xyz" "--pool nope"; do
	run "usage-export-$(echo "$a" | tr ' ,' _+)" export $a $T/baseline.csv
done
run "usage-export-step-speedscope" export --step 1 $T/leaks/steps_mstx.csv
run "usage-export-stack-by-op" export --group-by op --stack c $T/leaks/steps_mstx.csv
run "usage-leaks-reference-grouped" leaks --format reference --group-by op $T/leaks.csv
for a in "-j 0" "-j x" "--shard 3/2" "--shard x" "--max-peak x" "--kinds mark" "--merge"; do
	run "usage-batch-$(echo "$a" | tr ' /' _~)" batch $a $T/baseline.csv
done
run "usage-db-format-nope" db --format sql $T/baseline.csv
run "usage-db-csv-two" db --format csv -o out.csv in/gen/db/reference.db in/gen/db/reference.db

# ---- after the run ----

# the one thing that varies: the local time in memscope-compare's default output name
find "$OUT" -depth -name 'memory_compare_[0-9]*' | while read -r f; do
	b=$(basename "$f" | sed 's/^memory_compare_[0-9]\{14\}/memory_compare_STAMP/')
	mv "$f" "$(dirname "$f")/$b"
done
grep -rl --include=stdout --include=stderr 'memory_compare_[0-9]\{14\}' "$OUT" |
	while read -r f; do
		sed -i 's/memory_compare_[0-9]\{14\}/memory_compare_STAMP/g' "$f"
	done
# the inputs are never written
find in -type f | sort | xargs -d '\n' sha256sum | diff "$OUT/_inputs.sha256" - \
	>"$OUT/_inputs_unchanged" 2>&1
# large outputs compressed
find "$OUT" -type f -size +1024k ! -name '*.gz' -exec gzip -n -1 {} +
# no output may hold a path of this run's folders
LEAK=$(grep -rlF -e "$SCR" -e "$BUILD" -e "$OUT" -e "$SRC" "$OUT" --exclude=_inputs.sha256 |
	head -n 5)
[ -z "$LEAK" ] || echo "outputs.sh: a path of this run in: $LEAK" >&2
[ -s "$OUT/_inputs_unchanged" ] &&
	echo "outputs.sh: an input was changed: see $OUT/_inputs_unchanged" >&2
echo "outputs.sh: $N cases in $(($(date +%s) - START)) s -> $OUT" >&2
