#!/bin/sh
# The whole test suite: installs missing Debian packages, then a -Werror build and an ASan+UBSan build, each under ctest.
set -u
cd "$(dirname "$0")/.." || exit 4
TOP=$(pwd)
JOBS=$(nproc 2>/dev/null || echo 2)

sh "$TOP/tests/install-deps.sh" || exit 4

run_build() { # run_build DIR CMAKE-ARGS...: configure, build and test one build tree
	dir=$1
	shift
	echo "== $dir: cmake $*"
	cmake -S "$TOP" -B "$TOP/$dir" "$@" >"$TOP/$dir.configure.log" 2>&1 ||
		{ cat "$TOP/$dir.configure.log"; return 1; }
	cmake --build "$TOP/$dir" -j"$JOBS" >"$TOP/$dir.build.log" 2>&1 ||
		{ grep -E 'error|warning' -A3 "$TOP/$dir.build.log" | head -60; return 1; }
	ctest --test-dir "$TOP/$dir" -V -j"$JOBS" --timeout 600 >"$TOP/$dir.ctest.log" 2>&1
	st=$?
	grep -E '[0-9]+%: Checks: [0-9]+|^[0-9]+: [0-9]+ passed, [0-9]+ failed|replayed [0-9]+ inputs' \
		"$TOP/$dir.ctest.log" | sed 's/^[0-9]*: /  /'
	if [ "$st" -ne 0 ]; then
		grep -E '^[0-9]+: .*(FAIL|F:|ERROR|runtime error|Sanitizer)' "$TOP/$dir.ctest.log" | head -40
	fi
	grep -E 'tests passed|tests failed' "$TOP/$dir.ctest.log"
	return "$st"
}

status=0
run_build build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMEMSCOPE_WERROR=ON || status=1
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	run_build build-asan -DCMAKE_BUILD_TYPE=Debug -DMEMSCOPE_WERROR=ON -DMEMSCOPE_SANITIZE=ON ||
	status=1
if [ "$status" -eq 0 ]; then echo "all test builds passed"; else echo "TEST SUITE FAILED"; fi
exit "$status"
