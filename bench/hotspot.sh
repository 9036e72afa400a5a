#!/usr/bin/env bash
# The hot-spot profiler's cost, side by side with perf, in one run: lua (bench/workloads/
# bench.lua) and bzip2 -9 (IN_BZIP2_BYTES of text), from Debian sources (tests/real/sources.sh,
# its cache), every build with -fno-omit-frame-pointer (what the profiler's stacks need; perf
# -g walks the same frame pointers):
#   plain          clang, the reference
#   vigil-base     vigil-cc build, no tool (adaptive sampling): the core's own cost
#   vigil-off      the same in mode=off: what a run with the hotspot tool alone runs as (it needs
#                  no bursts), so the same run without the tool
#   vigil-hotspot  vigil-cc build, VIGIL_OPTIONS=tools=hotspot (the first 100 samples at 1000 per
#                  CPU second, then 100 per second; and the walker: its hooks patched in and moved
#                  up the hot spots' callers)
#   vigil-onerate  the same at one rate, 1000 per CPU second (hotspot.late_period=0)
#   vigil-sample   the same without the walk (hotspot.walk_spots=0): sampling only
#   vigil-hot100   the same at hotspot.period=10000 (100 per CPU second), with the walk
#   perf           perf record -F 1000 -g on the plain build (perf's own CPU time included)
#   uftrace        uftrace record of a -pg build: every function's entry and exit recorded
#   gprof          the -pg build alone (gmon.out written at exit)
# With HOOKS=1 (the default) two more plain builds, for the next slice's choice of run-time
# hooks (tools/hotspot/README.md): their cost with the hooks in place but not patched:
#   xray           -fxray-instrument -fxray-instruction-threshold=1 (XRay sleds in every function)
#   pfe5           -fpatchable-function-entry=5 (a 5-byte nop at every function's entry)
# Runs alternate between the variants (RUNS rounds, default 7, the order reversed every other
# round); each line is the median wall and CPU time and their ratios to plain, then the
# profiler's share (vigil-hotspot / vigil-base) and perf's. Every variant's output must equal
# plain's. The last runs' top-5 functions by self samples, vigil hot's and perf report's, are
# printed side by side, and uftrace's by self time; each peer's agreement is scored: how many of
# vigil's five are in the peer's top 5 (and top 10), with the peer's rank of each.
#
# usage: bench/hotspot.sh [--save]     --save: also write bench/results/hotspot-<date>.txt
# Environment: RUNS, PROGRAMS (default "lua bzip2"), VARIANTS, HOOKS (1), LUA_N (150),
# IN_BZIP2_BYTES (8000000), VIGIL_REAL_DIR (shared with tests/real), VIGILCC.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO_ROOT=$(cd "$HERE/.." && pwd)
REAL_CFLAGS=${REAL_CFLAGS:--O2 -gdwarf-4 -fno-omit-frame-pointer}
# shellcheck source=../tests/real/sources.sh
source "$REPO_ROOT/tests/real/sources.sh"
# shellcheck source=lib.sh
source "$HERE/lib.sh"
RUNS=${RUNS:-7}
PROGRAMS=${PROGRAMS:-lua bzip2}
HOOKS=${HOOKS:-1}
LUA_N=${LUA_N:-150}
IN_BZIP2_BYTES=${IN_BZIP2_BYTES:-8000000}
VIGIL=${VIGIL:-$REPO_ROOT/build/bin/vigil}
SAVE=0
[ "${1:-}" = --save ] && SAVE=1
for v in $(env | sed -n 's/^\(VIGIL_CC_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset VIGIL_OPTIONS
HAVE_PERF=0
if command -v perf >/dev/null && perf record -q -F 1000 -g -o /dev/null -- true >/dev/null 2>&1; then
    HAVE_PERF=1
else
    echo "bench: perf record does not work here: its column is left out" >&2
fi

WORK=$(mktemp -d /tmp/vigil-bench-hotspot.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
OUT=$WORK/out.txt
say() { echo "$@" | tee -a "$OUT"; }
# agreement PEER VIGIL_TOP10 PEER_TOP10 BINARY (lines "<share> <function>", best first): how
# many of vigil's top 5 are in the peer's top 5 (and top 10), with the peer's rank of each; a
# function that is not a symbol of the peer's BINARY (inlined everywhere: vigil names inlined
# functions from DWARF, the peers cannot) is marked so and left out of the count
agreement() {
    python3 - "$@" <<'PY'
import subprocess, sys
peer, mine, theirs, binary = sys.argv[1:5]
def names(path):
    out = []
    for line in open(path):
        f = line.split()
        if len(f) >= 2 and f[-1] not in out:
            out.append(f[-1])
    return out
syms = set(l.split()[-1] for l in subprocess.run(["nm", binary], capture_output=True, text=True).stdout.splitlines()
           if len(l.split()) >= 3 and l.split()[1] in "tTwW")
v, p = names(mine)[:5], names(theirs)[:10]
comparable = [n for n in v if n in syms or n in p]
in5 = [n for n in comparable if n in p[:5]]
in10 = [n for n in comparable if n in p]
ranks = ", ".join("%s %s" % (n, p.index(n) + 1 if n in p else "inlined" if n not in comparable else "-") for n in v)
print("  top-5 agreement with %s: %d/%d in its top 5, %d/%d in its top 10 (%d inlined left out; its rank of vigil's: %s)"
      % (peer, len(in5), len(comparable), len(in10), len(comparable), len(v) - len(comparable), ranks))
PY
}

# A text file of IN_BZIP2_BYTES: the text files of the lua, bzip2 and sqlite3 source trees.
input() {
    local f=$WORK/input
    if [ ! -s "$f" ]; then
        local dirs=() p
        for p in lua bzip2 sqlite3; do dirs+=("$(real_fetch "$p")"); done
        find "${dirs[@]}" -type f \( -name '*.c' -o -name '*.h' -o -name '*.txt' -o -name '*.html' -o -name '*.test' \
            -o -name '*.lua' \) -print0 | sort -z | xargs -0 cat >"$WORK/all.txt"
        while [ "$(stat -c %s "$WORK/all.txt")" -lt "$IN_BZIP2_BYTES" ]; do
            cat "$WORK/all.txt" "$WORK/all.txt" >"$WORK/all2.txt" && mv "$WORK/all2.txt" "$WORK/all.txt"
        done
        head -c "$IN_BZIP2_BYTES" "$WORK/all.txt" >"$f"
    fi
    echo "$f"
}

workload() {  # PROGRAM BINARY -> the command line
    case "$1" in
        lua) echo "$2 $REPO_ROOT/bench/workloads/bench.lua $LUA_N" ;;
        bzip2) echo "$2 -9 -c < $(input)" ;;
    esac
}

# plain builds with extra flags (the hooks), in a cache directory of their own
hooks_build() {  # PROGRAM FLAGS...
    local prog=$1
    shift
    REAL_CFLAGS="$REAL_CFLAGS $*" real_build "$prog" plain
}

# One measurement: VARIANT BINARY PROGRAM; prints "wall cpu"; the output's checksum goes to
# $WORK/sum.<variant>.<program>.
measure() {
    local variant=$1 bin=$2 prog=$3 cmd env=() pre=()
    cmd=$(workload "$prog" "$bin")
    case "$variant" in
        vigil-base) env=(VIGIL_OPTIONS="out=$WORK/reports") ;;
        vigil-off) env=(VIGIL_OPTIONS="mode=off:out=$WORK/reports") ;;
        vigil-onerate) env=(VIGIL_OPTIONS="tools=hotspot:hotspot.late_period=0:out=$WORK/reports") ;;
        vigil-hotspot) env=(VIGIL_OPTIONS="tools=hotspot:out=$WORK/reports") ;;
        vigil-sample) env=(VIGIL_OPTIONS="tools=hotspot:hotspot.walk_spots=0:out=$WORK/reports") ;;
        vigil-hot100) env=(VIGIL_OPTIONS="tools=hotspot:hotspot.period=10000:out=$WORK/reports") ;;
        perf) pre=(perf record -q -F 1000 -g -o "$WORK/perf.data" --) ;;
        uftrace) pre=(uftrace record --force -d "$WORK/uftrace.data" --no-pager) ;;
        gprof) pre=(env --chdir="$WORK") ;;
    esac
    rm -rf "$WORK/reports"
    local TIMEFORMAT='%3R %3U %3S' status
    { time env "${env[@]}" "${pre[@]}" bash -c "exec $cmd" >"$WORK/output" 2>"$WORK/stderr"; } 2>"$WORK/times"
    status=$?
    [ "$status" = 0 ] || { echo "bench: $variant $prog failed ($status): $(tail -n 3 "$WORK/stderr")" >&2; echo "nan nan"; return; }
    sha1sum <"$WORK/output" | cut -c1-16 >"$WORK/sum.$variant.$prog"
    case "$variant" in
        vigil-hotspot | vigil-onerate) rm -rf "$WORK/last-${variant#vigil-}"; cp -r "$(ls -d "$WORK"/reports/*/ | head -n1)" "$WORK/last-${variant#vigil-}" ;;
    esac
    tail -n1 "$WORK/times" | awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }'
}

if [ -n "${VARIANTS:-}" ]; then
    read -r -a variants <<<"$VARIANTS"
else
    variants=(plain vigil-base vigil-off vigil-sample vigil-hotspot vigil-onerate gprof)
    [ "$HAVE_PERF" = 1 ] && variants+=(perf)
    command -v uftrace >/dev/null && variants+=(uftrace)
    [ "$HOOKS" = 1 ] && variants+=(xray pfe5)
fi
say "## $(date +%F) commit $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo ?)$(git -C "$REPO_ROOT" diff --quiet 2>/dev/null || echo +changes), $(nproc) CPUs, $(uname -r): RUNS=$RUNS bench/hotspot.sh"
say "## builds: $REAL_CFLAGS; lua bench.lua $LUA_N, bzip2 -9 of $IN_BZIP2_BYTES bytes; medians of $RUNS alternating runs"
say "$(printf '%-6s %-14s %8s %8s %8s %8s' program variant 'wall(s)' 'cpu(s)' 'wall x' 'cpu x')"
for prog in $PROGRAMS; do
    declare -A bin=()
    bin[plain]=$(real_build "$prog" plain) || continue
    vb=$(real_build "$prog" vigil) || continue
    bin[vigil-base]=$vb bin[vigil-off]=$vb bin[vigil-sample]=$vb bin[vigil-hotspot]=$vb bin[vigil-hot100]=$vb
    bin[vigil-onerate]=$vb bin[perf]=${bin[plain]}
    if [[ " ${variants[*]} " == *" uftrace "* || " ${variants[*]} " == *" gprof "* ]]; then
        bin[gprof]=$(hooks_build "$prog" -pg) || bin[gprof]=""
        bin[uftrace]=${bin[gprof]}
    fi
    if [[ " ${variants[*]} " == *" xray "* ]]; then
        bin[xray]=$(hooks_build "$prog" -fxray-instrument -fxray-instruction-threshold=1) || bin[xray]=""
    fi
    if [[ " ${variants[*]} " == *" pfe5 "* ]]; then
        bin[pfe5]=$(hooks_build "$prog" -fpatchable-function-entry=5) || bin[pfe5]=""
    fi
    rm -f "$WORK"/w.* "$WORK"/c.*
    for ((r = 0; r < RUNS; r++)); do
        order=("${variants[@]}")
        if ((r % 2)); then
            order=()
            for ((k = ${#variants[@]} - 1; k >= 0; k--)); do order+=("${variants[k]}"); done
        fi
        for v in "${order[@]}"; do
            [ -n "${bin[$v]:-}" ] || continue
            read -r w c < <(measure "$v" "${bin[$v]}" "$prog")
            echo "$w" >>"$WORK/w.$v"
            echo "$c" >>"$WORK/c.$v"
        done
    done
    pw=$(median <"$WORK/w.plain") pc=$(median <"$WORK/c.plain")
    for v in "${variants[@]}"; do
        [ -s "$WORK/w.$v" ] || continue
        w=$(median <"$WORK/w.$v") c=$(median <"$WORK/c.$v")
        say "$(printf '%-6s %-14s %8s %8s %8s %8s' "$prog" "$v" "$w" "$c" "$(ratio "$w" "$pw")" "$(ratio "$c" "$pc")")"
        cmp -s "$WORK/sum.$v.$prog" "$WORK/sum.plain.$prog" || say "  $v: output differs from plain's"
    done
    if [ -s "$WORK/c.vigil-hotspot" ] && [ -s "$WORK/c.vigil-base" ]; then
        say "$(printf '%-6s %-30s cpu x %s (wall x %s)' "$prog" "hotspot run over vigil alone" \
            "$(ratio "$(median <"$WORK/c.vigil-hotspot")" "$(median <"$WORK/c.vigil-base")")" \
            "$(ratio "$(median <"$WORK/w.vigil-hotspot")" "$(median <"$WORK/w.vigil-base")")")"
    fi
    for v in vigil-hotspot vigil-onerate vigil-sample vigil-hot100; do
        [ -s "$WORK/c.$v" ] && [ -s "$WORK/c.vigil-off" ] || continue
        say "$(printf '%-6s %-30s cpu x %s (wall x %s)' "$prog" "profiler's share ($v/off)" \
            "$(ratio "$(median <"$WORK/c.$v")" "$(median <"$WORK/c.vigil-off")")" \
            "$(ratio "$(median <"$WORK/w.$v")" "$(median <"$WORK/w.vigil-off")")")"
    done
    if [ -s "$WORK/c.vigil-hotspot" ] && [ -s "$WORK/c.vigil-sample" ]; then
        say "$(printf '%-6s %-30s cpu x %s' "$prog" "the walk's share (hotspot/sample)" \
            "$(ratio "$(median <"$WORK/c.vigil-hotspot")" "$(median <"$WORK/c.vigil-sample")")")"
    fi
    if [ -d "$WORK/last-hotspot" ]; then
        say "$prog walked chains (the last vigil-hotspot run):"
        "$VIGIL" hot "$WORK/last-hotspot" 2>/dev/null | sed -n '/^  walk /,$p' | cut -c1-150 | tee -a "$OUT" >/dev/null
        "$VIGIL" hot "$WORK/last-hotspot" 2>/dev/null | sed -n '/^  walk /,$p' | cut -c1-150
    fi
    # What each profiler named: the last runs' top 5 by self samples.
    if [ -d "$WORK/last-hotspot" ]; then
        samples=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"])' "$WORK/last-hotspot/hotspot.json")
        say "$prog top 5 by self samples: vigil hot ($samples samples) | perf report"
        "$VIGIL" hot --json -n 10 "$WORK/last-hotspot" 2>/dev/null |
            python3 -c 'import json,sys; [print("%5.1f%% %s" % (f["percent"], f["function"])) for f in json.load(sys.stdin)["self"]]' >"$WORK/top10.vigil"
        head -n 5 "$WORK/top10.vigil" >"$WORK/top.vigil"
        : >"$WORK/top10.perf"
        [ -s "$WORK/perf.data" ] && perf report -i "$WORK/perf.data" --no-children --sort symbol --stdio -q 2>/dev/null |
            awk '$1 ~ /%$/ && NF >= 3 { printf "%5.1f%% %s\n", $1, $3 }' | head -n 10 >"$WORK/top10.perf"
        head -n 5 "$WORK/top10.perf" >"$WORK/top.perf"
        paste -d'|' <(awk '{ printf "  %-36s\n", $0 }' "$WORK/top.vigil") <(sed 's/^/ /' "$WORK/top.perf") | tee -a "$OUT"
        [ -s "$WORK/top10.perf" ] && say "$(agreement perf "$WORK/top10.vigil" "$WORK/top10.perf" "${bin[perf]}")"
        if [ -d "$WORK/last-onerate" ] && [ -s "$WORK/top10.perf" ]; then   # the same at one rate, 1000 Hz
            "$VIGIL" hot --json -n 10 "$WORK/last-onerate" 2>/dev/null |
                python3 -c 'import json,sys; [print("%5.1f%% %s" % (f["percent"], f["function"])) for f in json.load(sys.stdin)["self"]]' >"$WORK/top10.onerate"
            say "$prog top 5 at one rate (hotspot.late_period=0): $(head -n 5 "$WORK/top10.onerate" | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1 }')"
            say "$(agreement "perf (one rate)" "$WORK/top10.onerate" "$WORK/top10.perf" "${bin[perf]}")"
        fi
        if [ -d "$WORK/uftrace.data" ]; then
            say "$prog top 5 by self time: uftrace report (every call of the -pg build traced)"
            uftrace report -d "$WORK/uftrace.data" -s self --no-pager 2>/dev/null | awk 'NR > 2 && NF >= 4 && !/linux:/' |
                head -n 10 >"$WORK/top10.uftrace"
            head -n 5 "$WORK/top10.uftrace" | sed 's/^/  /' | tee -a "$OUT"
            awk '{ print "0 " $NF }' "$WORK/top10.uftrace" >"$WORK/top10.uftrace.names"
            say "$(agreement uftrace "$WORK/top10.vigil" "$WORK/top10.uftrace.names" "${bin[uftrace]}")"
        fi
    fi
done
# The walker's cost per measured call: bench/workloads/calls.c (20 M calls of a small function),
# sampling only against a walk that measures every call of the hot function once hooked.
if [ "${PERCALL:-1}" = 1 ]; then
    "$REPO_ROOT/build/bin/vigil-cc" -O2 -g "$HERE/workloads/calls.c" -o "$WORK/calls" 2>/dev/null
    walk_opts="tools=hotspot:hotspot.walk_spots=1:hotspot.walk_calls=100000000:hotspot.walk_samples=10:hotspot.walk_timeout_ms=100000:hotspot.walk_trace=0"
    rm -f "$WORK/pc.base" "$WORK/pc.walk" "$WORK/pc.calls"
    for ((r = 0; r < RUNS; r++)); do
        for v in base walk; do
            opts="tools=hotspot:hotspot.walk_spots=0"
            [ $v = walk ] && opts=$walk_opts
            rm -rf "$WORK/pc-out"
            TIMEFORMAT='%3U %3S'
            { time VIGIL_OPTIONS="$opts:out=$WORK/pc-out" "$WORK/calls" >/dev/null; } 2>"$WORK/pc.t"
            awk '{ printf "%.3f\n", $1 + $2 }' "$WORK/pc.t" >>"$WORK/pc.$v"
            [ $v = walk ] && python3 -c 'import json,glob,sys; j=json.load(open(glob.glob(sys.argv[1]+"/*/hotspot.json")[0])); print(sum(l["measured"] for w in j["walk"]["walks"] for l in w["levels"]))' "$WORK/pc-out" >>"$WORK/pc.calls"
        done
    done
    b=$(median <"$WORK/pc.base") w=$(median <"$WORK/pc.walk") n=$(median <"$WORK/pc.calls")
    say "per measured call (bench/workloads/calls.c, $RUNS runs, medians): cpu ${b}s sampling only, ${w}s measuring $n calls: $(awk -v b="$b" -v w="$w" -v n="$n" 'BEGIN { if (n > 0) printf "%.0f ns", (w - b) * 1e9 / n; else print "nan" }') per call"
fi
if [ "$SAVE" = 1 ]; then
    mkdir -p "$HERE/results"
    cp "$OUT" "$HERE/results/hotspot-$(date +%F).txt"
    echo "bench: saved bench/results/hotspot-$(date +%F).txt"
fi
