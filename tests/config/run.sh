#!/usr/bin/env bash
# vigil-cc's configuration file (VIGIL_CC_CONFIG, docs/config.md) and `vigil observe`:
# [skip] leaves functions as plain clang compiles them, [tested] reduces memcheck's checks, a
# bad line fails the build with FILE:LINE, the file's contents are in the cache key, and an
# observation config skips the hot tiny function. Programs are built -O2 -g, as users do.
#
# Prints "PASS name" or "FAIL name: reason" per check and ends with "N passed, N failed";
# exit 1 if any check failed.
#
# Environment:
#   VIGILCC   compiler under test (default build/bin/vigil-cc)
#   VIGIL     the vigil command (default: next to VIGILCC)
#   HOSTCC    the plain compiler to compare with (default clang)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VIGILCC=${VIGILCC:-$ROOT/build/bin/vigil-cc}
case "$VIGILCC" in /*) ;; */*) VIGILCC=$PWD/$VIGILCC ;; esac
VIGIL=${VIGIL:-$(dirname "$VIGILCC")/vigil}
HOSTCC=${HOSTCC:-clang}
WORK=$(mktemp -d /tmp/vigil-config-tests.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
ulimit -c 0
for v in $(env | sed -n 's/^\(VIGIL_CC_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset VIGIL_DEBUG VIGIL_OPTIONS
export VIGIL_CC_CACHE_DIR=$WORK/cache

passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
check() {  # NAME REASON COMMAND...
    local name=$1 reason=$2
    shift 2
    if "$@"; then pass "$name"; else fail "$name" "$reason"; fi
}
oneline() { tr '\n' ' ' <"$1" | cut -c1-${2:-240}; }
counter() {  # NAME: a counter of `vigil cache --json`
    "$VIGIL" cache --dir "$VIGIL_CC_CACHE_DIR" --json 2>/dev/null | sed -n "s/^ *\"$1\": *\([0-9]*\).*/\1/p"
}

if ! [ -x "$VIGILCC" ] || ! [ -x "$VIGIL" ]; then
    fail config/setup "no vigil-cc or vigil at $VIGILCC, $VIGIL (make -j2)"
    echo "$passed passed, $failed failed"
    exit 1
fi
cd "$WORK" || exit 2

# A hot tiny function, a loop that reads memory, and a helper file of its own.
cat >prog.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
long helper_sum(const long *a, long n);
__attribute__((noinline)) static long tiny(long x) { return x * 3 + 1; }
__attribute__((noinline)) long loader(const long *a, long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += a[i] ^ a[(i * 7) % n];
    return s;
}
int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1500000;
    long *a = malloc(256 * sizeof *a);
    for (long i = 0; i < 256; i++)
        a[i] = i * i;
    unsigned long acc = 0;
    for (long i = 0; i < n; i++)
        acc += (unsigned long)tiny(i);
    acc += (unsigned long)loader(a, 256) + (unsigned long)helper_sum(a, 256);
    printf("%lu\n", acc);
    free(a);
    return 0;
}
EOF
cat >helper.c <<'EOF'
long helper_sum(const long *a, long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        if (a[i] & 1)
            s += a[i];
    return s;
}
__attribute__((noinline)) long helper_twice(long x) { return 2 * x; }
EOF
"$HOSTCC" -O2 -g prog.c helper.c -o plain 2>plain.err && ./plain >plain.out || fail config/setup "plain build: $(oneline plain.err)"

# ---- [skip] ----
"$VIGILCC" -O2 -g prog.c helper.c -o full 2>full.err || fail skip/full "build: $(oneline full.err)"
"$VIGIL" sites --json full >full.sites 2>&1
nm full >full.nm
check skip/without-config "tiny and helper_sum have sites and an instrumented copy without a config" \
    bash -c 'grep -q "\"function\": \"tiny\"" full.sites && grep -q " tiny\.vigil\.instr$" full.nm && grep -q " helper_sum\.vigil\.instr$" full.nm'

printf '# hand-written\n[skip]\nfun:tiny\nsrc:*helper.c\n' >skip.conf
if VIGIL_CC_CONFIG=skip.conf "$VIGILCC" -O2 -g prog.c helper.c -o skipped 2>skipped.err; then
    "$VIGIL" sites --json skipped >skipped.sites 2>&1
    nm skipped >skipped.nm
    check skip/no-sites "vigil sites lists a site of tiny or of helper.c's functions" \
        bash -c '! grep -qE "\"function\": \"(tiny|helper_sum|helper_twice)\"" skipped.sites && grep -q "\"function\": \"loader\"" skipped.sites'
        # (an exported function keeps its burst entry names, aliases of the plain function itself)
    check skip/no-copy "nm shows an instrumented copy of a skipped function" \
        bash -c '! grep -qE " (tiny|helper_sum|helper_twice)\.vigil\.(instr|xfer)$" skipped.nm && grep -q " loader\.vigil\.instr$" skipped.nm && grep -qE " tiny$" skipped.nm'
    ./skipped >skipped.out 2>skipped.run.err
    check skip/output "output differs from plain clang's: $(oneline skipped.out)" cmp -s skipped.out plain.out
    VIGIL_OPTIONS=mode=full ./skipped >skipped.full.out 2>&1
    check skip/output-mode-full "output under mode=full differs from plain clang's" cmp -s skipped.full.out plain.out
else
    fail skip/build "$(oneline skipped.err)"
fi

VIGIL_CC_CONFIG=skip.conf "$VIGILCC" -O2 -g -c prog.c -o show.o 2>/dev/null
"$VIGIL" cache show --dir "$VIGIL_CC_CACHE_DIR" prog.c >show.out 2>&1
check skip/cache-metadata "vigil cache show: $(grep -E '^  (tiny|loader) ' show.out | tr '\n' ' ')" \
    bash -c 'grep -qE "^  tiny +skipped +\(none\) +0 +0 +0  reason=\[skip\] of VIGIL_CC_CONFIG$" show.out && grep -qE "^  loader +transfer +loader\.vigil\.instr" show.out'

# ---- [tested] and [memcheck.tested]: fewer memory checks ----
stats() {  # CONFIG-OR-EMPTY OUT [ENV...]: memcheck's counts for prog.c
    local conf=$1 out=$2
    shift 2
    env VIGIL_CC_CACHE=0 VIGIL_CC_MEMCHECK_STATS=1 ${conf:+VIGIL_CC_CONFIG=$conf} "$@" \
        "$VIGILCC" -O2 -g -c prog.c -o "$out.o" 2>"$out.err"
    sed -n 's/.*memcheck: prog.c: .* full \([0-9]*\) .*/\1/p' "$out.err"
}
tested_count() { sed -n 's/.* tested-load \([0-9]*\) .*/\1/p' "$1"; }
base=$(stats "" base)
printf '[tested]\nfun:loader\n' >tested.conf
printf '[memcheck.tested]\nfun:loader\n' >mtested.conf
t1=$(stats tested.conf tested)
t2=$(stats mtested.conf mtested)
t3=$(stats "" envtested VIGIL_CC_MEMCHECK_TESTED=loader)
check tested/fewer-checks "full checks: none $base, [tested] $t1 (tested-load $(tested_count tested.err))" \
    test -n "$base" -a -n "$t1" -a "${t1:-0}" -lt "${base:-0}" -a "$(tested_count tested.err)" -gt 0
check tested/tool-section "[memcheck.tested]: full $t2, [tested]: $t1" test -n "$t2" -a "$t2" = "$t1"
check tested/setting-still-works "VIGIL_CC_MEMCHECK_TESTED=loader: full $t3, [tested]: $t1" test -n "$t3" -a "$t3" = "$t1"

# ---- bad configs fail the build with FILE:LINE ----
printf '[skip]\nfun:tiny\n  func:loader\n' >bad.conf
VIGIL_CC_CONFIG=bad.conf "$VIGILCC" -O2 -g prog.c helper.c -o bad 2>bad.err
rc=$?
check bad/line "status $rc, message: $(oneline bad.err)" \
    bash -c "[ $rc -ne 0 ] && grep -q 'bad.conf:3: expected a \[section\] header, src:GLOB, fun:GLOB' bad.err && [ ! -e bad ]"
printf '# ok\n[skip]\nfun:tiny\n\n[memcheck.untested]\nfun:x\n' >badsec.conf
VIGIL_CC_CONFIG=badsec.conf "$VIGILCC" -O2 -g -c prog.c -o badsec.o 2>badsec.err
rc=$?
check bad/section "status $rc, message: $(oneline badsec.err)" \
    bash -c "[ $rc -ne 0 ] && grep -q 'badsec.conf:5: expected a section \[skip\], \[tested\] or a tool.s (.*memcheck.tested.*); got \[memcheck.untested\]' badsec.err"
VIGIL_CC_CONFIG=$WORK/missing.conf "$VIGILCC" -O2 -g -c prog.c -o missing.o 2>missing.err
rc=$?
check bad/missing-file "status $rc, message: $(oneline missing.err)" \
    bash -c "[ $rc -ne 0 ] && grep -q 'missing.conf: cannot open' missing.err"

# ---- the config's contents are in the cache key, its path is not ----
printf '[skip]\nfun:tiny\n' >key.conf
VIGIL_CC_CONFIG=key.conf "$VIGILCC" -O2 -g -c prog.c -o key1.o 2>/dev/null
m0=$(counter misses) h0=$(counter hits)
VIGIL_CC_CONFIG=key.conf "$VIGILCC" -O2 -g -c prog.c -o key2.o 2>/dev/null
check cache/same-config-hits "hits $h0 -> $(counter hits)" test "$(counter hits)" = $((h0 + 1))
cp key.conf moved.conf
VIGIL_CC_CONFIG=moved.conf "$VIGILCC" -O2 -g -c prog.c -o key3.o 2>/dev/null
check cache/path-not-in-key "the same contents at another path: hits $((h0 + 1)) -> $(counter hits)" \
    test "$(counter hits)" = $((h0 + 2))
printf '[skip]\nfun:loader\n' >key.conf
VIGIL_CC_CONFIG=key.conf "$VIGILCC" -O2 -g -c prog.c -o key4.o 2>/dev/null
check cache/changed-config-misses "misses $m0 -> $(counter misses), hits $(counter hits)" \
    test "$(counter misses)" = $((m0 + 1)) -a "$(counter hits)" = $((h0 + 2))
nm key4.o >key4.nm
check cache/changed-config-applies "the rebuilt object still instruments tiny, or loader" \
    bash -c 'grep -q " tiny\.vigil\.instr$" key4.nm && ! grep -qE " loader\.vigil\.(instr|xfer)$" key4.nm'

# ---- vigil observe ----
"$VIGIL" observe --out observed.conf -- ./full 2>observe.err >observe.out
rc=$?
check observe/runs "status $rc: $(oneline observe.err)" test $rc = 0 -a -s observed.conf
check observe/program-output "the program's output changed under observe" cmp -s observe.out plain.out
check observe/skips-tiny "observed.conf: $(oneline observed.conf 400)" \
    bash -c 'grep -qx "fun:tiny" observed.conf && grep -B1 -x "fun:tiny" observed.conf | grep -q "^# 1500000 calls, [0-9]* sites\?, no loop; prog.c:4"'
check observe/keeps-others "loader (a loop), helper_sum (called once) or main in [skip]" \
    bash -c '! sed -n "/^\[skip\]/,/^\[/p" observed.conf | grep -qE "^fun:(loader|main|helper_sum)$"'
if VIGIL_CC_CONFIG=observed.conf "$VIGILCC" -O2 -g prog.c helper.c -o observed 2>observed.err; then
    nm observed >observed.nm
    ./observed >observed.out 2>&1
    check observe/rebuild "the rebuild with the observed config instruments tiny, or not loader, or prints another output" \
        bash -c '! grep -qE " tiny\.vigil\.(instr|xfer)$" observed.nm && grep -q " loader\.vigil\.instr$" observed.nm && cmp -s observed.out plain.out'
else
    fail observe/rebuild "the observed config is rejected: $(oneline observed.err)"
fi
"$VIGIL" observe --min-calls 2e6 --out none.conf -- ./full 2>/dev/null >/dev/null
check observe/threshold "--min-calls 2e6: tiny (1500000 calls) is in [skip]" \
    bash -c '[ -s none.conf ] && ! sed -n "/^\[skip\]/,/^\[/p" none.conf | grep -q "^fun:"'
"$VIGIL" observe --out plain.conf -- ./plain >/dev/null 2>plainobs.err
rc=$?
check observe/not-vigil "a plain binary: status $rc: $(oneline plainobs.err)" \
    bash -c "[ $rc -ne 0 ] && grep -q 'no site table: build it with vigil-cc' plainobs.err && [ ! -e plain.conf ]"
"$VIGIL" observe --min-calls lots -- ./full >/dev/null 2>usage.err
rc=$?
check observe/usage "status $rc: $(oneline usage.err)" bash -c "[ $rc = 2 ] && grep -q 'expected a whole number' usage.err"

# Every function skipped: the program is linked with the runtime but has no site table, and
# `vigil sites` says so instead of "not built with vigil-cc".
printf '[skip]\nfun:*\n' >"$WORK/all.conf"
printf 'int main(void) { return 0; }\n' >"$WORK/allskip.c"
VIGIL_CC_CONFIG=$WORK/all.conf "$VIGILCC" -O2 -g "$WORK/allskip.c" -o "$WORK/allskip" 2>"$WORK/allskip.cc.err"
"$VIGIL" sites "$WORK/allskip" >/dev/null 2>"$WORK/allskip.err"
rc=$?
check sites/all-skipped "status $rc: $(oneline "$WORK/allskip.err")" \
    bash -c "[ $rc = 1 ] && grep -q 'linked with vigil.s runtime but no function of it is instrumented' '$WORK/allskip.err'"

# ---- [skip] mixed with instrumented code in programs that stress the host's behaviour ----
# About half of every program's functions skipped (callers and callees of both kinds, across
# units and shared libraries): tests/e2e's output and exit-status comparisons with plain clang
# must all hold. (Its checks of particular sites do not run under E2E_ONLY.)
printf '# about half of the functions\n[skip]\nfun:*[aeo]*[nrt]*\n' >"$WORK/half.conf"
while IFS= read -r line; do
    case "$line" in
        PASS\ *) pass "skip-mix/${line#PASS }" ;;
        FAIL\ *) line=${line#FAIL }; fail "skip-mix/${line%%:*}" "${line#*: }" ;;
    esac
done < <(VIGIL_CC_CONFIG=$WORK/half.conf E2E_OPT=-O2 E2E_MODES="adaptive full" \
    E2E_ONLY='^(setjmp_longjmp|fork_exec|threads|signals|signal_during_work|shlib_linked|dlopen_plugin|callbacks|recursion|multi_file|burst_calls|interposition|ctor_dtor|variadic|vla_alloca|struct_return)$' \
    bash "$ROOT/tests/e2e/run.sh" 2>"$WORK/e2e.err")

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
