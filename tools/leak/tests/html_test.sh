#!/bin/bash
# The leak viewer in headless Chromium: `vigil html` on a report of error_path.c; the page loads,
# the table has the expected row, and selecting that row (the page clicks the row named by the
# URL fragment, through the same handler as a mouse click) shows the source with the
# allocation line and the last-access line highlighted.
#   html_test.sh RUNDIR WORKDIR
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
VIGIL=${VIGIL:-$ROOT/build/bin/vigil}
rundir=$1 work=$2
page="$work/leaks.html"
"$VIGIL" html "$rundir" -o "$page" || { echo "html_test: vigil html failed"; exit 1; }
grep -q '<script' "$page" && ! grep -q 'src="http' "$page" || { echo "html_test: page is not self-contained"; exit 1; }

# the row of the group allocated in make_request
row=$(grep '^<tr id="g[0-9]*">' "$page" | grep 'make_request' | head -n1 | sed 's/^<tr id="\(g[0-9]*\)".*/\1/')
[ -n "$row" ] || { echo "html_test: no row for make_request in the page"; exit 1; }
alloc_line=$(grep -n 'struct request \*q = malloc' "$HERE/error_path.c" | cut -d: -f1)

profile=$(mktemp -d)
dom="$work/dom.html"
timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
    --dump-dom "file://$page#$row" >"$dom" 2>"$work/chromium.log"
rm -rf "$profile"
fail=0
check() { if eval "$2"; then :; else echo "html_test: $1"; fail=1; fi; }
check "page did not load (see $work/chromium.log)" '[ -s "$dom" ] && grep -q "<table id=\"groups\"" "$dom"'
check "the selection handler did not run" 'grep -q "data-selected=\"$row\"" "$dom"'
check "row $row not selected" 'grep -q "<tr id=\"$row\" class=\"selected\"" "$dom"'
# the selected group's section is visible (no hidden attribute) and highlights both lines
section=$(awk -v id="detail-$row" 'index($0, "id=\"" id "\"") { on = 1 } on { print } on && /<\/section>/ { exit }' "$dom")
check "detail of $row still hidden" '! printf "%s" "$section" | head -n1 | grep -q hidden'
check "allocation line $alloc_line not highlighted" 'printf "%s" "$section" | grep -q "class=\"line alloc[^\"]*\" data-line=\"$alloc_line\""'
check "no last-access line highlighted" 'printf "%s" "$section" | grep -q "class=\"line [^\"]*access\" data-line="'
check "other groups not hidden" '[ "$(grep -c "<section class=\"detail\" id=\"detail-g[0-9]*\" hidden" "$dom")" -ge "$(( $(grep -c "<section class=\"detail\"" "$dom") - 1 ))" ]'
exit $fail
