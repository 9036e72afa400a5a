#!/usr/bin/env bash
# The cost of statistical debugging (seed 002, issue 5), side by side, on the real programs of
# tests/real (built by tests/real/sources.sh, reused from its cache) with the workloads of
# bench/run.py. One vigil-cc build per program with predicate counters compiled in
# (VIGIL_CC_PRED_COUNTERS=1; static removal of redundant branch predicates on, the default);
# every vigil column but nocnt runs that same binary:
#   plain      clang, the reference
#   nocnt      the ordinary vigil-cc build (no predicate counters), VIGIL_OPTIONS=mode=off: the
#              core's own cost without counters (BENCH_NOCNT=0 leaves this column out)
#   off        VIGIL_OPTIONS=mode=off, no tool: the core's own cost with the counters compiled in
#              (in the instrumented copy only: the checking copy is that of nocnt, but for
#              functions with computed gotos), so that a column's preds share is its difference
#              to this one, and the counters' disabled cost off - nocnt
#   plan1      VIGIL_PLAN=<plan> VIGIL_OPTIONS=tools=preds:preds.collect=plan:mode=off: the first plan of
#              adaptive bug isolation (ABI style: the plan's sites counted on every execution; their
#              functions pinned to the instrumented copy, where the counters are: common/abi.h), as
#              `vigil plan` makes it for that binary: getInitialSet, forward, the
#              entry region of main with its callees' entry regions and the sources of removed
#              predicates
#   plan2      the same with a later plan of a few dozen sites: the adaptive loop (seed 002
#              procedure 1) on a few small inputs, two of them failing (a truncated .bz2/.gz, a Lua
#              error, a missing SQL table, a missing bc file: non-zero exit): run them under the
#              current plan, `vigil ingest` into a temporary store, `vigil plan --heuristic bfs`
#              (the widest vicinity), until a plan has PLAN_SITES (20) sites or more, at most
#              PLAN_ITERATIONS (6) times (else the largest plan). Each plan file holds that
#              iteration's new sites only. Both plans' sizes are printed below the table
#   cbi100     VIGIL_OPTIONS=tools=preds:preds.collect=sampled:mode=bursty:bursty_rate=0.01: CBI-style
#              sampling of all predicates at 1/100. There is no per-event sampling option; this is
#              the closest existing mechanism: mode=bursty gives every dispatch check one fixed
#              rate, so each check runs (1/rate - 1) x ninstr times in the checking copy, then a
#              burst of ninstr (100) in the instrumented copy, where the preds tool counts every
#              branch and return probe: 1/100 of the executions are observed, in bursts
#   cbi1000    the same at bursty_rate=0.001
#   all        VIGIL_OPTIONS=tools=preds:preds.collect=all:mode=off: every predicate counted always
#              (complete instrumentation)
# Runs alternate between the columns and the order rotates every round (RUNS rounds, default 5);
# prints the median CPU time (user+sys of the child) of each, the ratios to plain and the
# geometric means of the ratios. Every vigil run's stdout is compared with plain's (sha1):
# a mismatch prints DIVERGED, a non-zero exit FAILED, a preds run without preds.txt NOREPORT.
#
# usage: bench/preds.sh [PROGRAM...]     programs: bzip2 lua sqlite3 bc gzip (default: all)
#        bench/preds.sh --build PROGRAM  only build; print the binary with predicate counters
# Environment: RUNS, BENCH_NOCNT; VIGILCC (default build/bin/vigil-cc of this repo), VIGIL
# (default: the `vigil` next to VIGILCC); VIGIL_REAL_DIR, REAL_CFLAGS (tests/real/sources.sh);
# workload sizes BZ_MB (16), LUA_N (60), SQL_ROWS (300000), BC_DIGITS (1200), GZ_MB (24),
# GUNZIP_MB (96); plan2: PLAN_SITES (20), PLAN_ITERATIONS (6).
#
# The counter builds share the cache of tests/real/sources.sh: its build key includes every
# VIGIL_CC_* variable of the environment, so VIGIL_CC_PRED_COUNTERS=1 real_build PROG vigil is a
# build of its own, beside the ordinary vigil build of the same compiler.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO_ROOT=$(cd "$HERE/.." && pwd)
# shellcheck source=../tests/real/sources.sh
source "$REPO_ROOT/tests/real/sources.sh"
# shellcheck source=lib.sh
source "$HERE/lib.sh"
unset VIGIL_OPTIONS VIGIL_PLAN VIGIL_CC_PRED_COUNTERS
RUNS=${RUNS:-5}
BZ_MB=${BZ_MB:-16}
LUA_N=${LUA_N:-60}
SQL_ROWS=${SQL_ROWS:-300000}
BC_DIGITS=${BC_DIGITS:-1200}
GZ_MB=${GZ_MB:-24}
GUNZIP_MB=${GUNZIP_MB:-96}
BENCH_NOCNT=${BENCH_NOCNT:-1}
PLAN_SITES=${PLAN_SITES:-20}
PLAN_ITERATIONS=${PLAN_ITERATIONS:-6}
VIGILCC_REAL=$(readlink -f "$(command -v "$VIGILCC" || echo "$VIGILCC")")
VIGIL=${VIGIL:-$(dirname "$VIGILCC_REAL")/vigil}

preds_build() { (export VIGIL_CC_PRED_COUNTERS=1 && real_build "$1" vigil); }

if [ "${1:-}" = --build ]; then
    [ $# = 2 ] || real_die "usage: bench/preds.sh --build PROGRAM"
    preds_build "$2"
    exit
fi

programs=("$@")
[ ${#programs[@]} = 0 ] && programs=(bzip2 lua sqlite3 bc gzip)
command -v /usr/bin/time >/dev/null || real_die "/usr/bin/time missing: apt-get install time"
[ -x "$VIGIL" ] || real_die "$VIGIL not found (set VIGIL)"
[ -x "$VIGILCC_REAL" ] || real_die "compiler $VIGILCC not found (make it first, or set VIGILCC)"

WORK=$(mktemp -d /tmp/vigil-bench-preds.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# Inputs, shared with bench/run.py (the same generator, the same cache).
text() {   # MB: generated text of bench/run.py
    (cd "$HERE" && python3 -c "import sys, run; print(run.generated_text(int(sys.argv[1])))" "$1")
}
packed() {   # PLAIN_BIN SUFFIX SOURCE FLAGS...: SOURCE compressed by the plain build, cached beside it
    local bin=$1 suffix=$2 src=$3; shift 3
    if [ ! -s "$src$suffix" ]; then
        "$bin" "$@" <"$src" >"$src$suffix.tmp.$$" && mv "$src$suffix.tmp.$$" "$src$suffix"
    fi
    echo "$src$suffix"
}

# Workloads of PROGRAM: lines "name|stdin|args..." (bench/run.py's, sized for 0.5-3 s plain).
workloads() {   # PROGRAM PLAIN_BIN
    case "$1" in
        bzip2)
            echo "bzip2-compress|$(text "$BZ_MB")|-9 -c"
            echo "bzip2-decompress|$(packed "$2" .bz2 "$(text "$BZ_MB")" -9 -c)|-d -c" ;;
        lua) echo "lua|/dev/null|$HERE/workloads/bench.lua $LUA_N" ;;
        sqlite3)
            sed "s/@ROWS@/$SQL_ROWS/g" "$HERE/workloads/bench.sql" >"$WORK/bench.sql"
            echo "sqlite3|$WORK/bench.sql|:memory:" ;;
        bc)
            printf 'scale=%s\n4*a(1)\ne(1)\n' "$BC_DIGITS" >"$WORK/bench.bc"
            echo "bc|$WORK/bench.bc|-l" ;;
        gzip)
            echo "gzip-compress|$(text "$GZ_MB")|-6 -n -c"
            echo "gzip-decompress|$(packed "$2" .gz "$(text "$GUNZIP_MB")" -6 -n -c)|-d -c" ;;
    esac
}

# Training runs for plan2 (small; "fail" ones exit non-zero): lines "ok|stdin|args" or "fail|...".
train_inputs() {   # PROGRAM PLAIN_BIN
    local small; small=$(text 1)
    case "$1" in
        bzip2)
            head -c 30000 "$(packed "$2" .bz2 "$small" -9 -c)" >"$WORK/trunc.bz2"
            echo "ok|$small|-9 -c"
            echo "ok|$(packed "$2" .bz2 "$small" -9 -c)|-d -c"
            echo "fail|$WORK/trunc.bz2|-d -c"
            echo "fail|$small|-d -c" ;;
        gzip)
            head -c 30000 "$(packed "$2" .gz "$small" -6 -n -c)" >"$WORK/trunc.gz"
            echo "ok|$small|-6 -n -c"
            echo "ok|$(packed "$2" .gz "$small" -6 -n -c)|-d -c"
            echo "fail|$WORK/trunc.gz|-d -c"
            echo "fail|$small|-d -c" ;;
        lua)
            echo 'print(("x"):rep(3))' >"$WORK/ok.lua"
            echo 'error("a failing run")' >"$WORK/fail.lua"
            echo 'local t; print(t.x)' >"$WORK/fail2.lua"
            echo "ok|/dev/null|$HERE/workloads/bench.lua 1"
            echo "ok|/dev/null|$WORK/ok.lua"
            echo "fail|/dev/null|$WORK/fail.lua"
            echo "fail|/dev/null|$WORK/fail2.lua" ;;
        sqlite3)
            sed "s/@ROWS@/1000/g" "$HERE/workloads/bench.sql" >"$WORK/small.sql"
            echo 'SELECT 1;' >"$WORK/ok.sql"
            echo 'SELECT * FROM no_such_table;' >"$WORK/fail.sql"
            echo 'CREATE TABLE t(a); INSERT INTO t VALUES (1, 2);' >"$WORK/fail2.sql"
            echo "ok|$WORK/small.sql|:memory:"
            echo "ok|$WORK/ok.sql|:memory:"
            echo "fail|$WORK/fail.sql|:memory:"
            echo "fail|$WORK/fail2.sql|:memory:" ;;
        bc)
            printf 'scale=50\n4*a(1)\n' >"$WORK/small.bc"
            echo '2^100' >"$WORK/ok.bc"
            echo "ok|$WORK/small.bc|-l"
            echo "ok|$WORK/ok.bc|"
            echo "fail|/dev/null|-l $WORK/no-such-file.bc"
            echo "fail|/dev/null|$WORK/no-such-file-2.bc" ;;
    esac
}

# The plans of BINARY: $WORK/PROG.plan1 (vigil plan's first) and $WORK/PROG.plan2 (the first plan
# of the loop below with at least PLAN_SITES sites, else its largest); prints what they are.
make_plans() {   # PROGRAM PLAIN_BIN VIGIL_BIN
    local prog=$1 bin=$3 db=$WORK/$1.db state=$WORK/$1.state label in args it best=0 n nfail nok
    rm -f "$db" "$state"
    "$VIGIL" plan --db "$db" --heuristic bfs --state "$state" "$bin" -o "$WORK/$prog.plan1" >"$WORK/plan.out" 2>&1 ||
        { echo "vigil plan failed: $(head -1 "$WORK/plan.out")"; return 1; }
    echo "plan1 = $(sed 's/^iteration 1: //' "$WORK/plan.out")"
    cp "$WORK/$prog.plan1" "$WORK/$prog.plan"
    for ((it = 1; it <= PLAN_ITERATIONS; it++)); do
        rm -rf "$WORK/train"
        nok=0 nfail=0
        while IFS='|' read -r label in args; do
            # shellcheck disable=SC2086
            if VIGIL_PLAN=$WORK/$prog.plan VIGIL_OPTIONS="tools=preds:preds.collect=plan:mode=off:out=$WORK/train" \
                "$bin" $args <"$in" >/dev/null 2>"$WORK/train.err"; then
                [ "$label" = ok ] || echo "note: training run '$args' was meant to fail but exited 0"
                nok=$((nok + 1))
            else
                [ "$label" = fail ] || echo "note: training run '$args' was meant to succeed: $(tail -1 "$WORK/train.err")"
                nfail=$((nfail + 1))
            fi
        done < <(train_inputs "$prog" "$2")
        "$VIGIL" ingest --quiet --db "$db" "$WORK/train" >"$WORK/ingest.out" 2>&1 ||
            { echo "vigil ingest failed: $(tail -1 "$WORK/ingest.out")"; return 1; }
        "$VIGIL" plan --db "$db" --heuristic bfs --state "$state" "$bin" -o "$WORK/$prog.plan" >"$WORK/plan.out" 2>&1 ||
            { echo "vigil plan failed: $(head -1 "$WORK/plan.out")"; return 1; }
        n=$(grep -c '^site ' "$WORK/$prog.plan")
        if [ "$n" -gt "$best" ]; then
            best=$n
            cp "$WORK/$prog.plan" "$WORK/$prog.plan2"
            cp "$WORK/plan.out" "$WORK/plan2.out"
        fi
        [ "$n" -ge "$PLAN_SITES" ] && break
        grep -q 'search complete' "$WORK/plan.out" && break
    done
    [ "$best" -gt 0 ] || { echo "plan2: no plan with sites ($(cat "$WORK/plan.out"))"; return 1; }
    echo "plan2 = $(cat "$WORK/plan2.out") (bfs; each iteration after $nok successful and $nfail failing runs)"
}

columns=(plain off plan1 plan2 cbi100 cbi1000 all)
[ "$BENCH_NOCNT" = 1 ] && columns=(plain nocnt off plan1 plan2 cbi100 cbi1000 all)
# One run: prints "cpu_seconds stdout_sha1 status". Column, binary, stdin, args...
measure() {
    local col=$1 bin=$2 in=$3 env=() out=$WORK/reports status; shift 3
    case "$col" in
        off|nocnt) env=(VIGIL_OPTIONS="mode=off:out=$out") ;;
        plan1|plan2) env=(VIGIL_PLAN="$WORK/$PROG.$col" VIGIL_OPTIONS="tools=preds:preds.collect=plan:mode=off:out=$out") ;;
        cbi100) env=(VIGIL_OPTIONS="tools=preds:preds.collect=sampled:mode=bursty:bursty_rate=0.01:out=$out") ;;
        cbi1000) env=(VIGIL_OPTIONS="tools=preds:preds.collect=sampled:mode=bursty:bursty_rate=0.001:out=$out") ;;
        all) env=(VIGIL_OPTIONS="tools=preds:preds.collect=all:mode=off:out=$out") ;;
    esac
    rm -rf "$out"
    local hash
    hash=$(env "${env[@]}" /usr/bin/time -f "%U %S" -o "$WORK/time" "$bin" "$@" <"$in" 2>"$WORK/stderr" | sha1sum | cut -c1-16)
    status=ok
    if [ -n "$(sed -n '/^Command exited with non-zero status/p;/^Command terminated by signal/p' "$WORK/time")" ]; then
        status=FAILED
    elif [ "$col" != plain ] && [ "$col" != off ] && [ "$col" != nocnt ] && ! ls "$out"/*/preds.txt >/dev/null 2>&1; then
        status=NOREPORT
    elif grep -q 'rejected' "$WORK/stderr"; then
        status=REJECTED
    fi
    [ "$status" = ok ] || cp "$WORK/stderr" "$WORK/stderr.$col"
    if [ "$col" != all ] && [ "$status" = ok ] && ls "$out"/*/preds.txt >/dev/null 2>&1; then   # sites reported
        grep -c '^site ' "$out"/*/preds.txt | head -1 | sed 's/.*://' >"$WORK/sites-seen.$col"
    fi
    echo "$(tail -n1 "$WORK/time" | awk '{ printf "%.3f", $1 + $2 }') $hash $status"
}

echo "vigil preds benchmark $(date -Iseconds)  host $(uname -n)  cpus $(nproc)  runs $RUNS  (commit $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null))"
echo "plain: $PLAINCC $REAL_CFLAGS   vigil: VIGIL_CC_PRED_COUNTERS=1 $VIGILCC_REAL $REAL_CFLAGS"
echo "CPU time (user+sys) medians in seconds; ratio = column / plain; columns: see the header of bench/preds.sh"
echo
header=$(printf '%-17s' workload; for c in "${columns[@]}"; do printf '%8s' "$c"; done
         for c in "${columns[@]:1}"; do printf '%10s' "x $c"; done)
echo "$header"
printf '%s\n' "${header//?/-}"
declare -A ratios
notes=()
for prog in "${programs[@]}"; do
    plain_bin=$(real_build "$prog" plain) || { notes+=("$prog: plain build failed"); continue; }
    vigil_bin=$(preds_build "$prog") || { notes+=("$prog: vigil build failed"); continue; }
    nocnt_bin=
    [ "$BENCH_NOCNT" = 1 ] && { nocnt_bin=$(real_build "$prog" vigil) || { notes+=("$prog: vigil build (no counters) failed"); continue; }; }
    PROG=$prog
    if ! make_plans "$prog" "$plain_bin" "$vigil_bin" >"$WORK/plans.out"; then
        notes+=("$prog: $(tail -1 "$WORK/plans.out")")
        continue
    fi
    total=$("$VIGIL" sites "$vigil_bin" | awk '$2 == "branch" || $2 == "return"' | wc -l)
    while read -r line; do notes+=("$prog: $line"); done <"$WORK/plans.out"
    while IFS='|' read -r name in args; do
        # shellcheck disable=SC2206
        argv=($args)
        rm -f "$WORK"/t.* "$WORK"/h.* "$WORK"/sites-seen.*
        ref=
        for ((r = 0; r < RUNS; r++)); do
            for ((k = 0; k < ${#columns[@]}; k++)); do
                col=${columns[$(((k + r) % ${#columns[@]}))]}
                bin=$vigil_bin; [ "$col" = plain ] && bin=$plain_bin; [ "$col" = nocnt ] && bin=$nocnt_bin
                read -r t h s < <(measure "$col" "$bin" "$in" "${argv[@]}")
                echo "$t" >>"$WORK/t.$col"
                [ "$col" = plain ] && [ -z "$ref" ] && ref=$h
                if [ "$s" != ok ]; then
                    notes+=("$name $col round $r: $s: $(tail -n 2 "$WORK/stderr.$col" | tr '\n' ' ')")
                fi
                echo "$h" >>"$WORK/h.$col"
            done
        done
        base=$(median <"$WORK/t.plain")
        row=$(printf '%-17s' "$name"; for c in "${columns[@]}"; do printf '%8s' "$(median <"$WORK/t.$c")"; done)
        for c in "${columns[@]:1}"; do
            rt=$(ratio "$(median <"$WORK/t.$c")" "$base")
            ratios[$c]+="$rt "
            bad=$(grep -cv "^$ref\$" "$WORK/h.$c")
            [ "$bad" = 0 ] || notes+=("$name $c: DIVERGED: stdout differs from plain's in $bad of $RUNS runs")
            row+=$(printf '%9sx' "$rt")
        done
        bad=$(grep -cv "^$ref\$" "$WORK/h.plain")
        [ "$bad" = 0 ] || notes+=("$name plain: stdout differs between its own runs ($bad of $RUNS)")
        echo "$row"
        notes+=("$name: sites in preds.txt: plan1 $(cat "$WORK/sites-seen.plan1" 2>/dev/null || echo '?') of $(grep -c '^site ' "$WORK/$prog.plan1"), plan2 $(cat "$WORK/sites-seen.plan2" 2>/dev/null || echo '?') of $(grep -c '^site ' "$WORK/$prog.plan2"), cbi100 $(cat "$WORK/sites-seen.cbi100" 2>/dev/null || echo '?') and cbi1000 $(cat "$WORK/sites-seen.cbi1000" 2>/dev/null || echo '?') reached, of $total predicate sites")
    done < <(workloads "$prog" "$plain_bin")
done
printf '%s\n' "${header//?/-}"
row=$(printf '%-17s' geomean; printf '%8s' '' "${columns[@]:1}" | sed 's/[^ ]/ /g')
for c in "${columns[@]:1}"; do row+=$(printf '%9sx' "$(geomean "${ratios[$c]:-}")"); done
echo "$row"
echo
printf '%s\n' "${notes[@]}"
