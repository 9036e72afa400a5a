#!/usr/bin/env bash
# Adaptive bug isolation, the whole loop (seed 002 procedure 1), on the seeded-bug programs of
# tools/preds/tests/: build with predicate counters, find the top predictor of a complete run
# (preds.collect=all), then from an empty store: run the input pool under the current plan
# (VIGIL_PLAN, preds.collect=plan), ingest, `vigil plan`, repeat, until the complete run's top
# predictor's site is monitored and ranked first. Prints the iterations, the sites monitored
# and their share of all predicate sites, per heuristic.
# Prints "PASS adaptive: ..." / "FAIL adaptive: ..." lines and "adaptive: N passed, N failed".
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
VIGIL=$REPO/build/bin/vigil
VIGILCC=$REPO/build/bin/vigil-cc
POOL=${ADAPTIVE_POOL:-120}
MAX_ITER=${ADAPTIVE_MAX_ITER:-25}
HEURISTICS=${ADAPTIVE_HEURISTICS:-importance ttest failcount bfs}
T=$(mktemp -d /tmp/vigil-adaptive.XXXXXX)
trap 'rm -rf "$T"' EXIT
passed=0 failed=0
pass() { echo "PASS adaptive: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL adaptive: $*"; failed=$((failed + 1)); }

# ledger's pool: 10..30 transactions on accounts 0..90; a fifth of the inputs name one
# account above 90 (the bug: SIGSEGV several calls below main).
make_ledger_inputs() {
    awk -v n="$POOL" -v dir="$T/inputs" 'BEGIN {
        srand(20240502); system("rm -rf " dir "; mkdir -p " dir)
        split("dep wd xfer fee", ops, " ")
        for (i = 0; i < n; i++) {
            f = sprintf("%s/in%03d", dir, i); nt = 10 + int(rand() * 21); bad = rand() < 0.2; at = int(rand() * nt)
            for (k = 0; k < nt; k++) {
                op = ops[1 + int(rand() * 4)]; acct = int(rand() * 91)
                if (bad && k == at) { op = ops[1 + int(rand() * 3)]; acct = 91 + int(rand() * 9) }
                print op, acct, 1 + int(rand() * 500) > f
            }
            close(f)
        }
    }'
}

make_inputs() { bash "$(dirname "$0")/wordstat-inputs.sh" "$POOL" "$T/inputs"; }

run_pool() {   # binary outdir [plan]
    local bin=$1 out=$2 plan=${3:-} f
    for f in "$T"/inputs/in*; do
        if [ -n "$plan" ]; then
            (VIGIL_PLAN=$plan VIGIL_OPTIONS="tools=preds:mode=off:out=$out" "$bin" <"$f" >/dev/null 2>&1) 2>/dev/null
        else
            (VIGIL_OPTIONS="tools=preds:preds.collect=all:mode=off:out=$out" "$bin" <"$f" >/dev/null 2>&1) 2>/dev/null
        fi
    done 2>/dev/null   # the seeded bug crashes: no "Segmentation fault" lines from the shell
}

# "tu_hash site_index predicate" of the top predictor by importance
top_predictor() {
    "$VIGIL" rank --db "$1" --top 1 --json 2>/dev/null |
        awk -F'"' '/"tu_hash"/ {h=$4} /"site_index"/ {gsub(/[^0-9]/, "", $3); s=$3} /"predicate"/ {p=$4} END {print h, s, p}'
}

evaluate() {   # name source [direction]
    local name=$1 src=$2 bin=$T/$1 direction=${3:-forward}
    if ! VIGIL_CC_PRED_COUNTERS=1 "$VIGILCC" -g -O1 "$src" -o "$bin" 2>"$T/cc.err"; then
        fail "$name: vigil-cc with VIGIL_CC_PRED_COUNTERS=1: $(head -2 "$T/cc.err")"
        return
    fi
    run_pool "$bin" "$T/$name-all"
    "$VIGIL" ingest --quiet --db "$T/$name-all.db" "$T/$name-all" >/dev/null 2>&1
    local want; want=$(top_predictor "$T/$name-all.db")
    local total; total=$("$VIGIL" sites "$bin" | awk '$2 == "branch" || $2 == "return"' | wc -l)
    echo "adaptive: $name: complete run: top predictor $want; $total predicate sites"
    for h in $HEURISTICS; do
        local db=$T/$name-$h.db state=$T/$name-$h.state it=0 found=0 line=
        rm -f "$db" "$state"
        if [ "$direction" = backward ]; then   # the failing runs of a first, unplanned pass name the crash site
            run_pool "$bin" "$T/$name-$h-0" "$T/empty.vplan"
            "$VIGIL" ingest --quiet --db "$db" "$T/$name-$h-0" >/dev/null 2>&1
        fi
        "$VIGIL" plan --db "$db" --direction "$direction" --heuristic "$h" --state "$state" "$bin" -o "$T/plan.vplan" >"$T/plan.out" 2>&1 ||
            { fail "$name $h: vigil plan: $(head -1 "$T/plan.out")"; continue; }
        [ "$direction" = backward ] && echo "adaptive: $name $h: $(head -1 "$T/plan.out")"
        name_h="$name $h ($direction)"
        while [ $it -lt "$MAX_ITER" ]; do
            it=$((it + 1))
            run_pool "$bin" "$T/$name-$h-$it" "$T/plan.vplan"
            "$VIGIL" ingest --quiet --db "$db" "$T/$name-$h-$it" >/dev/null 2>&1
            if [ "$(top_predictor "$db")" = "$want" ]; then
                found=1
                break
            fi
            "$VIGIL" plan --db "$db" --direction "$direction" --heuristic "$h" --state "$state" "$bin" -o "$T/plan.vplan" >"$T/plan.out" 2>&1 ||
                { fail "$name $h: vigil plan: $(head -1 "$T/plan.out")"; break; }
            line=$(cat "$T/plan.out")
            case $line in *"search complete"*) break ;; esac
        done
        monitored=$(awk '$1 == "monitored" || $1 == "planned" {print $2, $3}' "$state" | sort -u | wc -l)
        local pct; pct=$(awk -v m="$monitored" -v t="$total" 'BEGIN {printf "%.1f", t ? 100 * m / t : 0}')
        if [ $found = 1 ]; then
            pass "$name_h: top predictor found after $it iterations, $monitored of $total sites monitored ($pct%)"
        else
            fail "$name_h: top predictor $want not found in $it iterations ($monitored of $total sites monitored)"
        fi
    done
}

printf 'vigil-plan 1\nend\n' >"$T/empty.vplan"
make_inputs
evaluate wordstat "$REPO/tools/preds/tests/wordstat.c"
make_ledger_inputs
evaluate ledger "$REPO/tools/preds/tests/ledger.c"
evaluate ledger "$REPO/tools/preds/tests/ledger.c" backward
echo "adaptive: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
