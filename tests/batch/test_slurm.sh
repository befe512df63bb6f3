#!/bin/sh
# memscope-batch's Slurm recipe, as its man page gives it (EXAMPLES, "Slurm"), on a single-node
# cluster of our own (tests/batch/slurm.sh: munged, slurmctld and slurmd on 127.0.0.1 with their
# own configuration under BUILD_DIR, stopped by pid at the end, whatever happens): the job array
# of shards and its afterok merge job write byte for byte what one local run writes, and the
# merge job ends with the local run's exit status; a task that fails cancels the merge.
# Args: BIN_DIR SRC_DIR BUILD_DIR [GEN_RANKS]
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
. "$SRC/tests/batch/recipe.sh"
SLURM_SH=$SRC/tests/batch/slurm.sh
# shellcheck source=tests/batch/slurm.sh
. "$SLURM_SH"
PAGE=$SRC/man/man1/memscope-batch.1
TASKS=4

# the cluster's programs come from tests/install-deps.sh: without them this test fails
missing=$(slurm_missing)
if [ -n "$missing" ]; then
	bad "not installed: $missing(tests/install-deps.sh installs slurmctld, slurmd, slurm-client and munge)"
	finish
	exit
fi
[ -x "$BIN/memscope-batch" ] || {
	bad "no $BIN/memscope-batch"
	finish
	exit
}
mkdir -p "$3" && CLUSTER=$(mktemp -d "$(cd "$3" && pwd)/slurm.XXXXXX") || exit 4
# stop the cluster on every way out (slurm.sh's watchdog covers a SIGKILL of this shell)
trap 'slurm_stop "$CLUSTER"; rm -rf "$CLUSTER" "$WORK"' EXIT
trap 'exit 130' INT TERM HUP
PATH=$BIN:$PATH
export PATH

# failed WHAT DIR: one FAIL line, with the logs of the recipe's jobs in DIR and the cluster's
failed() {
	bad "$1: $(tail -n 3 "$2"/parts/*.log "$2"/summary.log "$2"/err "$CLUSTER"/log/slurmctld.log 2>/dev/null | tr '\n' ' ' | cut -c 1-2000)"
}

# the tree, and what one local run makes of it: every input in a row, the unreadable ones too
TREE=$WORK/run
ranks_tree "$TREE" "$SRC" "$4" || bad "no tree in $TREE"
memscope-batch -q --format csv -o "$WORK/local.csv" "$TREE" 2>"$WORK/local.err"
want=$?
n=$(memscope-batch --list "$TREE" | wc -l)
if [ "$n" -ge $((2 * TASKS)) ] && [ "$(grep -c '^input,' "$WORK/local.csv")" -eq "$n" ]; then ok; else
	bad "local run: $n inputs listed, $(grep -c '^input,' "$WORK/local.csv") rows"
fi
# the tree has inputs that cannot be read: each is a row and a line naming it, and exit 3
failed=$(awk -F, '$1 == "input" && $7 != "ok"' "$WORK/local.csv" | wc -l) # no comma in its paths
if [ "$failed" -ge 1 ] && [ "$(wc -l <"$WORK/local.err")" -eq "$failed" ] && [ "$want" -eq 3 ]; then ok; else
	bad "local run: $failed inputs failed, exit $want (wanted 3): $(cat "$WORK/local.err")"
fi

recipe_script "$PAGE" test_slurm.sh "$WORK/memscope-slurm.sh" || bad "no Slurm recipe in $PAGE"
slurm_start "$CLUSTER" || {
	bad "the cluster did not start (its logs: $CLUSTER/log)"
	finish
	exit
}

# run_recipe DIR: the recipe from DIR over the tree in TASKS tasks of 1 CPU; the merge job's id
run_recipe() {
	mkdir -p "$1" && (cd "$1" && timeout 60 sh "$WORK/memscope-slurm.sh" "$TREE" "$TASKS" 1 2>err) | tail -n 1
}

# 1. shards and merge give the local run's report and exit status
job=$(run_recipe "$WORK/s1")
case $job in
'' | *[!0-9]*) failed "the recipe gave no job id: '$job'" "$WORK/s1" ;;
*)
	state=$(slurm_job_wait "$job" 180)
	code=$(timeout 10 scontrol -o show job "$job" | sed -n 's/.* ExitCode=\([0-9]*\):.*/\1/p')
	if [ "$code" = "$want" ]; then ok; else failed "merge job $job: $state, exit '$code', wanted $want" "$WORK/s1"; fi
	if cmp -s "$WORK/s1/summary.csv" "$WORK/local.csv"; then ok; else
		failed "summary.csv differs from the local run's" "$WORK/s1"
	fi
	# each task had a batch of inputs: its part holds its header and every TASKS-th input
	for i in $(seq 0 $((TASKS - 1))); do
		part=$WORK/s1/parts/$i.part
		rows=$(((n - i + TASKS - 1) / TASKS))
		if head -n 1 "$part" 2>/dev/null | grep -q "\"shard\":$i,\"shards\":$TASKS}" &&
			[ "$(wc -l <"$part")" -eq $((rows + 1)) ]; then ok; else
			bad "part $i: not shard $i/$TASKS with $rows inputs: $(head -c 300 "$part" 2>&1)"
		fi
	done
	;;
esac

# 2. a task that fails (here: shard 1 of 4, through a memscope-batch that exits 4 for it, first
# on the jobs' PATH) leaves the merge job cancelled, and no summary
mkdir -p "$WORK/failbin"
cat >"$WORK/failbin/memscope-batch" <<EOF
#!/bin/sh
case " \$* " in *" 1/$TASKS "*) exit 4 ;; esac
exec "$BIN/memscope-batch" "\$@"
EOF
chmod +x "$WORK/failbin/memscope-batch"
job=$(PATH=$WORK/failbin:$PATH run_recipe "$WORK/s2")
case $job in
'' | *[!0-9]*) failed "the recipe gave no job id: '$job'" "$WORK/s2" ;;
*)
	state=$(slurm_job_wait "$job" 180)
	if [ "$state" = CANCELLED ] && [ ! -e "$WORK/s2/summary.csv" ]; then ok; else
		failed "merge job $job after a failed task: $state, summary $(ls "$WORK/s2")" "$WORK/s2"
	fi
	;;
esac

# 3. everything it started is gone (slurm_stop again at exit is harmless)
slurm_stop "$CLUSTER"
left=$(slurm_sweep "$CLUSTER" daemons; slurm_sweep "$CLUSTER" jobs)
if [ -z "$left" ]; then ok; else bad "processes left: $left"; fi
finish
