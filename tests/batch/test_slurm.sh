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
# shellcheck source=tests/batch/recipe.sh
. "$SRC/tests/batch/recipe.sh"
SLURM_SH=$SRC/tests/batch/slurm.sh
# shellcheck source=tests/batch/slurm.sh
. "$SLURM_SH"
PAGE=$SRC/man/man1/memscope-batch.1
TASKS=4

# the cluster's programs come from tests/install-deps.sh: without them this test fails
missing=$(slurm_missing)
[ -z "$missing" ] ||
	give_up "not installed: $missing(tests/install-deps.sh installs slurmctld, slurmd, slurm-client and munge)"
[ -x "$BIN/memscope-batch" ] || give_up "no $BIN/memscope-batch"
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
local_run "$TREE" "$SRC" "$4" "$TASKS"

recipe_script "$PAGE" test_slurm.sh "$WORK/memscope-slurm.sh" || bad "no Slurm recipe in $PAGE"
slurm_start "$CLUSTER" || give_up "the cluster did not start (its logs: $CLUSTER/log)"

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
	check_parts "$WORK/s1" "$TASKS"
	;;
esac

# 2. a task that fails (here: shard 1 of 4, through a memscope-batch that exits 4 for it, first
# on the jobs' PATH) leaves the merge job cancelled, and no summary
fail_bin "$WORK/failbin" "$TASKS" "$BIN"
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
