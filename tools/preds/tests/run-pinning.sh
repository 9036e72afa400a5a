#!/usr/bin/env bash
# Predicate counters in the instrumented copy only (VIGIL_CC_PRED_COUNTERS=1, common/abi.h):
# a monitored site's function is pinned to its instrumented copy, so its predicates are
# counted on every execution although the checking copy has no counter. On the e2e programs
# (loops, recursion, callbacks, setjmp/longjmp, giant functions with and without transfers,
# switch dispatch, threads), built three ways (plain, =1, =2: counters in both copies):
#   - every vigil run prints what plain prints and exits as plain does;
#   - preds.collect=all counts of =1 equal those of =2, in every mode (single-threaded programs);
#   - a plan of a few sites counts exactly what preds.collect=all counts there, and only those sites.
# Prints "PASS pinning: ..." / "FAIL pinning: ..." and "pinning: N passed, N failed".
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
VIGILCC=$REPO/build/bin/vigil-cc
VIGIL=$REPO/build/bin/vigil
PROGS=$REPO/tests/e2e/progs
T=$(mktemp -d /tmp/vigil-pinning.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
passed=0 failed=0
pass() { echo "PASS pinning: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL pinning: $*"; failed=$((failed + 1)); }
directive() { sed -n "s|^// e2e-$2: *||p" "$1" | head -n1; }

# Runs $T/$prog-$variant: stdout and exit status in $out.txt, the run report in $out/.
run() {   # variant prog mode collect out [plan]
    local variant=$1 prog=$2 mode=$3 collect=$4 out=$5 plan=${6:-} src=$PROGS/$2.c
    local args; args=$(directive "$src" args | sed "s|@BUILD@|$T|g")
    rm -rf "$out"
    (cd "$T" && env ${plan:+VIGIL_PLAN=$plan} VIGIL_OPTIONS="tools=preds:${collect:+preds.collect=$collect:}mode=$mode:out=$out" \
        "$T/$prog-$variant" $args >"$out.txt" 2>/dev/null; echo "exit $?" >>"$out.txt") 2>/dev/null
}
counts() { cat "$1"/*/preds.txt 2>/dev/null | grep '^site ' | sort; }

for prog in ${PINNING_PROGS:-loops_nested recursion callbacks setjmp_longjmp giant_functions switch_dispatch struct_return threads}; do
    src=$PROGS/$prog.c
    link=$(directive "$src" link)
    env_cc=$(directive "$src" compiler-env)
    ok=1
    clang -O2 "$src" -o "$T/$prog-plain" $link 2>"$T/cc.err" || { fail "$prog: plain build: $(head -1 "$T/cc.err")"; continue; }
    for v in 1 2; do
        env $env_cc VIGIL_CC_PRED_COUNTERS=$v "$VIGILCC" -O2 -g "$src" -o "$T/$prog-$v" $link 2>"$T/cc.err" ||
            { fail "$prog: vigil-cc with VIGIL_CC_PRED_COUNTERS=$v: $(head -1 "$T/cc.err")"; ok=0; }
    done
    [ $ok = 1 ] || continue
    args=$(directive "$src" args | sed "s|@BUILD@|$T|g")
    (cd "$T" && "$T/$prog-plain" $args >"$T/plain.txt" 2>/dev/null; echo "exit $?" >>"$T/plain.txt") 2>/dev/null

    same_output=1 same_counts=1 why=
    for mode in off adaptive full; do
        for v in 1 2; do
            run "$v" "$prog" "$mode" all "$T/all-$v-$mode"
            cmp -s "$T/plain.txt" "$T/all-$v-$mode.txt" || { same_output=0; why="$why preds.collect=all mode=$mode build $v;"; }
        done
        [ "$prog" = threads ] && continue   # racing increments may be lost: counts differ by design
        if [ "$(counts "$T/all-1-$mode")" != "$(counts "$T/all-2-off")" ] || [ -z "$(counts "$T/all-1-$mode")" ]; then
            same_counts=0
            why="$why counts of build 1 mode=$mode differ from build 2 mode=off;"
        fi
    done
    if [ $same_output = 1 ]; then pass "$prog: output and exit status as plain (preds.collect=all, 3 modes, 2 builds)"
    else fail "$prog: output differs from plain:$why"; fi
    if [ "$prog" != threads ]; then
        if [ $same_counts = 1 ]; then pass "$prog: counters in the instrumented copy only count what both copies count ($(counts "$T/all-2-off" | wc -l) sites)"
        else fail "$prog:$why"; fi
    fi

    # Plans of every third site that counted something (three plans, so that every such site
    # is in one), the first also with the first site that did not; then the hottest site alone,
    # its function the only one pinned, so that bursts begun elsewhere run into it and end there.
    hash=$("$VIGIL" sites "$T/$prog-1" | awk '$1 == "table" && $3 == "tu" {print $4; exit}')
    nsites=$("$VIGIL" sites "$T/$prog-1" | awk '$1 == "table" && $3 == "tu" {gsub(/[()]/, "", $(NF-1)); print $(NF-1); exit}')
    [ "$("$VIGIL" sites "$T/$prog-1" | awk '$1 == "table"' | wc -l)" = 1 ] || { pass "$prog: plan check skipped (several site tables)"; continue; }
    plan_ok=1 why= nplanned=0
    for phase in 1 2 0 hottest; do
        if [ $phase = hottest ]; then
            counts "$T/all-1-off" | sort -k4,4nr | head -n1 >"$T/planned"
        else
            counts "$T/all-1-off" | awk '$4 + $5 + $6 > 0' | awk -v p=$phase 'NR % 3 == p' >"$T/planned"
        fi
        [ $phase = 1 ] && counts "$T/all-1-off" | awk '$4 + $5 + $6 == 0' | head -n1 >>"$T/planned"
        [ -s "$T/planned" ] || continue
        nplanned=$((nplanned + $(wc -l <"$T/planned")))
        { echo "vigil-plan 1"; echo "module $hash $nsites"
          awk -v h="$hash" '{print "site", h, $2}' "$T/planned"; echo end; } >"$T/plan.vplan"
        for mode in off adaptive; do
            run 1 "$prog" "$mode" "" "$T/plan-$mode" "$T/plan.vplan"
            cmp -s "$T/plain.txt" "$T/plan-$mode.txt" || { plan_ok=0; why="$why output differs (mode=$mode);"; }
            if [ "$prog" = threads ]; then   # the same sites, counts may differ (racing increments)
                [ "$(counts "$T/plan-$mode" | cut -d' ' -f1-3)" = "$(sort "$T/planned" | cut -d' ' -f1-3)" ] ||
                    { plan_ok=0; why="$why mode=$mode: other sites reported;"; }
                continue
            fi
            [ "$(counts "$T/plan-$mode")" = "$(sort "$T/planned")" ] || { plan_ok=0; why="$why mode=$mode: $(diff <(counts "$T/plan-$mode") <(sort "$T/planned") | grep '^[<>]' | head -4 | tr '\n' '|');"; }
        done
    done
    if [ $plan_ok = 1 ]; then pass "$prog: four plans ($nplanned sites) count exactly what preds.collect=all counts there"
    else fail "$prog: plan:$why"; fi
done

echo "pinning: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
