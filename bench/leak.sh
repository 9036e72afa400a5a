#!/usr/bin/env bash
# The leak tool's cost, side by side with its peers, on the real programs of tests/real (built
# by tests/real/sources.sh, reused from its cache) plus allocation-heavy workloads (sqlite3 on
# bench/workloads/bench.sql, lua on bench/workloads/bench.lua):
#   plain          clang, the reference
#   vigil-base     vigil-cc build, no tool (adaptive sampling): the core's own cost, so that the
#                  leak tool's share is the difference between vigil-adapt and this line
#   vigil-adapt    vigil-cc build, VIGIL_OPTIONS=tools=leak (adaptive sampling)
#   vigil-full     vigil-cc build, VIGIL_OPTIONS=mode=full:tools=leak
#   asan           clang -fsanitize=address (LeakSanitizer on at exit)
#   valgrind       valgrind --leak-check=full on the plain build (skipped with BENCH_VALGRIND=0)
# Runs alternate between the variants (RUNS rounds, default 5); prints the median wall time and
# peak RSS of each, the ratios to plain, and the geometric means of the ratios. With
# INSTRUCTIONS=1 it then counts instructions (valgrind --tool=cachegrind --cache-sim=no; plain,
# vigil-base and vigil-adapt, one run each on smaller workloads; vigil-adapt with
# leak.snapshot_every=0: a run under valgrind lasts many snapshot periods that the native run
# never reaches) and prints their ratios: on these shared cores a change of a few percent in
# time is lost in the noise, not in these. With ANNOTATE=N as well, the N functions that account
# for most of the leak tool's share (vigil-adapt less vigil-base: cg_diff, cg_annotate) follow
# each program's counts; the cachegrind files stay in ANNOTATE_DIR when it is set.
#
# usage: bench/leak.sh [PROGRAM...]        programs: sqlite3 lua bzip2 gzip bc (default: all)
# Environment: RUNS, SLOW_RUNS (rounds of vigil-full and valgrind, default 1), BENCH_VALGRIND, ANNOTATE,
# VARIANTS (a subset of the columns, plain first), VIGIL_REAL_DIR (shared with tests/real), SQL_ROWS, LUA_N,
# BC_DIGITS (digits of pi and e that bc computes; 1700 is about 1 s, as in bench/run.py),
# INSTRUCTIONS, and for its workloads IN_SQL_ROWS (50000), IN_LUA_N (15), IN_TEXT_BYTES (2000000,
# the head of the text bzip2 and gzip compress), IN_BC_DIGITS (500).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO_ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=../tests/real/sources.sh
source "$REPO_ROOT/tests/real/sources.sh"
# shellcheck source=lib.sh
source "$HERE/lib.sh"
RUNS=${RUNS:-5}
SLOW_RUNS=${SLOW_RUNS:-1}
BENCH_VALGRIND=${BENCH_VALGRIND:-1}
SQL_ROWS=${SQL_ROWS:-200000}
LUA_N=${LUA_N:-10}
BC_DIGITS=${BC_DIGITS:-1700}
INSTRUCTIONS=${INSTRUCTIONS:-0}
ANNOTATE=${ANNOTATE:-0}
ANNOTATE_DIR=${ANNOTATE_DIR:-}
IN_SQL_ROWS=${IN_SQL_ROWS:-50000}
IN_LUA_N=${IN_LUA_N:-15}
IN_TEXT_BYTES=${IN_TEXT_BYTES:-2000000}
IN_BC_DIGITS=${IN_BC_DIGITS:-500}
programs=("$@")
[ ${#programs[@]} = 0 ] && programs=(sqlite3 lua bzip2 gzip bc)
command -v /usr/bin/time >/dev/null || real_die "/usr/bin/time missing: apt-get install time"

# ASan builds live in their own cache directory, $VIGIL_REAL_DIR/asan (real_side_build).
asan_build() { real_side_build asan plain "-fsanitize=address" "$1"; }

WORK=$(mktemp -d /tmp/vigil-bench-leak.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
sed "s/@ROWS@/$SQL_ROWS/g" "$HERE/workloads/bench.sql" >"$WORK/bench.sql"
sed "s/@SCALE@/$BC_DIGITS/" "$REPO_ROOT/tests/real/workloads/bc_pi.bc" >"$WORK/pi.bc"
text_input() {   # a large text file: the sqlite3 amalgamation, concatenated twice
    [ -s "$WORK/input.txt" ] || cat "$(real_sqlite_amalgamation)/sqlite3.c" "$(real_sqlite_amalgamation)/sqlite3.c" >"$WORK/input.txt"
    echo "$WORK/input.txt"
}

# The command line of PROGRAM's workload with binary $1; with a third argument "small", the
# smaller workload that instruction counts use.
workload() {
    local sql=$WORK/bench.sql lua_n=$LUA_N text=none bc=$WORK/pi.bc
    case "$2" in bzip2|gzip) text=$(text_input) ;; esac
    if [ "${3:-}" = small ]; then
        [ -s "$WORK/small.sql" ] || sed "s/@ROWS@/$IN_SQL_ROWS/g" "$HERE/workloads/bench.sql" >"$WORK/small.sql"
        [ "$text" = none ] || [ -s "$WORK/small.txt" ] || head -c "$IN_TEXT_BYTES" "$text" >"$WORK/small.txt"
        [ -s "$WORK/small-pi.bc" ] || sed "s/@SCALE@/$IN_BC_DIGITS/" "$REPO_ROOT/tests/real/workloads/bc_pi.bc" >"$WORK/small-pi.bc"
        sql=$WORK/small.sql lua_n=$IN_LUA_N text=$WORK/small.txt bc=$WORK/small-pi.bc
    fi
    case "$2" in
        sqlite3) echo "$1 :memory: < $sql" ;;
        lua) echo "$1 $HERE/workloads/bench.lua $lua_n" ;;
        bzip2) echo "$1 -9 -c < $text" ;;
        gzip) echo "$1 -9 -c < $text" ;;
        bc) echo "$1 -l $bc < /dev/null" ;;
    esac
}

# VIGIL_OPTIONS of a vigil variant (empty for the others).
variant_options() {
    case "$1" in
        vigil-base) echo "out=$WORK/reports" ;;
        vigil-adapt) echo "tools=leak:out=$WORK/reports" ;;
        vigil-full) echo "mode=full:tools=leak:out=$WORK/reports" ;;
    esac
}

# Instructions of one run of the small workload; prints the count, or nan. The cachegrind file
# goes to $WORK/cg.PROGRAM.VARIANT with ANNOTATE set (else nowhere).
instructions() {   # VARIANT BINARY PROGRAM
    local variant=$1 bin=$2 prog=$3 n opts out=/dev/null
    opts=$(variant_options "$variant")
    [ "$variant" = vigil-adapt ] && opts+=":leak.snapshot_every=0"
    [ "$ANNOTATE" = 0 ] || out=$WORK/cg.$prog.$variant
    n=$(VIGIL_OPTIONS="$opts" valgrind --tool=cachegrind --cache-sim=no \
            --cachegrind-out-file="$out" --trace-children=yes bash -c "exec $(workload "$bin" "$prog" small)" 2>&1 >/dev/null \
        | sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' | tail -n1 | tr -d ,)
    echo "${n:-nan}"
}

# Run one measurement; prints "seconds max_rss_kb".
measure() {   # VARIANT BINARY PROGRAM
    local variant=$1 bin=$2 prog=$3 cmd env=() pre=()
    cmd=$(workload "$bin" "$prog")
    case "$variant" in
        vigil-*) env=(VIGIL_OPTIONS="$(variant_options "$variant")") ;;
        asan) env=(ASAN_OPTIONS=detect_leaks=1:exitcode=0) ;;
        # --trace-children: the workload runs as `bash -c "exec ..."`; without it valgrind
        # follows bash only and the program itself ran natively after the exec.
        valgrind) pre=(valgrind -q --trace-children=yes --leak-check=full --error-exitcode=0) ;;
    esac
    env "${env[@]}" /usr/bin/time -f "%e %M" -o "$WORK/time" "${pre[@]}" bash -c "exec $cmd" >/dev/null 2>"$WORK/stderr" \
        || { echo "bench: $variant $prog failed: $(tail -n 3 "$WORK/stderr")" >&2; echo "nan nan"; return; }
    tail -n1 "$WORK/time"
}

if [ -n "${VARIANTS:-}" ]; then
    read -r -a variants <<<"$VARIANTS"   # a subset, e.g. VARIANTS="plain valgrind" (plain is the reference)
else
    variants=(plain vigil-base vigil-adapt vigil-full asan)
    [ "$BENCH_VALGRIND" = 1 ] && command -v valgrind >/dev/null && variants+=(valgrind)
fi
printf '%-8s %-12s %9s %10s %8s %8s\n' program variant "time(s)" "rss(KiB)" "time x" "rss x"
declare -A ratios_t ratios_m
for prog in "${programs[@]}"; do
    plain_bin=$(real_build "$prog" plain) || continue
    vigil_bin=$(real_build "$prog" vigil) || continue
    asan_bin=$(asan_build "$prog") || asan_bin=""
    declare -A bin=([plain]=$plain_bin [vigil-base]=$vigil_bin [vigil-adapt]=$vigil_bin [vigil-full]=$vigil_bin [asan]=$asan_bin [valgrind]=$plain_bin)
    rm -f "$WORK"/t.* "$WORK"/m.*
    for ((r = 0; r < RUNS; r++)); do
        for v in "${variants[@]}"; do
            [ -n "${bin[$v]}" ] || continue
            # 10-50x slower: SLOW_RUNS rounds only
            case "$v" in valgrind|vigil-full) [ "$r" -ge "$SLOW_RUNS" ] && continue ;; esac
            read -r t m < <(measure "$v" "${bin[$v]}" "$prog")
            echo "$t" >>"$WORK/t.$v"
            echo "$m" >>"$WORK/m.$v"
            rm -rf "$WORK/reports"
        done
    done
    base_t=$(median <"$WORK/t.plain") base_m=$(median <"$WORK/m.plain")
    for v in "${variants[@]}"; do
        [ -s "$WORK/t.$v" ] || continue
        t=$(median <"$WORK/t.$v") m=$(median <"$WORK/m.$v")
        rt=$(awk -v a="$t" -v b="$base_t" 'BEGIN { printf "%.3f", (b > 0) ? a / b : 0 }')
        rm_=$(awk -v a="$m" -v b="$base_m" 'BEGIN { printf "%.3f", (b > 0) ? a / b : 0 }')
        printf '%-8s %-12s %9s %10s %8s %8s\n' "$prog" "$v" "$t" "$m" "$rt" "$rm_"
        ratios_t[$v]+="$rt " ratios_m[$v]+="$rm_ "
    done
    unset bin
done
echo
printf '%-12s %14s %14s\n' variant "geomean time x" "geomean rss x"
for v in "${variants[@]}"; do
    [ -n "${ratios_t[$v]:-}" ] || continue
    printf '%-12s %14s %14s\n' "$v" \
        "$(echo "${ratios_t[$v]}" | awk '{ s = 0; for (i = 1; i <= NF; i++) s += log($i); printf "%.3f", exp(s / NF) }')" \
        "$(echo "${ratios_m[$v]}" | awk '{ s = 0; for (i = 1; i <= NF; i++) s += log($i); printf "%.3f", exp(s / NF) }')"
done

[ "$INSTRUCTIONS" = 1 ] || exit 0
command -v valgrind >/dev/null || real_die "INSTRUCTIONS=1 needs valgrind"
echo
printf '%-8s %14s %14s %14s %10s %10s\n' program plain vigil-base vigil-adapt "base x" "adapt x"
ratios_b="" ratios_a=""
for prog in "${programs[@]}"; do
    plain_bin=$(real_build "$prog" plain) || continue
    vigil_bin=$(real_build "$prog" vigil) || continue
    p=$(instructions plain "$plain_bin" "$prog")
    b=$(instructions vigil-base "$vigil_bin" "$prog")
    a=$(instructions vigil-adapt "$vigil_bin" "$prog")
    rm -rf "$WORK/reports"
    rb=$(awk -v a="$b" -v p="$p" 'BEGIN { printf "%.3f", a / p }')
    ra=$(awk -v a="$a" -v p="$p" 'BEGIN { printf "%.3f", a / p }')
    printf '%-8s %14s %14s %14s %10s %10s\n' "$prog" "$p" "$b" "$a" "$rb" "$ra"
    ratios_b+="$rb " ratios_a+="$ra "
    if [ "$ANNOTATE" != 0 ] && [ -s "$WORK/cg.$prog.vigil-base" ] && [ -s "$WORK/cg.$prog.vigil-adapt" ]; then
        echo "  $prog: the leak tool's share by function (vigil-adapt less vigil-base: $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.0f", a - b }') instructions)"
        cg_diff "$WORK/cg.$prog.vigil-base" "$WORK/cg.$prog.vigil-adapt" >"$WORK/cg.$prog.diff" 2>/dev/null &&
            cg_annotate --auto=no "$WORK/cg.$prog.diff" 2>/dev/null | sed -n '/file:function/,/^$/p' \
            | sed -n "3,$((ANNOTATE + 2))p" | sed "s|$REPO_ROOT/||; s|$VIGIL_REAL_DIR/build/[^ ]*/||; s/^/    /"
        [ -z "$ANNOTATE_DIR" ] || { mkdir -p "$ANNOTATE_DIR" && cp "$WORK"/cg."$prog".* "$ANNOTATE_DIR"/; }
    fi
done
printf '%-8s %14s %14s %14s %10s %10s\n' geomean "" "" "" \
    "$(echo "$ratios_b" | awk '{ s = 0; for (i = 1; i <= NF; i++) s += log($i); printf "%.3f", exp(s / NF) }')" \
    "$(echo "$ratios_a" | awk '{ s = 0; for (i = 1; i <= NF; i++) s += log($i); printf "%.3f", exp(s / NF) }')"
