#!/bin/sh
# Installs the Debian 12 packages memscope needs, when any is missing (run as root).
#   sh tests/install-deps.sh          what the tools and the whole test suite need
#   sh tests/install-deps.sh --tools  only what building and running the tools needs
#   ... --list                        prints the packages of that set instead of installing them
# TOOLS: the compiler, cmake, the libraries the library links (sqlite3, libcsv, cJSON, uthash,
# zlib, libzstd, gcc's libbacktrace), libunwind for the recorder's stacks without frame
# pointers and man-db for the installed pages.
TOOLS="cmake make gcc libgcc-12-dev pkg-config libcsv-dev libcjson-dev libsqlite3-dev zlib1g-dev libzstd-dev uthash-dev libunwind-dev man-db"
# TESTS: Check, clang's libFuzzer, the oracles (valgrind, Python, sqlite3, zstd), mandoc for the
# man-page lint, headless chromium for the pages, g++ for the recorder's C++ victims, PyTorch for
# its real training loop, and the batch tests' single-node Slurm cluster and GNU parallel
TESTS="g++ clang clang-format check libsubunit-dev python3 sqlite3 zstd chromium mandoc valgrind python3-torch slurmctld slurmd slurm-client munge parallel"
# installed without their recommendations
NORECS="slurmctld slurmd slurm-client munge parallel"

PKGS="$TOOLS $TESTS"
list=0
for arg in "$@"; do
	case $arg in
	--tools) PKGS=$TOOLS ;;
	--list) list=1 ;;
	*)
		echo "install-deps: unknown argument '$arg' (usage: install-deps.sh [--tools] [--list])" >&2
		exit 2
		;;
	esac
done
if [ "$list" -eq 1 ]; then
	echo $PKGS
	exit 0
fi
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
