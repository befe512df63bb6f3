# Shared helpers of the CLI golden tests (POSIX sh): assertions that count, and a closing summary line.
PASS=0
FAIL=0
WORK=$(mktemp -d "${TMPDIR:-/tmp}/memscope-cli.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

ok() { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); echo "FAIL: $*" >&2; }

# expect_status WANT CMD...: run CMD (stdout/stderr to $WORK/out, $WORK/err), check its exit status
expect_status() {
	want=$1
	shift
	"$@" >"$WORK/out" 2>"$WORK/err"
	got=$?
	if [ "$got" -eq "$want" ]; then ok; else bad "exit $got, wanted $want: $* ($(head -c 300 "$WORK/err"))"; fi
}

# expect_err_line PATTERN: stderr is exactly one line and matches PATTERN (grep -E)
expect_err_line() {
	n=$(wc -l <"$WORK/err")
	if [ "$n" -eq 1 ] && grep -Eq "$1" "$WORK/err"; then ok; else bad "stderr not one line matching '$1': $(cat "$WORK/err")"; fi
}

expect_same() {
	if cmp -s "$1" "$2"; then ok; else bad "files differ: $1 $2"; fi
}

expect_absent() {
	if [ ! -e "$1" ] && [ -z "$(ls "$1".tmp.* 2>/dev/null)" ]; then ok; else bad "output left behind: $1"; fi
}

# expect_out WANT_FILE ARGS...: "$TOOL" -q ARGS exits 0 and its stdout equals WANT_FILE
expect_out() {
	golden=$1
	shift
	expect_status 0 "$TOOL" -q "$@"
	expect_same "$WORK/out" "$golden"
}

# expect_alias WANT MAIN ALIAS ARGS...: "$TOOL" MAIN ARGS and "$TOOL" ALIAS ARGS exit WANT with
# byte-identical stdout and stderr (MAIN and ALIAS one word each: --format=csv and --to-csv)
expect_alias() {
	want=$1
	main_opt=$2
	alias_opt=$3
	shift 3
	expect_status "$want" "$TOOL" "$main_opt" "$@"
	mv "$WORK/out" "$WORK/main.out"
	mv "$WORK/err" "$WORK/main.err"
	expect_status "$want" "$TOOL" "$alias_opt" "$@"
	expect_same "$WORK/out" "$WORK/main.out"
	expect_same "$WORK/err" "$WORK/main.err"
}

finish() {
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" -eq 0 ]
}
