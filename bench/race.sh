#!/usr/bin/env bash
# The race tool's cost, side by side with its peers, in one run: two multithreaded programs
# from Debian sources (built by tests/real/sources.sh, reused from its cache), each run with two
# worker threads, and the single-threaded bzip2 of bench/leak.sh.
#   plain          clang, the reference
#   vigil-base     vigil-cc build, no tool (adaptive sampling): the core's own cost, so that the
#                  race tool's share is vigil-race over this line
#   vigil-race     vigil-cc build, VIGIL_OPTIONS=tools=race (adaptive sampling)
#   vigil-full     vigil-cc build, VIGIL_OPTIONS=mode=full:tools=race (SLOW_RUNS rounds)
#   tsan           clang -fsanitize=thread (a build cache of its own, as bench/leak.sh's asan)
#   helgrind       valgrind --tool=helgrind on the plain build (built with -gdwarf-4), on a
#                  smaller workload: its ratio is to plain on that same workload (SLOW_RUNS rounds)
# Workloads (threaded): xz -T2 -3 --block-size=2MiB and zstd -T2 -12 -B2MiB compress text (the
# source trees' text files, see input()): IN_XZ_BYTES and IN_ZSTD_BYTES of it, SMALL_BYTES for
# helgrind; the block sizes make both use their two threads. bzip2 -9 compresses IN_BZIP2_BYTES,
# and runs plain, vigil-base and vigil-race only: the race tool's cost in a program with one
# thread is its hooks' (target: within 1.01x of vigil-base).
# Runs alternate between the variants (RUNS rounds, default 5; bzip2 ST_RUNS, default 9); each
# line is the median wall time, CPU time (user + system) and peak RSS, and their ratios to plain;
# then the geometric means over the threaded programs, and bzip2's race / base ratios. Every
# variant's output must equal plain's (a mismatch is printed). The findings of the last
# vigil-race, tsan and helgrind runs are counted (race pairs in race.json, TSan's "WARNING:
# ThreadSanitizer: data race", Helgrind's "Possible data race"): what each said about the same
# programs.
#
# usage: bench/race.sh [--save]     --save: also write bench/results/race-<date>.txt
# Environment: RUNS, ST_RUNS, SLOW_RUNS (default 1), PROGRAMS (default "xz zstd"), VARIANTS (a
# subset of the threaded columns, plain first), BENCH_HELGRIND (default 1), BENCH_TSAN (1),
# IN_XZ_BYTES (8000000), IN_ZSTD_BYTES (16000000), IN_BZIP2_BYTES (8000000), SMALL_BYTES
# (1000000), VIGIL_REAL_DIR (shared with tests/real), VIGILCC.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO_ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=../tests/real/sources.sh
source "$REPO_ROOT/tests/real/sources.sh"
# shellcheck source=lib.sh
source "$HERE/lib.sh"
RUNS=${RUNS:-5}
ST_RUNS=${ST_RUNS:-9}
SLOW_RUNS=${SLOW_RUNS:-1}
BENCH_HELGRIND=${BENCH_HELGRIND:-1}
BENCH_TSAN=${BENCH_TSAN:-1}
PROGRAMS=${PROGRAMS:-xz zstd}
IN_XZ_BYTES=${IN_XZ_BYTES:-8000000}
IN_ZSTD_BYTES=${IN_ZSTD_BYTES:-16000000}
IN_BZIP2_BYTES=${IN_BZIP2_BYTES:-8000000}
SMALL_BYTES=${SMALL_BYTES:-1000000}
SAVE=0
[ "${1:-}" = --save ] && SAVE=1
command -v /usr/bin/time >/dev/null || real_die "/usr/bin/time missing: apt-get install time"
[ "$BENCH_HELGRIND" = 1 ] && ! command -v valgrind >/dev/null && { echo "bench: no valgrind: helgrind skipped" >&2; BENCH_HELGRIND=0; }
for v in $(env | sed -n 's/^\(VIGIL_CC_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset VIGIL_OPTIONS TSAN_OPTIONS

# TSan builds: their own cache directory, $VIGIL_REAL_DIR/tsan (real_side_build, as bench/leak.sh
# does for ASan).
tsan_build() { real_side_build tsan plain "-fsanitize=thread" "$1"; }

WORK=$(mktemp -d /tmp/vigil-bench-race.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
OUT=$WORK/out.txt
say() { echo "$@" | tee -a "$OUT"; }
# BYTES: a text file of that many bytes, the head of the text files (C sources and headers,
# documentation) of the Debian source trees of sqlite3, lua, bzip2, xz and zstd in name order
# (some 40 MB, no part repeated: a repeated input made long matches the compressors' main path).
input() {
    local f=$WORK/input.$1 dirs=() p
    if [ ! -s "$f" ]; then
        if [ ! -s "$WORK/all.txt" ]; then
            for p in sqlite3 lua bzip2 xz zstd; do dirs+=("$(real_fetch "$p")"); done
            find "${dirs[@]}" -type f \( -name '*.c' -o -name '*.h' -o -name '*.txt' -o -name '*.md' -o -name '*.html' \
                -o -name '*.test' -o -name '*.tcl' -o -name '*.lua' \) -print0 | sort -z | xargs -0 cat >"$WORK/all.txt"
        fi
        while [ "$(stat -c %s "$WORK/all.txt")" -lt "$1" ]; do cat "$WORK/all.txt" "$WORK/all.txt" >"$WORK/all2.txt" && mv "$WORK/all2.txt" "$WORK/all.txt"; done
        head -c "$1" "$WORK/all.txt" >"$f"
    fi
    echo "$f"
}

# The workload's command line: PROGRAM BINARY [small]
workload() {
    local bytes
    case "$1" in
        xz) bytes=$IN_XZ_BYTES ;;
        zstd) bytes=$IN_ZSTD_BYTES ;;
        bzip2) bytes=$IN_BZIP2_BYTES ;;
    esac
    [ "${3:-}" = small ] && bytes=$SMALL_BYTES
    case "$1" in
        xz) echo "$2 -T2 -3 --block-size=2MiB -c < $(input "$bytes")" ;;
        zstd) echo "$2 -q -T2 -12 -B2MiB -c < $(input "$bytes")" ;;
        bzip2) echo "$2 -9 -c < $(input "$bytes")" ;;
    esac
}

variant_options() {
    case "$1" in
        vigil-base) echo "out=$WORK/reports" ;;
        vigil-race) echo "tools=race:out=$WORK/reports" ;;
        vigil-full) echo "mode=full:tools=race:out=$WORK/reports" ;;
    esac
}

# One measurement: VARIANT BINARY PROGRAM [small]; prints "wall cpu max_rss_kb", keeps the
# output's checksum in $WORK/sum.<variant>.<program> and the run's stderr in $WORK/stderr.
measure() {
    local variant=$1 bin=$2 prog=$3 size=${4:-} cmd env=() pre=()
    cmd=$(workload "$prog" "$bin" "$size")
    case "$variant" in
        vigil-*) env=(VIGIL_OPTIONS="$(variant_options "$variant")") ;;
        tsan) env=(TSAN_OPTIONS="exitcode=0:report_signal_unsafe=0") ;;
        helgrind) pre=(valgrind -q --tool=helgrind --trace-children=yes --error-exitcode=0) ;;
    esac
    rm -rf "$WORK/reports"
    # bash's time for wall and CPU time in milliseconds (/usr/bin/time's are in hundredths), the
    # latter for the peak RSS
    local TIMEFORMAT='%3R %3U %3S' status
    { time env "${env[@]}" /usr/bin/time -f "%M" -o "$WORK/rss" "${pre[@]}" bash -c "exec $cmd" \
        >"$WORK/output" 2>"$WORK/stderr"; } 2>"$WORK/times"
    status=$?
    [ "$status" = 0 ] || { echo "bench: $variant $prog failed ($status): $(tail -n 3 "$WORK/stderr")" >&2; echo "nan nan nan"; return; }
    sha1sum <"$WORK/output" | cut -c1-16 >"$WORK/sum.$variant.$prog${size:+.small}"
    echo "$(tail -n1 "$WORK/times") $(tail -n1 "$WORK/rss")" | awk '{ printf "%.3f %.3f %s\n", $1, $2 + $3, $4 }'
}

# findings VARIANT PROGRAM: what the last run of VARIANT said (after measure)
findings() {
    case "$1" in
        vigil-race|vigil-full)
            local j
            j=$(ls "$WORK"/reports/*/race.json 2>/dev/null | head -n1)
            [ -n "$j" ] && python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["races"]))' "$j" 2>/dev/null || echo "?" ;;
        tsan) grep -c "WARNING: ThreadSanitizer: data race" "$WORK/stderr" ;;
        helgrind) grep -c "Possible data race" "$WORK/stderr" ;;
        *) echo - ;;
    esac
}

if [ -n "${VARIANTS:-}" ]; then
    read -r -a variants <<<"$VARIANTS"
else
    variants=(plain vigil-base vigil-race vigil-full)
    [ "$BENCH_TSAN" = 1 ] && variants+=(tsan)
    [ "$BENCH_HELGRIND" = 1 ] && variants+=(helgrind)
fi
say "## $(date +%F) commit $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo ?)$(git -C "$REPO_ROOT" diff --quiet 2>/dev/null || echo +changes), $(nproc) CPUs: RUNS=$RUNS ST_RUNS=$ST_RUNS SLOW_RUNS=$SLOW_RUNS bench/race.sh"
say "## inputs: xz $IN_XZ_BYTES bytes, zstd $IN_ZSTD_BYTES, bzip2 $IN_BZIP2_BYTES, helgrind's (and its plain reference) $SMALL_BYTES"
say "$(printf '%-6s %-12s %8s %8s %10s %8s %8s %8s %9s' program variant 'wall(s)' 'cpu(s)' 'rss(KiB)' 'wall x' 'cpu x' 'rss x' findings)"
declare -A ratios_w ratios_c ratios_m
for prog in $PROGRAMS; do
    plain_bin=$(real_build "$prog" plain) || continue
    vigil_bin=$(real_build "$prog" vigil) || continue
    tsan_bin=""
    [[ " ${variants[*]} " == *" tsan "* ]] && { tsan_bin=$(tsan_build "$prog") || tsan_bin=""; }
    declare -A bin=([plain]=$plain_bin [vigil-base]=$vigil_bin [vigil-race]=$vigil_bin [vigil-full]=$vigil_bin
                    [tsan]=$tsan_bin [helgrind]=$plain_bin)
    declare -A said=()
    rm -f "$WORK"/w.* "$WORK"/c.* "$WORK"/m.*
    for ((r = 0; r < RUNS; r++)); do
        for v in "${variants[@]}"; do
            [ -n "${bin[$v]}" ] || continue
            case "$v" in vigil-full|helgrind) [ "$r" -ge "$SLOW_RUNS" ] && continue ;; esac
            if [ "$v" = helgrind ]; then
                read -r w c m < <(measure plain "$plain_bin" "$prog" small)   # its reference, alternating with it
                echo "$w" >>"$WORK/w.plain-small"; echo "$c" >>"$WORK/c.plain-small"; echo "$m" >>"$WORK/m.plain-small"
                read -r w c m < <(measure helgrind "$plain_bin" "$prog" small)
            else
                read -r w c m < <(measure "$v" "${bin[$v]}" "$prog")
            fi
            echo "$w" >>"$WORK/w.$v"; echo "$c" >>"$WORK/c.$v"; echo "$m" >>"$WORK/m.$v"
            said[$v]=$(findings "$v")
        done
    done
    # more plain runs of the small workload, for a steadier reference
    if [ -s "$WORK/w.helgrind" ]; then
        for ((r = SLOW_RUNS; r < RUNS; r++)); do
            read -r w c m < <(measure plain "$plain_bin" "$prog" small)
            echo "$w" >>"$WORK/w.plain-small"; echo "$c" >>"$WORK/c.plain-small"; echo "$m" >>"$WORK/m.plain-small"
        done
    fi
    for v in "${variants[@]}"; do
        [ -s "$WORK/w.$v" ] || continue
        ref=plain
        [ "$v" = helgrind ] && ref=plain-small
        w=$(median <"$WORK/w.$v") c=$(median <"$WORK/c.$v") m=$(median <"$WORK/m.$v")
        rw=$(ratio "$w" "$(median <"$WORK/w.$ref")") rc=$(ratio "$c" "$(median <"$WORK/c.$ref")") rm_=$(ratio "$m" "$(median <"$WORK/m.$ref")")
        say "$(printf '%-6s %-12s %8s %8s %10s %8s %8s %8s %9s' "$prog" "$v" "$w" "$c" "$m" "$rw" "$rc" "$rm_" "${said[$v]:--}")"
        ratios_w[$v]+="$rw " ratios_c[$v]+="$rc " ratios_m[$v]+="$rm_ "
        sum_file=$WORK/sum.$v.$prog ref_sum=$WORK/sum.plain.$prog
        [ "$v" = helgrind ] && sum_file=$WORK/sum.helgrind.$prog.small ref_sum=$WORK/sum.plain.$prog.small
        cmp -s "$sum_file" "$ref_sum" || say "       ^ output differs from plain's"
    done
    [ -s "$WORK/w.plain-small" ] && say "$(printf '%-6s %-12s %8s %8s %10s' "$prog" "plain-small" "$(median <"$WORK/w.plain-small")" "$(median <"$WORK/c.plain-small")" "$(median <"$WORK/m.plain-small")")  (helgrind's reference)"
    unset bin said
done
say ""
say "$(printf '%-12s %15s %14s %14s' variant 'geomean wall x' 'geomean cpu x' 'geomean rss x')"
for v in "${variants[@]}"; do
    [ -n "${ratios_w[$v]:-}" ] || continue
    say "$(printf '%-12s %15s %14s %14s' "$v" "$(geomean "${ratios_w[$v]}")" "$(geomean "${ratios_c[$v]}")" "$(geomean "${ratios_m[$v]}")")"
done

# bzip2, one thread: the race tool against vigil without a tool
plain_bin=$(real_build bzip2 plain) && vigil_bin=$(real_build bzip2 vigil) && {
    rm -f "$WORK"/w.* "$WORK"/c.* "$WORK"/m.*
    for ((r = 0; r < ST_RUNS; r++)); do
        for v in plain vigil-base vigil-race; do
            b=$vigil_bin
            [ "$v" = plain ] && b=$plain_bin
            read -r w c m < <(measure "$v" "$b" bzip2)
            echo "$w" >>"$WORK/w.$v"; echo "$c" >>"$WORK/c.$v"; echo "$m" >>"$WORK/m.$v"
        done
    done
    say ""
    say "$(printf '%-6s %-12s %8s %8s %10s %8s %8s %8s %10s %10s' program variant 'wall(s)' 'cpu(s)' 'rss(KiB)' 'wall x' 'cpu x' 'rss x' 'wall/base' 'cpu/base')"
    for v in plain vigil-base vigil-race; do
        w=$(median <"$WORK/w.$v") c=$(median <"$WORK/c.$v") m=$(median <"$WORK/m.$v")
        say "$(printf '%-6s %-12s %8s %8s %10s %8s %8s %8s %10s %10s' bzip2 "$v" "$w" "$c" "$m" \
            "$(ratio "$w" "$(median <"$WORK/w.plain")")" "$(ratio "$c" "$(median <"$WORK/c.plain")")" \
            "$(ratio "$m" "$(median <"$WORK/m.plain")")" \
            "$(ratio "$w" "$(median <"$WORK/w.vigil-base")")" "$(ratio "$c" "$(median <"$WORK/c.vigil-base")")")"
        cmp -s "$WORK/sum.$v.bzip2" "$WORK/sum.plain.bzip2" || say "       ^ output differs from plain's"
    done
}

if [ "$SAVE" = 1 ]; then
    mkdir -p "$HERE/results"
    res=$HERE/results/race-$(date +%F).txt
    cat "$OUT" >>"$res"
    echo "bench: appended to $res" >&2
fi
