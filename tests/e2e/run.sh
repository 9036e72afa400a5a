#!/usr/bin/env bash
# End-to-end tests: every program in tests/e2e/progs/ is built with plain clang and with
# vigil-cc at -O0 and -O2; the vigil builds run in every mode and their output (stdout+stderr,
# without vigil's own "vigil:" lines) and exit status must equal the plain build's. Then the
# report checks (rates in run.txt, `vigil sites`, `vigil stats`, `vigil run`) and the -MD -MF
# comparison.
#
# Prints one line per test, "PASS name" or "FAIL name: reason"; exit 1 if any failed.
#
# Environment:
#   VIGILCC     compiler under test (default build/bin/vigil-cc); VIGILCC=clang checks the harness
#   VIGIL       the vigil command (default build/bin/vigil)
#   PLAINCC     reference compiler (default clang)
#   E2E_WORK    scratch directory (default: a fresh temporary directory, removed unless E2E_KEEP=1)
#   E2E_ONLY    run only the programs whose name matches this extended regex
#   E2E_OPT     optimization levels (default "-O0 -O2"); E2E_MODES (default "off adaptive bursty full")
#   E2E_TIMEOUT seconds per program run (default 60)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PROGS=$ROOT/tests/e2e/progs
VIGILCC=${VIGILCC:-$ROOT/build/bin/vigil-cc}
VIGIL=${VIGIL:-$ROOT/build/bin/vigil}
PLAINCC=${PLAINCC:-clang}
E2E_OPT=${E2E_OPT:--O0 -O2}
E2E_MODES=${E2E_MODES:-off adaptive bursty full}
E2E_TIMEOUT=${E2E_TIMEOUT:-60}
E2E_ONLY=${E2E_ONLY:-}
CFLAGS_COMMON="-std=gnu11 -Wall -Wno-unused-variable"
if [ -z "${E2E_WORK:-}" ]; then
    E2E_WORK=$(mktemp -d /tmp/vigil-e2e.XXXXXX)
    [ "${E2E_KEEP:-0}" = 1 ] || trap 'rm -rf "$E2E_WORK"' EXIT
fi
mkdir -p "$E2E_WORK"
ulimit -c 0

passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

# "// e2e-KEY: value" directive of a program source ("" when absent).
directive() { sed -n "s|^// e2e-$2: *||p" "$1" | head -n1; }

# The most telling line of a failed build's log.
first_error() {
    { grep -m1 -E 'error:|undefined reference|Assertion|Segmentation|Abort|core dumped' "$1" || head -n1 "$1"; } | cut -c1-240
}

vigil_cc_usable() { command -v "$VIGILCC" >/dev/null 2>&1 || [ -x "$VIGILCC" ]; }

# build CC OPT PROG DIR: build program PROG (name without .c) into DIR/PROG. Writes DIR/build.log.
build_program() {
    local cc=$1 opt=$2 prog=$3 dir=$4 src=$PROGS/$3.c extra shlib plugin compiler_env link f objs=()
    local archive plain_archive
    mkdir -p "$dir"
    extra=$(directive "$src" sources)
    archive=$(directive "$src" archive)               # members of lib<prog>_archive.a, built by CC
    plain_archive=$(directive "$src" plain-archive)   # members of lib<prog>_plain.a, by PLAINCC
    shlib=$(directive "$src" shlib)
    plugin=$(directive "$src" plugin)
    compiler_env=$(directive "$src" compiler-env)
    link=$(directive "$src" link)
    (
        set -e
        cd "$dir"
        # vigil-cc settings for this program (plain clang ignores them)
        [ -n "$compiler_env" ] && export $compiler_env
        local libflags=""
        if [ -n "$shlib" ]; then
            # The first source names the library; its other sources are separate units.
            local lib=${shlib%% *} lib_sources=()
            lib=${lib%.c}
            for f in $shlib; do lib_sources+=("$PROGS/$f"); done
            $cc $CFLAGS_COMMON $opt -shared -fPIC -o "lib$lib.so" "${lib_sources[@]}"
            libflags="-L$dir -l$lib -Wl,-rpath,$dir"
        fi
        # Archives, linked after the program's objects: the linker loads their members on demand.
        local kind members compiler
        for kind in archive plain; do
            if [ $kind = archive ]; then members=$archive compiler=$cc; else members=$plain_archive compiler=$PLAINCC; fi
            [ -n "$members" ] || continue
            local member_objs=()
            for f in $members; do
                $compiler $CFLAGS_COMMON $opt -c "$PROGS/$f" -o "member_${f%.c}.o"
                member_objs+=("member_${f%.c}.o")
            done
            rm -f "lib${prog}_$kind.a"
            ar rcs "lib${prog}_$kind.a" "${member_objs[@]}"
            libflags="$libflags -L$dir -l${prog}_$kind"
        done
        if [ -n "$plugin" ]; then
            $cc $CFLAGS_COMMON $opt -shared -fPIC -o "${plugin%.c}.so" "$PROGS/$plugin"
        fi
        if [ -n "$extra" ]; then
            # Separate compilation: every file with -c, then one link.
            for f in "$src" $(for e in $extra; do echo "$PROGS/$e"; done); do
                $cc $CFLAGS_COMMON $opt -I"$PROGS" -c "$f" -o "$(basename "${f%.c}").o"
                objs+=("$(basename "${f%.c}").o")
            done
            $cc $opt -o "$prog" "${objs[@]}" $libflags $link
        else
            $cc $CFLAGS_COMMON $opt -I"$PROGS" -o "$prog" "$src" $libflags $link
        fi
    ) >"$dir/build.log" 2>&1
}

# run_program DIR PROG MODE: runs DIR/PROG (cwd DIR) and leaves DIR/out.MODE (filtered output)
# and DIR/status.MODE. MODE "plain" runs without VIGIL_OPTIONS.
run_program() {
    local dir=$1 prog=$2 mode=$3 args status
    args=$(directive "$PROGS/$prog.c" args)
    args=${args//@BUILD@/$dir}
    rm -rf "$dir/reports.$mode"
    # The outer redirection hides the shell's own "Aborted" message for signal deaths.
    {
        (
            cd "$dir" || exit 125
            if [ "$mode" = plain ]; then
                exec env -u VIGIL_OPTIONS timeout -k 5 "$E2E_TIMEOUT" "./$prog" $args
            else
                export VIGIL_OPTIONS="mode=$mode:out=$dir/reports.$mode"
                exec timeout -k 5 "$E2E_TIMEOUT" "./$prog" $args
            fi
        ) </dev/null >"$dir/raw.$mode" 2>&1
    } 2>/dev/null
    status=$?
    echo "$status" >"$dir/status.$mode"
    grep -v '^vigil:' "$dir/raw.$mode" >"$dir/out.$mode" || true
}

# compare_runs EXPECTED_DIR ACTUAL_DIR MODE: prints why the run differs (nothing when equal).
compare_runs() {
    local expected=$1 actual=$2 mode=$3 es as
    es=$(cat "$expected/status.plain")
    as=$(cat "$actual/status.$mode")
    if [ "$as" = 124 ] || [ "$as" = 137 ] && [ "$es" != "$as" ]; then
        echo "mode $mode: timed out or killed after ${E2E_TIMEOUT}s (status $as)"
        return
    fi
    if [ "$es" != "$as" ]; then
        echo "mode $mode: exit status $as, expected $es"
        return
    fi
    if ! cmp -s "$expected/out.plain" "$actual/out.$mode"; then
        local first
        first=$(diff "$expected/out.plain" "$actual/out.$mode" | grep -m1 '^[<>]' | cut -c1-120)
        echo "mode $mode: output differs ($first)"
    fi
}

# Every process of a run must leave one complete report whose exit/signal line matches.
check_reports() {
    local dir=$1 mode=$2 want=$3 status=$4 n complete
    n=$(find "$dir/reports.$mode" -mindepth 2 -maxdepth 2 -name run.txt 2>/dev/null | wc -l)
    complete=$(find "$dir/reports.$mode" -mindepth 2 -maxdepth 2 -name run.txt -exec tail -n1 {} \; 2>/dev/null | grep -c '^end$')
    if [ "$n" != "$want" ]; then
        echo "mode $mode: $n run reports, expected $want"
    elif [ "$complete" != "$want" ]; then
        echo "mode $mode: $((want - complete)) torn run reports (no 'end' line)"
    elif [ "$status" -gt 128 ]; then
        grep -qx "signal $((status - 128))" "$dir"/reports."$mode"/*/run.txt \
            || echo "mode $mode: no report says 'signal $((status - 128))'"
    elif [ "$want" = 1 ]; then
        grep -qx "exit $status" "$dir"/reports."$mode"/*/run.txt \
            || echo "mode $mode: report does not say 'exit $status'"
    fi
}

programs=()
for src in "$PROGS"/*.c; do
    grep -q '^int main(' "$src" || continue
    name=$(basename "$src" .c)
    [ -n "$E2E_ONLY" ] && ! [[ $name =~ $E2E_ONLY ]] && continue
    programs+=("$name")
done

if ! vigil_cc_usable; then
    fail "e2e/vigil-cc" "$VIGILCC not found (run make, or set VIGILCC)"
    echo "e2e: $passed passed, $failed failed" >&2
    exit 1
fi

# Self-test of the comparison: a run with a different argument must be reported as different.
selftest_dir=$E2E_WORK/selftest
if build_program "$PLAINCC" -O0 exit_code "$selftest_dir"; then
    run_program "$selftest_dir" exit_code plain
    cp "$selftest_dir/status.plain" "$selftest_dir/status.changed"
    echo "a changed line" >"$selftest_dir/out.changed"
    echo 0 >"$selftest_dir/status.other"
    cp "$selftest_dir/out.plain" "$selftest_dir/out.other"
    if [ -n "$(compare_runs "$selftest_dir" "$selftest_dir" changed)" ] \
        && [ -n "$(compare_runs "$selftest_dir" "$selftest_dir" other)" ] \
        && [ -z "$(compare_runs "$selftest_dir" "$selftest_dir" plain)" ]; then
        pass "e2e/selftest-compare"
    else
        fail "e2e/selftest-compare" "the output comparison does not notice a difference"
    fi
else
    fail "e2e/selftest-compare" "plain build of exit_code failed"
fi

for opt in $E2E_OPT; do
    for prog in "${programs[@]}"; do
        name="e2e/$prog $opt"
        plain_dir=$E2E_WORK/plain$opt/$prog
        vigil_dir=$E2E_WORK/vigil$opt/$prog
        if ! build_program "$PLAINCC" "$opt" "$prog" "$plain_dir"; then
            fail "$name" "plain build failed: $(first_error "$plain_dir/build.log")"
            continue
        fi
        run_program "$plain_dir" "$prog" plain
        if ! build_program "$VIGILCC" "$opt" "$prog" "$vigil_dir"; then
            fail "$name" "vigil-cc build failed: $(first_error "$vigil_dir/build.log")"
            continue
        fi
        problems="" report_problems=""
        want_reports=$(directive "$PROGS/$prog.c" reports)
        for mode in $E2E_MODES; do
            run_program "$vigil_dir" "$prog" "$mode"
            why=$(compare_runs "$plain_dir" "$vigil_dir" "$mode")
            [ -n "$why" ] && problems+="${problems:+; }$why"
            if [ "$VIGILCC" != "$PLAINCC" ] && [ "$(basename "$VIGILCC")" = vigil-cc ]; then
                why=$(check_reports "$vigil_dir" "$mode" "${want_reports:-1}" "$(cat "$plain_dir/status.plain")")
                [ -n "$why" ] && report_problems+="${report_problems:+; }$why"
            fi
        done
        if [ -z "$problems" ]; then pass "$name"; else fail "$name" "$problems"; fi
        if [ "$(basename "$VIGILCC")" = vigil-cc ]; then
            if [ -z "$report_problems" ]; then pass "e2e-report/$prog $opt"; else fail "e2e-report/$prog $opt" "$report_problems"; fi
        fi
    done
done

# ---- -MD -MF: the dependency file must be byte-identical to clang's ----
dep_check() {
    local name="e2e/depfile -MD -MF" d=$E2E_WORK/depfile cc kind
    rm -rf "$d"
    for kind in plain vigil; do
        cc=$PLAINCC
        [ $kind = vigil ] && cc=$VIGILCC
        mkdir -p "$d/$kind/obj"
        cp "$PROGS/multi_file.c" "$PROGS/multi_file.h" "$d/$kind/"
        (cd "$d/$kind" && $cc -std=gnu11 -O2 -MD -MF obj/multi_file.d -MT obj/multi_file.o -c multi_file.c -o obj/multi_file.o \
            && $cc -std=gnu11 -O2 -MMD -MP -c multi_file.c -o obj/second.o) >"$d/$kind.log" 2>&1 \
            || { fail "$name" "$kind compile failed: $(head -n1 "$d/$kind.log")"; return; }
    done
    if ! cmp -s "$d/plain/obj/multi_file.d" "$d/vigil/obj/multi_file.d"; then
        fail "$name" "-MD -MF output differs from clang's: $(diff "$d/plain/obj/multi_file.d" "$d/vigil/obj/multi_file.d" | grep -m1 '^[<>]')"
    elif ! cmp -s "$d/plain/obj/second.d" "$d/vigil/obj/second.d"; then
        fail "$name" "-MMD -MP output differs from clang's: $(diff "$d/plain/obj/second.d" "$d/vigil/obj/second.d" | grep -m1 '^[<>]')"
    else
        pass "$name"
    fi
}
[ -z "$E2E_ONLY" ] && dep_check

# ---- command-line forms a drop-in cc must accept: several sources with -c, an archive, an
# assembly input, -E ----
cli_check() {
    local name="e2e/cc-command-line" d=$E2E_WORK/cli cc kind out
    rm -rf "$d"
    for kind in plain vigil; do
        cc=$PLAINCC
        [ $kind = vigil ] && cc=$VIGILCC
        mkdir -p "$d/$kind"
        if ! (
            set -e
            cd "$d/$kind"
            $cc -std=gnu11 -O2 -I"$PROGS" -c "$PROGS/multi_file.c" "$PROGS/multi_file_helper.c"
            ar rcs libhelper.a multi_file_helper.o
            $cc -O2 -o from_archive multi_file.o libhelper.a
            $PLAINCC -std=gnu11 -O2 -S "$PROGS/multi_file_helper.c" -o helper.s
            $cc -std=gnu11 -O2 -I"$PROGS" -o from_asm "$PROGS/multi_file.c" helper.s
            $cc -std=gnu11 -I"$PROGS" -E "$PROGS/multi_file.c" -o preprocessed.i
            { ./from_archive; echo "status $?"; ./from_asm; echo "status $?"; } >run.out 2>&1
        ) >"$d/$kind.log" 2>&1; then
            fail "$name" "$kind: $(first_error "$d/$kind.log")"
            return
        fi
    done
    if ! cmp -s "$d/plain/run.out" "$d/vigil/run.out"; then
        fail "$name" "programs linked from an archive / an assembly file behave differently: $(diff "$d/plain/run.out" "$d/vigil/run.out" | grep -m1 '^[<>]')"
    elif ! cmp -s "$d/plain/preprocessed.i" "$d/vigil/preprocessed.i"; then
        fail "$name" "-E output differs from clang's"
    elif ! grep -q 'status 5' "$d/vigil/run.out"; then
        fail "$name" "unexpected program result: $(head -c 200 "$d/vigil/run.out")"
    else
        pass "$name"
    fi
}
[ -z "$E2E_ONLY" ] && cli_check

# ---- Report checks: rates in run.txt, `vigil sites`, `vigil stats`, `vigil run` ----
report_checks() {
    local d=$E2E_WORK/report src=$PROGS/hot_and_rare.c bin checker="python3 $ROOT/tests/e2e/report_check.py"
    local run_adaptive run_off out
    mkdir -p "$d"
    bin=$d/hot_and_rare
    # The schedule figures count the back-edges of the code as compiled: vigil-cc checks after
    # the -O pipeline, so unrolling would divide them by the unroll factor.
    if ! (cd "$d" && $VIGILCC -std=gnu11 -O2 -fno-unroll-loops -g -o "$bin" "$src") >"$d/build.log" 2>&1; then
        fail "e2e-rates/build" "vigil-cc -O2 -g hot_and_rare.c failed: $(first_error "$d/build.log")"
        return
    fi
    for mode in adaptive off full; do
        rm -rf "$d/out.$mode"
        (cd "$d" && VIGIL_OPTIONS="mode=$mode:out=$d/out.$mode" timeout -k 5 "$E2E_TIMEOUT" "$bin") >"$d/run.$mode.log" 2>&1
    done
    run_adaptive=$(find "$d/out.adaptive" -name run.txt 2>/dev/null | head -n1)
    run_off=$(find "$d/out.off" -name run.txt 2>/dev/null | head -n1)
    run_full=$(find "$d/out.full" -name run.txt 2>/dev/null | head -n1)
    if [ -z "$run_adaptive" ] || [ -z "$run_off" ] || [ -z "$run_full" ]; then
        fail "e2e-rates/report" "no run.txt written (adaptive: ${run_adaptive:-none}, off: ${run_off:-none}, full: ${run_full:-none})"
        return
    fi
    # A check passes when report_check.py accepts it; each has a negative control that must fail.
    rate_check() {  # NAME RUN_TXT GOOD_EXPECTATIONS... -- WRONG_EXPECTATION
        local name=$1 run=$2 wrong out; shift 2
        local good=()
        while [ "$1" != -- ]; do good+=("$1"); shift; done
        wrong=$2
        if ! out=$($checker "$run" "$src" "${good[@]}" 2>&1); then
            fail "e2e-rates/$name" "$(echo "$out" | tr '\n' ' ' | cut -c1-300)"
        elif $checker "$run" "$src" "$wrong" >/dev/null 2>&1; then
            fail "e2e-rates/$name" "negative control '$wrong' was accepted: the check cannot fail"
        else
            pass "e2e-rates/$name"
        fi
    }
    rate_check "report-complete" "$run_adaptive" complete "exit == 0" "option mode == adaptive" \
        -- "exit == 1"
    rate_check "rare-path-stays-at-100%" "$run_adaptive" \
        "rare_path entry rate == 1" "rare_path entry execs == 3" "rare_path entry count == 1" \
        -- "rare_path entry rate < 1"
    rate_check "hot-loop-reaches-floor" "$run_adaptive" \
        "hot_loop backedge rate == 0.001" "hot_loop backedge execs >= 29999999" \
        -- "hot_loop backedge rate > 0.001"
    # The schedule, exactly: with the default burst length (ninstr 10: no tool asks for more),
    # decrement 10, resets at 10/100/1000, a check runs 10 bursts at 100% (100 executions), 90
    # at 10% (9,000), 900 at 1% (900,000), then one burst per 10,000 executions: 30M back-edges
    # give 10 + 90 + 900 + 2,909 = 3,909 bursts.
    rate_check "hot-loop-schedule" "$run_adaptive" "hot_loop backedge bursts in 3895..3920" \
        "option ninstr == 10" -- "hot_loop backedge bursts in 1..3894"
    rate_check "site-lines" "$run_adaptive" \
        "rare_path entry line in @rare_path..@rare_path+1" "hot_loop entry line in @hot_loop..@hot_loop+1" \
        "hot_loop backedge line in @hot_loop_start..@hot_loop_end" \
        -- "rare_path entry line == @rare_path+5"
    rate_check "mode-off-no-bursts" "$run_off" \
        "* * bursts == 0" "hot_loop backedge execs >= 29999999" "option mode == off" \
        -- "* * bursts > 0"
    # mode=off starts each counter at its countdown (runtime/registry.c prime_counters): the
    # first execution is not sampled, and still counted.
    rate_check "mode-off-counts-exactly" "$run_off" "rare_path entry execs == 3" "rare_path entry bursts == 0" \
        -- "rare_path entry execs == 4"
    rate_check "mode-full-always-sampled" "$run_full" \
        "hot_loop backedge rate == 1" "rare_path entry rate == 1" "option mode == full" \
        -- "hot_loop backedge rate < 1"

    # `vigil sites BINARY`: function names and file:line of the dispatch checks.
    if [ ! -x "$VIGIL" ]; then
        fail "e2e-cmd/vigil" "$VIGIL not found"
        return
    fi
    local rare_line hot_line
    rare_line=$(grep -n 'LINE:rare_path ' "$src" | cut -d: -f1)
    hot_line=$(grep -n 'LINE:hot_loop ' "$src" | cut -d: -f1)
    if out=$(timeout 30 "$VIGIL" sites "$bin" 2>&1); then
        if ! echo "$out" | grep -E "rare_path" | grep -qE "hot_and_rare\.c:($rare_line|$((rare_line + 1)))\b"; then
            fail "e2e-cmd/vigil-sites" "no line naming rare_path at hot_and_rare.c:$rare_line: $(echo "$out" | head -n3 | tr '\n' '|')"
        elif ! echo "$out" | grep -E "hot_loop" | grep -E "backedge" | grep -qE "hot_and_rare\.c:[0-9]+"; then
            fail "e2e-cmd/vigil-sites" "no backedge line for hot_loop with file:line"
        elif echo "$out" | grep -q "no_such_function"; then
            fail "e2e-cmd/vigil-sites" "prints a function that does not exist"
        else
            pass "e2e-cmd/vigil-sites"
        fi
    else
        fail "e2e-cmd/vigil-sites" "exit status $?: $(echo "$out" | head -n1)"
    fi
    # `vigil stats RUNDIR` (text and JSON).
    local rundir
    rundir=$(dirname "$run_adaptive")
    if out=$(timeout 30 "$VIGIL" stats "$rundir" 2>&1); then
        if echo "$out" | grep -E 'hot_loop' | grep -qE "hot_and_rare\.c:[0-9]+" \
            && echo "$out" | grep -E 'rare_path' | grep -qE "hot_and_rare\.c:($rare_line|$((rare_line + 1)))\b"; then
            pass "e2e-cmd/vigil-stats"
        else
            fail "e2e-cmd/vigil-stats" "expected lines naming hot_loop and rare_path with hot_and_rare.c:LINE; got: $(echo "$out" | head -n4 | tr '\n' '|')"
        fi
    else
        fail "e2e-cmd/vigil-stats" "exit status $?: $(echo "$out" | head -n1)"
    fi
    if out=$(timeout 30 "$VIGIL" stats --json "$rundir" 2>&1); then
        if echo "$out" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
text = json.dumps(doc)
sys.exit(0 if "hot_loop" in text and "rare_path" in text and "hot_and_rare.c" in text else 1)'; then
            pass "e2e-cmd/vigil-stats-json"
        else
            fail "e2e-cmd/vigil-stats-json" "not JSON, or missing hot_loop/rare_path/hot_and_rare.c: $(echo "$out" | head -c 200)"
        fi
    else
        fail "e2e-cmd/vigil-stats-json" "exit status $?: $(echo "$out" | head -n1)"
    fi
    # `vigil run --out DIR --mode M -- prog`: same program output, a report in DIR with that mode.
    rm -rf "$d/cmdrun"
    out=$(cd "$d" && timeout -k 5 "$E2E_TIMEOUT" "$VIGIL" run --out "$d/cmdrun" --mode full -- "$bin" 2>/dev/null)
    local status=$? run_cmd
    run_cmd=$(find "$d/cmdrun" -name run.txt 2>/dev/null | head -n1)
    if ! echo "$out" | grep -qx "$(grep -v '^vigil:' "$d/run.off.log" | head -n1)"; then
        fail "e2e-cmd/vigil-run" "program output missing from stdout (status $status)"
    elif [ -z "$run_cmd" ]; then
        fail "e2e-cmd/vigil-run" "no run.txt under --out $d/cmdrun"
    elif ! $checker "$run_cmd" "$src" "option mode == full" "exit == 0" complete >/dev/null 2>&1; then
        fail "e2e-cmd/vigil-run" "report does not say mode full / exit 0: $($checker "$run_cmd" "$src" "option mode == full" "exit == 0" complete | tr '\n' ' ')"
    else
        pass "e2e-cmd/vigil-run"
    fi
    # A fault: `vigil run` keeps the status (128+11) and names the faulting function and line
    # from the report's crash line.
    cat >"$d/crash_fault.c" <<'CRASH'
static int *volatile nowhere;
static void fault(int n)
{
    if (n > 2) *nowhere = n;
}
int main(void) { for (int i = 0; i < 5; i++) fault(i); return 0; }
CRASH
    if (cd "$d" && "$VIGILCC" -O1 -g crash_fault.c -o crash_fault) >/dev/null 2>&1; then
        out=$(cd "$d" && timeout -k 5 "$E2E_TIMEOUT" "$VIGIL" run --out "$d/crashrun" -- ./crash_fault 2>&1 >/dev/null)   # the summary is on stderr
        status=$?
        if [ "$status" = 139 ] && echo "$out" | grep -Eq '^  crash +SIGSEGV at fault +.*crash_fault\.c:4'; then
            pass "e2e-cmd/vigil-run-crash-site"
        else
            fail "e2e-cmd/vigil-run-crash-site" "status $status; summary: $(echo "$out" | head -n 8 | tr '\n' '|')"
        fi
    else
        fail "e2e-cmd/vigil-run-crash-site" "crash_fault.c does not build with vigil-cc"
    fi
    # The same with the clock 2 s ahead of the file timestamps (clock_ahead.so shifts
    # CLOCK_REALTIME for vigil and the program): the kernel stamps files with a coarse clock that
    # lags CLOCK_REALTIME by a tick or more on a busy machine, and `vigil run` once took a report
    # written within that lag for an older run's and printed no crash line.
    cat >"$d/clock_ahead.c" <<'AHEAD'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <time.h>
int clock_gettime(clockid_t id, struct timespec *ts)
{
    static int (*real)(clockid_t, struct timespec *);
    if (!real)
        real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    int r = real(id, ts);
    if (r == 0 && id == CLOCK_REALTIME)
        ts->tv_sec += 2;
    return r;
}
AHEAD
    if [ -x "$d/crash_fault" ] && $PLAINCC -O2 -shared -fPIC -o "$d/clock_ahead.so" "$d/clock_ahead.c" -ldl >/dev/null 2>&1; then
        out=$(cd "$d" && LD_PRELOAD="$d/clock_ahead.so" timeout -k 5 "$E2E_TIMEOUT" "$VIGIL" run --out "$d/aheadrun" -- ./crash_fault 2>&1 >/dev/null)
        status=$?
        if [ "$status" = 139 ] && echo "$out" | grep -Eq '^  crash +SIGSEGV at fault +.*crash_fault\.c:4'; then
            pass "e2e-cmd/vigil-run-clock-ahead"
        else
            fail "e2e-cmd/vigil-run-clock-ahead" "status $status; summary: $(echo "$out" | head -n 8 | tr '\n' '|')"
        fi
    else
        fail "e2e-cmd/vigil-run-clock-ahead" "crash_fault or clock_ahead.so did not build"
    fi
}
# ---- Cold blocks split off the checking copy (compiler/coldsplit.c, x86-64 ELF) ----
# main of loops_nested has loops. The fired paths of its checks (calls of the dispatch entry
# and of the instrumented copy through the register-keeping entry) move to main.cold, except
# those of loops with a batched countdown, which stay; with VIGIL_CC_SPLIT_COLD=0 all stay in
# main and there is no main.cold. The outputs in every mode are compared with plain's by the
# programs' loop above; here mode=full and mode=off must agree in both builds.
cold_split_check() {
    local why="" d split hot=() cold=() pattern='call.*<__vigil_\(dispatch_enter\|call_keeping_registers\)'
    [ "$(uname -m)" = x86_64 ] || { pass "e2e-cmd/cold-split (not x86-64: nothing to split)"; return; }
    for split in 1 0; do
        d=$E2E_WORK/cold_split_$split
        VIGIL_CC_SPLIT_COLD=$split build_program "$VIGILCC" -O2 loops_nested "$d"
        if [ ! -x "$d/loops_nested" ]; then
            fail "e2e-cmd/cold-split" "build (VIGIL_CC_SPLIT_COLD=$split) failed: $(first_error "$d/build.log")"
            return
        fi
        objdump -d --no-show-raw-insn "$d/loops_nested" >"$d/dis.txt"
        hot[$split]=$(awk '/^[0-9a-f]+ <main>:/,/^$/' "$d/dis.txt" | grep -c "$pattern")
        cold[$split]=$(awk '/^[0-9a-f]+ <main.cold>:/,/^$/' "$d/dis.txt" | grep -c "$pattern")
        VIGIL_OPTIONS="mode=full:out=$d/out" timeout -k 5 "$E2E_TIMEOUT" "$d/loops_nested" >"$d/full.out" 2>&1
        VIGIL_OPTIONS="mode=off:out=$d/out" timeout -k 5 "$E2E_TIMEOUT" "$d/loops_nested" >"$d/off.out" 2>&1
        cmp -s "$d/full.out" "$d/off.out" || why+="VIGIL_CC_SPLIT_COLD=$split: mode=full and mode=off print different things; "
    done
    [ "${cold[0]}" = 0 ] && [ "${hot[0]}" -ge 8 ] ||
        why+="not split: ${hot[0]} runtime calls in main, ${cold[0]} in main.cold (expected >= 8 and 0); "
    [ "${cold[1]}" -ge 4 ] && [ "${hot[1]}" -lt "${cold[1]}" ] && [ $((hot[1] + cold[1])) = "${hot[0]}" ] ||
        why+="split: ${hot[1]} runtime calls in main, ${cold[1]} in main.cold (expected most of the ${hot[0]} in main.cold); "
    if [ -z "$why" ]; then pass "e2e-cmd/cold-split"; else fail "e2e-cmd/cold-split" "$why"; fi
}
# ---- Short loops (compiler/shortloops.c): which loops keep a back-edge check ----
# Without unrolling, so that each source loop is one loop of the compiled code.
short_loops_check() {
    local d=$E2E_WORK/short_loops src=$PROGS/short_loops.c out
    mkdir -p "$d"
    backedges() {  # BINARY -> the functions with a back-edge site, one per line
        "$VIGIL" sites "$1" | awk '$2 == "backedge" {print $3}' | sort -u
    }
    if ! (cd "$d" && $VIGILCC -O2 -fno-unroll-loops -g -o short "$src" &&
          VIGIL_CC_SHORT_LOOP_MAX=0 $VIGILCC -O2 -fno-unroll-loops -g -o all "$src") >"$d/build.log" 2>&1; then
        fail "e2e-cmd/short-loops" "build failed: $(first_error "$d/build.log")"
        return
    fi
    out=$(backedges "$d/short" | tr '\n' ' ')
    if [ "$out" != "long_sum main odd_steps " ]; then
        fail "e2e-cmd/short-loops" "functions with back-edge checks: '$out', expected 'long_sum main odd_steps '"
    elif [ "$(backedges "$d/all" | tr '\n' ' ')" != "long_sum main odd_steps short_compare short_countdown " ]; then
        fail "e2e-cmd/short-loops" "with VIGIL_CC_SHORT_LOOP_MAX=0 every loop must keep its check: $(backedges "$d/all" | tr '\n' ' ')"
    else
        pass "e2e-cmd/short-loops"
    fi
}
# ---- Counted loops (compiler/loops.c): unchecked copies keep every site's counts and rates ----
# Each loop's back-edge site must count and fire exactly as in a build without counted loops
# (VIGIL_CC_COUNTED_LOOPS=0): the trip count is subtracted at entry only when the countdown
# holds it, else the checked loop runs and fires where it would have. At -O2 without
# vectorization, and at -O3 (hot_sum and rare_sum vectorized, stepping by 16 bytes). Without
# unrolling, so that hot_down's one loop has one site.
counted_loops_check() {
    local d=$E2E_WORK/counted_loops src=$PROGS/counted_loops.c why="" opt mode run base counted
    local checker="python3 $ROOT/tests/e2e/report_check.py"
    mkdir -p "$d"
    for opt in "-O2 -fno-vectorize -fno-slp-vectorize" "-O3 -fno-unroll-loops"; do
        local tag=${opt%% *}
        if ! (cd "$d" && VIGIL_DEBUG=1 $VIGILCC $opt -g -o "counted$tag" "$src" 2>"counted$tag.notes" &&
              VIGIL_DEBUG=1 VIGIL_CC_COUNTED_LOOPS=0 $VIGILCC $opt -g -o "base$tag" "$src" 2>"base$tag.notes") \
              >"$d/build$tag.log" 2>&1; then
            why+="$tag: build failed: $(first_error "$d/build$tag.log"); "
            continue
        fi
        counted=$(grep -o '[0-9]* of them counted' "$d/counted$tag.notes" | cut -d' ' -f1)
        base=$(grep -o '[0-9]* of them counted' "$d/base$tag.notes" | cut -d' ' -f1)
        [ "${counted:-0}" -ge 3 ] && [ "${base:-1}" = 0 ] ||
            why+="$tag: ${counted:-no} loops counted (expected >= 3), ${base:-no} with VIGIL_CC_COUNTED_LOOPS=0 (expected 0); "
        for mode in adaptive off; do
            for b in counted base; do
                rm -rf "$d/out.$b$tag.$mode"
                (cd "$d" && VIGIL_OPTIONS="mode=$mode:out=$d/out.$b$tag.$mode" timeout -k 5 "$E2E_TIMEOUT" \
                    "./$b$tag") >"$d/$b$tag.$mode.out" 2>/dev/null
            done
            cmp -s "$d/counted$tag.$mode.out" "$d/base$tag.$mode.out" || why+="$tag $mode: outputs differ; "
            run=$(find "$d/out.counted$tag.$mode" -name run.txt 2>/dev/null | head -n1)
            base=$(find "$d/out.base$tag.$mode" -name run.txt 2>/dev/null | head -n1)
            if [ -z "$run" ] || [ -z "$base" ]; then
                why+="$tag $mode: no run.txt; "
                continue
            fi
            [ "$(grep -c '^site .* backedge' "$run")" -ge 5 ] && cmp -s <(grep '^site' "$run") <(grep '^site' "$base") ||
                why+="$tag $mode: site lines differ from the build without counted loops: $(diff <(grep '^site' "$base") <(grep '^site' "$run") | grep '^[<>]' | head -4 | tr '\n' ' '); "
        done
        run=$(find "$d/out.counted$tag.adaptive" -name run.txt 2>/dev/null | head -n1)
        [ -n "$run" ] || continue
        out=$($checker "$run" "$src" "rare_sum entry execs == 3" "rare_sum backedge rate == 1" \
              "hot_down backedge rate == 0.001" "hot_down backedge execs == 19960000" 2>&1) ||
            why+="$tag: $(echo "$out" | tr '\n' ' ' | cut -c1-300); "
        $checker "$run" "$src" "hot_down backedge rate > 0.001" >/dev/null 2>&1 &&
            why+="$tag: negative control 'hot_down backedge rate > 0.001' was accepted; "
    done
    if [ -z "$why" ]; then pass "e2e-rates/counted-loops"; else fail "e2e-rates/counted-loops" "$why"; fi
}
# ---- Call probes: opt-in (VIGIL_CC_PROBE_CALLS=1), the count tool's call events ----
# count_events DIR BINARY KIND [ARG...]: runs DIR/BINARY [ARG...] in mode=full with the count
# tool (stdout in DIR/BINARY.out) and prints the events of KIND it counted (load, store, call,
# load_bytes...), or nothing.
# COUNT_MODE (default full) sets the mode.
count_events() {
    local d=$1 bin=$2 kind=$3
    rm -rf "$d/out"
    (cd "$d" && VIGIL_OPTIONS="mode=${COUNT_MODE:-full}:tools=count:out=$d/out" timeout -k 5 "$E2E_TIMEOUT" "./$bin" "${@:4}") >"$d/$bin.out" 2>/dev/null
    cat "$d"/out/*/count.txt 2>/dev/null | awk -v k="$kind" '$1 == k {print $2}'
}
# count_sites BINARY KIND [FUNCTION]: how many sites of KIND the binary (or that function) has.
count_sites() {
    "$VIGIL" sites "$1" | awk -v k="$2" -v f="${3:-}" '$2 == k && (f == "" || $3 == f)' | wc -l
}
call_probes_check() {
    local d=$E2E_WORK/call_probes src=$PROGS/callbacks.c why="" sites events
    mkdir -p "$d"
    if ! (cd "$d" && $VIGILCC -O2 -g -o default "$src" &&
          VIGIL_CC_PROBE_CALLS=1 $VIGILCC -O2 -g -o with_calls "$src" && $PLAINCC -O2 -o plain "$src") >"$d/build.log" 2>&1; then
        fail "e2e-cmd/call-probes" "build failed: $(first_error "$d/build.log")"
        return
    fi
    (cd "$d" && ./plain) >"$d/plain.out" 2>/dev/null
    sites=$(count_sites "$d/default" call) events=$(count_events "$d" default call)
    [ "$sites" = 0 ] && [ "${events:-0}" = 0 ] || why+="default build: $sites call sites, ${events:-no} call events; "
    sites=$(count_sites "$d/with_calls" call) events=$(count_events "$d" with_calls call)
    [ "$sites" -gt 5 ] && [ "${events:-0}" -gt 10 ] || why+="VIGIL_CC_PROBE_CALLS=1: $sites call sites, ${events:-no} call events; "
    cmp -s "$d/plain.out" "$d/default.out" && cmp -s "$d/plain.out" "$d/with_calls.out" || why+="output differs from plain; "
    if [ -z "$why" ]; then pass "e2e-cmd/call-probes"; else fail "e2e-cmd/call-probes" "$why"; fi
}
# ---- Threads running the same code: per-thread countdowns count every execution ----
# Six threads (a pool's thread that still waits for work at the report, four workers, one
# ending by pthread_exit, then main) run the same functions.
# In mode=off every site's executions must be exact: with one countdown array shared by all
# threads, concurrent decrements were lost (a third of them on two cores). In adaptive mode
# the checks' counts stay exact; executions inside bursts are counted by a plain increment of
# the shared site state, and two threads bursting at one site at once may lose one, hence
# the 1% margin of the hot loop. A thread's exit folds in what its countdowns counted.
thread_counts_check() {
    local d=$E2E_WORK/thread_counts src=$PROGS/thread_counts.c why="" mode run out
    local checker="python3 $ROOT/tests/e2e/report_check.py"
    mkdir -p "$d"
    if ! (cd "$d" && $VIGILCC -O2 -g -o tc "$src" -lpthread && clang -O2 -o plain "$src" -lpthread) >"$d/build.log" 2>&1; then
        fail "e2e-rates/thread-counts" "build failed: $(first_error "$d/build.log")"
        return
    fi
    (cd "$d" && ./plain 4) >"$d/plain.out" 2>&1
    rm -rf "$d/out.single"
    (cd "$d" && VIGIL_OPTIONS="mode=off:out=$d/out.single" timeout -k 5 "$E2E_TIMEOUT" ./tc 1) >/dev/null 2>&1
    run=$(find "$d/out.single" -name run.txt 2>/dev/null | head -n1)
    local single_hot
    single_hot=$(python3 "$ROOT/tests/e2e/report_check.py" "$run" "$src" "hot backedge execs < 0" 2>&1 | grep -o 'execs=[0-9]*' | head -n1 | cut -d= -f2)
    if [ -z "$single_hot" ] || [ $((single_hot % 9000)) != 0 ]; then
        fail "e2e-rates/thread-counts" "one worker: hot's loop counted ${single_hot:-nothing}, expected a multiple of its 9000 calls"
        return
    fi
    # The pool's thread, one worker, then main: never two at once, so adaptive counts are exact too, the
    # back-edge of worker's loop included (its bursts end inside hot, and the instrumented copy
    # goes back to the checking copy past the check: it counts that execution itself).
    rm -rf "$d/out.single-adaptive"
    (cd "$d" && VIGIL_OPTIONS="mode=adaptive:out=$d/out.single-adaptive" timeout -k 5 "$E2E_TIMEOUT" ./tc 1) >/dev/null 2>&1
    run=$(find "$d/out.single-adaptive" -name run.txt 2>/dev/null | head -n1)
    out=$(python3 "$ROOT/tests/e2e/report_check.py" "$run" "$src" "hot backedge execs == $single_hot" \
          "worker backedge execs == 8997" "worker backedge bursts >= 5" "hot entry execs == 9000" 2>&1) ||
        why+="one worker, adaptive: $(echo "$out" | tr '\n' ' ' | cut -c1-300); "
    for mode in off adaptive; do
        rm -rf "$d/out.$mode"
        (cd "$d" && VIGIL_OPTIONS="mode=$mode:out=$d/out.$mode" timeout -k 5 "$E2E_TIMEOUT" ./tc 4) >"$d/$mode.out" 2>&1
        cmp -s "$d/plain.out" "$d/$mode.out" || why+="$mode: output differs from plain clang's; "
        run=$(find "$d/out.$mode" -name run.txt 2>/dev/null | head -n1)
        if [ -z "$run" ]; then
            why+="$mode: no run.txt; "
            continue
        fi
        # hot's loop (unrolled or not) runs the same count per call: 6 x 3000 calls here, 3 x
        # 3000 in the run with one worker (single_hot, above).
        out=$($checker "$run" "$src" "hot entry execs == 18000" "rare entry execs == 6" "leave entry execs == 1" \
              "hot backedge execs in $((single_hot * 99 / 100 * 2))..$((single_hot * 2))" 2>&1) ||
            why+="$mode: $(echo "$out" | tr '\n' ' ' | cut -c1-300); "
        if [ "$mode" = off ]; then
            out=$($checker "$run" "$src" "hot backedge execs == $((single_hot * 2))" "worker backedge execs == 17994" 2>&1) ||
                why+="off: $(echo "$out" | tr '\n' ' ' | cut -c1-300); "
        fi
    done
    # Code built as for a shared library (-fPIC): countdowns shared by default (a library may be
    # dlopen'ed), per thread with VIGIL_CC_THREAD_COUNTERS=1 (initial-exec TLS through the GOT):
    # then exact again.
    if (cd "$d" && VIGIL_CC_THREAD_COUNTERS=1 $VIGILCC -O2 -g -fPIC -o tc-pic "$src" -lpthread &&
        $VIGILCC -O2 -g -fPIC -o tc-pic-shared "$src" -lpthread) >"$d/build-pic.log" 2>&1; then
        for b in tc-pic tc-pic-shared; do
            rm -rf "$d/out.$b"
            (cd "$d" && VIGIL_OPTIONS="mode=off:out=$d/out.$b" timeout -k 5 "$E2E_TIMEOUT" "./$b" 4) >"$d/$b.out" 2>&1
            cmp -s "$d/plain.out" "$d/$b.out" || why+="$b: output differs from plain clang's; "
        done
        run=$(find "$d/out.tc-pic" -name run.txt 2>/dev/null | head -n1)
        out=$(python3 "$ROOT/tests/e2e/report_check.py" "$run" "$src" "hot entry execs == 18000" \
              "hot backedge execs == $((single_hot * 2))" "worker backedge execs == 17994" 2>&1) ||
            why+="-fPIC, VIGIL_CC_THREAD_COUNTERS=1: $(echo "$out" | tr '\n' ' ' | cut -c1-300); "
    else
        why+="-fPIC builds failed: $(first_error "$d/build-pic.log"); "
    fi
    if [ -z "$why" ]; then pass "e2e-rates/thread-counts"; else fail "e2e-rates/thread-counts" "$why"; fi
}
# ---- Computed gotos keep threaded dispatch (compiler/checks.c fold_check_into_dispatch) ----
# The interpreter's back-edge check is folded into its computed goto, so the back end still
# copies the dispatch into every handler; when a check expires without a burst (mode=off) the
# thread runs one handler in the clone, whose probes must then report nothing.
threaded_dispatch_check() {
    local d=$E2E_WORK/threaded src=$PROGS/switch_dispatch.c why="" jumps plain_jumps off adaptive
    mkdir -p "$d"
    if ! (cd "$d" && $VIGILCC -O2 -g -o vm "$src" && $PLAINCC -O2 -o plain "$src") >"$d/build.log" 2>&1; then
        fail "e2e-cmd/threaded-dispatch" "build failed: $(first_error "$d/build.log")"
        return
    fi
    indirect_jumps() { objdump -d --no-show-raw-insn "$1" | awk '/<run_program>:/,/^$/' | grep -c 'jmp  *\*'; }
    jumps=$(indirect_jumps "$d/vm") plain_jumps=$(indirect_jumps "$d/plain")
    [ "$plain_jumps" -gt 3 ] && [ "$jumps" -ge "$plain_jumps" ] ||
        why+="run_program has $jumps indirect jumps, plain $plain_jumps; "
    (cd "$d" && ./plain) >"$d/plain.out" 2>/dev/null
    off=$(COUNT_MODE=off count_events "$d" vm load)
    cmp -s "$d/plain.out" "$d/vm.out" || why+="mode=off output differs from plain; "
    adaptive=$(COUNT_MODE=adaptive count_events "$d" vm load)
    cmp -s "$d/plain.out" "$d/vm.out" || why+="adaptive output differs from plain; "
    [ "${off:-0}" = 0 ] || why+="mode=off counted $off loads; "
    [ "${adaptive:-0}" -gt 0 ] || why+="adaptive counted no loads; "
    if [ -z "$why" ]; then pass "e2e-cmd/threaded-dispatch"; else fail "e2e-cmd/threaded-dispatch" "$why"; fi
}
# ---- Merged accesses (compiler/probes.c, VIGIL_CC_MERGE_SPAN): one probe per run of adjacent
# bytes that loads through one pointer read (digest: id..links[0] and links[3]; links[1] and
# links[2], which it does not read, are in no probe's range). Built without the memory
# checker's compiler part, whose checks have load and store sites of their own. ----
merged_accesses_check() {
    local d=$E2E_WORK/merged src=$PROGS/merged_fields.c why="" got
    mkdir -p "$d"
    if ! (cd "$d" && export VIGIL_CC_MEMCHECK=0 && $VIGILCC -O2 -g -o merged "$src" && VIGIL_CC_MERGE_SPAN=0 $VIGILCC -O2 -g -o single "$src") >"$d/build.log" 2>&1; then
        fail "e2e-cmd/merged-accesses" "build failed: $(first_error "$d/build.log")"
        return
    fi
    sites() { count_sites "$d/$1" "$3" "$2"; }   # BINARY FUNCTION KIND
    got="$(sites merged digest load) $(sites single digest load) $(sites merged digest_with_call load) $(sites single digest_with_call load) $(sites merged fill store)"
    [ "$got" = "2 6 2 2 1" ] && [ "$(sites single fill store)" -ge 5 ] ||
        why+="sites (loads of digest merged, single; of digest_with_call merged, single; stores of fill merged): '$got', expected '2 6 2 2 1'; stores of fill single: $(sites single fill store), expected 5 or more; "
    local merged_loads single_loads
    merged_loads=$(count_events "$d" merged load) single_loads=$(count_events "$d" single load)
    [ -n "$merged_loads" ] && [ -n "$single_loads" ] && [ "$merged_loads" -lt "$single_loads" ] ||
        why+="load events: ${merged_loads:-none} merged against ${single_loads:-none} single; "
    cmp -s "$d/merged.out" "$d/single.out" && grep -q '^total 7624800$' "$d/merged.out" || why+="output differs; "
    if [ -z "$why" ]; then pass "e2e-cmd/merged-accesses"; else fail "e2e-cmd/merged-accesses" "$why"; fi
}
# ---- Access probes through module stubs (compiler/emit.c, x86-64 ELF) ----
# Every size class, in code for an executable and for a shared library: the count tool's bytes
# must be exact (the difference between 2000 and 1000 repeats: 1000 x 2 calls x 6 accesses of
# 35 bytes in all, each way).
access_sizes_check() {
    local d=$E2E_WORK/access_sizes why="" kind got1 got2 expected
    build_program "$VIGILCC" -O2 access_sizes "$d"
    if [ ! -x "$d/access_sizes" ]; then
        fail "e2e-cmd/access-sizes" "build failed: $(first_error "$d/build.log")"
        return
    fi
    if [ "$(uname -m)" = x86_64 ]; then
        for f in "$d/access_sizes" "$d/libaccess_sizes_lib.so"; do
            got1=$(nm "$f" | grep -c ' t __vigil_mprobe_\(load\|store\)\(1\|2\|4\|8\|16\|\)$')
            [ "$got1" = 12 ] || why+="$(basename "$f"): $got1 access stubs, expected 12; "
        done
    fi
    for kind in load store load_bytes store_bytes; do
        got1=$(count_events "$d" access_sizes "$kind" 1000) got2=$(count_events "$d" access_sizes "$kind" 2000)
        case $kind in *_bytes) expected=70000 ;; *) expected=12000 ;; esac
        [ -n "$got1" ] && [ -n "$got2" ] && [ $((got2 - got1)) = "$expected" ] ||
            why+="$kind: ${got1:-none} for 1000 repeats, ${got2:-none} for 2000 (difference expected $expected); "
    done
    grep -q '^160 4000 4000 4000 4000 gfe$' "$d/access_sizes.out" || why+="output: $(head -c 100 "$d/access_sizes.out"); "
    if [ -z "$why" ]; then pass "e2e-cmd/access-sizes"; else fail "e2e-cmd/access-sizes" "$why"; fi
}
# ---- A shared library's probes and lazy binding ----
# Probes are preserve_most calls: the caller may keep values in r10 and r11 across them. The
# dynamic linker's lazy resolver keeps neither, so a vigil-cc -shared library calls them through
# the GOT (compiler/emit.c, nonlazybind). Every probe fires (mode=full, a tool that takes it);
# both rounds must print what plain clang's build prints, with lazy binding. Built with every
# probe guarded (VIGIL_CC_GUARD_ACCESSES=1), with branch and return probes guarded (the
# default) and with none (VIGIL_CC_GUARD_PROBES=0): where a probe is not guarded, the module
# stub of the executable tests the event bit itself. All three must count the same events.
shlib_probe_registers_check() {
    local d why="" tool guard counts=()
    for guard in all 1 0; do
        d=$E2E_WORK/shlib_probe_registers.guard$guard
        VIGIL_CC_GUARD_PROBES=${guard/all/1} VIGIL_CC_GUARD_ACCESSES=$([ $guard = all ] && echo 1 || echo 0) \
            build_program "$VIGILCC" -O2 shlib_probe_registers "$d"
        if [ ! -x "$d/shlib_probe_registers" ]; then
            fail "e2e-cmd/shlib-probe-registers" "build (guards $guard) failed: $(first_error "$d/build.log")"
            return
        fi
        for tool in count leak; do
            rm -rf "$d/out"
            (cd "$d" && env -u LD_BIND_NOW VIGIL_OPTIONS="mode=full:tools=$tool:out=$d/out" \
                timeout -k 5 "$E2E_TIMEOUT" ./shlib_probe_registers) >"$d/$tool.out" 2>/dev/null
            [ "$(tr '\n' ' ' <"$d/$tool.out")" = "2693 3693 2693 3693 " ] ||
                why+="guards $guard, tools=$tool: $(tr '\n' ' ' <"$d/$tool.out" | head -c 120), expected 2693 3693 twice; "
            [ $tool = count ] && counts+=("$(grep -E '^(load|store|branch|return|load_bytes|store_bytes) ' "$d"/out/*/count.txt 2>/dev/null | tr '\n' ' ')")
        done
    done
    [ -n "${counts[0]}" ] && [ "${counts[0]}" = "${counts[1]}" ] && [ "${counts[0]}" = "${counts[2]}" ] &&
        [[ "${counts[0]}" == *"branch "[1-9]* ]] ||
        why+="events with every guard '${counts[0]}', by default '${counts[1]}', without '${counts[2]}'; "
    if [ -z "$why" ]; then pass "e2e-cmd/shlib-probe-registers"; else fail "e2e-cmd/shlib-probe-registers" "$why"; fi
}
# ---- Bursts and giant functions (compiler/checks.c xf_insert_outlined_entry_check) ----
# giant_functions' stages() is over VIGIL_CC_DUAL_MAX with more outermost loops than
# VIGIL_CC_GIANT_LOOPS: its instrumented copy has no checks and runs to its return once entered,
# so a burst of its caller does not follow the call (it would coast through the whole call);
# its own entry check starts its bursts. interpret() is given transfers and inherits the burst,
# as any other callee does. In mode=full main's burst lasts the whole run (300 calls of each).
giant_burst_check() {
    local d=$E2E_WORK/giant_burst why="" run out
    local checker="python3 $ROOT/tests/e2e/report_check.py" src=$PROGS/giant_functions.c
    build_program "$VIGILCC" -O2 giant_functions "$d"
    if [ ! -x "$d/giant_functions" ]; then
        fail "e2e-rates/giant-burst" "build failed: $(first_error "$d/build.log")"
        return
    fi
    rm -rf "$d/out"
    (cd "$d" && VIGIL_OPTIONS="mode=full:out=$d/out" timeout -k 5 "$E2E_TIMEOUT" ./giant_functions) >"$d/full.out" 2>/dev/null
    run=$(find "$d/out" -name run.txt 2>/dev/null | head -n1)
    if [ -z "$run" ]; then
        why+="no run.txt; "
    else
        out=$($checker "$run" "$src" "stages entry execs == 300" "stages entry bursts == 300" \
              "interpret entry execs == 300" "interpret entry bursts == 0" 2>&1) ||
            why+="$(echo "$out" | tr '\n' ' ' | cut -c1-300); "
        $checker "$run" "$src" "stages entry bursts == 0" >/dev/null 2>&1 &&
            why+="negative control 'stages entry bursts == 0' was accepted; "
    fi
    if [ -z "$why" ]; then pass "e2e-rates/giant-burst"; else fail "e2e-rates/giant-burst" "$why"; fi
}
# ---- Local burst entries (compiler/outline.c, x86-64 ELF) ----
# burst_calls' instrumented main calls a function of another unit, of a vigil-built archive
# member, of a plain-built archive member, of libc and of a vigil-built shared library. The
# first two must be direct calls of their burst entries (the archive member's strong local entry
# wins over the program's weak fallback), the others go through fallbacks. In mode=full main's
# burst lasts the whole run: a callee entered through its burst entry starts no burst of its
# own, while the shared library's entry check (reached through a fallback: local entries do not
# cross shared objects) starts one at every call, the negative control.
burst_calls_check() {
    local d=$E2E_WORK/burst_calls why="" run out entry local
    build_program "$VIGILCC" -O2 burst_calls "$d"
    if [ ! -x "$d/burst_calls" ]; then
        fail "e2e-cmd/burst-calls" "build failed: $(first_error "$d/build.log")"
        return
    fi
    if [ "$(uname -m)" = x86_64 ]; then
        address() { nm "$d/burst_calls" | awk -v s="$1" '$3 == s {print $1}'; }
        for fn in other_unit archive_unit; do
            entry=$(address "$fn.vigil.b") local=$(address "$fn.vigil.b.local")
            [ -n "$entry" ] && [ "$entry" = "$local" ] || why+="$fn.vigil.b.local at ${local:-nowhere}, its burst entry at ${entry:-nowhere}; "
        done
        for fn in plain_unit shared_unit strtol; do
            [ -n "$(address "$fn.vigil.b.local")" ] || why+="no fallback $fn.vigil.b.local; "
        done
        out=$(objdump -d --no-show-raw-insn "$d/burst_calls" | awk '/<main.vigil.instr>:/,/^$/' | grep -c 'call  *\*')
        [ "$out" = 0 ] || why+="main.vigil.instr makes $out indirect calls; "
    fi
    rm -rf "$d/out"
    (cd "$d" && VIGIL_OPTIONS="mode=full:out=$d/out" timeout -k 5 "$E2E_TIMEOUT" ./burst_calls 3000) >"$d/full.out" 2>/dev/null
    grep -q '^3000 calls, sum 20713500$' "$d/full.out" || why+="output: $(head -c 100 "$d/full.out"); "
    run=$(find "$d/out" -name run.txt 2>/dev/null | head -n1)
    if [ -z "$run" ]; then
        why+="no run.txt; "
    else
        local checker="python3 $ROOT/tests/e2e/report_check.py" src=$PROGS/burst_calls.c
        out=$($checker "$run" "$src" "other_unit entry execs == 3000" "other_unit entry bursts == 0" \
              "archive_unit entry execs == 3000" "archive_unit entry bursts == 0" "shared_unit entry bursts == 3000" 2>&1) ||
            why+="$(echo "$out" | tr '\n' ' ' | cut -c1-300); "
        $checker "$run" "$src" "shared_unit entry bursts == 0" >/dev/null 2>&1 &&
            why+="negative control 'shared_unit entry bursts == 0' was accepted; "
    fi
    if [ -z "$why" ]; then pass "e2e-cmd/burst-calls"; else fail "e2e-cmd/burst-calls" "$why"; fi
}
# ---- Sites in inlined code (compiler/sites.c: the location's inlined-at chain) ----
# At -O2 del_ele and unblock_process are inlined into main: their sites name them, at their own
# lines, with the function they were compiled into, in `vigil sites` (text, JSON) and `vigil stats`.
inlined_sites_check() {
    local d=$E2E_WORK/inlined_sites src=$PROGS/inlined_sites.c why="" out del_line unblock_line rundir
    build_program "$VIGILCC" "-O2 -g" inlined_sites "$d" || { fail "e2e-cmd/inlined-sites" "build failed: $(first_error "$d/build.log")"; return; }
    del_line=$(grep -n 'LINE:del_ele_test' "$src" | cut -d: -f1)
    unblock_line=$(grep -n 'LINE:unblock_test' "$src" | cut -d: -f1)
    out=$("$VIGIL" sites "$d/inlined_sites" 2>&1)
    echo "$out" | awk -v l="inlined_sites.c:$del_line:" '$2 == "branch" && $3 == "del_ele" && index($4, l) && /\(inlined in main\)/ { hit = 1 } END { exit !hit }' ||
        why+="no branch site of del_ele at line $del_line inlined in main; "
    echo "$out" | awk -v l="inlined_sites.c:$unblock_line:" '$2 == "branch" && $3 == "unblock_process" && index($4, l) { hit = 1 } END { exit !hit }' ||
        why+="no branch site of unblock_process at line $unblock_line; "
    echo "$out" | awk '$2 == "backedge" && $3 == "del_ele" { hit = 1 } END { exit !hit }' || why+="no back-edge site of del_ele; "
    echo "$out" | awk '$3 == "main" && $4 ~ /:('"$del_line|$unblock_line"'):/ { hit = 1 } END { exit hit }' ||
        why+="a site at an inlined function's line is named main; "
    "$VIGIL" sites --json "$d/inlined_sites" 2>/dev/null | python3 -c '
import json, sys
sites = [s for t in json.load(sys.stdin)["tables"] for s in t["sites"]]
sys.exit(0 if any(s["function"] == "del_ele" and s.get("inlined_in") == "main" for s in sites) else 1)' ||
        why+="JSON: no site with function del_ele, inlined_in main; "
    rm -rf "$d/out"
    (cd "$d" && VIGIL_OPTIONS="mode=full:out=$d/out" timeout -k 5 "$E2E_TIMEOUT" ./inlined_sites 200) >"$d/full.out" 2>/dev/null
    rundir=$(dirname "$(find "$d/out" -name run.txt 2>/dev/null | head -n1)")
    out=$("$VIGIL" stats "$rundir" 2>&1)
    echo "$out" | grep -E 'backedge' | grep -E ' del_ele ' | grep -q 'inlined in main' || why+="vigil stats: no back-edge of del_ele inlined in main: $(echo "$out" | grep backedge | head -n3 | tr '\n' '|'); "
    if [ -z "$why" ]; then pass "e2e-cmd/inlined-sites"; else fail "e2e-cmd/inlined-sites" "$why"; fi
}
# ---- Inlined calls on conditional paths keep their own check (compiler/inlined.c) ----
# rare_path (static, not noinline) is inlined into main's loop of 200 million iterations and
# runs 3 times there: its own check (an entry site named rare_path) stays at rate 1 at -O1,
# -O2 and -O3 while the loop's back-edge falls to the floor, and the bursts it starts cover its
# code: the count tool sees its 3 stores (the loop itself stores nothing), the preds tool its
# branch 3 times.
inlined_checks_check() {
    local d=$E2E_WORK/inlined src=$PROGS/inlined_rare.c why="" opt run out stores
    local checker="python3 $ROOT/tests/e2e/report_check.py"
    mkdir -p "$d"
    for opt in -O1 -O2 -O3; do
        if ! (cd "$d" && $VIGILCC $opt -g -o "inlined$opt" "$src") >"$d/build$opt.log" 2>&1; then
            why+="$opt: build failed: $(first_error "$d/build$opt.log"); "
            continue
        fi
        rm -rf "$d/out$opt"
        (cd "$d" && VIGIL_OPTIONS="mode=adaptive:tools=count:out=$d/out$opt" timeout -k 5 "$E2E_TIMEOUT" \
            "./inlined$opt" 200000000) >"$d/run$opt.out" 2>/dev/null
        run=$(find "$d/out$opt" -name run.txt 2>/dev/null | head -n1)
        if [ -z "$run" ]; then
            why+="$opt: no run.txt; "
            continue
        fi
        out=$($checker "$run" "$src" "rare_path entry count == 1" "rare_path entry rate == 1" \
              "rare_path entry execs == 3" "rare_path entry bursts == 3" "rare_path entry line == @rare_path" \
              "main backedge rate == 0.001" "main backedge execs >= 199000000" 2>&1) ||
            why+="$opt: $(echo "$out" | tr '\n' ' ' | cut -c1-300); "
        $checker "$run" "$src" "rare_path entry rate < 1" >/dev/null 2>&1 &&
            why+="$opt: negative control 'rare_path entry rate < 1' was accepted; "
        stores=$(awk '$1 == "store" {print $2}' "$d/out$opt"/*/count.txt 2>/dev/null)
        [ "${stores:-0}" = 3 ] || why+="$opt: ${stores:-no} stores sampled, expected rare_path's 3; "
    done
    # The preds tool's sampled predicates (one module: its site ids are the local ones) observe
    # the inlined branch each of the 3 times.
    local line site seen
    line=$(grep -n 'LINE:rare_branch' "$src" | cut -d: -f1)
    site=$("$VIGIL" sites "$d/inlined-O2" 2>/dev/null | awk -v l=":$line:" '$2 == "branch" && index($4, l) {print $1; exit}')
    rm -rf "$d/preds"
    (cd "$d" && VIGIL_OPTIONS="mode=adaptive:tools=preds:out=$d/preds" timeout -k 5 "$E2E_TIMEOUT" \
        ./inlined-O2 200000000) >/dev/null 2>&1
    seen=$(awk -v s="$site" '$1 == "site" && $2 == s && $3 == "branch" {print $4}' "$d/preds"/*/preds.txt 2>/dev/null)
    [ -n "$site" ] && [ "${seen:-0}" = 3 ] ||
        why+="preds: the inlined branch (site ${site:-none} at line $line) observed ${seen:-0} times, expected 3; "
    if [ -z "$why" ]; then pass "e2e-rates/inlined-rare-path"; else fail "e2e-rates/inlined-rare-path" "$why"; fi
}
if [ -z "$E2E_ONLY" ] && [ "$(basename "$VIGILCC")" = vigil-cc ]; then
    inlined_sites_check
    shlib_probe_registers_check
    burst_calls_check
    giant_burst_check
    access_sizes_check
    cold_split_check
    report_checks
    inlined_checks_check
    short_loops_check
    counted_loops_check
    thread_counts_check
    threaded_dispatch_check
    call_probes_check
    merged_accesses_check
fi

echo "e2e: $passed passed, $failed failed" >&2
[ "$failed" = 0 ]
