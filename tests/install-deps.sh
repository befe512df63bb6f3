#!/bin/sh
# Installs the Debian 12 packages the build and the tests need, when any is missing (run as root).
PKGS="cmake make gcc g++ libgcc-12-dev clang clang-format pkg-config libcsv-dev libcjson-dev libsqlite3-dev zlib1g-dev libzstd-dev zstd uthash-dev check libsubunit-dev python3 sqlite3 chromium mandoc man-db valgrind slurmctld slurmd slurm-client munge parallel"
# the batch tests' single-node Slurm cluster and GNU parallel: without their recommendations
NORECS="slurmctld slurmd slurm-client munge parallel"
missing=""
for p in $PKGS; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: need root to install:$missing" >&2
	exit 4
fi
export DEBIAN_FRONTEND=noninteractive
plain=""
norecs=""
for p in $missing; do
	case " $NORECS " in
	*" $p "*) norecs="$norecs $p" ;;
	*) plain="$plain $p" ;;
	esac
done
apt-get update -qq >/dev/null &&
	{ [ -z "$plain" ] || apt-get install -y -qq $plain >/dev/null; } &&
	{ [ -z "$norecs" ] || apt-get install -y -qq --no-install-recommends $norecs >/dev/null; }
