#!/usr/bin/env bash
# The leak tool on allocation-heavy programs with many live objects, side by side with
# ASan+LSan (bench/workloads/kvstore.c: 200k requests of a key-value store, ~100k live objects
# at exit; bench/workloads/bigbuf.c: 512 MiB of large buffers reserved, a little of each
# touched, held until exit, as a compressor does; jq 1.6 from tests/real/sources.sh on
# bench/workloads/bench.jq over bench/run.py's generated records, JQ_MIB MiB: a JSON processor's
# many small allocations):
#   plain    clang -O2 -g
#   leak     vigil-cc -O2 -g, VIGIL_OPTIONS=tools=leak (report written at exit, exit scan on)
#   before   the same with another vigil build (BEFORE=/path/to/that/build/bin), if given
#   asan     clang -O2 -g -fsanitize=address (LeakSanitizer at exit)
# Runs alternate between the variants (RUNS rounds, default 5); prints the median CPU time
# (user + system) and peak RSS of each and their ratios to plain. With INSTRUCTIONS=1 it also
# counts instructions (valgrind --tool=cachegrind --cache-sim=no; leak.snapshot_every=0) of
# plain, leak and before on smaller inputs (IN_REQUESTS, IN_MIB, IN_JQ_MIB), and the extra
# instructions over plain's per allocation (heap.allocs of leak.json: each with its free, but
# the exit's work counted in). usage: bench/leak-alloc.sh [PROGRAM...] (default: kvstore bigbuf
# jq); jq's builds are cached in VIGIL_REAL_DIR (ASan's in its asan/ directory).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
RUNS=${RUNS:-5}
REQUESTS=${REQUESTS:-200000}
MIB=${MIB:-512}
INSTRUCTIONS=${INSTRUCTIONS:-0}
IN_REQUESTS=${IN_REQUESTS:-20000}
IN_MIB=${IN_MIB:-128}
JQ_MIB=${JQ_MIB:-16}
IN_JQ_MIB=${IN_JQ_MIB:-2}
BEFORE=${BEFORE:-}
CC=${CC:-clang}
VIGILCC=$ROOT/build/bin/vigil-cc
command -v /usr/bin/time >/dev/null || { echo "/usr/bin/time missing: apt-get install time" >&2; exit 1; }
[ -x "$VIGILCC" ] || { echo "build first (make): $VIGILCC" >&2; exit 1; }
WORK=$(mktemp -d /tmp/vigil-leak-alloc.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
programs=("$@")
[ ${#programs[@]} = 0 ] && programs=(kvstore bigbuf jq)

variants=(plain leak asan)
[ -n "$BEFORE" ] && variants=(plain leak before asan)
build() {   # program
    [ "$1" = jq ] && { build_jq; return; }
    local src="$HERE/workloads/$1.c"
    $CC -O2 -g -gdwarf-4 "$src" -o "$WORK/$1.plain" || return 1
    "$VIGILCC" -O2 -g -gdwarf-4 "$src" -o "$WORK/$1.leak" || return 1
    [ -z "$BEFORE" ] || "$BEFORE/vigil-cc" -O2 -g -gdwarf-4 "$src" -o "$WORK/$1.before" || return 1
    $CC -O2 -g -fsanitize=address "$src" -o "$WORK/$1.asan" || return 1
}
# jq from the Debian source (tests/real/sources.sh), linked where the others are built.
build_jq() {
    (
        REPO_ROOT=$ROOT
        # shellcheck source=../tests/real/sources.sh
        source "$ROOT/tests/real/sources.sh"
        ln -sf "$(real_build jq plain)" "$WORK/jq.plain" &&
        ln -sf "$(VIGILCC=$VIGILCC real_build jq vigil)" "$WORK/jq.leak" &&
        { [ -z "$BEFORE" ] || ln -sf "$(VIGILCC=$BEFORE/vigil-cc real_build jq vigil)" "$WORK/jq.before"; } &&
        ln -sf "$(real_side_build asan plain -fsanitize=address jq)" "$WORK/jq.asan"
    )
}
# bench/run.py's JSON records (its generator, its cache of inputs) of $1 MiB.
json_input() { VIGIL_REAL_DIR=${VIGIL_REAL_DIR:-/var/tmp/vigil-real} python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import run; print(run.generated_json(int(sys.argv[2])))' "$HERE" "$1"; }
# The arguments and standard input of program $1's workload (input sizes $2).
workload_args() {   # program requests mib jq_mib -> sets args and input
    input=/dev/null
    case "$1" in
        kvstore) args=("$2") ;;
        bigbuf) args=("$3") ;;
        jq) args=(-c -f "$HERE/workloads/bench.jq"); input=$(json_input "$4") ;;
    esac
}
run() {   # program variant args... -> "cpu_seconds max_rss_kb"
    local prog=$1 v=$2
    shift 2
    local env=()
    case "$v" in
    leak|before) env=(VIGIL_OPTIONS="tools=leak:out=$WORK/out-$v") ;;
    asan) env=(ASAN_OPTIONS=detect_leaks=1) ;;
    esac
    env "${env[@]}" /usr/bin/time -f '%U %S %M' -o "$WORK/time" "$WORK/$prog.$v" "$@" <"$input" >"$WORK/stdout.$v" 2>/dev/null
    rm -rf "$WORK/out-$v"
    awk '{ printf "%.3f %d\n", $1 + $2, $3 }' "$WORK/time"
}
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "leak-alloc: $(date -u +%Y-%m-%d) $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null), $RUNS rounds, $(nproc) cores"
for prog in "${programs[@]}"; do
    build "$prog" || { echo "$prog: build failed" >&2; exit 1; }
    workload_args "$prog" "$REQUESTS" "$MIB" "$JQ_MIB"
    for ((r = 1; r <= RUNS; r++)); do
        for v in "${variants[@]}"; do
            run "$prog" "$v" "${args[@]}" >>"$WORK/$prog.$v.runs"
        done
    done
    for v in "${variants[@]}"; do
        cmp -s "$WORK/stdout.plain" "$WORK/stdout.$v" || echo "$prog $v: output differs from plain's" >&2
    done
    base_cpu=$(cut -d' ' -f1 "$WORK/$prog.plain.runs" | median)
    base_rss=$(cut -d' ' -f2 "$WORK/$prog.plain.runs" | median)
    printf '%-8s %-7s %9s %8s %11s %8s\n' program variant cpu_s ratio peak_rss_kb ratio
    for v in "${variants[@]}"; do
        cpu=$(cut -d' ' -f1 "$WORK/$prog.$v.runs" | median)
        rss=$(cut -d' ' -f2 "$WORK/$prog.$v.runs" | median)
        printf '%-8s %-7s %9.3f %7.2fx %11d %7.2fx\n' "$prog" "$v" "$cpu" \
            "$(awk -v a="$cpu" -v b="$base_cpu" 'BEGIN { print (b > 0) ? a / b : 0 }')" "$rss" \
            "$(awk -v a="$rss" -v b="$base_rss" 'BEGIN { print (b > 0) ? a / b : 0 }')"
    done
done

if [ "$INSTRUCTIONS" = 1 ]; then
    command -v valgrind >/dev/null || { echo "valgrind missing: no instruction counts" >&2; exit 0; }
    echo
    echo "instructions (cachegrind --cache-sim=no): kvstore $IN_REQUESTS requests, bigbuf $IN_MIB MiB, jq $IN_JQ_MIB MiB"
    counted=(plain leak); [ -n "$BEFORE" ] && counted=(plain leak before)
    for prog in "${programs[@]}"; do
        workload_args "$prog" "$IN_REQUESTS" "$IN_MIB" "$IN_JQ_MIB"
        for v in "${counted[@]}"; do
            # No periodic snapshots: under valgrind a run lasts many times its 10 s period, and
            # snapshots the native run never takes would make the count vary with the load.
            env=(); [ "$v" = plain ] || env=(VIGIL_OPTIONS="tools=leak:leak.snapshot_every=0:out=$WORK/out-cg")
            env "${env[@]}" valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$WORK/cg.$prog.$v" \
                "$WORK/$prog.$v" "${args[@]}" <"$input" >/dev/null 2>"$WORK/cg.log"
            allocs=$(cat "$WORK"/out-cg/*/leak.json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["heap"]["allocs"])' 2>/dev/null)
            rm -rf "$WORK/out-cg"
            ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$WORK/cg.$prog.$v")
            echo "$ir" >"$WORK/ir.$prog.$v"
            base_ir=$(cat "$WORK/ir.$prog.plain")
            printf '%-8s %-7s %14d %7.2fx' "$prog" "$v" "$ir" "$(awk -v a="$ir" -v b="$base_ir" 'BEGIN { print a / b }')"
            [ -n "$allocs" ] && printf '  %d allocations, %.0f more instructions per allocation' "$allocs" \
                "$(awk -v a="$ir" -v b="$base_ir" -v n="$allocs" 'BEGIN { print (a - b) / n }')"
            echo
        done
    done
fi
