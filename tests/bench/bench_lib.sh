# Shared by bench_batch.sh, bench_msprof.sh and bench_snapshot.sh (sourced, POSIX sh): the timed
# runs of a command and their table lines. The sourcing script sets BENCH (its name, for its
# messages), REPEAT, WORK (where the runs' time and stderr files go), STATUS (0), and defines
# bench_before, run before each timed run.
# shellcheck disable=SC2034 # W, C, R, S and STATUS are the sourcing script's

# bench_run NAME CMD...: REPEAT timed runs of CMD, its stdout dropped, its stderr into
# $WORK/stderr, each after bench_before; sets W (best wall s), C (its user+sys s), R (max RSS KiB
# of the command and of each process it waited for: its largest), S (the last stderr line of the
# last run). A run that fails: its exit status and last stderr lines said on stderr, STATUS 1,
# W nan, no more runs.
bench_run() {
	name=$1
	shift
	W='' C='' R=0 S='' rc=0
	i=0
	while [ $i -lt "$REPEAT" ]; do
		bench_before
		t0=$(date +%s%N)
		/usr/bin/time -f '%U %S %M' -o "$WORK/time" "$@" >/dev/null 2>"$WORK/stderr"
		rc=$?
		t1=$(date +%s%N)
		if [ $rc -ne 0 ]; then
			echo "$BENCH: $name exited with $rc:" >&2
			tail -3 "$WORK/stderr" >&2
			STATUS=1
			W=nan
			return
		fi
		read -r u s m <"$WORK/time"
		w=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", (b-a)/1e9}')
		if [ -z "$W" ] || awk -v a="$w" -v b="$W" 'BEGIN{exit !(a<b)}'; then
			W=$w
			C=$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.2f", u+s}')
		fi
		[ "$m" -gt "$R" ] && R=$m
		S=$(tail -1 "$WORK/stderr")
		i=$((i + 1))
	done
}

# bench_row NAME WIDTH VS: one table line of the last bench_run over $BYTES bytes: wall and cpu
# seconds, MB/s, max RSS in MiB, and against cat's best wall time $CAT_W, VS "rate" (cat's time
# over this one's: the share of cat's rate) or "time" (this one's time over cat's).
bench_row() {
	if [ "$W" = nan ]; then
		printf "%-${2}s %8s\n" "$1" failed
		return
	fi
	printf "%-${2}s %8s %8s %9s %8s %9s\n" "$1" "$W" "$C" \
		"$(awk -v b="$BYTES" -v w="$W" 'BEGIN{printf "%.1f", (w > 0 ? b/1e6/w : 0)}')" \
		"$(awk -v r="$R" 'BEGIN{printf "%.1f", r/1024}')" \
		"$(awk -v w="$W" -v c="$CAT_W" -v vs="$3" 'BEGIN{
			if (vs == "time") printf "%.1fx", (c > 0 ? w/c : 0)
			else printf "%.2fx", (w > 0 ? c/w : 0) }')"
}
