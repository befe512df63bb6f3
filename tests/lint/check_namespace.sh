#!/bin/sh
# Every external symbol of libmemscope.a starts with memscope_ (the public API) or ms__ (internal),
# so a program linking the static library cannot collide with it: check_namespace.sh LIBRARY
set -u
lib=${1:?usage: check_namespace.sh LIBRARY}
NM=${NM:-nm}
syms=$("$NM" -g --defined-only "$lib") || { echo "check_namespace: $NM failed on $lib"; exit 1; }
total=$(printf '%s\n' "$syms" | awk 'NF == 3 && $3 !~ /^(__odr_asan|__asan_|__ubsan_|__sanitizer_)/' | wc -l)
# a sanitizer build adds its own symbols beside ours (__odr_asan.NAME, __asan_*, __ubsan_*)
bad=$(printf '%s\n' "$syms" | awk 'NF == 3 && $3 !~ /^(memscope_|ms__|__odr_asan|__asan_|__ubsan_|__sanitizer_)/ { print $3 }' | sort -u)
if [ "$total" -eq 0 ]; then
	echo "check_namespace: no symbols read from $lib"
	exit 1
fi
if [ -n "$bad" ]; then
	n=$(printf '%s\n' "$bad" | wc -l)
	echo "check_namespace: FAIL: $n of $total external symbols of $lib lack the memscope_/ms__ prefix:"
	printf '%s\n' "$bad" | sed 's/^/  /'
	exit 1
fi
echo "check_namespace: $total external symbols, every one prefixed memscope_ or ms__"
