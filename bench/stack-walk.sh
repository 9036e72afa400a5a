#!/usr/bin/env bash
# The allocation stack walk's cost per allocation, by leak.depth: a program that allocates and
# frees N blocks from 12 frames deep (frame pointers: vigil-cc's default), built with vigil-cc
# -O2, run under valgrind --tool=cachegrind --cache-sim=no without a tool and with the leak tool
# at each depth. Prints total instructions and, per allocation, the difference to the run
# without a tool. Deterministic counts, so one run each. Nothing is asserted.
#
# usage: bench/stack-walk.sh            Environment: N (allocations, default 200000), DEPTHS
#                                       (default "1 4 6 8 16"), VIGILCC (default build/bin/vigil-cc)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
VIGILCC=${VIGILCC:-$ROOT/build/bin/vigil-cc}
N=${N:-200000}
DEPTHS=${DEPTHS:-1 4 6 8 16}
command -v valgrind >/dev/null || { echo "stack-walk: valgrind missing (apt-get install valgrind)" >&2; exit 2; }
WORK=$(mktemp -d /tmp/vigil-bench-stackwalk.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cat >"$WORK/allocs.c" <<'EOF'
#include <stdlib.h>
#include <string.h>
static void *volatile keep[1024];
__attribute__((noinline)) static void work(int n)
{
    for (int i = 0; i < n; i++) {
        size_t k = (size_t)i * 2654435761u % 1024;
        free(keep[k]);
        keep[k] = malloc(16 + i % 200);
        memset(keep[k], 1, 16);
    }
}
__attribute__((noinline)) static void level(int d, int n)
{
    if (d)
        level(d - 1, n);
    else
        work(n);
    __asm__ volatile("");   /* not a tail call: every level keeps its frame */
}
int main(int argc, char **argv)
{
    level(10, argc > 1 ? atoi(argv[1]) : 1000);
    for (int k = 0; k < 1024; k++)
        free(keep[k]);
    return 0;
}
EOF
"$VIGILCC" -O2 -gdwarf-4 "$WORK/allocs.c" -o "$WORK/allocs"
count() {   # VIGIL_OPTIONS -> instructions
    VIGIL_OPTIONS="$1:out=$WORK/out" valgrind --tool=cachegrind --cache-sim=no \
        --cachegrind-out-file=/dev/null "$WORK/allocs" "$N" 2>&1 | awk '/I *refs:/ { gsub(",", "", $NF); print $NF }'
}
base=$(count "mode=adaptive")
echo "# bench/stack-walk.sh: N=$N allocations 12 frames deep, at $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "?")"
printf '%-16s %14s %16s\n' variant instructions "per allocation"
printf '%-16s %14s %16s\n' "no tool" "$base" "-"
for d in $DEPTHS; do
    n=$(count "tools=leak:leak.depth=$d")
    printf '%-16s %14s %16.0f\n' "leak depth=$d" "$n" "$(echo "($n - $base) / $N" | bc -l)"
done
