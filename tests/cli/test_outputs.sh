#!/bin/sh
# Every tool's outputs: never an input by any name (symbolic and hard links, both ways, --annotate
# too), no dangling link replaced without --force, exactly one winner when two runs write one new
# path, and an exit status that agrees with what a late signal left. Args: BIN_DIR SRC_DIR FAULT_LIB
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
FAULT=$3
. "$SRC/tests/cli/lib.sh"
cd "$WORK" || exit 1
cp "$SRC/testdata/leaks.csv" in.csv
cp "$SRC/testdata/baseline.csv" other.csv
ln -s in.csv lnk.csv
ln in.csv hl.csv
sum0=$(cksum <in.csv)
# the fault injector is not built with the sanitizers' runtime: let it load first anyway
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS

# w TOOL OUT INPUT [OPTION...]: TOOL writes OUT from INPUT (compare: INPUT against other.csv)
w() {
	tool=$1 out=$2 in=$3
	shift 3
	case $tool in
	compare) "$BIN/memscope-compare" -q "$@" -o "$out" --input "$in,other.csv" ;;
	convert) "$BIN/memscope-convert" -q -t csv "$@" -o "$out" "$in" ;;
	export) "$BIN/memscope-export" -q --format folded "$@" -o "$out" "$in" ;;
	*) "$BIN/memscope-$tool" -q "$@" -o "$out" "$in" ;;
	esac
}

input_intact() {
	if [ "$(cksum <in.csv)" = "$sum0" ] && [ -L lnk.csv ]; then ok; else bad "$1: input changed"; fi
}

for t in convert compare leaks inefficient db export; do
	# the input by another name, in either direction, with --force: refused, input untouched
	for pair in "in.csv lnk.csv" "in.csv hl.csv" "lnk.csv in.csv" "hl.csv in.csv" "lnk.csv lnk.csv"; do
		set -- $pair
		expect_status 2 w $t "$1" "$2" -f
		expect_err_line "^memscope-$t: $1: output would overwrite the input"
		input_intact "$t -o $1 $2"
		[ -z "$(ls ./*.tmp.* 2>/dev/null)" ] && ok || bad "$t: temporary file left"
	done
	# a dangling symbolic link is an existing name: replaced with --force only
	rm -f dangling
	ln -s nowhere dangling
	expect_status 2 w $t dangling in.csv
	expect_err_line "^memscope-$t: dangling: exists as a dangling symbolic link \(use --force"
	[ -L dangling ] && [ ! -e nowhere ] && ok || bad "$t: dangling link replaced without --force"
	expect_status 0 w $t dangling in.csv -f
	[ -f dangling ] && [ ! -L dangling ] && [ ! -e nowhere ] && ok || bad "$t: -f did not replace the link"
	rm -f dangling

	# two runs writing one new path at once: exactly one writes it, the other exits 2 naming it;
	# also where the file system has no RENAME_NOREPLACE (a hard link then), or no hard links
	w $t solo.out in.csv >/dev/null 2>&1 || bad "$t: solo run"
	for fs in "" MEMSCOPE_FAULT_NOREPLACE=1 "MEMSCOPE_FAULT_NOREPLACE=1 MEMSCOPE_FAULT_NOLINK=1"; do
		rm -f race.out
		# without hard links only a check before the rename is left: the runs one at a time
		run="$fs LD_PRELOAD=\$FAULT MEMSCOPE_FAULT_DELAY_MS=400 w \$t race.out in.csv >/dev/null"
		if [ "$fs" = "${fs%NOLINK=1}" ]; then
			eval "$run" 2>race1.err &
			p1=$!
			eval "$run" 2>race2.err &
			p2=$!
			wait $p1
			s1=$?
			wait $p2
			s2=$?
		else
			eval "$run" 2>race1.err
			s1=$?
			eval "$run" 2>race2.err
			s2=$?
		fi
		if [ "$s1$s2" = 02 ] || [ "$s1$s2" = 20 ]; then ok; else bad "$t ($fs): race exit statuses $s1 and $s2, wanted one 0 and one 2"; fi
		# in.csv has no ACCESS rows: memscope-inefficient names it on every run
		cat race1.err race2.err | grep -v ': no memory access events (ACCESS rows): not checked' >race.err
		if [ "$(wc -l <race.err)" -eq 1 ] && grep -q "^memscope-$t: race.out: exists" race.err; then ok; else bad "$t ($fs): race stderr: $(cat race.err)"; fi
		if [ "$t" = db ]; then # a database is not byte-identical run to run: check its rows
			[ "$(sqlite3 race.out 'select count(*) from memscope_dump')" = "$(sqlite3 solo.out 'select count(*) from memscope_dump')" ] && ok || bad "db: race output incomplete"
		else
			expect_same race.out solo.out
		fi
		[ -z "$(ls ./*.tmp.* 2>/dev/null)" ] && ok || bad "$t ($fs): race left a temporary file"
	done

	# a signal right after the output is in place: the run finishes and says so (exit 0), the
	# output complete
	rm -f late.out
	LD_PRELOAD=$FAULT MEMSCOPE_FAULT_SIGNAL=15 w $t late.out in.csv >/dev/null 2>late.err
	s=$?
	[ "$s" -eq 0 ] && [ -s late.out ] && ok || bad "$t: signal after the rename: exit $s, output $(ls late.out 2>&1)"
	rm -f solo.out race.out late.out
done

# standard input and output are files too: never the input, however it is redirected
expect_status 2 sh -c "'$BIN/memscope-convert' -q -t csv -o - in.csv >>in.csv"
expect_err_line '^memscope-convert: standard output: output would overwrite the input in.csv \(the same file\)$'
expect_status 2 sh -c "'$BIN/memscope-leaks' -q -o - lnk.csv >>hl.csv"
expect_status 2 sh -c "'$BIN/memscope-convert' -q -f -o in.csv - <lnk.csv"
expect_err_line '^memscope-convert: in.csv: output would overwrite the input standard input \(the same file\)$'
input_intact "standard input and output"
expect_status 2 "$BIN/memscope-convert" -q -o '' in.csv
expect_err_line '^memscope-convert: an empty output file name$'

# a signal before the output is in place: no output, no temporary file, death by that signal
mkfifo slow.fifo
(head -n 5 in.csv; sleep 3) >slow.fifo &
"$BIN/memscope-convert" -q -t csv -o slow.out slow.fifo 2>/dev/null &
p=$!
sleep 1
kill -TERM $p
wait $p
s=$?
[ "$s" -eq 143 ] && [ ! -e slow.out ] && [ -z "$(ls ./*.tmp.* 2>/dev/null)" ] && ok || bad "signal before the commit: exit $s, $(ls slow.out* 2>&1)"
wait

# two outputs are both written or neither: --annotate's name taken while the report is moved into
# place leaves no report either
rm -f rep.txt ann.csv
LD_PRELOAD=$FAULT MEMSCOPE_FAULT_CREATE=ann.csv expect_status 2 "$BIN/memscope-inefficient" -q -o rep.txt --annotate ann.csv in.csv
sed -i '/: no memory access events (ACCESS rows): not checked/d' "$WORK/err" # in.csv has none
expect_err_line '^memscope-inefficient: ann.csv: exists: written by another run meanwhile'
[ ! -e rep.txt ] && [ ! -s ann.csv ] && [ -z "$(ls ./*.tmp.* 2>/dev/null)" ] && ok || bad "--annotate race: $(ls rep.txt ann.csv 2>&1)"
rm -f ann.csv

# --annotate is an output like -o: not the input through a link either
expect_status 2 "$BIN/memscope-inefficient" -q -f --annotate lnk.csv -o /dev/null in.csv
expect_err_line '^memscope-inefficient: lnk.csv: output would overwrite the input in.csv'
expect_status 2 "$BIN/memscope-inefficient" -q -f --annotate in.csv -o /dev/null hl.csv
input_intact "--annotate"
# --annotate and -o naming one existing file through a link: refused before any work
: >rep.txt
ln -s rep.txt rep.lnk
expect_status 2 "$BIN/memscope-inefficient" -q -f --annotate rep.lnk -o rep.txt in.csv
expect_err_line "^memscope-inefficient: --annotate and -o name the same file"

finish
