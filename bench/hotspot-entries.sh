#!/usr/bin/env bash
# The unpatched cost of the hotspot tool's patchable entries (tools/hotspot/compiler/): lua
# (bench/workloads/bench.lua) and bzip2 -9 (1 MB of text) built with vigil-cc three ways,
# instructions executed under cachegrind (deterministic, so one run each), in mode=off and
# adaptive, and text size:
#   none     VIGIL_CC_HOTSPOT_ENTRIES=0 (no nops)
#   default  a nop in functions with a loop, a call, or at least 24 IR instructions
#   nocalls  VIGIL_CC_HOTSPOT_CALLERS=0: a nop in functions with a loop or of 24 instructions
#   all      VIGIL_CC_HOTSPOT_MIN=0: a nop in every transformed function
#   bodyN    VIGIL_CC_HOTSPOT_BODY_MIN=N: the default, but none in functions under N instructions
#   observed the [hotspot.entries] section `vigil observe` writes from a run of the same workload
#            (the default build, sampled): entries in the functions with 1% of the samples,
#            inclusive, only (its [skip] section left out: it would change the checks too)
# usage: bench/hotspot-entries.sh        Environment: LUA_N (20), PROGRAMS (lua bzip2), VARIANTS, VIGIL_REAL_DIR, VIGILCC.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO_ROOT=$(cd "$HERE/.." && pwd)
BASE_CFLAGS="-O2 -gdwarf-4"
# shellcheck source=../tests/real/sources.sh
source "$REPO_ROOT/tests/real/sources.sh"
LUA_N=${LUA_N:-20}
for v in $(env | sed -n 's/^\(VIGIL_CC_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset VIGIL_OPTIONS
INPUT=$VIGIL_REAL_DIR/inputs/text-1024k.txt

build() {  # PROG VARIANT -> binary (the variant is also a -D, so that the build cache keeps them apart)
    case "$2" in
        none) VIGIL_CC_HOTSPOT_ENTRIES=0 REAL_CFLAGS="$BASE_CFLAGS -DVIGIL_BENCH_ENTRIES_NONE" real_build "$1" vigil ;;
        default) REAL_CFLAGS="$BASE_CFLAGS" real_build "$1" vigil ;;
        nocalls) VIGIL_CC_HOTSPOT_CALLERS=0 REAL_CFLAGS="$BASE_CFLAGS -DVIGIL_BENCH_ENTRIES_NOCALLS" real_build "$1" vigil ;;
        all) VIGIL_CC_HOTSPOT_MIN=0 REAL_CFLAGS="$BASE_CFLAGS -DVIGIL_BENCH_ENTRIES_ALL" real_build "$1" vigil ;;
        body*) VIGIL_CC_HOTSPOT_BODY_MIN=${2#body} REAL_CFLAGS="$BASE_CFLAGS -DVIGIL_BENCH_ENTRIES_BODY=${2#body}" real_build "$1" vigil ;;
        observed)
            local def conf=$VIGIL_REAL_DIR/hotspot-entries-$1.conf
            def=$(REAL_CFLAGS="$BASE_CFLAGS" real_build "$1" vigil) || return 1
            local args=("$REPO_ROOT/bench/workloads/bench.lua" "$LUA_N") in=/dev/null
            [ "$1" = bzip2 ] && args=(-9 -c) in=$INPUT
            (cd "$(mktemp -d)" && "$REPO_ROOT/build/bin/vigil" observe --out observed.conf -- "$def" "${args[@]}" \
                <"$in" >/dev/null 2>&1 && sed -n '/^\[hotspot.entries\]/,$p' observed.conf) >"$conf"
            grep -q '^fun:' "$conf" || { echo "bench: vigil observe wrote no [hotspot.entries] for $1" >&2; return 1; }
            echo "$1 observed: $(grep -c '^fun:' "$conf") functions in [hotspot.entries] ($conf)" >&2
            VIGIL_CC_CONFIG=$conf REAL_CFLAGS="$BASE_CFLAGS -DVIGIL_BENCH_ENTRIES_OBS=$(sha1sum <"$conf" | cut -c1-12)" \
                real_build "$1" vigil ;;
    esac
}
command_of() {  # PROG BINARY -> the workload's command line
    case $1 in
        lua) echo "exec $2 $REPO_ROOT/bench/workloads/bench.lua $LUA_N" ;;
        bzip2) echo "exec $2 -9 -c < $INPUT" ;;
    esac
}
instructions() {  # MODE CMD... -> instructions executed
    local out
    out=$(mktemp)
    VIGIL_OPTIONS="mode=$1" valgrind --tool=cachegrind --cache-sim=no --trace-children=yes --cachegrind-out-file=/dev/null \
        sh -c "${*:2}" 2>"$out" >/dev/null
    # the last process's figure (sh runs the program with exec)
    sed -n 's/.*I *refs: *//p' "$out" | tr -d , | tail -n1
    rm -f "$out"
}
for prog in ${PROGRAMS:-lua bzip2}; do
    declare -A ins=()
    for var in ${VARIANTS:-none default nocalls all}; do
        bin=$(build "$prog" "$var") || exit 1
        cmd=$(command_of "$prog" "$bin")
        text=$(size -A "$bin" | awk '$1==".text"{print $2}')
        nent=$(( $(size -A "$bin" | awk '$1=="__patchable_function_entries"{s=$2} END{print s+0}') / 8 ))
        for mode in off adaptive; do
            ins[$var.$mode]=$(instructions $mode "$cmd")
        done
        ins[$var.text]=$text
        echo "$prog $var: entries $nent, text $text, instructions off ${ins[$var.off]} adaptive ${ins[$var.adaptive]}"
    done
    for var in ${VARIANTS:-none default nocalls all}; do
        [ "$var" = none ] && continue
        python3 -c "
n=dict(off=${ins[none.off]},ad=${ins[none.adaptive]},t=${ins[none.text]}); v=dict(off=${ins[$var.off]},ad=${ins[$var.adaptive]},t=${ins[$var.text]})
print('$prog $var over none: instructions mode=off %+.2f%%, adaptive %+.2f%%, text %+.2f%%' % tuple(100.0*(v[k]/n[k]-1) for k in ('off','ad','t')))"
    done
    unset ins
done
