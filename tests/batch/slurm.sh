#!/bin/sh
# A single-node Slurm cluster for the tests, on loopback only: its own munged, slurmctld and slurmd
# with their own key, slurm.conf, state, spool and logs in one folder; the machine's own
# /etc/slurm, /etc/munge and services are neither used nor touched.
#
# Sourced (POSIX sh):
#   slurm_missing            prints the programs it needs that are not installed (none: nothing)
#   slurm_start DIR [PID]    makes the cluster in DIR (an empty folder), starts it, exports
#                            SLURM_CONF=DIR/slurm.conf; returns 0 once the node takes jobs, else
#                            1 with one line on stderr (the cluster may be half up: slurm_stop it).
#                            A watchdog stops the cluster once process PID (default: the calling
#                            shell) is gone, so that a killed test leaves no daemon behind; it
#                            needs SLURM_SH, the path of this file, set before sourcing it
#   slurm_stop DIR           cancels every job, stops every process started from DIR (by the pids
#                            it recorded, each checked against its command line), waits for them
#                            (SIGKILL after 10 s); harmless when nothing runs, safe to call twice
#   slurm_job_wait ID SECS   waits for job ID to end, prints its final state (COMPLETED, FAILED,
#                            CANCELLED, ...; WAIT-TIMEOUT after SECS, STOPPED when the cluster
#                            was stopped meanwhile) and returns 0 for COMPLETED
# As a command: sh slurm.sh start DIR | stop DIR | status DIR (start prints SLURM_CONF=...; its
# watchdog watches the shell that ran it).
# Every client call runs under timeout(1) with SLURM_CONF set; every address is 127.0.0.1.

SLURM_NODE=memscope1
# this file, for the watchdog (sourcing scripts set SLURM_SH to it before sourcing)
case ${0##*/} in
slurm.sh) SLURM_SH=$(cd "$(dirname "$0")" && pwd)/slurm.sh ;;
esac

slurm_missing() {
	for p in munged slurmctld slurmd sbatch scontrol scancel squeue timeout; do
		command -v "$p" >/dev/null 2>&1 || printf '%s ' "$p"
	done
}

# slurm_port_free PORT: nothing on this machine uses TCP port PORT (any address, any state)
slurm_port_free() {
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		awk -v p="$(printf ':%04X' "$1")" 'substr($2, length($2) - 4) == p { used = 1 } END { exit used }'
}

# slurm_pick_port NOT: a free port in 10000-32767 (below the kernel's ephemeral range), not NOT
slurm_pick_port() {
	while :; do
		port=$((10000 + $(od -An -N2 -tu2 /dev/urandom) % 22768))
		[ "$port" != "$1" ] && slurm_port_free "$port" && break
	done
	echo "$port"
}

# slurm_ours PID MARK: process PID runs and its command line holds MARK (a path of the cluster's)
slurm_ours() {
	[ -n "$1" ] && [ -r "/proc/$1/cmdline" ] || return 1
	case $(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline") in
	*"$2"*) return 0 ;;
	esac
	return 1
}

# slurm_gone PID: no such process, or a zombie (daemons reparented to a pid 1 that does not reap)
slurm_gone() {
	[ -r "/proc/$1/stat" ] || return 0
	state=$(sed 's/^.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null)
	[ -z "$state" ] || [ "$state" = Z ]
}

# slurm_end PID...: SIGTERM each, wait up to 10 s, then SIGKILL the rest and wait up to 5 s more
slurm_end() {
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null
	n=0
	while [ "$n" -lt 150 ]; do
		alive=
		for p; do slurm_gone "$p" || alive="$alive $p"; done
		[ -z "$alive" ] && return 0
		# shellcheck disable=SC2086 # a list of pids
		[ "$n" -eq 100 ] && kill -KILL $alive 2>/dev/null
		sleep 0.1
		n=$((n + 1))
	done
	echo "slurm.sh: processes did not end:$alive" >&2
	return 1
}

# slurm_detached CMD...: run CMD with no standard stream and no other descriptor of this shell's
# (a test runner waits until its pipes are closed), in its own session; bash (essential in
# Debian) closes the descriptors above 9, which sh cannot name
slurm_detached() {
	bash -c 'for f in /proc/$$/fd/*; do
		n=${f##*/}
		[ "$n" -gt 2 ] && eval "exec $n>&-"
	done
	exec setsid "$@"' slurm-detached "$@" </dev/null >/dev/null 2>&1
}

# Whether others may search every folder from $1 up to /: the others' execute bit of each.
slurm_searchable() {
	p=$1
	while :; do
		m=$(stat -c %a "$p") || return 1
		[ $((m % 2)) -eq 1 ] || return 1
		[ "$p" = / ] && return 0
		p=$(dirname "$p")
	done
}

slurm_start() {
	d=$(cd "$1" && pwd) || return 1
	rm -f "$d/stopped"
	# the watchdog: the caller's shell, or the process named
	slurm_watchdog_start "$d" "${2:-$$}" || return 1
	conf=$d/slurm.conf
	# munge's socket path must fit sockaddr_un (108 bytes) and every folder above it must be
	# searchable by others (munged refuses it otherwise): a folder of its own under /tmp when DIR
	# is deep or under a private folder (a checkout under mktemp -d's 0700 folder)
	msock=$d/munge/sock
	if [ "${#msock}" -gt 100 ] || ! slurm_searchable "$(dirname "$d")"; then
		mkdir -p "$d/munge" && msock=$(mktemp -d /tmp/memscope-munge.XXXXXX)/sock || return 1
		echo "${msock%/sock}" >"$d/munge/short"
	fi
	mkdir -p "$d/munge" "$d/state" "$d/spool" "$d/log" || return 1
	# munged checks its files: the key root-owned, mode 0400, at least 32 bytes; the socket's
	# folders searchable by others; the log and seed folders not writable by group or others
	chmod 711 "$d" "$d/munge" "${msock%/sock}" && chmod 755 "$d/log" || return 1
	(umask 077 && dd if=/dev/urandom of="$d/munge/key" bs=1024 count=1 2>/dev/null) &&
		chmod 400 "$d/munge/key" || return 1
	ctld_port=$(slurm_pick_port 0)
	slurmd_port=$(slurm_pick_port "$ctld_port")
	cat >"$conf" <<EOF
# written by tests/batch/slurm.sh: a single-node cluster on 127.0.0.1
ClusterName=memscope
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$msock
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
MaxArraySize=10001
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SlurmdParameters=config_overrides
NodeName=$SLURM_NODE NodeAddr=127.0.0.1 NodeHostname=$SLURM_NODE CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=$SLURM_NODE Default=YES MaxTime=INFINITE State=UP
EOF
	SLURM_CONF=$conf
	export SLURM_CONF
	slurm_detached munged --socket="$msock" --key-file="$d/munge/key" \
		--pid-file="$d/munge/munged.pid" --log-file="$d/log/munged.log" \
		--seed-file="$d/munge/seed" || {
		echo "slurm.sh: munged did not start: $(tail -1 "$d/log/munged.log" 2>/dev/null)" >&2
		return 1
	}
	slurm_until 10 test -S "$msock" ||
		{ echo "slurm.sh: no munge socket: $(tail -1 "$d/log/munged.log" 2>/dev/null)" >&2 && return 1; }
	slurm_detached slurmctld -f "$conf"
	slurm_until 30 slurm_ctld_up ||
		{ echo "slurm.sh: slurmctld not up: $(tail -1 "$d/log/slurmctld.log" 2>/dev/null)" >&2 && return 1; }
	slurm_detached slurmd -f "$conf" -N "$SLURM_NODE"
	slurm_until 30 slurm_node_idle ||
		{ echo "slurm.sh: node not idle: $(tail -1 "$d/log/slurmd.log" 2>/dev/null)" >&2 && return 1; }
}

slurm_ctld_up() {
	timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP'
}

slurm_node_idle() {
	timeout 5 scontrol -o show node "$SLURM_NODE" 2>/dev/null | grep -q 'State=IDLE'
}

# slurm_until SECS CMD...: run CMD every 0.2 s until it succeeds (0) or SECS have passed (1)
slurm_until() {
	tries=$(($1 * 5))
	shift
	while [ "$tries" -gt 0 ]; do
		"$@" && return 0
		sleep 0.2
		tries=$((tries - 1))
	done
	return 1
}

slurm_stop() {
	d=$(cd "$1" 2>/dev/null && pwd) || return 0
	conf=$d/slurm.conf
	[ -f "$conf" ] || return 0
	: >"$d/stopped"
	if [ -f "$d/watchdog.pid" ] && [ "$(cat "$d/watchdog.pid")" != "$$" ]; then
		wd=$(cat "$d/watchdog.pid")
		rm -f "$d/watchdog.pid"
		slurm_ours "$wd" "$d" && kill -TERM "$wd" 2>/dev/null
	fi
	if slurm_ours "$(cat "$d/slurmctld.pid" 2>/dev/null)" "$conf"; then
		SLURM_CONF=$conf timeout 10 scancel --quiet --user="$(id -un)" 2>/dev/null
	fi
	# the daemons by their pid files, each checked to be ours; and, should a pid file be missing
	# (a start cut short), the daemons whose command line names this cluster's files
	pids=
	for f in slurmd.pid slurmctld.pid; do
		p=$(cat "$d/$f" 2>/dev/null)
		slurm_ours "$p" "$conf" && pids="$pids $p"
	done
	pids="$pids $(slurm_sweep "$d" daemons)"
	# shellcheck disable=SC2086,SC2046 # a list of pids
	slurm_end $(echo $pids | tr ' ' '\n' | sort -u)
	# what the daemons started: slurmstepd and the jobs' processes, told by their environment
	# shellcheck disable=SC2046
	slurm_end $(slurm_sweep "$d" jobs)
	p=$(cat "$d/munge/munged.pid" 2>/dev/null)
	msock=$d/munge/sock
	[ -f "$d/munge/short" ] && msock=$(cat "$d/munge/short")/sock
	pids=
	slurm_ours "$p" "$msock" && pids=$p
	pids="$pids $(slurm_sweep "$msock" munged)"
	# shellcheck disable=SC2086,SC2046
	slurm_end $(echo $pids | tr ' ' '\n' | sort -u)
	if [ -f "$d/munge/short" ]; then
		rm -rf "$(cat "$d/munge/short")"
		rm -f "$d/munge/short"
	fi
	return 0
}

# slurm_sweep MARK daemons|jobs|munged: pids of this cluster's processes not found by pid file:
# slurmctld/slurmd whose arguments hold MARK; slurmstepd and job processes whose environment has
# SLURM_CONF=MARK/slurm.conf (the jobs' also SLURM_JOB_ID); munged with MARK in its arguments
slurm_sweep() {
	for dir in /proc/[0-9]*; do
		p=${dir#/proc/}
		[ "$p" = "$$" ] && continue
		args=$(tr '\0' ' ' 2>/dev/null <"$dir/cmdline") || continue
		case $2 in
		daemons)
			case $args in
			slurmctld\ *"$1/"* | slurmd\ *"$1/"* | */slurmctld\ *"$1/"* | */slurmd\ *"$1/"*) echo "$p" ;;
			esac
			;;
		munged)
			case $args in
			munged\ *"$1"* | */munged\ *"$1"*) echo "$p" ;;
			esac
			;;
		jobs)
			env=$(tr '\0' '\n' 2>/dev/null <"$dir/environ") || continue
			echo "$env" | grep -qxF "SLURM_CONF=$1/slurm.conf" || continue
			case $args in
			slurmstepd*) echo "$p" ;;
			*) echo "$env" | grep -q '^SLURM_JOB_ID=' && echo "$p" ;;
			esac
			;;
		esac
	done
}

slurm_job_wait() {
	tries=$(($2 * 5))
	while [ "$tries" -gt 0 ]; do
		# the cluster was stopped (by the watchdog: the caller is gone)
		[ -e "${SLURM_CONF%/*}/stopped" ] && echo STOPPED && return 1
		state=$(timeout 10 scontrol -o show job "$1" 2>/dev/null | sed -n 's/.* JobState=\([A-Z_]*\) .*/\1/p' | head -1)
		case $state in
		PENDING | RUNNING | CONFIGURING | COMPLETING | SUSPENDED | REQUEUED | RESIZING | '') ;;
		*)
			echo "$state"
			[ "$state" = COMPLETED ]
			return
			;;
		esac
		sleep 0.2
		tries=$((tries - 1))
	done
	echo WAIT-TIMEOUT
	return 1
}

# slurm_watchdog_start DIR PID: a detached process that stops the cluster in DIR once process
# PID is gone (slurm_stop ends it first); its pid in DIR/watchdog.pid
slurm_watchdog_start() {
	if [ -z "$SLURM_SH" ] || [ ! -r "$SLURM_SH" ]; then
		echo "slurm.sh: SLURM_SH does not name slurm.sh" >&2
		return 1
	fi
	# (in a subshell: not a child of the caller's, which would report its end)
	# shellcheck disable=SC2016 # expanded by that sh
	(slurm_detached sh -c '. "$1"; echo $$ >"$2/watchdog.pid"; while ! slurm_gone "$3"; do sleep 1; done; slurm_stop "$2"' \
		slurm-watchdog "$SLURM_SH" "$1" "$2" &)
	slurm_until 5 test -s "$1/watchdog.pid"
}

# as a command (not when sourced: $0 is then the caller's)
case ${0##*/} in
slurm.sh)
	[ $# -eq 2 ] || {
		echo "usage: sh slurm.sh start|stop|status DIR" >&2
		exit 2
	}
	case $1 in
	start)
		missing=$(slurm_missing)
		[ -z "$missing" ] || {
			echo "slurm.sh: not installed: $missing(tests/install-deps.sh installs them)" >&2
			exit 4
		}
		mkdir -p "$2" || exit 4
		slurm_start "$2" "$PPID" || {
			slurm_stop "$2"
			exit 1
		}
		echo "SLURM_CONF=$SLURM_CONF"
		;;
	stop) slurm_stop "$2" ;;
	status)
		SLURM_CONF=$(cd "$2" && pwd)/slurm.conf
		export SLURM_CONF
		timeout 10 sinfo && timeout 10 squeue
		;;
	*)
		echo "usage: sh slurm.sh start|stop|status DIR" >&2
		exit 2
		;;
	esac
	;;
esac
