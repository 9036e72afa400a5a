#!/usr/bin/env bash
# The memory checker's cost (tools/memcheck: uninitialized reads, out-of-bounds accesses and
# uses after free on sampled accesses), side by side with its peers, in one run, on the real
# programs of tests/real (built by tests/real/sources.sh, reused from its cache):
#   plain           clang -O2 -gdwarf-4, the reference
#   vigil-base      vigil-cc build, no tool (adaptive sampling): the core's own cost, so that the
#                   checker's share is vigil-memcheck over this line
#   vigil-memcheck  vigil-cc build, VIGIL_OPTIONS=tools=memcheck (adaptive sampling)
#   vigil-memcheck-q  the same with the quarantine of recent frees (memcheck.quarantine=256, off
#                   by default): not run by default (VARIANTS="plain vigil-memcheck vigil-memcheck-q"
#                   shows the quarantine's cost)
#   vigil-full      vigil-cc build, VIGIL_OPTIONS=mode=full:tools=memcheck: every access of the
#                   instrumented copies checked (SLOW_RUNS rounds); on the smaller workload, as
#                   valgrind (with FULL_SMALL=0 on the main one): it costs up to some 700x
#   asan            clang -fsanitize=address (ASAN_OPTIONS=detect_leaks=0: no leak check, as
#                   memcheck; a build cache of its own, as bench/leak.sh's)
#   msan            clang -fsanitize=memory (no origin tracking), large-file support off
#                   (-D_FILE_OFFSET_BITS=32, also in bzip2's recipe, whose 64 it replaces): with
#                   glibc 2.36 MSan reports false uninitialized reads after stat64/fstat64. A
#                   program that does not build under MSan gets a line saying why, no figures.
#   valgrind        valgrind --tool=memcheck --leak-check=no on the plain build, on a smaller
#                   workload: its ratio is to plain on that same workload (SLOW_RUNS rounds,
#                   each beside a plain run of it, plain-small; more plain-small runs after, up
#                   to RUNS, for a steadier median)
# Workloads: bzip2 -9 compresses IN_BZIP2_BYTES of text (the sqlite3 amalgamation, repeated)
# and decompresses the result (two processes); lua runs bench/workloads/bench.lua LUA_N;
# sqlite3 runs tests/real/workloads/sqlite_schema.sql then sqlite_text.sql with SQL_ROWS rows
# on :memory:. The smaller ones (valgrind's, vigil-full's): SMALL_BZIP2_BYTES, SMALL_LUA_N,
# SMALL_SQL_ROWS.
# Runs alternate between the variants (RUNS rounds, default 5); each line is the median wall
# time, CPU time (user + system) and peak RSS (of the largest process), and their ratios to
# plain; then the geometric means over the programs, with the targets beside vigil-memcheck's
# (<= 1.10x time, <= 1.10x peak RSS). Every variant's output must equal plain's (a mismatch is
# printed). Findings: the most any run of a variant reported (findings in memcheck.json, summed
# over the processes of a run; ASan's "ERROR: AddressSanitizer"; MSan's "WARNING:
# MemorySanitizer"; the N of Valgrind's "ERROR SUMMARY: N errors"), on real programs expected
# to be 0; "checked" is memcheck.txt's accesses_checked in that run. The report directories of
# vigil runs with findings are kept (their path is printed: `vigil report DIR` shows them).
# Last, the compile-time rules (tools/memcheck/compiler/memcheck.c): each program is built once
# more with VIGIL_CC_MEMCHECK_STATS=1 VIGIL_CC_CACHE=0 (a cache directory of its own; the build
# log is kept there, so a later run with the same compiler reads it again without building),
# the per-module counts are summed, and each rule's share of the program's accesses printed.
#
# usage: bench/memcheck.sh [--save]     --save: also write bench/results/memcheck-<date>.txt
# Environment: RUNS (default 5), SLOW_RUNS (1), PROGRAMS (default "bzip2 lua sqlite3"),
# VARIANTS (a subset of the columns, plain first), BENCH_ASAN (1), BENCH_MSAN (1),
# BENCH_VALGRIND (1), BENCH_STATS (1: the rule table), FULL_SMALL (1: vigil-full on the smaller
# workload; 0: on the main one), IN_BZIP2_BYTES (6000000), LUA_N (60),
# SQL_ROWS (150000), SMALL_BZIP2_BYTES (600000), SMALL_LUA_N (6), SMALL_SQL_ROWS (15000),
# VIGIL_REAL_DIR (shared with tests/real), VIGILCC.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO_ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=../tests/real/sources.sh
source "$REPO_ROOT/tests/real/sources.sh"
# shellcheck source=lib.sh
source "$HERE/lib.sh"
RUNS=${RUNS:-5}
SLOW_RUNS=${SLOW_RUNS:-1}
PROGRAMS=${PROGRAMS:-bzip2 lua sqlite3}
BENCH_ASAN=${BENCH_ASAN:-1}
BENCH_MSAN=${BENCH_MSAN:-1}
BENCH_VALGRIND=${BENCH_VALGRIND:-1}
BENCH_STATS=${BENCH_STATS:-1}
FULL_SMALL=${FULL_SMALL:-1}
IN_BZIP2_BYTES=${IN_BZIP2_BYTES:-6000000}
LUA_N=${LUA_N:-60}
SQL_ROWS=${SQL_ROWS:-150000}
SMALL_BZIP2_BYTES=${SMALL_BZIP2_BYTES:-600000}
SMALL_LUA_N=${SMALL_LUA_N:-6}
SMALL_SQL_ROWS=${SMALL_SQL_ROWS:-15000}
SAVE=0
[ "${1:-}" = --save ] && SAVE=1
VIGIL=$(dirname "$VIGILCC")/vigil
command -v /usr/bin/time >/dev/null || real_die "/usr/bin/time missing: apt-get install time"
[ "$BENCH_VALGRIND" = 1 ] && ! command -v valgrind >/dev/null && { echo "bench: no valgrind: its column skipped" >&2; BENCH_VALGRIND=0; }
for v in $(env | sed -n 's/^\(VIGIL_CC_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset VIGIL_OPTIONS VIGIL_PLAN ASAN_OPTIONS MSAN_OPTIONS

# Side builds (ASan, MSan, the stats build) live in cache directories of their own
# (real_side_build, as bench/leak.sh's ASan builds).
asan_build() { real_side_build asan plain "-fsanitize=address" "$1"; }
msan_build() {
    (
        # bzip2's recipe asks for large files itself: 32 instead (bzip2 needs no file of 2 GiB)
        eval "$(declare -f real_recipe_bzip2 | sed 's/-D_FILE_OFFSET_BITS=64/-D_FILE_OFFSET_BITS=32/')"
        real_side_build msan plain "-fsanitize=memory -D_FILE_OFFSET_BITS=32" "$1"
    )
}
stats_build() { VIGIL_CC_MEMCHECK_STATS=1 VIGIL_CC_CACHE=0 real_side_build memcheck-stats vigil "" "$1"; }

WORK=$(mktemp -d /tmp/vigil-bench-memcheck.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
KEEP=""   # report directories of vigil runs with findings, made on the first
OUT=$WORK/out.txt
say() { echo "$@" | tee -a "$OUT"; }

# Text for bzip2: the sqlite3 amalgamation, repeated, its first BYTES bytes.
text_input() {   # BYTES
    local f=$WORK/input.$1
    if [ ! -s "$f" ]; then
        [ -s "$WORK/all.txt" ] || cat "$(real_sqlite_amalgamation)/sqlite3.c" >"$WORK/all.txt"
        while [ "$(stat -c %s "$WORK/all.txt")" -lt "$1" ]; do cat "$WORK/all.txt" "$WORK/all.txt" >"$WORK/all2.txt" && mv "$WORK/all2.txt" "$WORK/all.txt"; done
        head -c "$1" "$WORK/all.txt" >"$f"
    fi
    echo "$f"
}
sql_input() {    # ROWS
    local f=$WORK/script.$1.sql
    [ -s "$f" ] || sed "s/@ROWS@/$1/g" "$REPO_ROOT/tests/real/workloads/sqlite_schema.sql" \
        "$REPO_ROOT/tests/real/workloads/sqlite_text.sql" >"$f"
    echo "$f"
}

# The workload's command line (for bash -c): PROGRAM BINARY SIZE(""|small) PREFIX (valgrind's
# command, put before each run of the program, so that valgrind runs the program and not bash)
workload() {
    local prog=$1 bin="$4 $2" small=${3:-}
    case "$prog" in
        bzip2)
            local in
            if [ "$small" = small ]; then in=$(text_input "$SMALL_BZIP2_BYTES"); else in=$(text_input "$IN_BZIP2_BYTES"); fi
            echo "$bin -9 -c < $in > $WORK/compressed.bz2 && exec $bin -d -c < $WORK/compressed.bz2" ;;
        lua)
            local n=$LUA_N
            [ "$small" = small ] && n=$SMALL_LUA_N
            echo "exec $bin $HERE/workloads/bench.lua $n" ;;
        sqlite3)
            local rows=$SQL_ROWS
            [ "$small" = small ] && rows=$SMALL_SQL_ROWS
            echo "exec $bin -batch :memory: < $(sql_input "$rows")" ;;
        *) real_die "no workload for $prog (bzip2, lua, sqlite3)" ;;
    esac
}

variant_options() {
    case "$1" in
        vigil-base) echo "out=$WORK/reports" ;;
        vigil-memcheck) echo "tools=memcheck:out=$WORK/reports" ;;
        vigil-memcheck-q) echo "tools=memcheck:memcheck.quarantine=256:out=$WORK/reports" ;;
        vigil-full) echo "mode=full:tools=memcheck:out=$WORK/reports" ;;
    esac
}

# One measurement: VARIANT BINARY PROGRAM [small]; prints "wall cpu max_rss_kb", keeps the
# output's checksum in $WORK/sum.<variant>.<program>[.small], the run's stderr in $WORK/stderr
# and its vigil reports in $WORK/reports.
measure() {
    local variant=$1 bin=$2 prog=$3 size=${4:-} cmd env=() pre=""
    case "$variant" in
        vigil-*) env=(VIGIL_OPTIONS="$(variant_options "$variant")") ;;
        asan) env=(ASAN_OPTIONS="detect_leaks=0:exitcode=0") ;;
        msan) env=(MSAN_OPTIONS="exitcode=0") ;;
        valgrind) pre="valgrind --tool=memcheck --leak-check=no --error-exitcode=0" ;;
    esac
    cmd=$(workload "$prog" "$bin" "$size" "$pre")
    rm -rf "$WORK/reports"
    # bash's time for wall and CPU time in milliseconds (/usr/bin/time's are in hundredths), the
    # latter for the peak RSS
    local TIMEFORMAT='%3R %3U %3S' status
    { time env "${env[@]}" /usr/bin/time -f "%M" -o "$WORK/rss" bash -c "$cmd" \
        >"$WORK/output" 2>"$WORK/stderr"; } 2>"$WORK/times"
    status=$?
    [ "$status" = 0 ] || { echo "bench: $variant $prog failed ($status): $(tail -n 3 "$WORK/stderr")" >&2; echo "nan nan nan"; return; }
    sha1sum <"$WORK/output" | cut -c1-16 >"$WORK/sum.$variant.$prog${size:+.small}"
    echo "$(tail -n1 "$WORK/times") $(tail -n1 "$WORK/rss")" | awk '{ printf "%.3f %.3f %s\n", $1, $2 + $3, $4 }'
}

# findings VARIANT PROGRAM: "COUNT CHECKED" of the last run of VARIANT (after measure); the
# report directories of a vigil run with findings are copied under $KEEP (made on the first).
findings() {
    case "$1" in
        vigil-memcheck|vigil-memcheck-q|vigil-full)
            local n checked d
            read -r n checked <<<"$(python3 - "$WORK"/reports/*/ <<'EOF'
import json, os, sys
n, checked, seen = 0, 0, 0
for d in sys.argv[1:]:
    try:
        n += len(json.load(open(os.path.join(d, "memcheck.json")))["findings"])
        seen += 1
    except (OSError, ValueError, KeyError):
        continue
    try:
        for line in open(os.path.join(d, "memcheck.txt")):
            k, _, v = line.partition(" ")
            if k == "accesses_checked":
                checked += int(v)
    except (OSError, ValueError):
        pass
print(n if seen else "?", checked if seen else "?")
EOF
            )"
            if [ "${n:-?}" != "?" ] && [ "$n" -gt 0 ]; then
                [ -n "$KEEP" ] || KEEP=$(mktemp -d /tmp/vigil-bench-memcheck-findings.XXXXXX)
                for d in "$WORK"/reports/*/; do
                    d=${d%/}
                    cp -a "$d" "$KEEP/$1.$2.${d##*/}"
                done
            fi
            echo "${n:-?} ${checked:-?}" ;;
        asan) echo "$(grep -c "ERROR: AddressSanitizer" "$WORK/stderr") -" ;;
        msan) echo "$(grep -c "WARNING: MemorySanitizer" "$WORK/stderr") -" ;;
        valgrind) echo "$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$WORK/stderr" | awk '{ s += $1 } END { print s + 0 }') -" ;;
        *) echo "- -" ;;
    esac
}
maxof() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || a == "-") print b; else if (b == "?" || a == "?") print "?"; else print (b + 0 > a + 0) ? b : a }'; }

if [ -n "${VARIANTS:-}" ]; then
    read -r -a variants <<<"$VARIANTS"   # e.g. VARIANTS="plain vigil-memcheck" (plain is the reference)
else
    variants=(plain vigil-base vigil-memcheck vigil-full)
    [ "$BENCH_ASAN" = 1 ] && variants+=(asan)
    [ "$BENCH_MSAN" = 1 ] && variants+=(msan)
    [ "$BENCH_VALGRIND" = 1 ] && variants+=(valgrind)
fi
has_variant() { [[ " ${variants[*]} " == *" $1 "* ]]; }
say "## $(date +%F) commit $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo ?)$(git -C "$REPO_ROOT" diff --quiet 2>/dev/null || echo +changes), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg): RUNS=$RUNS SLOW_RUNS=$SLOW_RUNS bench/memcheck.sh"
small_variants=" "   # the variants that run the smaller workload, space-separated and -enclosed
has_variant valgrind && small_variants+="valgrind "
[ "$FULL_SMALL" = 1 ] && has_variant vigil-full && small_variants+="vigil-full "
say "## workloads: bzip2 -9 then -d of $IN_BZIP2_BYTES bytes, lua bench.lua $LUA_N, sqlite3 schema+text $SQL_ROWS rows; smaller ones (plain-small, for${small_variants% }): $SMALL_BZIP2_BYTES bytes, $SMALL_LUA_N, $SMALL_SQL_ROWS rows"
FMT='%-7s %-14s %8s %8s %10s %8s %8s %8s %8s %10s'
say "$(printf "$FMT" program variant 'wall(s)' 'cpu(s)' 'rss(KiB)' 'wall x' 'cpu x' 'rss x' findings checked)"
declare -A ratios_w ratios_c ratios_m
for prog in $PROGRAMS; do
    plain_bin=$(real_build "$prog" plain) || { say "$prog: plain build failed, skipped"; continue; }
    vigil_bin=$(real_build "$prog" vigil) || { say "$prog: vigil build failed, skipped"; continue; }
    asan_bin="" msan_bin="" msan_why=""
    has_variant asan && { asan_bin=$(asan_build "$prog") || asan_bin=""; }
    if has_variant msan; then
        msan_bin=$(msan_build "$prog" 2>"$WORK/build.err") \
            || { msan_bin=""; msan_why=$(grep -m1 -E 'error|undefined' "$WORK/build.err" || tail -n1 "$WORK/build.err"); }
        cat "$WORK/build.err" >&2
    fi
    declare -A bin=([plain]=$plain_bin [vigil-base]=$vigil_bin [vigil-memcheck]=$vigil_bin [vigil-memcheck-q]=$vigil_bin [vigil-full]=$vigil_bin
                    [asan]=$asan_bin [msan]=$msan_bin [valgrind]=$plain_bin)
    declare -A said=() checked=()
    rm -f "$WORK"/w.* "$WORK"/c.* "$WORK"/m.* "$WORK"/sum.*
    for ((r = 0; r < RUNS; r++)); do
        for v in "${variants[@]}"; do
            [ -n "${bin[$v]:-}" ] || continue
            case "$v" in vigil-full|valgrind) [ "$r" -ge "$SLOW_RUNS" ] && continue ;; esac
            if [[ "$small_variants" == *" $v "* ]]; then
                read -r w c m < <(measure plain "$plain_bin" "$prog" small)   # its reference, alternating with it
                echo "$w" >>"$WORK/w.plain-small"; echo "$c" >>"$WORK/c.plain-small"; echo "$m" >>"$WORK/m.plain-small"
                read -r w c m < <(measure "$v" "${bin[$v]}" "$prog" small)
            else
                read -r w c m < <(measure "$v" "${bin[$v]}" "$prog")
            fi
            echo "$w" >>"$WORK/w.$v"; echo "$c" >>"$WORK/c.$v"; echo "$m" >>"$WORK/m.$v"
            findings "$v" "$prog" >"$WORK/found"   # not in a subshell: it may set KEEP
            read -r n k <"$WORK/found"
            said[$v]=$(maxof "${said[$v]:-}" "$n")
            [ "$k" = - ] || checked[$v]=$k
        done
    done
    # more plain runs of the small workload, for a steadier reference
    if [ -s "$WORK/w.plain-small" ]; then
        for ((r = $(wc -l <"$WORK/w.plain-small"); r < RUNS; r++)); do
            read -r w c m < <(measure plain "$plain_bin" "$prog" small)
            echo "$w" >>"$WORK/w.plain-small"; echo "$c" >>"$WORK/c.plain-small"; echo "$m" >>"$WORK/m.plain-small"
        done
    fi
    for v in "${variants[@]}"; do
        if [ "$v" = msan ] && [ -z "$msan_bin" ]; then
            say "$(printf '%-7s %-14s' "$prog" msan) not built: ${msan_why:-?}"
            continue
        fi
        [ -s "$WORK/w.$v" ] || continue
        ref=plain
        [[ "$small_variants" == *" $v "* ]] && ref=plain-small
        w=$(median <"$WORK/w.$v") c=$(median <"$WORK/c.$v") m=$(median <"$WORK/m.$v")
        rw=$(ratio "$w" "$(median <"$WORK/w.$ref")") rc=$(ratio "$c" "$(median <"$WORK/c.$ref")") rm_=$(ratio "$m" "$(median <"$WORK/m.$ref")")
        say "$(printf "$FMT" "$prog" "$v" "$w" "$c" "$m" "$rw" "$rc" "$rm_" "${said[$v]:--}" "${checked[$v]:--}")"
        ratios_w[$v]+="$rw " ratios_c[$v]+="$rc " ratios_m[$v]+="$rm_ "
        sum_file=$WORK/sum.$v.$prog ref_sum=$WORK/sum.plain.$prog
        [[ "$small_variants" == *" $v "* ]] && sum_file=$WORK/sum.$v.$prog.small ref_sum=$WORK/sum.plain.$prog.small
        cmp -s "$sum_file" "$ref_sum" || say "        ^ output differs from plain's"
    done
    [ -s "$WORK/w.plain-small" ] && say "$(printf '%-7s %-14s %8s %8s %10s' "$prog" plain-small "$(median <"$WORK/w.plain-small")" "$(median <"$WORK/c.plain-small")" "$(median <"$WORK/m.plain-small")")  (the reference of:${small_variants% })"
    unset bin said checked
done
say ""
say "$(printf '%-14s %15s %14s %14s' variant 'geomean wall x' 'geomean cpu x' 'geomean rss x')"
for v in "${variants[@]}"; do
    [ -n "${ratios_w[$v]:-}" ] || continue
    gw=$(geomean "${ratios_w[$v]}") gc=$(geomean "${ratios_c[$v]}") gm=$(geomean "${ratios_m[$v]}")
    line=$(printf '%-14s %15s %14s %14s' "$v" "$gw" "$gc" "$gm")
    if [ "$v" = vigil-memcheck ]; then
        line+=$(awk -v w="$gw" -v c="$gc" -v m="$gm" 'BEGIN { printf "   target <= 1.10x time (%s), <= 1.10x rss (%s)",
            (w <= 1.10 && c <= 1.10) ? "met" : "missed", (m <= 1.10) ? "met" : "missed" }')
    fi
    say "$line"
done
if [ -n "$KEEP" ]; then
    say ""
    say "report directories of the vigil runs with findings (every process of such a run; $VIGIL report DIR):"
    for d in "$KEEP"/*/; do
        say "  $d: $(python3 -c 'import collections, json, sys
f = json.load(open(sys.argv[1]))["findings"]
print(len(f), "findings", dict(collections.Counter(x["kind"] for x in f)))' "$d/memcheck.json" 2>/dev/null || echo "no memcheck.json")"
    done
fi

if [ "$BENCH_STATS" = 1 ]; then
    # vigil-cc: memcheck: FILE: N accesses: read-only N in-bounds N ... skipped N; loads checked
    # for uninitialized bytes N (...), copies N; array index checks N
    # The rules are the ones the lines name (in their order), not a list of this script's.
    say ""
    say "compile-time rules (VIGIL_CC_MEMCHECK_STATS=1): share of each program's accesses"
    : >"$WORK/stats"
    for prog in $PROGRAMS; do
        sbin=$(stats_build "$prog" 2>"$WORK/build.err") || { cat "$WORK/build.err" >&2; echo "$prog build failed: $(tail -n1 "$WORK/build.err")" >>"$WORK/stats"; continue; }
        cat "$WORK/build.err" >&2
        sdir=${sbin%/"$(real_binary_name "$prog")"}
        cat "$sdir"/.build.log "$sdir"/*.log 2>/dev/null | grep '^vigil-cc: memcheck: ' | sed "s/^/$prog /" >>"$WORK/stats"
        grep -q "^$prog vigil-cc" "$WORK/stats" || echo "$prog no memcheck lines in $sdir/.build.log" >>"$WORK/stats"
    done
    awk '
        $2 != "vigil-cc:" { failed[++nf] = $0; next }
        {
            prog = $1
            if (!(prog in modules)) order[++np] = prog
            line = $0
            sub(/^[^ ]* vigil-cc: memcheck: [^ ]*: /, "", line)
            split(line, parts, ";")
            n = split(parts[1], f, " ")
            modules[prog]++
            total[prog] += f[1]
            for (i = 3; i < n; i += 2) {
                if (!(f[i] in known)) { known[f[i]] = 1; rule[++nr] = f[i] }
                c[prog, f[i]] += f[i + 1]
            }
            if (match(parts[2], /uninitialized bytes [0-9]+/)) { s = substr(parts[2], RSTART, RLENGTH); sub(/.* /, "", s); uninit[prog] += s }
            if (match(parts[3], /array index checks [0-9]+/)) { s = substr(parts[3], RSTART, RLENGTH); sub(/.* /, "", s); idx[prog] += s }
        }
        END {
            printf "%-7s %8s %8s", "program", "modules", "accesses"
            for (i = 1; i <= nr; i++) printf " %12s", rule[i]
            printf " %9s %9s\n", "uninit-ld", "index-chk"
            for (p = 1; p <= np; p++) {
                prog = order[p]
                printf "%-7s %8d %8d", prog, modules[prog], total[prog]
                for (i = 1; i <= nr; i++) printf " %11.1f%%", total[prog] ? 100 * c[prog, rule[i]] / total[prog] : 0
                printf " %9d %9d\n", uninit[prog], idx[prog]
            }
            for (i = 1; i <= nf; i++) print failed[i]
        }' "$WORK/stats" | while IFS= read -r line; do say "$line"; done
    say "(uninit-ld: loads checked for uninitialized bytes, among full; index-chk: inline array index checks)"
fi

if [ "$SAVE" = 1 ]; then
    mkdir -p "$HERE/results"
    res=$HERE/results/memcheck-$(date +%F).txt
    cat "$OUT" >>"$res"
    echo "bench: appended to $res" >&2
fi
