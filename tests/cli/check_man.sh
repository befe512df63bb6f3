#!/bin/sh
# Docs are tested: every tool's options match its man page, and the man pages' examples run. Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
for page in "$SRC"/man/man1/memscope-*.1; do
	tool=$(basename "$page" .1)
	[ -x "$BIN/$tool" ] || { bad "$tool: no binary for $page"; continue; }
	"$BIN/$tool" --help >"$WORK/help" || bad "$tool --help failed"
	# long options in --help and in the page's .Fl lines (as "Fl -name")
	# (an alias, an older spelling, is named at the end of its option's line: "(also -t, --to)")
	sed -n 's/.*(also \(.*\))$/\1/p' "$WORK/help" | tr ',' '\n' |
		sed -n 's/^ *--\([a-z-]*\).*/\1/p' >"$WORK/aliases"
	{ sed -n 's/^ *\(-., \)\{0,1\}--\([a-z-]*\).*/\2/p' "$WORK/help"; cat "$WORK/aliases"; } |
		sort -u >"$WORK/opts.help"
	sed -n 's/.*Fl -\([a-z][a-z-]*\).*/\1/p' "$page" | sort -u >"$WORK/opts.man"
	if cmp -s "$WORK/opts.help" "$WORK/opts.man"; then ok; else
		bad "$tool: options differ between --help and $page: $(diff "$WORK/opts.help" "$WORK/opts.man" | grep '^[<>]' | tr '\n' ' ')"
	fi
	# the page says each alias is an older spelling (".Fl -types" then "is an older spelling of")
	while IFS= read -r a; do
		if awk -v fl=".Fl -$a" '$0 == fl { at = NR } at && NR <= at + 4 && /older spelling/ { found = 1 }
			END { exit !found }' "$page"; then ok; else bad "$tool: $page does not call --$a an older spelling"; fi
	done <"$WORK/aliases"
	# examples: lines of the EXAMPLES section's literal displays starting with "$ "
	awk '/^\.Sh EXAMPLES/{on=1;next} /^\.Sh /{on=0} on && /^\$ /{sub(/^\$ /,""); print}' "$page" >"$WORK/examples"
	[ -s "$WORK/examples" ] || bad "$tool: no examples in $page"
	mkdir -p "$WORK/ex" && cp "$SRC"/testdata/*.csv "$SRC"/testdata/leaks/*.csv "$SRC"/testdata/inefficient/*.csv "$SRC"/testdata/db/*.csv "$WORK/ex/"
	while IFS= read -r cmd; do
		if (cd "$WORK/ex" && PATH="$BIN:$PATH" sh -c "$cmd" >/dev/null 2>&1); then ok; else bad "$tool example failed: $cmd"; fi
	done <"$WORK/examples"
done
# and every built tool has a page
for bin in "$BIN"/memscope-*; do
	[ -x "$bin" ] || continue
	[ -f "$SRC/man/man1/$(basename "$bin").1" ] && ok || bad "$(basename "$bin"): no man page"
done
finish
