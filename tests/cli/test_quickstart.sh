#!/bin/sh
# The README's Quick start as a new user meets it: two commands, the first installing and building
# only what the tools need and answering with the sample pair's real leak. Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"

# the first code block after "## Quick start"
awk '/^## Quick start/ { on = 1; next } on && /^```/ { if (inblock) exit; inblock = 1; next }
	inblock { print }' "$SRC/README.md" >"$WORK/block"
if [ "$(wc -l <"$WORK/block")" -eq 2 ]; then ok; else bad "Quick start's first block is not two commands: $(cat "$WORK/block")"; fi
first=$(sed -n 1p "$WORK/block")
second=$(sed -n 2p "$WORK/block")

# the first: the tools' packages only, no tests built
case $first in
"sh tests/install-deps.sh --tools && "*) ok ;;
*) bad "the first command does not start with the tools' install: $first" ;;
esac
case $first in
*"-DMEMSCOPE_TESTS=OFF"*) ok ;;
*) bad "the first command builds the tests: $first" ;;
esac
tools_pkgs=" $(sh "$SRC/tests/install-deps.sh" --tools --list) "
all_pkgs=" $(sh "$SRC/tests/install-deps.sh" --list) "
for p in clang valgrind chromium slurmctld slurmd munge parallel check mandoc python3; do
	case $tools_pkgs in
	*" $p "*) bad "install-deps.sh --tools installs the test tool $p" ;;
	*) ok ;;
	esac
	case $all_pkgs in
	*" $p "*) ok ;;
	*) bad "install-deps.sh does not install the test tool $p" ;;
	esac
done
for p in cmake gcc libcsv-dev libcjson-dev libsqlite3-dev uthash-dev libzstd-dev; do
	case $tools_pkgs in
	*" $p "*) ok ;;
	*) bad "install-deps.sh --tools lacks $p" ;;
	esac
done
expect_status 2 sh "$SRC/tests/install-deps.sh" --bogus

# the second: the whole suite, and CI runs the same
if [ "$second" = "sh tests/run-all.sh" ]; then ok; else bad "the second command is not the test suite: $second"; fi
if grep -q 'exec sh tests/run-all.sh' "$SRC/.ci/run"; then ok; else bad ".ci/run does not run tests/run-all.sh"; fi
grep -q 'DMEMSCOPE_TESTS=ON' "$SRC/tests/run-all.sh" && ok ||
	bad "run-all.sh does not turn the tests on in a build/ the first command configured without them"

# the first command's job (from its first tool on), on this build, its outputs under $WORK
at_work() {
	printf '%s\n' "$1" | sed "s|build/tools/|@BIN@/|g; s|build/|@WORK@/|g; s|@BIN@|$BIN|g; s|@WORK@|$WORK|g"
}
job=${first#*build/tools/memscope-}
job=$(at_work "build/tools/memscope-$job")
case $job in
"$BIN/memscope-report "*"-o $WORK/report.html"*) ok ;;
*) bad "the Quick start's job is not memscope-report writing build/report.html: $first" ;;
esac
(cd "$SRC" && sh -c "$job") >"$WORK/qs.out" 2>"$WORK/qs.err"
st=$?
if [ "$st" -eq 0 ]; then ok; else bad "the Quick start's job exited $st: $(head -3 "$WORK/qs.err")"; fi
[ -s "$WORK/report.html" ] && ok || bad "the Quick start's job wrote no build/report.html"
[ ! -s "$WORK/qs.out" ] && ok || bad "the Quick start's job wrote on stdout: $(head -3 "$WORK/qs.out")"
# its first line is the answer: the op that leaks in testdata/leaks.csv (aten._to_copy, 7.63 MiB)
head -1 "$WORK/qs.err" >"$WORK/first"
if grep -q '^memscope-report: leaks: .*aten\._to_copy 7\.63 MiB' "$WORK/first"; then ok; else
	bad "the first line does not name the leak (aten._to_copy, 7.63 MiB): $(cat "$WORK/first")"
fi

# the byte-for-byte check of msMemScope's compare CSV, a later block of the Quick start
cmp_job=$(awk '/^## Quick start/ { on = 1; next } on && /^## / { exit }
	on && /^build\/tools\/memscope-compare / { print; exit }' "$SRC/README.md")
[ -n "$cmp_job" ] && ok || bad "the Quick start has no memscope-compare block"
(cd "$SRC" && sh -c "$(at_work "$cmp_job")") >"$WORK/cmp.out" 2>"$WORK/cmp.err"
st=$?
if [ "$st" -eq 0 ]; then ok; else bad "the Quick start's compare exited $st: $(head -3 "$WORK/cmp.err")"; fi
grep -q "identical to msMemScope's own output" "$WORK/cmp.out" && ok || bad "no identity line: $(cat "$WORK/cmp.out")"
# its summary's first line names the leak too
if head -1 "$WORK/cmp.err" | grep -q '_to_copy.*MiB'; then ok; else
	bad "the compare's first line does not name the leak (aten._to_copy): $(head -1 "$WORK/cmp.err")"
fi
finish
