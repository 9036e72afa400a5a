#!/usr/bin/env bash
# The one test runner (`make test`): build, unit tests, end-to-end tests, fuzz smoke, real
# programs. Prints "PASS name" or "FAIL name: reason" per test and ends with the line
# "N passed, N failed"; exit status 1 if anything failed.
#
# Environment:
#   REAL=fast|full|none   real-program checks (default fast; CI uses fast)
#   FUZZ_SECONDS=N        time per fuzz target in the smoke run (default 10; 0 skips it)
#   TESTS=a,b             run only these parts: build, unit, layering, e2e, runtime, cc, cache, config, report,
#                         llvm, fuzz, real, and one part per tool (its name: leak, preds, ...)
#   VIGILCC               compiler under test (default build/bin/vigil-cc; tests/e2e/run.sh)
#   HOSTCC                compiler of the unit tests (default clang)
#   UNIT_TIMEOUT          seconds per unit test (default 120)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
REAL=${REAL:-fast}
FUZZ_SECONDS=${FUZZ_SECONDS:-10}
# Every tool is a folder tools/<name>/; its tests are tools/<name>/tests/test_*.c (unit tests)
# and the drivers tools/<name>/tests/run*.sh (a part named after the tool).
TOOL_NAMES=$(cd tools && for d in */; do echo -n "${d%/},"; done)
TESTS=${TESTS:-build,unit,layering,e2e,runtime,cc,cache,config,report,${TOOL_NAMES}llvm,fuzz,real}
HOSTCC=${HOSTCC:-clang}
UNIT_TIMEOUT=${UNIT_TIMEOUT:-120}
WORK=$(mktemp -d /tmp/vigil-tests.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
# vigil-cc's instrumentation cache: one of this run's own, not the user's ~/.cache/vigil.
export VIGIL_CC_CACHE_DIR="$WORK/vigil-cc-cache"
ulimit -c 0

passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
wanted() { [[ ",$TESTS," == *",$1,"* ]]; }

# Run a sub-driver that prints PASS/FAIL lines itself: pass its lines through and count them.
# A driver that fails (or times out) without printing a FAIL line is one failure.
run_driver() {  # NAME TIMEOUT_SECONDS COMMAND...
    local name=$1 limit=$2 status line driver_failed=0
    shift 2
    status=0
    # Lines are passed through as they come; the driver's exit status arrives as the last line.
    while IFS= read -r line; do
        case "$line" in
            PASS\ *) echo "$line"; passed=$((passed + 1)) ;;
            FAIL\ *) echo "$line"; failed=$((failed + 1)); driver_failed=1 ;;
            SKIP\ *) echo "$line" ;;
            __driver_status\ *) status=${line#__driver_status } ;;
        esac
    done < <(timeout -k 10 "$limit" "$@" 2>"$WORK/$name.err" </dev/null; echo "__driver_status $?")
    if [ "$status" = 124 ] || [ "$status" = 137 ]; then
        fail "$name" "timed out after ${limit}s"
    elif [ "$status" != 0 ] && [ "$driver_failed" = 0 ]; then
        fail "$name" "exited with status $status: $(tail -n 3 "$WORK/$name.err" | tr '\n' ' ' | cut -c1-300)"
    fi
}

# ---- build ----
if wanted build; then
    if timeout 3600 make -j2 >"$WORK/make.log" 2>&1; then
        pass "build (make -j2)"
    else
        fail "build (make -j2)" "$(grep -m1 -E 'error|Error' "$WORK/make.log" | cut -c1-200)"
    fi
fi

# ---- unit tests: tests/unit/test_<name>.c and tools/*/tests/test_<name>.c + every common/*.c ----
# A test may add sources ("// unit-extra: path/a.c path/b.c") and libraries
# ("// unit-libs: -lsqlite3") in a comment line of its own.
if wanted unit; then
    dw_libs=""
    echo 'int main(void){return 0;}' >"$WORK/probe.c"
    $HOSTCC "$WORK/probe.c" -o "$WORK/probe" -ldw -lelf 2>/dev/null && dw_libs="-ldw -lelf"
    for test_src in tests/unit/test_*.c tools/*/tests/test_*.c; do
        [ -e "$test_src" ] || continue
        case "$test_src" in
            tools/*) name=unit/$(cut -d/ -f2 <<<"$test_src")/$(basename "$test_src" .c) ;;
            *) name=unit/$(basename "$test_src" .c) ;;
        esac
        extra=$(sed -n 's|^[[:space:]]*//[[:space:]]*unit-extra:||p' "$test_src" | tr '\n' ' ')
        libs=$(sed -n 's|^[[:space:]]*//[[:space:]]*unit-libs:||p' "$test_src" | tr '\n' ' ')
        bin=$WORK/$(basename "$test_src" .c)
        # shellcheck disable=SC2086
        if ! timeout 300 $HOSTCC -std=gnu11 -D_GNU_SOURCE -g -O1 -Wall -Wno-unused-function \
                -I. -Icommon -Iinclude -Itests/unit "$test_src" common/*.c $extra -o "$bin" \
                $libs $dw_libs -lm -lpthread >"$bin.build.log" 2>&1; then
            fail "$name" "does not compile: $(grep -m1 -E 'error' "$bin.build.log" | cut -c1-200)"
            continue
        fi
        (cd "$WORK" && timeout -k 5 "$UNIT_TIMEOUT" "$bin") >"$bin.log" 2>&1 </dev/null
        status=$?
        if [ "$status" = 0 ]; then
            pass "$name"
        elif [ "$status" = 124 ]; then
            fail "$name" "timed out after ${UNIT_TIMEOUT}s"
        else
            why=$(grep -m1 'check failed' "$bin.log" | cut -c1-200)
            [ -n "$why" ] || why=$(tail -n1 "$bin.log" | cut -c1-200)
            fail "$name" "exit status $status: $why"
        fi
    done
fi

# ---- layering check (tools include only the public tool header) ----
if wanted layering && [ -f tests/check-layering.sh ]; then
    if out=$(timeout 60 bash tests/check-layering.sh 2>&1); then
        pass "layering (tests/check-layering.sh)"
    else
        fail "layering (tests/check-layering.sh)" "$(echo "$out" | head -n1)"
    fi
fi

# ---- end-to-end ----
if wanted e2e; then
    run_driver e2e 3600 bash tests/e2e/run.sh
fi

# ---- the runtime without the compiler, the tools, other LLVM versions ----
# Each driver prints its own PASS/FAIL lines.
wanted runtime && run_driver runtime 900 bash tests/runtime/run.sh
wanted cc && [ -f tests/cc/run.sh ] && run_driver cc 900 bash tests/cc/run.sh
wanted cache && [ -f tests/cache/run.sh ] && run_driver cache 900 bash tests/cache/run.sh
wanted config && [ -f tests/config/run.sh ] && run_driver config 600 bash tests/config/run.sh
wanted report && [ -f tests/report/run.sh ] && run_driver report 900 bash tests/report/run.sh
# Each tool's drivers: tools/<name>/tests/run.sh and run-<what>.sh, 1800 s each at most.
for tool_dir in tools/*/; do
    tool=$(basename "$tool_dir")
    wanted "$tool" || continue
    for driver in "$tool_dir"tests/run.sh "$tool_dir"tests/run-*.sh; do
        [ -f "$driver" ] || continue
        what=$(basename "$driver" .sh)
        run_driver "$tool${what#run}" 1800 bash "$driver"
    done
done
wanted llvm && run_driver llvm 2400 bash tests/llvm-versions.sh

# ---- fuzz smoke ----
if wanted fuzz && [ -f tests/fuzz/run.sh ] && [ "$FUZZ_SECONDS" != 0 ]; then
    echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' >"$WORK/fuzzprobe.c"
    if clang -fsanitize=fuzzer "$WORK/fuzzprobe.c" -o "$WORK/fuzzprobe" >/dev/null 2>&1; then
        fuzz_targets=$(find tests/fuzz tools/*/tests/fuzz -name 'fuzz_*.c' 2>/dev/null | wc -l)
        before_pass=$passed before_fail=$failed
        run_driver fuzz $((FUZZ_SECONDS * (fuzz_targets + 1) + 600)) env FUZZ_SECONDS="$FUZZ_SECONDS" bash tests/fuzz/run.sh
        # A fuzz driver that prints no PASS/FAIL lines of its own counts as one test.
        if [ "$passed" = "$before_pass" ] && [ "$failed" = "$before_fail" ]; then
            pass "fuzz (tests/fuzz/run.sh, ${FUZZ_SECONDS}s per target)"
        fi
    else
        echo "SKIP fuzz: clang does not support -fsanitize=fuzzer here"
    fi
fi

# ---- real programs (Debian sources) ----
if wanted real && [ "$REAL" != none ]; then
    case "$REAL" in
        fast) real_limit=1800 ;;
        full) real_limit=10800 ;;
        *) fail "real" "REAL must be fast, full or none (not '$REAL')"; real_limit=0 ;;
    esac
    [ "$real_limit" != 0 ] && run_driver real "$real_limit" bash tests/real/run.sh "--$REAL"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
