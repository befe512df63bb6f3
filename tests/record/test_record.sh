#!/bin/sh
# memscope-record on victim programs (tests/record/victims) with leaks planted on marked lines:
# the exit leaks of every recording are exactly the planted blocks with their function and line
# (check_record.py reads the markers), in main, in 8 threads, in a forked child, in a program
# exec'd by a child, through every allocator; valgrind agrees; step markers (memscope_record.h
# and msTX's header-only discovery) give step leaks shaped as on msMemScope dumps; _exit,
# SIGKILL, a full output disk and a full spool disk; exit statuses; a flame graph's frames;
# the shim's exported symbols (shim_exports.txt).
# Args: BIN_DIR SRC_DIR VICTIM_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
V=$(cd "$3" && pwd)
. "$SRC/tests/cli/lib.sh"
R="$BIN/memscope-record"
L="$BIN/memscope-leaks"
VS="$SRC/tests/record/victims"
CHECK="$SRC/tests/record/check_record.py"
SKIPPED=0
cd "$WORK" || exit 1
# spool folders of outputs that are not regular files go to TMPDIR: keep them in the work dir
TMPDIR=$WORK
export TMPDIR

skip() {
	SKIPPED=$((SKIPPED + 1))
	echo "SKIP: $*"
}

# check ARGS...: check_record.py ARGS holds; its figures printed
check() {
	expect_status 0 python3 "$CHECK" "$@"
	cat "$WORK/out"
}

# expect_stdout TEXT: the last command's standard output is TEXT and a newline
expect_stdout() {
	if [ "$(cat "$WORK/out")" = "$1" ]; then ok; else bad "stdout '$(head -c 200 "$WORK/out")', wanted '$1'"; fi
}

# expect_summary PATTERN: the last memscope-record's stderr is its one summary line, matching
# (and the line on stacks cut short, when some were: glibc's loader and libstdc++ keep no frame
# pointers)
expect_summary() {
	grep -v '^memscope-record: [^ ]*: [0-9]* of [0-9]* stacks cut short ' "$WORK/err" >"$WORK/err.1"
	mv "$WORK/err.1" "$WORK/err"
	expect_err_line "^memscope-record: [^ ]+: [0-9]+ events, $1"
}

# leaks_of CAPTURE: memscope-leaks' JSON report of CAPTURE (exit and step leaks of every pool)
# in CAPTURE.json
leaks_of() {
	if "$L" -q --pool all --kinds step,exit --format json -o "$1.json" "$1" 2>"$WORK/leaks.err"; then ok; else
		bad "memscope-leaks $1: $(cat "$WORK/leaks.err")"
	fi
}

# record_exact NAME STATUS SUMMARY ARGS...: record victim NAME (with ARGS) into NAME.mscap; it
# exits STATUS, prints "ok", the summary matches SUMMARY; its exit leaks are the planted ones
record_exact() {
	name=$1
	status=$2
	summary=$3
	shift 3
	expect_status "$status" "$R" -o "$name.mscap" -- "$V/$name" "$@"
	expect_stdout ok
	expect_summary "$summary"
	leaks_of "$name.mscap"
	check leaks "$VS/$name".c* main exit "$name.mscap.json"
}

# every allocator of the malloc family, realloc chains, helpers inlined or not; exit N -> N
record_exact basic 0 "1 thread, pid [0-9]+ \(.*/basic\), exit 0,"
expect_status 3 "$R" -q -o basic3.mscap -- "$V/basic" 3
expect_stdout ok

# 8 threads released at once, each leaking its own block; the summary counts them with main
nt=$(sed -n 's/^#define N_THREADS \([0-9]*\)$/\1/p' "$VS/threads.c")
record_exact threads 0 "$((nt + 1)) threads, .*, exit 0,"
expect_status 0 "$BIN/memscope-convert" -q threads.mscap -o threads.csv
check threads threads.csv "$VS/threads.c"

# _exit(5): passed through, leaks still reported; SIGKILL: 128 + 9, every event before the kill
record_exact quick_exit 5 "1 thread, .*, _exit 5,"
record_exact killed 137 "1 thread, .*, signal 9,"

# C++ new, new[], aligned and nothrow new: the innermost frame is the caller of new
if [ -x "$V/cxx" ]; then
	record_exact cxx 0 "1 thread, .*, exit 0,"
else
	skip "no C++ victim (no C++ compiler at configure time)"
fi

# fork without exec: the child's own recording, OUT.<pid>.mscap, holds its leak only
expect_status 0 "$R" -o forked.mscap -- "$V/forked"
child=$(sed -n 's/^child \([0-9]*\)$/\1/p' "$WORK/out")
if [ -n "$child" ] && [ -f "forked.$child.mscap" ]; then ok; else bad "forked: no forked.$child.mscap: $(ls)"; fi
leaks_of forked.mscap
check leaks "$VS/forked.c" main exit forked.mscap.json
leaks_of "forked.$child.mscap"
check leaks "$VS/forked.c" child exit "forked.$child.mscap.json"

# fork + exec: with --follow-exec the exec'd program is recorded too, as OUT.<pid>.mscap (the child
# allocated nothing before its exec, so the leaf is that pid's first recorded image); without it
# the launcher names it as not recorded
expect_status 0 "$R" --follow-exec -o exec.mscap -- "$V/execer" "$V/leaf"
leaf=$(sed -n 's/^leaf \([0-9]*\)$/\1/p' "$WORK/out")
leaks_of exec.mscap
check leaks "$VS/execer.c" main exit exec.mscap.json
if [ -n "$leaf" ] && [ -f "exec.$leaf.mscap" ]; then
	ok
	leaks_of "exec.$leaf.mscap"
	check leaks "$VS/leaf.c" main exit "exec.$leaf.mscap.json"
else
	bad "fork+exec: no exec.$leaf.mscap for the exec'd leaf (pid $leaf): $(ls exec.*)"
fi
expect_status 0 "$R" -o noexec.mscap -- "$V/execer" "$V/leaf"
leaf=$(sed -n 's/^leaf \([0-9]*\)$/\1/p' "$WORK/out")
if grep -q "^memscope-record: 1 program exec'd by child processes not recorded (--follow-exec records them): $V/leaf (pid $leaf)\$" "$WORK/err" &&
	[ "$(ls noexec.*)" = noexec.mscap ]; then ok; else bad "fork+exec without --follow-exec: $(cat "$WORK/err"); $(ls noexec.*)"; fi

# step markers: memscope_record.h's ranges, and msTX's header-only discovery emulated; both run
# without memscope-record too (no-op markers)
"$L" -q --format json -o ref.json "$SRC/testdata/leaks/steps_mstx.csv" 2>/dev/null
"$L" -q "$SRC/testdata/leaks/steps_mstx.csv" 2>/dev/null | sed -n 's/^\(Step leaks ([^)]*): \).*/\1/p' >ref.head
for v in steps mstx; do
	expect_status 0 "$V/$v"
	expect_stdout ok
	expect_status 0 "$R" -o $v.mscap -- "$V/$v"
	if [ $v = steps ]; then expect_stdout ok; else expect_stdout "ok injected"; fi
	leaks_of $v.mscap
	check leaks "$VS/$v.c" step step $v.mscap.json
	check leaks "$VS/$v.c" step exit $v.mscap.json
	check shape $v.mscap.json ref.json
	# a recording's own host blocks are step-checked without --pool
	expect_status 0 "$L" -q --kinds step $v.mscap
	if [ -s ref.head ] && grep -q "^$(cat ref.head)1 block in 1 group by stack, HOST " "$WORK/out"; then ok; else
		bad "$v: text report's step section: $(head -1 "$WORK/out"), dump's: $(cat ref.head)"
	fi
done

# valgrind's memcheck on the same victims: the same bytes and blocks on every planted line
if command -v valgrind >/dev/null 2>&1; then
	for v in basic threads cxx; do
		[ -x "$V/$v" ] || continue
		expect_status 0 valgrind -q --leak-check=full --show-leak-kinds=all --xml=yes \
			--xml-file="$WORK/$v.vg.xml" "$V/$v"
		check valgrind "$VS/$v".c* $v.mscap.json $v.vg.xml
	done
else
	skip "valgrind oracle: valgrind not installed"
fi

# a flame graph of a recording names the victim's functions with file and line
expect_status 0 "$BIN/memscope-export" -q --format svg -o basic.svg basic.mscap
# shellcheck disable=SC2046 # "FUNCTION LINE"
set -- $(python3 "$CHECK" line "$VS/basic.c" "LEAK 2500")
if grep -q ">main (" basic.svg && grep -q ">$1 (.*/basic\.c:$2) (" basic.svg; then ok; else
	bad "basic.svg: no 'main (' or '$1 (...basic.c:$2)' frame: $(grep -o '<title>[^<]*' basic.svg | head -5)"
fi

# a full output disk: the program runs as ever, the recording fails with one line, exit 4
expect_status 4 "$R" -o /dev/full -- "$V/basic"
expect_stdout ok
expect_err_line "^memscope-record: /dev/full: "
# a full spool disk (a 256 KiB tmpfs in a mount namespace of our own): recording stops with one
# line from the shim, the program finishes with its own status and output
mkdir tiny
# shellcheck disable=SC2016 # the inner shell's arguments
if [ "$(id -u)" -eq 0 ] && unshare --mount sh -c 'mount -t tmpfs -o size=256k tmpfs "$1"' sh tiny 2>/dev/null; then
	# shellcheck disable=SC2016
	expect_status 3 unshare --mount sh -c 'mount -t tmpfs -o size=256k tmpfs "$1" && exec "$2" -o "$1/churn.mscap" -- "$3"' \
		sh "$WORK/tiny" "$R" "$V/churn"
	expect_stdout "done"
	n=$(grep -c "^memscope-record: recording stopped: .*No space left on device" "$WORK/err")
	if [ "$n" -eq 1 ]; then ok; else bad "full spool disk: $n 'recording stopped' lines: $(cat "$WORK/err")"; fi
else
	skip "full spool disk: not root or unshare --mount fails"
fi

# a frame pointer left pointing anywhere by code without frame pointers (GNU as crashed on this):
# the walk stops, the program runs as it would
for mode in h s n x; do
	expect_status 0 "$R" -q -f -o badframe.mscap -- "$V/badframe" "$mode"
	expect_stdout "ok"
done

# C++ that a C program dlopens (RTLD_LOCAL) after the shim started: new and delete work (they
# aborted when only RTLD_NEXT was asked for the C++ runtime)
if [ -f "$V/liblateplus.so" ]; then
	expect_status 0 "$R" -q -f -o latecxx.mscap -- "$V/latecxx" "$V/liblateplus.so"
	expect_stdout "ok 52"
else
	skip "late C++: no C++ compiler"
fi

# a program that takes every file descriptor: the recording goes on (its own descriptor was
# opened before the program started)
expect_status 0 sh -c 'ulimit -n 256 && exec "$@"' sh "$R" -o nofds.mscap -- "$V/nofds"
expect_stdout "ok"
leaks_of nofds.mscap
check leaks "$VS/nofds.c" main exit nofds.mscap.json

# an output in a folder that does not exist: refused (2) before the program runs
expect_status 2 "$R" -o no-such-dir/x.mscap -- touch "$WORK/ran-nodir"
expect_err_line "^memscope-record: no-such-dir/x\.mscap: "
if [ ! -e "$WORK/ran-nodir" ]; then ok; else bad "no output folder: the program ran"; fi

# exit statuses: a missing program 127 with one line and no output; an existing output refused
# (2) before the program runs
expect_status 127 "$R" -o missing.mscap -- "$WORK/no-such-program"
expect_err_line "^memscope-record: .*no-such-program"
expect_absent missing.mscap
echo keep >exists.mscap
expect_status 2 "$R" -o exists.mscap -- touch "$WORK/ran"
expect_err_line "^memscope-record: .*exists\.mscap"
if [ ! -e "$WORK/ran" ] && [ "$(cat exists.mscap)" = keep ]; then ok; else bad "the program ran or the output was replaced"; fi
expect_status 0 "$R" -q -f -o exists.mscap -- touch "$WORK/ran"
if [ -e "$WORK/ran" ] && [ "$(cat exists.mscap)" != keep ]; then ok; else bad "-f: the program did not run or the output was kept"; fi

# stacks without frame pointers: the leak five calls below main, built without them. With
# libunwind in the shim its stack is unwound whole, the same frames as its twin's built with
# them; without, it is counted in one line and the capture's "stacks.cut" note, naming the victim
# (the twin: none cut)
# c_frames CAPTURE: the C frames of CAPTURE's one exit leak, one a line
c_frames() {
	"$L" -q --kinds exit --format json -o - "$1" 2>/dev/null |
		python3 -c 'import json, sys; print("\n".join(json.load(sys.stdin)["leaks"][0]["stack"]["c"]))'
}
if [ ! -x "$V/deep_omit" ] || [ ! -x "$V/deep_noomit" ]; then
	skip "deep_omit or deep_noomit not built: stacks without frame pointers not checked"
else
	expect_status 0 "$R" -o deep_noomit.mscap -- "$V/deep_noomit"
	expect_summary "1 thread, .*, exit 0,"
	if ! grep -aq 'stacks\.cut' deep_noomit.mscap; then ok; else bad "deep_noomit: stacks cut short"; fi
	expect_status 0 "$R" -o deep_omit.mscap -- "$V/deep_omit"
	if readelf -d "$BIN/libmemscope-record.so" 2>/dev/null | grep -q 'libunwind'; then
		expect_summary "1 thread, .*, exit 0,"
		c_frames deep_noomit.mscap >"$WORK/fp.frames"
		c_frames deep_omit.mscap >"$WORK/nofp.frames"
		if [ "$(grep -c 'deep\.c:' "$WORK/nofp.frames")" -ge 5 ] &&
			cmp -s "$WORK/fp.frames" "$WORK/nofp.frames"; then ok; else
			bad "deep_omit: frames '$(tr '\n' ' ' <"$WORK/nofp.frames")', with frame pointers '$(tr '\n' ' ' <"$WORK/fp.frames")'"
		fi
	elif grep -Eq '^memscope-record: deep_omit\.mscap: [1-9][0-9]* of [1-9][0-9]* stacks cut short \(no frame pointers in deep_omit\)' "$WORK/err" &&
		grep -aq 'stacks\.cut' deep_omit.mscap; then ok; else bad "deep_omit: no stacks cut short: $(cat "$WORK/err")"; fi
fi

# the shim exports the functions it stands in front of and the marker functions, nothing of its
# own (the hooks and the tracker share hidden symbols only): tests/record/shim_exports.txt
if command -v nm >/dev/null 2>&1; then
	nm -D --defined-only "$BIN/libmemscope-record.so" | awk '{ print $3 }' | LC_ALL=C sort \
		>"$WORK/exports"
	if LC_ALL=C sort "$SRC/tests/record/shim_exports.txt" | cmp -s - "$WORK/exports"; then ok; else
		bad "the shim's exports differ from shim_exports.txt: $(LC_ALL=C sort \
			"$SRC/tests/record/shim_exports.txt" | diff - "$WORK/exports" | grep '^[<>]' |
			tr '\n' ' ')"
	fi
else
	skip "nm not found: the shim's exports not checked"
fi

[ "$SKIPPED" -eq 0 ] || echo "$SKIPPED case(s) skipped"
finish
