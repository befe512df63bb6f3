#!/bin/sh
# Compares two OUT_DIRs of outputs.sh (an old build's and a new one's): "N cases, all identical"
# and exit 0, or the cases that differ (missing on one side, or a file of theirs not the same)
# with a short diff of each and exit 1.
#
# usage: tests/compat/compare.sh OLD_OUT NEW_OUT
# MAX_SHOWN (default 20): how many differing cases get their diff shown; DIFF_LINES (default
# 12): how many lines of diff each file gets.
set -u
LC_ALL=C
export LC_ALL
[ $# -eq 2 ] && [ -d "$1" ] && [ -d "$2" ] || {
	echo "usage: compare.sh OLD_OUT NEW_OUT" >&2
	exit 2
}
OLD=${1%/}
NEW=${2%/}
MAX_SHOWN=${MAX_SHOWN:-20}
DIFF_LINES=${DIFF_LINES:-12}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/compat-compare.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT

# unpack FILE COPY: FILE's bytes into COPY, uncompressed when it is gzip or zstd
unpack() {
	zstd -q -dc "$1" >"$2" 2>/dev/null || gzip -dc "$1" >"$2" 2>/dev/null || cp "$1" "$2"
}

# the case folders of each side
(cd "$OLD" && find . -mindepth 1 -maxdepth 1 -type d | sed 's|^\./||' | sort) >"$TMP/old"
(cd "$NEW" && find . -mindepth 1 -maxdepth 1 -type d | sed 's|^\./||' | sort) >"$TMP/new"
n_old=$(wc -l <"$TMP/old")
n_new=$(wc -l <"$TMP/new")
comm -23 "$TMP/old" "$TMP/new" >"$TMP/only_old"
comm -13 "$TMP/old" "$TMP/new" >"$TMP/only_new"

# the inputs: both runs must have read the same bytes
if ! cmp -s "$OLD/_inputs.sha256" "$NEW/_inputs.sha256"; then
	echo "the inputs differ (_inputs.sha256): the runs did not read the same files"
	diff "$OLD/_inputs.sha256" "$NEW/_inputs.sha256" | head -n "$DIFF_LINES"
	inputs_differ=1
else
	inputs_differ=0
fi
for side in "$OLD" "$NEW"; do
	if [ -s "$side/_inputs_unchanged" ]; then
		echo "$side: a run changed its inputs (_inputs_unchanged):"
		head -n "$DIFF_LINES" "$side/_inputs_unchanged"
		inputs_differ=1
	fi
done

# the cases in both whose files differ: diff -r names them
diff -rq "$OLD" "$NEW" 2>&1 | sed -n "s|^Files $OLD/\([^/]*\)/.* and .* differ\$|\1|p
s|^Only in $OLD/\([^/:]*\)[/:].*|\1|p
s|^Only in $NEW/\([^/:]*\)[/:].*|\1|p
s|^File $OLD/\([^/]*\)/.*|\1|p" | grep -v '^_inputs' | sort -u >"$TMP/cases"
# a case only on one side is listed as such, not as differing
comm -23 "$TMP/cases" "$TMP/only_old" | comm -23 - "$TMP/only_new" >"$TMP/differ"

n_differ=$(wc -l <"$TMP/differ")
n_only_old=$(wc -l <"$TMP/only_old")
n_only_new=$(wc -l <"$TMP/only_new")
if [ "$n_differ" -eq 0 ] && [ "$n_only_old" -eq 0 ] && [ "$n_only_new" -eq 0 ] &&
	[ "$inputs_differ" -eq 0 ]; then
	echo "$n_old cases, all identical"
	exit 0
fi

echo "$n_old cases in $OLD, $n_new in $NEW: $n_differ differ," \
	"$n_only_old only in the old, $n_only_new only in the new"
[ "$n_only_old" -eq 0 ] || { echo "only in $OLD:"; sed 's/^/  /' "$TMP/only_old" | head -n 50; }
[ "$n_only_new" -eq 0 ] || { echo "only in $NEW:"; sed 's/^/  /' "$TMP/only_new" | head -n 50; }
# by mode (the part of the name before @), to see at a glance what kind of run changed
if [ "$n_differ" -gt 0 ]; then
	echo "differing cases by mode:"
	sed 's/@.*//' "$TMP/differ" | sort | uniq -c | sort -rn | head -n 30
fi
k=0
while read -r c; do
	k=$((k + 1))
	if [ "$k" -gt "$MAX_SHOWN" ]; then
		echo "... and $((n_differ - MAX_SHOWN)) more (MAX_SHOWN=$MAX_SHOWN)"
		break
	fi
	echo "=== $c: $(cat "$NEW/$c/cmd" 2>/dev/null)"
	diff -rq "$OLD/$c" "$NEW/$c" | sed "s|$OLD/$c/||; s|$NEW/$c/||"
	for f in status stdout stderr; do
		cmp -s "$OLD/$c/$f" "$NEW/$c/$f" && continue
		echo "--- $f"
		diff "$OLD/$c/$f" "$NEW/$c/$f" | head -n "$DIFF_LINES"
	done
	# the files the run wrote: the first that differs, as text when it is
	(cd "$OLD/$c" && find files -type f 2>/dev/null | sort) >"$TMP/f"
	while read -r f; do
		cmp -s "$OLD/$c/$f" "$NEW/$c/$f" && continue
		echo "--- $f"
		case $f in
		*.db | *.sqlite)
			# a database: its SQL text, when the sqlite3 program is there
			if command -v sqlite3 >/dev/null 2>&1; then
				sqlite3 "$OLD/$c/$f" .dump >"$TMP/a" 2>&1
				sqlite3 "$NEW/$c/$f" .dump >"$TMP/b" 2>&1
				cmp -s "$TMP/a" "$TMP/b" && echo "(the same SQL text: the bytes differ)"
			else
				cp "$OLD/$c/$f" "$TMP/a"
				cp "$NEW/$c/$f" "$TMP/b"
			fi
			;;
		*)
			unpack "$OLD/$c/$f" "$TMP/a"
			unpack "$NEW/$c/$f" "$TMP/b"
			;;
		esac
		diff "$TMP/a" "$TMP/b" 2>&1 | head -n "$DIFF_LINES"
		break
	done <"$TMP/f"
done <"$TMP/differ"
exit 1
