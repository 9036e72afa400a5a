#!/usr/bin/env bash
# What an observation config (vigil observe, docs/config.md) buys on lua: side by side,
#   plain          clang
#   vigil          vigil-cc (VIGIL_CC_CACHE=0)
#   vigil+config   vigil-cc with VIGIL_CC_CONFIG = what `vigil observe` wrote from one run of
#                  bench/workloads/bench.lua
# CPU seconds of the whole build (user+sys; every file with -c, then the link; median of
# BUILD_ROUNDS), text bytes of the binary, the functions in [skip], instructions of one run
# (cachegrind, --cache-sim=no; the binaries are built -gdwarf-4) and wall seconds of RUN_ROUNDS
# alternating runs (median). Ratios to plain. Nothing is asserted; the table goes to stdout
# (with --save, also added to bench/results/config-<date>.txt, and the config measured copied
# beside it).
#
# usage: bench/config.sh [--save]
# Environment: LUA_N (bench.lua's scale for the runs, default 20), OBSERVE_N (for the
#   observation run, default 5), OBSERVE_ARGS (vigil observe's rule flags, default none:
#   --min-calls 1e6 --max-sites 16), BUILD_ROUNDS (1), RUN_ROUNDS (3), CACHEGRIND (1; 0: skip),
#   VIGILCC, PLAINCC, REAL_CFLAGS (-O2 -gdwarf-4), VIGIL_REAL_DIR (tests/real/sources.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LUA_N=${LUA_N:-20}
OBSERVE_N=${OBSERVE_N:-5}
OBSERVE_ARGS=${OBSERVE_ARGS:-}
BUILD_ROUNDS=${BUILD_ROUNDS:-1}
RUN_ROUNDS=${RUN_ROUNDS:-3}
CACHEGRIND=${CACHEGRIND:-1}
VIGILCC=${VIGILCC:-$ROOT/build/bin/vigil-cc}
VIGIL=$(dirname "$VIGILCC")/vigil
PLAINCC=${PLAINCC:-clang}
REAL_CFLAGS=${REAL_CFLAGS:--O2 -gdwarf-4}
SAVE=0
[ "${1:-}" = --save ] && SAVE=1
[ -x "$VIGILCC" ] || { echo "bench/config.sh: no $VIGILCC (make -j2)" >&2; exit 2; }
# shellcheck source=../tests/real/sources.sh
source "$ROOT/tests/real/sources.sh"
for v in $(env | sed -n 's/^\(VIGIL_CC_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset VIGIL_OPTIONS

WORK=$(mktemp -d /tmp/vigil-bench-config.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
OUT=$WORK/out.txt
emit() { echo "$*" | tee -a "$OUT"; }
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}'; }

src=$(real_fetch lua)
FLAGS="-std=gnu99 $REAL_CFLAGS -DLUA_COMPAT_5_3 -DLUA_USE_LINUX"
for v in plain vigil vigil+config; do
    mkdir -p "$WORK/$v"
    cp "$src"/src/*.c "$src"/src/*.h "$WORK/$v/"
    rm -f "$WORK/$v/luac.c"
    echo "#define DEB_HOST_MULTIARCH \"$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)\"" >"$WORK/$v/lua5.4-deb-multiarch.h"
done
FILES=$(cd "$WORK/plain" && ls ./*.c | sed 's|^\./||' | tr '\n' ' ')

build() {  # VARIANT ENV... -- COMPILER: CPU seconds of a whole build in WORK/VARIANT
    local dir=$WORK/$1
    shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    (cd "$dir" && rm -f ./*.o lua)
    # shellcheck disable=SC2016
    env "${envs[@]}" /usr/bin/time -f '%U %S' -o "$WORK/time" bash -c '
        set -e
        cd "$1"; shift
        files=$1 flags=$2; shift 2
        for f in $files; do "$@" $flags -c "$f" -o "${f%.c}.o"; done
        "$@" $flags -Wl,-E -o lua ${files//.c/.o} -lm -ldl' _ "$dir" "$FILES" "$FLAGS" "$@" >"$WORK/build.log" 2>&1 ||
        { echo "bench/config.sh: build failed ($*):" >&2; tail -n 20 "$WORK/build.log" >&2; exit 1; }
    awk '{printf "%.2f\n", $1 + $2}' "$WORK/time"
}
text_bytes() { size "$1" | awk 'NR == 2 {print $1}'; }

emit "vigil observe's config on lua 5.4: build CPU, text, run cost (plain clang = 1.00)"
emit "vigil-cc: $("$VIGILCC" --version | sed -n 2p); plain: $($PLAINCC --version | head -n1)"
emit "flags: $REAL_CFLAGS; $(nproc) CPUs; $(date -u '+%Y-%m-%d %H:%M UTC'); load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"

declare -A cpu=()
for round in $(seq 1 "$BUILD_ROUNDS"); do
    echo "bench: build round $round" >&2
    cpu[plain]+=" $(build plain -- "$PLAINCC")"
    cpu[vigil]+=" $(build vigil VIGIL_CC_CACHE=0 -- "$VIGILCC")"
    if [ "$round" = 1 ]; then
        # shellcheck disable=SC2086
        "$VIGIL" observe $OBSERVE_ARGS --out "$WORK/lua.conf" -- "$WORK/vigil/lua" "$ROOT/bench/workloads/bench.lua" "$OBSERVE_N" \
            >/dev/null 2>"$WORK/observe.err" || { cat "$WORK/observe.err" >&2; exit 1; }
    fi
    cpu[vigil+config]+=" $(build vigil+config VIGIL_CC_CACHE=0 VIGIL_CC_CONFIG="$WORK/lua.conf" -- "$VIGILCC")"
done
skipped=$(grep -c '^fun:' "$WORK/lua.conf" || true)
emit "observation: bench.lua $OBSERVE_N under vigil observe ${OBSERVE_ARGS:-(defaults: --min-calls 1e6 --max-sites 16)}: $skipped functions in [skip]: $(grep '^fun:' "$WORK/lua.conf" | cut -d: -f2 | tr '\n' ' ')"

for v in plain vigil vigil+config; do
    out=$("$WORK/$v/lua" "$ROOT/bench/workloads/bench.lua" 1)
    [ "$out" = "$("$WORK/plain/lua" "$ROOT/bench/workloads/bench.lua" 1)" ] || emit "note: $v prints $out, plain prints another checksum"
done

declare -A wall=() instr=()
for round in $(seq 1 "$RUN_ROUNDS"); do
    for v in plain vigil vigil+config; do
        /usr/bin/time -f '%e' -o "$WORK/time" "$WORK/$v/lua" "$ROOT/bench/workloads/bench.lua" "$LUA_N" >/dev/null
        wall[$v]+=" $(cat "$WORK/time")"
    done
done
if [ "$CACHEGRIND" = 1 ] && command -v valgrind >/dev/null; then
    for v in plain vigil vigil+config; do
        valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$WORK/$v/lua" \
            "$ROOT/bench/workloads/bench.lua" 2 >/dev/null 2>"$WORK/cg.err"
        instr[$v]=$(sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' "$WORK/cg.err" | tr -d ,)
    done
fi

emit ""
emit "$(printf '%-14s %10s %7s %12s %7s %14s %7s %10s %7s' variant build-cpu-s ratio text-bytes ratio instructions ratio wall-s ratio)"
for v in plain vigil vigil+config; do
    c=$(median ${cpu[$v]}) w=$(median ${wall[$v]}) t=$(text_bytes "$WORK/$v/lua") i=${instr[$v]:-0}
    emit "$(printf '%-14s %10s %7s %12s %7s %14s %7s %10s %7s' "$v" "$c" "$(ratio "$c" "$(median ${cpu[plain]})")" \
        "$t" "$(ratio "$t" "$(text_bytes "$WORK/plain/lua")")" "$i" "$(ratio "$i" "${instr[plain]:-0}")" \
        "$w" "$(ratio "$w" "$(median ${wall[plain]})")")"
done
emit "build: median of $BUILD_ROUNDS; wall: bench.lua $LUA_N, median of $RUN_ROUNDS alternating runs; instructions: bench.lua 2, one run (default VIGIL_OPTIONS: adaptive, no tool)"
if [ "$SAVE" = 1 ]; then
    mkdir -p "$ROOT/bench/results"
    # each run's table is added to the day's file; the config it measured is kept beside it
    { cat "$OUT"; echo; } >>"$ROOT/bench/results/config-$(date -u +%Y-%m-%d).txt"
    cp "$WORK/lua.conf" "$ROOT/bench/results/config-lua$(echo "$OBSERVE_ARGS" | tr -c 'a-z0-9\n' '-' | tr -d '\n')-$(date -u +%Y-%m-%d).conf"
fi
