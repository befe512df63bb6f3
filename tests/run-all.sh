#!/bin/sh
# The whole test suite: installs missing Debian packages, runs every fuzz harness for a while in a
# libFuzzer build, then a -Werror build and an ASan+UBSan build, each under ctest.
# Each harness and each ctest test is printed with its result as it finishes; the whole output of
# each step is in build*.log. MEMSCOPE_FUZZ_SECONDS: seconds per fuzz harness (default 60; 0 skips
# the fuzzing).
set -u
cd "$(dirname "$0")/.." || exit 4
TOP=$(pwd)
JOBS=$(nproc 2>/dev/null || echo 2)

sh "$TOP/tests/install-deps.sh" || exit 4

# awk that hands on each line as it comes (mawk reads a pipe in blocks unless -W interactive)
if [ -z "$(awk -W interactive 'BEGIN { exit }' 2>&1 </dev/null)" ]; then LINE_AWK="awk -W interactive"; else
	LINE_AWK="awk"
fi
# a test's one-line result in its output (Check, the CLI scripts, the replays, the campaign)
SUMMARY='[0-9]+%: Checks: [0-9]+|^[0-9]+: [0-9]+ passed, [0-9]+ failed|^[0-9]+: replayed [0-9]+ inputs|^[0-9]+: campaign: seed [0-9]+,'

# ctest_progress: reads ctest -V -j output; prints each test as it finishes, with its summary line:
#   [ 3/39] test_util ................. passed (1.7 s)  100%: Checks: 6, Failures: 0, Errors: 0
# shellcheck disable=SC2016 # an awk program
CTEST_PROGRESS='
function lead(s) { sub(/^[0-9]+: /, "", s); return s }
/^[0-9]+: Test command: / { next }
$0 ~ summary && match($0, /^[0-9]+: /) {
	n = substr($0, 1, RLENGTH - 2)
	if (n in said) said[n] = said[n] "; " lead($0); else said[n] = lead($0)
	next
}
match($0, /^ *[0-9]+\/[0-9]+ Test +#[0-9]+: /) {
	head = substr($0, 1, RLENGTH); rest = substr($0, RLENGTH + 1)
	split(head, h, /[ #:]+/)
	at = ""; n = ""
	for (i in h) { if (h[i] ~ /\//) at = h[i]; else if (h[i] ~ /^[0-9]+$/) n = h[i] }
	name = rest; sub(/ .*/, "", name)
	res = substr(rest, length(name) + 1); sub(/^[ .*]+/, "", res)
	secs = ""
	if (match(res, / *[0-9.]+ sec *$/)) { secs = substr(res, RSTART, RLENGTH); res = substr(res, 1, RSTART - 1) }
	sub(/ sec *$/, "", secs); sub(/^ +/, "", secs)
	if (res == "Passed") res = "passed"; else if (res == "Failed") res = "FAILED"; else res = "FAILED: " res
	dots = name " "; while (length(dots) < 27) dots = dots "."
	printf "  [%5s] %s %s (%.1f s)%s\n", at, dots, res, secs, (n in said) ? "  " said[n] : ""
	fflush()
}'

# ctest_failures LOG: the failing lines of a ctest -V log, each under its test's name
ctest_failures() {
	awk '/^ *Start +[0-9]+: / { n = $2; sub(/:$/, "", n); name[n] = $3; next }
		/^[0-9]+: Test command: / { next }
		match($0, /^[0-9]+: /) && ($0 ~ /^[0-9]+: .*(FAIL|F:|ERROR|runtime error|Sanitizer)/ ||
			$0 ~ /^[0-9]+: (campaign: memscope-|  rerun: )/) {
			n = substr($0, 1, RLENGTH - 2); print "  " name[n] ": " substr($0, RLENGTH + 1) }' "$1" | head -60
}

run_build() { # run_build DIR CMAKE-ARGS...: configure, build and test one build tree
	dir=$1
	shift
	echo "== $dir: cmake $*"
	t0=$(date +%s)
	cmake -S "$TOP" -B "$TOP/$dir" "$@" >"$TOP/$dir.configure.log" 2>&1 ||
		{ cat "$TOP/$dir.configure.log"; return 1; }
	cmake --build "$TOP/$dir" -j"$JOBS" >"$TOP/$dir.build.log" 2>&1 ||
		{ grep -E 'error|warning|\*\*\*' -A3 "$TOP/$dir.build.log" | head -60; return 1; }
	ntests=$(ctest --test-dir "$TOP/$dir" -N | sed -n 's/^Total Tests: //p')
	echo "  configured and built in $(($(date +%s) - t0)) s; $ntests tests, $JOBS at a time (log: $dir.ctest.log)"
	rm -f "$TOP/$dir/ctest.status"
	{
		ctest --test-dir "$TOP/$dir" -V -j"$JOBS" --timeout 600 2>&1
		echo $? >"$TOP/$dir/ctest.status"
	} | tee "$TOP/$dir.ctest.log" | $LINE_AWK -v summary="$SUMMARY" "$CTEST_PROGRESS"
	st=$(cat "$TOP/$dir/ctest.status" 2>/dev/null || echo 1)
	[ "$st" -ne 0 ] && ctest_failures "$TOP/$dir.ctest.log"
	grep -E '^[0-9]+% tests passed' "$TOP/$dir.ctest.log"
	return "$st"
}

# run_fuzz: a clang libFuzzer build (ASan+UBSan) of every harness tests/CMakeLists.txt declares,
# each run for $FUZZ_SECONDS over a copy of its corpora (the checked-in ones do not grow), $JOBS at
# a time. An input that crashes, leaks or hangs is copied into tests/fuzz/corpus/NAME/, where the
# replay tests of the builds below fail on it, and printed (base64 when small) for CI logs.
FUZZ_SECONDS=${MEMSCOPE_FUZZ_SECONDS:-60}
FUZZ_DIR=build-fuzz
FUZZ_WORK=$TOP/$FUZZ_DIR/fuzz-run

fuzz_corpora() { # fuzz_corpora NAME: the corpus folders of harness NAME
	sed -n "s/^memscope_fuzz_harness($1 \(.*\))\$/\1/p" "$TOP/tests/CMakeLists.txt"
}

fuzz_one() { # fuzz_one NAME: fuzz_NAME over copies of its corpora, output in $FUZZ_WORK/NAME
	w=$FUZZ_WORK/$1
	mkdir -p "$w/found"
	dirs=""
	dict=""
	for c in $(fuzz_corpora "$1"); do
		mkdir -p "$w/corpus/$c"
		cp "$TOP/tests/fuzz/corpus/$c/"* "$w/corpus/$c/"
		dirs="$dirs $w/corpus/$c"
		# the dictionary of the harness's first corpus that has one (dump_csv.dict, ...)
		[ -z "$dict" ] && [ -f "$TOP/tests/fuzz/$c.dict" ] && dict=-dict="$TOP/tests/fuzz/$c.dict"
	done
	# shellcheck disable=SC2086 # $dict and $dirs are lists
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$TOP/$FUZZ_DIR/tests/fuzz_$1" -max_total_time="$FUZZ_SECONDS" -timeout=20 \
		-print_final_stats=1 -artifact_prefix="$w/found/" $dict $dirs >"$w/log" 2>&1
	echo $? >"$w/status"
}

fuzz_report() { # fuzz_report NAME: one line for harness NAME; a crash's input kept and printed
	w=$FUZZ_WORK/$1
	st=$(cat "$w/status" 2>/dev/null || echo "none")
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$w/log" | tail -1)
	secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$w/log" | tail -1)
	# slow-unit-* files are notes (a run over 10 s), not failures: -timeout makes a hang one
	found=""
	for f in "$w"/found/*; do
		case ${f##*/} in \* | slow-unit-*) ;; *) found="$found ${f##*/}" ;; esac
	done
	if [ "$st" = 0 ] && [ -z "$found" ]; then
		echo "  fuzz_$1: ${secs:-?} s, ${execs:-?} execs, no crash"
		return 0
	fi
	echo "  fuzz_$1: ${secs:-?} s, ${execs:-?} execs, FAILED (exit $st; log $w/log)"
	# the report's first line, the harness's frames (not libFuzzer's), its summary
	grep -E '^==[0-9]+==ERROR|runtime error:|^SUMMARY|ERROR: libFuzzer|^ +#[0-9]+ .* in ' "$w/log" |
		grep -v -E ' in (fuzzer::|main |__libc_|_start)' | head -8 | cut -c1-200 | sed 's/^ */    /'
	[ -n "$found" ] || tail -5 "$w/log" | sed 's/^/    /'
	for f in $found; do
		keep=""
		for c in $(fuzz_corpora "$1"); do
			for old in "$TOP/tests/fuzz/corpus/$c"/*; do
				cmp -s "$old" "$w/found/$f" && keep=${old#"$TOP"/}
			done
		done
		if [ -n "$keep" ]; then
			echo "    ${f%%-*} input: $keep, already in the corpus"
			continue
		fi
		sha=${f#*-}
		keep=tests/fuzz/corpus/$1/found_$(printf %.12s "$sha").bin
		cp "$w/found/$f" "$TOP/$keep"
		size=$(wc -c <"$TOP/$keep")
		echo "    ${f%%-*} input kept as $keep ($size bytes); replay: $FUZZ_DIR/tests/replay_$1 $keep"
		[ "$size" -le 8192 ] && echo "    base64: $(base64 -w0 "$TOP/$keep")"
	done
	return 1
}

run_fuzz() { # run_fuzz: build the fuzzers, run them, report
	case $FUZZ_SECONDS in
	'' | *[!0-9]*)
		echo "MEMSCOPE_FUZZ_SECONDS=$FUZZ_SECONDS: not a number of seconds"
		return 1
		;;
	0)
		echo "== $FUZZ_DIR: skipped (MEMSCOPE_FUZZ_SECONDS=0)"
		return 0
		;;
	esac
	names=$(sed -n 's/^memscope_fuzz_harness(\([a-z0-9_]*\) .*/\1/p' "$TOP/tests/CMakeLists.txt")
	targets=$(for n in $names; do printf 'fuzz_%s ' "$n"; done)
	echo "== $FUZZ_DIR: libFuzzer, $FUZZ_SECONDS s per harness, $JOBS at a time"
	t0=$(date +%s)
	CC=clang cmake -S "$TOP" -B "$TOP/$FUZZ_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DMEMSCOPE_FUZZ=ON -DMEMSCOPE_SANITIZE=ON >"$TOP/$FUZZ_DIR.configure.log" 2>&1 ||
		{ cat "$TOP/$FUZZ_DIR.configure.log"; return 1; }
	# shellcheck disable=SC2086 # a list of targets
	cmake --build "$TOP/$FUZZ_DIR" -j"$JOBS" --target $targets >"$TOP/$FUZZ_DIR.build.log" 2>&1 ||
		{ grep -E 'error|warning|\*\*\*' -A3 "$TOP/$FUZZ_DIR.build.log" | head -60; return 1; }
	total=$(echo "$names" | wc -w)
	echo "  built $total fuzzers in $(($(date +%s) - t0)) s (log: $FUZZ_DIR.build.log)"
	rm -rf "$FUZZ_WORK"
	n=0
	batch=""
	failed=0 # (not st: fuzz_report sets st)
	for name in $names; do
		n=$((n + 1))
		echo "  [$n/$total] fuzz_$name: fuzzing for $FUZZ_SECONDS s over corpus $(fuzz_corpora "$name" | sed 's/ /, /g')"
		fuzz_one "$name" &
		batch="$batch $name"
		# JOBS at a time; each batch reported as it ends
		if [ $((n % JOBS)) -eq 0 ] || [ "$n" -eq "$total" ]; then
			wait
			for b in $batch; do
				fuzz_report "$b" || failed=1
			done
			batch=""
		fi
	done
	return "$failed"
}

status=0
run_fuzz || status=1
# MEMSCOPE_TESTS=ON: the Quick start's first command configures build/ without the tests
run_build build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMEMSCOPE_WERROR=ON -DMEMSCOPE_TESTS=ON || status=1
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	run_build build-asan -DCMAKE_BUILD_TYPE=Debug -DMEMSCOPE_WERROR=ON -DMEMSCOPE_SANITIZE=ON -DMEMSCOPE_TESTS=ON ||
	status=1
if [ "$status" -eq 0 ]; then echo "all test builds passed"; else echo "TEST SUITE FAILED"; fi
exit "$status"
