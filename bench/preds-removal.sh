#!/usr/bin/env bash
# Static removal of redundant branch predicates (seed 002 section 3.1) on the real programs of
# tests/real: each program is built with predicate counters (VIGIL_CC_PRED_COUNTERS=1, removal
# on: VIGIL_CC_PRED_REMOVE=1, the default) by `bench/preds.sh --build` (the same build and cache
# as bench/preds.sh), and its site tables are read back with
# `vigil sites --cfg` (the removed-predicate trailer of each table, common/sitefmt.h). Per
# program, summed over its translation units:
#   tables     translation units (site tables)
#   branch     branch sites; preds = 2 per branch site
#   removed    branch predicates whose counter vigil-cc left out (vigil ingest reconstructs them
#              from their source site); the same number as the "N branch predicates left out"
#              of vigil-cc's VIGIL_DEBUG=1 note per file
#   %br        removed / branch predicates
#   nocnt      branch sites with both predicates left out: no counter at all
#   return     return sites (3 predicates each, never removed)
#   counted    sites that keep a counter = branch + return - nocnt (the note's "N predicate
#              counters")
#   %all       removed / all predicates (2 x branch + 3 x return)
# The last line sums the columns over the programs.
#
# usage: bench/preds-removal.sh [PROGRAM...]   programs: bzip2 lua sqlite3 bc gzip (default: all)
# Environment: VIGILCC, VIGIL, VIGIL_REAL_DIR, REAL_CFLAGS (as bench/preds.sh).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO_ROOT=$(cd "$HERE/.." && pwd)
VIGILCC=${VIGILCC:-$REPO_ROOT/build/bin/vigil-cc}
VIGIL=${VIGIL:-$(dirname "$(readlink -f "$(command -v "$VIGILCC" || echo "$VIGILCC")")")/vigil}
programs=("$@")
[ ${#programs[@]} = 0 ] && programs=(bzip2 lua sqlite3 bc gzip)
[ -x "$VIGIL" ] || { echo "preds-removal: $VIGIL not found (set VIGIL)" >&2; exit 2; }

fmt='%-8s %6s %8s %8s %8s %6s %6s %8s %8s %6s\n'
# shellcheck disable=SC2059
printf "$fmt" program tables branch preds removed %br nocnt return counted %all
totals="0 0 0 0 0 0"
for prog in "${programs[@]}"; do
    bin=$(VIGILCC=$VIGILCC VIGIL=$VIGIL "$HERE/preds.sh" --build "$prog") || { echo "$prog: build failed" >&2; continue; }
    row=$("$VIGIL" sites --cfg "$bin" | awk '
        /^table [0-9]+ tu / { t = $2; tables++; next }
        /^table [0-9]+ control flow: / { t = $2; next }
        $3 == "predicates" && $4 == "left" { said += $1; next }   # the per-table trailer count
        $2 == "branch" && $1 ~ /^[0-9]+$/ { branch++; next }
        $2 == "return" && $1 ~ /^[0-9]+$/ { ret++; next }
        $1 == "removed" && $2 == "site" { removed++; if (++both[t " " $3] == 2) nocnt++; next }
        END {
            if (said != removed) printf "preds-removal: %d removed predicates listed, %d counted\n", removed, said > "/dev/stderr"
            printf "%d %d %d %d %d\n", tables, branch, removed, nocnt, ret
        }')
    read -r tables branch removed nocnt ret <<<"$row"
    # shellcheck disable=SC2059
    printf "$fmt" "$prog" "$tables" "$branch" $((2 * branch)) "$removed" \
        "$(awk -v r="$removed" -v b="$branch" 'BEGIN { printf "%.1f", b ? 100 * r / (2 * b) : 0 }')" \
        "$nocnt" "$ret" $((branch + ret - nocnt)) \
        "$(awk -v r="$removed" -v b="$branch" -v n="$ret" 'BEGIN { printf "%.1f", (b + n) ? 100 * r / (2 * b + 3 * n) : 0 }')"
    totals=$(echo "$totals $tables $branch $removed $nocnt $ret" | awk '{ for (i = 1; i <= 5; i++) printf "%d ", $i + $(i + 6); print $6 + 1 }')
done
read -r tables branch removed nocnt ret n <<<"$totals"
if [ "$n" -gt 1 ]; then
    # shellcheck disable=SC2059
    printf "$fmt" total "$tables" "$branch" $((2 * branch)) "$removed" \
        "$(awk -v r="$removed" -v b="$branch" 'BEGIN { printf "%.1f", b ? 100 * r / (2 * b) : 0 }')" \
        "$nocnt" "$ret" $((branch + ret - nocnt)) \
        "$(awk -v r="$removed" -v b="$branch" -v n="$ret" 'BEGIN { printf "%.1f", (b + n) ? 100 * r / (2 * b + 3 * n) : 0 }')"
fi
