#!/bin/sh
# Every man page under man/ is clean mdoc: no mandoc -Tlint warning, and groff (as man(1) runs it,
# 80 columns) renders it without a warning such as "cannot adjust line". Args: SRC_DIR
SRC=$(cd "$1" && pwd)
. "$SRC/tests/cli/lib.sh"
for tool in mandoc groff; do
	command -v "$tool" >/dev/null ||
		{ bad "$tool not found (tests/install-deps.sh installs mandoc and man-db)"; finish; exit; }
done
n=0
for page in "$SRC"/man/man[1-9]/*.[1-9]; do
	n=$((n + 1))
	name=man/${page#"$SRC"/man/}
	# mandoc: exit 0 and no message at level warning or above (style notes are not checked)
	if mandoc -Tlint -W warning "$page" >"$WORK/lint" 2>&1 && [ ! -s "$WORK/lint" ]; then ok; else
		bad "mandoc -Tlint -W warning $name: $(sed "s|$SRC/||" "$WORK/lint" | tr '\n' ' ')"
	fi
	# groff with all warnings, at man's 80-column layout (MANWIDTH=80: 78n of text)
	if LC_ALL=C.UTF-8 groff -mandoc -Tutf8 -ww -rLL=78n -z "$page" >"$WORK/groff" 2>&1 &&
		[ ! -s "$WORK/groff" ]; then ok; else
		bad "groff -mandoc -Tutf8 -ww $name: $(sed "s|$SRC/||" "$WORK/groff" | tr '\n' ' ')"
	fi
	# the rendering: no nested quotes or parentheses of misplaced enclosure macros (".Pq Qq a ,
	# Qq b" gives ("a, "b""); ".Pq Ql -" then "is x)" gives (‘-’) is x))
	LC_ALL=C.UTF-8 groff -mandoc -Tutf8 -rLL=78n -P-cbou "$page" >"$WORK/text" 2>/dev/null
	# shellcheck disable=SC1112 # typographic quotes are what groff renders
	if grep -n -E '“[^”]*“|‘[^’]*‘|""[),.]' "$WORK/text" >"$WORK/quotes"; then
		bad "$name renders nested quotes: $(head -3 "$WORK/quotes" | tr '\n' ' ')"
	else ok; fi
	awk 'function check() { if (gsub(/\(/, "(", p) != gsub(/\)/, ")", p)) print substr(p, 1, 160); p = "" }
		/^[ \t]*$/ { check(); next } { sub(/^ +/, ""); p = p " " $0 } END { check() }' \
		"$WORK/text" >"$WORK/parens"
	if [ -s "$WORK/parens" ]; then
		bad "$name renders a paragraph with unbalanced parentheses: $(head -1 "$WORK/parens")"
	else ok; fi
done
if [ "$n" -ge 10 ]; then ok; else bad "only $n pages under $SRC/man"; fi
finish
