#!/usr/bin/env bash
# vigil-cc's instrumentation cache (docs/cache.md) beside ccache, on Debian programs: CPU time of
# a whole build (every source compiled with -c, one at a time, then the link), median of N
# rounds, side by side:
#   plain           clang
#   ccache cold     ccache clang, empty ccache directory
#   ccache warm     the same after removing the objects (ccache hits)
#   vigil nocache   vigil-cc with VIGIL_CC_CACHE=0
#   vigil cold      vigil-cc, empty cache directory (the cache on: preprocessor run, store)
#   vigil warm      the same after removing the objects (every compile a hit; direct mode: no
#                   preprocessor run, the manifests say the headers are unchanged)
#   vigil warm-pre  the same with VIGIL_CC_CACHE_DIRECT=0 (each hit runs clang -E for its key)
#   ccache+vigil cold/warm   ccache over vigil-cc (VIGIL_CC_CACHE=0, CCACHE_COMPILERCHECK=string:
#                   vigil-cc --version): the combination docs/cache.md describes
# Then the ratios the issue sets targets for: vigil warm / ccache warm (<= 1.1), vigil cold /
# vigil nocache (<= 1.05). Checks that every warm build hit and gave the cold build's objects.
# Nothing is asserted; the table goes to stdout (and bench/results/cache-<date>.txt with --save).
#
# usage: bench/cache.sh [--save]
# Environment: PROGRAMS (default "bzip2 lua"; sqlite3 works too, slowly), ROUNDS (default 3),
#   VARIANTS (default all of them, in the order above; a subset skips the others: for sqlite3,
#   "plain ccache-cold ccache-warm vigil-nocache vigil-cold vigil-warm vigil-warm-pre"),
#   VIGILCC (default build/bin/vigil-cc), PLAINCC (default clang), REAL_CFLAGS (default
#   -O2 -gdwarf-4), VIGIL_REAL_DIR (sources, tests/real/sources.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PROGRAMS=${PROGRAMS:-bzip2 lua}
ROUNDS=${ROUNDS:-3}
VIGILCC=${VIGILCC:-$ROOT/build/bin/vigil-cc}
VIGIL=$(dirname "$VIGILCC")/vigil
PLAINCC=${PLAINCC:-clang}
REAL_CFLAGS=${REAL_CFLAGS:--O2 -gdwarf-4}
SAVE=0
[ "${1:-}" = --save ] && SAVE=1
command -v ccache >/dev/null || { echo "bench/cache.sh: ccache missing (bash scripts/install-deps.sh)" >&2; exit 2; }
[ -x "$VIGILCC" ] || { echo "bench/cache.sh: no $VIGILCC (make -j2)" >&2; exit 2; }
# shellcheck source=../tests/real/sources.sh
source "$ROOT/tests/real/sources.sh"
for v in $(env | sed -n 's/^\(VIGIL_CC_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset CCACHE_DIR CCACHE_PREFIX CCACHE_COMPILERCHECK

WORK=$(mktemp -d /tmp/vigil-bench-cache.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
OUT=$WORK/out.txt
emit() { echo "$*" | tee -a "$OUT"; }

# The sources of a program in DIR, the files to compile, their flags and the link (as in
# tests/real/sources.sh).
setup_program() {  # PROG DIR -> sets FILES, FLAGS, LINK
    local prog=$1 dir=$2 src
    mkdir -p "$dir"
    case $prog in
        bzip2)
            src=$(real_fetch bzip2)
            cp "$src"/*.c "$src"/*.h "$dir"/
            FILES="blocksort.c huffman.c crctable.c randtable.c compress.c decompress.c bzlib.c bzip2.c"
            FLAGS="$REAL_CFLAGS -D_FILE_OFFSET_BITS=64"
            LINK="-o bzip2 ${FILES//.c/.o}" ;;
        lua)
            src=$(real_fetch lua)
            cp "$src"/src/*.c "$src"/src/*.h "$dir"/
            rm -f "$dir/luac.c"
            echo "#define DEB_HOST_MULTIARCH \"$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)\"" >"$dir/lua5.4-deb-multiarch.h"
            FILES=$(cd "$dir" && ls ./*.c | sed 's|^\./||' | tr '\n' ' ')
            FLAGS="-std=gnu99 $REAL_CFLAGS -DLUA_COMPAT_5_3 -DLUA_USE_LINUX"
            LINK="-Wl,-E -o lua ${FILES//.c/.o} -lm -ldl" ;;
        sqlite3)
            src=$(real_sqlite_amalgamation)
            cp "$src"/sqlite3.c "$src"/shell.c "$src"/sqlite3.h "$dir"/
            [ -f "$src/sqlite3ext.h" ] && cp "$src/sqlite3ext.h" "$dir"/
            FILES="sqlite3.c shell.c"
            FLAGS="$REAL_CFLAGS -DSQLITE_THREADSAFE=1 -DSQLITE_ENABLE_MATH_FUNCTIONS"
            LINK="-o sqlite3 shell.o sqlite3.o -lpthread -ldl -lm" ;;
        *) echo "bench/cache.sh: unknown program $prog" >&2; exit 2 ;;
    esac
}

# build DIR ENV... -- COMPILER...: removes the objects, compiles every file, links; prints the
# CPU seconds (user + sys of everything it ran).
build() {
    local dir=$1
    shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    (cd "$dir" && rm -f ./*.o)
    # shellcheck disable=SC2016
    env "${envs[@]}" /usr/bin/time -f '%U %S' -o "$WORK/time" bash -c '
        set -e
        cd "$1"; shift
        files=$1 flags=$2 link=$3; shift 3
        for f in $files; do "$@" $flags -c "$f" -o "${f%.c}.o"; done
        "$@" $flags $link' _ "$dir" "$FILES" "$FLAGS" "$LINK" "$@" >"$WORK/build.log" 2>&1 ||
        { echo "bench/cache.sh: build failed ($*):" >&2; tail -n 20 "$WORK/build.log" >&2; exit 1; }
    awk '{printf "%.2f\n", $1 + $2}' "$WORK/time"
}

# preprocess DIR: CPU seconds of `clang -E` on every file: what a cold build with the cache does
# more than one without it (besides writing the entries), measured apart from the noise of two
# whole builds.
preprocess() {
    local dir=$1
    # shellcheck disable=SC2016
    /usr/bin/time -f '%U %S' -o "$WORK/time" bash -c '
        set -e
        cd "$1"; cc=$2; flags=$3; shift 3
        for f in "$@"; do $cc $flags -E "$f" -o /dev/null; done' _ "$dir" "$PLAINCC" "$FLAGS" $FILES >"$WORK/build.log" 2>&1 ||
        { echo "bench/cache.sh: preprocessing failed" >&2; exit 1; }
    awk '{printf "%.2f\n", $1 + $2}' "$WORK/time"
}

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "-" || b == "-" || b <= 0) print "-"; else printf "%.2f", a / b}'; }

ALL_VARIANTS="plain ccache-cold ccache-warm vigil-nocache vigil-cold vigil-warm vigil-warm-pre ccache+vigil-cold ccache+vigil-warm"
VARIANTS=${VARIANTS:-$ALL_VARIANTS}
want() { case " $VARIANTS " in *" $1 "*) return 0 ;; esac; return 1; }
COMPILERCHECK="string:$("$VIGILCC" --version | tr '\n' ' ')"

emit "vigil instrumentation cache vs ccache: CPU seconds (user+sys) of a whole build, median of $ROUNDS"
emit "vigil-cc: $("$VIGILCC" --version | sed -n 2p); plain: $($PLAINCC --version | head -n1); $(ccache --version | head -n1)"
emit "flags: $REAL_CFLAGS; $(nproc) CPUs; $(date -u '+%Y-%m-%d %H:%M UTC'); load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
emit ""
printf '%-8s' program | tee -a "$OUT"
for v in $VARIANTS; do printf '%19s' "$v" | tee -a "$OUT"; done
echo | tee -a "$OUT"

summary=()
for prog in $PROGRAMS; do
    dir=$WORK/src/$prog
    setup_program "$prog" "$dir"
    declare -A times=()
    notes=""
    for round in $(seq 1 "$ROUNDS"); do
        vc=$WORK/vigil-cache-$prog-$round cc=$WORK/ccache-$prog-$round cv=$WORK/ccache-vigil-$prog-$round
        echo "bench: $prog round $round" >&2
        want plain && times[plain]+=" $(build "$dir" -- "$PLAINCC")"
        want ccache-cold && times[ccache-cold]+=" $(build "$dir" CCACHE_DIR="$cc" -- ccache "$PLAINCC")"
        want ccache-warm && times[ccache-warm]+=" $(build "$dir" CCACHE_DIR="$cc" -- ccache "$PLAINCC")"
        want vigil-nocache && times[vigil-nocache]+=" $(build "$dir" VIGIL_CC_CACHE=0 -- "$VIGILCC")"
        times[preprocess]+=" $(preprocess "$dir")"
        want vigil-nocache && mkdir -p "$WORK/ref-$prog" && cp "$dir"/*.o "$WORK/ref-$prog/"
        times[vigil-cold]+=" $(build "$dir" VIGIL_CC_CACHE_DIR="$vc" -- "$VIGILCC")"
        want vigil-nocache || { mkdir -p "$WORK/ref-$prog" && cp "$dir"/*.o "$WORK/ref-$prog/"; }
        times[vigil-warm]+=" $(build "$dir" VIGIL_CC_CACHE_DIR="$vc" -- "$VIGILCC")"
        for o in "$dir"/*.o; do
            cmp -s "$o" "$WORK/ref-$prog/$(basename "$o")" || notes+=" $(basename "$o") of the warm build differs from the build without the cache;"
        done
        nfiles=$(echo $FILES | wc -w)
        hits=$("$VIGIL" cache --dir "$vc" --json | sed -n 's/^ *"hits": *\([0-9]*\).*/\1/p')
        direct=$("$VIGIL" cache --dir "$vc" --json | sed -n 's/^ *"direct_hits": *\([0-9]*\).*/\1/p')
        [ "$hits" = "$nfiles" ] || notes+=" round $round: $hits hits of $nfiles compiles;"
        [ "$direct" = "$nfiles" ] || notes+=" round $round: $direct direct hits of $nfiles compiles;"
        if want vigil-warm-pre; then
            times[vigil-warm-pre]+=" $(build "$dir" VIGIL_CC_CACHE_DIR="$vc" VIGIL_CC_CACHE_DIRECT=0 -- "$VIGILCC")"
        fi
        if want ccache+vigil-cold; then
            times[ccache+vigil-cold]+=" $(build "$dir" CCACHE_DIR="$cv" CCACHE_COMPILERCHECK="$COMPILERCHECK" VIGIL_CC_CACHE=0 -- ccache "$VIGILCC")"
            times[ccache+vigil-warm]+=" $(build "$dir" CCACHE_DIR="$cv" CCACHE_COMPILERCHECK="$COMPILERCHECK" VIGIL_CC_CACHE=0 -- ccache "$VIGILCC")"
            chits=$(CCACHE_DIR=$cv ccache --print-stats 2>/dev/null | awk '$1 ~ /direct_cache_hit|preprocessed_cache_hit/ {s += $2} END {print s + 0}')
            [ "$chits" = "$nfiles" ] || notes+=" round $round: ccache over vigil-cc hit $chits of $nfiles;"
        fi
        rm -rf "$vc" "$cc" "$cv"
    done
    declare -A med=()
    printf '%-8s' "$prog" | tee -a "$OUT"
    # shellcheck disable=SC2086
    med[preprocess]=$(median ${times[preprocess]})
    for v in $VARIANTS; do
        # shellcheck disable=SC2086
        med[$v]=$([ -n "${times[$v]:-}" ] && median ${times[$v]} || echo -)
        printf '%19s' "${med[$v]}" | tee -a "$OUT"
    done
    echo | tee -a "$OUT"
    printf '%-8s' "x plain" | tee -a "$OUT"
    for v in $VARIANTS; do printf '%18sx' "$(ratio "${med[$v]}" "${med[plain]}")" | tee -a "$OUT"; done
    echo | tee -a "$OUT"
    summary+=("$prog: vigil warm / ccache warm = $(ratio "${med[vigil-warm]}" "${med[ccache-warm]:--}")x (target <= 1.1);" \
              "  vigil warm without direct mode / ccache warm = $(ratio "${med[vigil-warm-pre]:--}" "${med[ccache-warm]:--}")x;" \
              "  vigil cold (cache on) / vigil without the cache = $(ratio "${med[vigil-cold]}" "${med[vigil-nocache]:--}")x (target <= 1.05);" \
              "  what the cache adds to a cold build, measured apart: clang -E of every file ${med[preprocess]} s = $(awk -v a="${med[preprocess]}" -v b="${med[vigil-nocache]:--}" 'BEGIN {if (b > 0) printf "%.1f", 100 * a / b; else print "-"}')% of vigil without the cache;" \
              "  vigil warm / vigil cold = $(ratio "${med[vigil-warm]}" "${med[vigil-cold]}")x;" \
              "  ccache over vigil-cc, warm / ccache warm = $(ratio "${med[ccache+vigil-warm]:--}" "${med[ccache-warm]:--}")x;" \
              "  rounds (CPU s):$(for v in plain vigil-nocache vigil-cold vigil-warm vigil-warm-pre ccache-warm preprocess; do printf ' %s [%s ]' "$v" "${times[$v]:-}"; done)")
    [ -z "$notes" ] || summary+=("  notes:$notes")
    unset times med
done
emit ""
for line in "${summary[@]}"; do emit "$line"; done
emit ""
emit "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine makes whole-build ratios noisy)"
emit "(each build: every source compiled with -c one at a time, then linked, from one directory; a cold"
emit " variant starts from an empty cache directory, its warm variant reuses it after removing the objects;"
emit " ccache 4 in its default direct mode, vigil-cc in its direct mode unless warm-pre. CPU seconds from"
emit " /usr/bin/time over the whole build, the link included.)"
if [ $SAVE = 1 ]; then
    mkdir -p "$ROOT/bench/results"
    # appended: several runs (programs, rounds) a day go into one file
    { echo; cat "$OUT"; } >>"$ROOT/bench/results/cache-$(date +%Y-%m-%d).txt"
    echo "bench: appended to bench/results/cache-$(date +%Y-%m-%d).txt" >&2
fi
