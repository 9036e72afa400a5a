#!/usr/bin/env bash
# End-to-end tests of statistical debugging as users meet it (issue 35): `vigil run --label-by`
# (an oracle labels each run), crashes by abort()/assert as failure causes for the backward
# search, predicates of switch cases with the adaptive forward search, and the ranking's output.
# Programs are built with vigil-cc -O2 -g. Prints PASS/FAIL per check and "preds-users: N passed,
# N failed"; exits 0/1.
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
VIGIL=$REPO/build/bin/vigil
VIGILCC=$REPO/build/bin/vigil-cc
T=$(mktemp -d /tmp/vigil-preds-users.XXXXXX)
trap 'rm -rf "$T"' EXIT
passed=0 failed=0
pass() { echo "PASS preds-users: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL preds-users: $*"; failed=$((failed + 1)); }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
finish() { echo "preds-users: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }
json_field() {   # file field: the first occurrence of "field": value in pretty JSON
    sed -n "s/^ *\"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$1" | head -1
}
top_of() {   # db: "tu_hash site_index predicate" of its top predictor
    "$VIGIL" rank --db "$1" --top 1 --json 2>/dev/null |
        awk -F'"' '/"tu_hash"/ {h=$4} /"site_index"/ {gsub(/[^0-9]/, "", $3); s=$3} /"predicate"/ {p=$4} END {print h, s, p}'
}
# Complete counts (preds.collect=all) of BINARY on each input DIR/in* (its stdin), reports in
# $T/NAME, ingested into $T/NAME.db. usage: collect_all BINARY DIR NAME
collect_all() {
    local bin=$1 dir=$2 name=$3 f
    for f in "$dir"/in*; do
        (VIGIL_OPTIONS="tools=preds:preds.collect=all:mode=off:out=$T/$name" "$bin" <"$f" >/dev/null 2>&1)
    done
    "$VIGIL" ingest --quiet --db "$T/$name.db" "$T/$name" >/dev/null 2>&1
}
# The adaptive forward search from an empty store $T/NAME.db: `vigil plan`, each input DIR/in*
# run under the plan, ingest; again until the top predictor is WANT, the search is complete or
# ROUNDS rounds have run. Sets found (1: WANT reached) and it (the rounds run); vigil plan's
# output is in $T/NAME.plan.out. usage: forward_search BINARY DIR NAME ROUNDS WANT
forward_search() {
    local bin=$1 dir=$2 name=$3 rounds=$4 want=$5 f
    "$VIGIL" plan --db "$T/$name.db" --state "$T/$name.state" "$bin" -o "$T/$name.vplan" >"$T/$name.plan.out" 2>&1
    found=0 it=0
    while [ "$it" -lt "$rounds" ]; do
        it=$((it + 1))
        for f in "$dir"/in*; do
            (VIGIL_PLAN=$T/$name.vplan VIGIL_OPTIONS="tools=preds:mode=off:out=$T/$name$it" "$bin" <"$f" >/dev/null 2>&1)
        done
        "$VIGIL" ingest --quiet --db "$T/$name.db" "$T/$name$it" >/dev/null 2>&1
        [ "$(top_of "$T/$name.db")" = "$want" ] && found=1 && break
        "$VIGIL" plan --db "$T/$name.db" --state "$T/$name.state" "$bin" -o "$T/$name.vplan" >>"$T/$name.plan.out" 2>&1 || break
        grep -q 'search complete' "$T/$name.plan.out" && break
    done
}

# ---- vigil run --label-by CMD ----
cat >"$T/echo.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
/* Prints N lines; exits 3 when N is 7, dies of SIGSEGV's default action when N is 9. */
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 0;
    for (int i = 0; i < n; i++)
        printf("line %d of a long enough output to pass the pipe buffer several times\n", i);
    fflush(stdout);
    if (n == 9)
        raise(SIGSEGV);
    return n == 7 ? 3 : 0;
}
C
if ! "$VIGILCC" -O2 -g "$T/echo.c" -o "$T/echo" 2>"$T/cc.err"; then
    fail "vigil-cc builds echo.c: $(head -3 "$T/cc.err")"; finish
fi
"$T/echo" 5000 >"$T/plain.out"
"$VIGIL" run --tool preds --out "$T/lb" --label-by 'grep -q "line 4999 "' -- "$T/echo" 5000 >"$T/lb.out" 2>"$T/lb.err"
rc=$?
check "--label-by: the program's stdout reaches the user unchanged (5000 lines)" cmp -s "$T/plain.out" "$T/lb.out"
check "--label-by: vigil run exits with the program's status ($rc)" test "$rc" -eq 0
check "--label-by: oracle exit 0 writes label success" grep -qx 'label success' "$T"/lb/echo.*/label.txt
check "--label-by: the summary shows the label" grep -q 'label       success' "$T/lb.err"
rm -rf "$T/lb"
"$VIGIL" run --tool preds --out "$T/lb" --label-by 'grep -q "line 10 "' -- "$T/echo" 5 >/dev/null 2>"$T/lb.err"
check "--label-by: oracle exit 1 labels a run that exited 0 a failure" grep -qx 'label failure' "$T"/lb/echo.*/label.txt
"$VIGIL" ingest --quiet --db "$T/lb.db" "$T/lb" 2>/dev/null
"$VIGIL" rank --db "$T/lb.db" --json --top 1 >"$T/lb.json" 2>/dev/null
check "--label-by: vigil ingest reads the label (1 failing run)" test "$(json_field "$T/lb.json" failing_runs)" = 1
rm -rf "$T/lb"
"$VIGIL" run --tool preds --out "$T/lb" --label-by 'cat >/dev/null; echo "status=$VIGIL_EXIT_STATUS signal=${VIGIL_SIGNAL-unset}" >'"$T"'/env.txt; test -f "$VIGIL_RUN_DIR/run.txt"' \
    -- "$T/echo" 7 >/dev/null 2>"$T/lb.err"
rc=$?
check "--label-by: the oracle sees VIGIL_EXIT_STATUS=3, no VIGIL_SIGNAL ($(cat "$T/env.txt" 2>/dev/null))" \
    grep -qx 'status=3 signal=unset' "$T/env.txt"
check "--label-by: ... and VIGIL_RUN_DIR holding run.txt; vigil run still exits 3 ($rc)" \
    sh -c "grep -qx 'label success' $T/lb/echo.*/label.txt && test $rc -eq 3"
rm -rf "$T/lb"
"$VIGIL" run --tool preds --out "$T/lb" --label-by 'echo "status=$VIGIL_EXIT_STATUS signal=${VIGIL_SIGNAL-unset}" >'"$T"'/env.txt; exit 1' \
    -- "$T/echo" 9 >/dev/null 2>"$T/lb.err"
rc=$?
check "--label-by: a killed program: VIGIL_EXIT_STATUS=139 VIGIL_SIGNAL=11 ($(cat "$T/env.txt" 2>/dev/null)), exit $rc" \
    sh -c "grep -qx 'status=139 signal=11' $T/env.txt && test $rc -eq 139"
"$VIGIL" run --label-by '' -- "$T/echo" 1 >/dev/null 2>"$T/lb.err"
check "--label-by with an empty command is a usage error" grep -q 'label-by expects' "$T/lb.err"
out=$("$VIGIL" run --out "$T/lb2" --label-by 'true' -- "$T/echo" 20000 2>/dev/null | head -1)
check "--label-by: a reader that stops early (| head) gets its line and vigil run ends" test "$out" = "line 0 of a long enough output to pass the pipe buffer several times"

# ---- crashes by abort() and assert: a crash site, so that the backward search has a cause ----
cat >"$T/stack.c" <<'C'
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
/* A bounded stack fed by the digits of argv[1]: '+' pushes, '-' pops; overflow aborts. */
static int items[8], depth;
static void push(int v)
{
    if (depth >= 8) {
        fprintf(stderr, "stack overflow\n");
        abort();                                   /* ABORT-SITE */
    }
    items[depth++] = v;
}
static int pop(void)
{
    assert(depth > 0);                             /* ASSERT-SITE */
    return items[--depth];
}
int main(int argc, char **argv)
{
    long sum = 0;
    for (const char *p = argc > 1 ? argv[1] : ""; *p; p++) {
        if (*p == '+')
            push((int)(p - argv[1]));
        else if (*p == '-')
            sum += pop();
    }
    printf("%ld\n", sum);
    return 0;
}
C
ABORT_LINE=$(grep -n 'ABORT-SITE' "$T/stack.c" | cut -d: -f1)
ASSERT_LINE=$(grep -n 'ASSERT-SITE' "$T/stack.c" | cut -d: -f1)
if ! VIGIL_CC_PRED_COUNTERS=1 "$VIGILCC" -O2 -g "$T/stack.c" -o "$T/stack" 2>"$T/cc.err"; then
    fail "vigil-cc builds stack.c: $(head -3 "$T/cc.err")"; finish
fi
"$VIGIL" run --out "$T/ab" -- "$T/stack" '+++++++++' >/dev/null 2>"$T/ab.err"
check "abort(): vigil run shows the crash at the abort call, stack.c:$ABORT_LINE" \
    grep -q "crash       SIGABRT at .*stack.c:$ABORT_LINE " "$T/ab.err"
"$VIGIL" run --out "$T/ab" -- "$T/stack" '+--' >/dev/null 2>"$T/ab.err"
check "assert(): vigil run shows the crash at the assertion, stack.c:$ASSERT_LINE" \
    grep -q "crash       SIGABRT at .*stack.c:$ASSERT_LINE " "$T/ab.err"
check "assert(): the C library's assertion message still reaches stderr" grep -q "Assertion .depth > 0. failed" "$T/ab.err"
printf 'vigil-plan 1\nend\n' >"$T/empty.vplan"
for i in $(seq 1 40); do   # overflows when the pushes outrun the pops by 9
    pat=$(awk -v s="$i" 'BEGIN { srand(s); n = 6 + int(rand() * 10); for (k = 0; k < n; k++) printf "%s", (rand() < 0.75 ? "+" : "-") }' | tr -d '\n')
    case $pat in -*) pat="+$pat" ;; esac
    (VIGIL_PLAN=$T/empty.vplan VIGIL_OPTIONS="tools=preds:mode=off:out=$T/abpool" "$T/stack" "$pat" >/dev/null 2>&1) 2>/dev/null
done 2>/dev/null   # no "Aborted" lines from the shell
"$VIGIL" ingest --quiet --db "$T/ab.db" "$T/abpool" >/dev/null 2>&1
"$VIGIL" plan --db "$T/ab.db" --direction backward --state "$T/ab.state" "$T/stack" -o "$T/ab.vplan" >"$T/abplan.out" 2>&1
check "abort(): vigil plan --direction backward starts from the abort ($(head -1 "$T/abplan.out"))" \
    grep -q "signal 6 in .* at .*stack.c:\($ABORT_LINE\|$ASSERT_LINE\)" "$T/abplan.out"
# failures by exit status only: no crash site, and the message says what is missing
"$VIGIL" run --out "$T/ex" --tool preds -- "$T/echo" 7 >/dev/null 2>&1
"$VIGIL" ingest --quiet --db "$T/ex.db" "$T/ex" >/dev/null 2>&1
"$VIGIL" plan --db "$T/ex.db" --direction backward --state "$T/ex.state" "$T/echo" -o "$T/ex.vplan" >"$T/explan.out" 2>&1
check "backward search without crash sites: the error says which runs lack what ($(head -c 160 "$T/explan.out"))" \
    grep -q "none of its 1 failing runs (of 1) has a crash site" "$T/explan.out"

# ---- switch statements: case predicates, ranked, and reached by the adaptive forward search ----
SRC=$REPO/tools/preds/tests/fields.c
BUG_LINE=$(grep -n 'SEEDED-BUG' "$SRC" | cut -d: -f1)
if ! VIGIL_CC_PRED_COUNTERS=1 "$VIGILCC" -O2 -g "$SRC" -o "$T/fields" 2>"$T/cc.err"; then
    fail "vigil-cc builds fields.c: $(head -3 "$T/cc.err")"; finish
fi
ncase=$("$VIGIL" sites "$T/fields" | awk '$2 == "case"' | wc -l)
check "switch: fields.c -O2 has case sites, one per successor of its switch ($ncase)" test "$ncase" -ge 6
bash "$(dirname "$0")/fields-inputs.sh" 150 "$T/fin"
collect_all "$T/fields" "$T/fin" fall
"$VIGIL" rank --db "$T/fall.db" --top 10 >"$T/frank.txt" 2>&1
check "switch: complete counts rank the branch in the buggy case first (fields.c:$BUG_LINE)" \
    sh -c "sed -n 3p $T/frank.txt | grep -q 'fields.c:$BUG_LINE'"
check "switch: the case leading to it is counted (\"case taken\" at fields.c:$BUG_LINE)" \
    grep -q "case taken .*fields.c:$BUG_LINE" "$T/frank.txt"
want=$(top_of "$T/fall.db")
forward_search "$T/fields" "$T/fin" fa 8 "$want"
check "switch: the adaptive forward search reaches the complete run's top predictor ($want) in $it rounds ($(tail -1 "$T/fa.plan.out" | sed 's/.*; //'))" \
    test $found = 1

# ---- forward search: past an assertion that always holds, into a qsort callback ----
cat >"$T/sortck.c" <<'C'
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
static int seen13;
static int by_value(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    if (x == 13)   /* SEEDED-BUG: a "lucky number" the comparator keeps count of */
        seen13++;
    return (x > y) - (x < y);
}
int main(void)
{
    int v[64], n = 0;
    while (n < 64 && scanf("%d", &v[n]) == 1)
        n++;
    assert(n <= 64);
    if (n > 1)
        qsort(v, (size_t)n, sizeof *v, by_value);
    for (int i = 0; i < n; i++)
        printf("%d\n", v[i]);
    return seen13 > 0;
}
C
CB_LINE=$(grep -n 'SEEDED-BUG' "$T/sortck.c" | cut -d: -f1)
VIGIL_CC_PRED_COUNTERS=1 "$VIGILCC" -O2 -g "$T/sortck.c" -o "$T/sortck" 2>"$T/cc.err" || fail "vigil-cc builds sortck.c: $(head -2 "$T/cc.err")"
check "callbacks: the block that hands by_value to qsort calls it in the control-flow facts" \
    sh -c "'$VIGIL' sites --cfg '$T/sortck' | grep -q 'call in [0-9]* -> by_value'"
mkdir -p "$T/sin"
awk 'BEGIN { srand(3505); for (i = 0; i < 80; i++) { f = sprintf("'"$T"'/sin/in%02d", i); n = 2 + int(rand() * 12)
    for (k = 0; k < n; k++) print int(rand() * 40) > f; close(f) } }'
collect_all "$T/sortck" "$T/sin" sall
"$VIGIL" rank --db "$T/sall.db" --top 1 >"$T/srank.txt" 2>&1
check "callbacks: complete counts rank the comparator's branch first (sortck.c:$CB_LINE)" grep -q "sortck.c:$CB_LINE" "$T/srank.txt"
want=$(top_of "$T/sall.db")
forward_search "$T/sortck" "$T/sin" sp 6 "$want"
check "gates and callbacks: the forward search passes the assertion and the loop every run enters, and reaches the comparator's predictor ($want) in $it rounds ($(tail -1 "$T/sp.plan.out" | sed 's/.*; //'))" \
    sh -c "test -n '${want// /}' && test $found = 1"
check "gates: vigil plan says it explored a predicate every run took" grep -q 'gate (true in every run' "$T/sp.plan.out"

# ---- forward search: one gate a round, with the score of the region that planned it ----
cat >"$T/gates.c" <<'C'
#include <stdio.h>
__attribute__((noinline)) static void note(const char *s, int v) { printf("%s %d\n", s, v); }
int main(void)
{
    int v = -1, n = scanf("%d", &v);
    if (n == 1) {              /* a gate: every input has a number */
        note("read", v);       /* (a block of its own: not merged into the test below) */
        if (v % 7 == 3)        /* REGION-A */
            note("a", v);
    }
    if (v < 1000) {            /* a gate: no input is that large */
        note("small", v);
        if (v % 5 == 1)        /* REGION-B */
            note("b", v);
    }
    if (v > 80) {              /* the best predicate: true in every failing run */
        note("big", v);
        return 1;
    }
    return 0;
}
C
VIGIL_CC_PRED_COUNTERS=1 "$VIGILCC" -O2 -g "$T/gates.c" -o "$T/gates" 2>"$T/cc.err" || fail "vigil-cc builds gates.c: $(head -2 "$T/cc.err")"
mkdir -p "$T/gin"
for v in $(seq 0 2 119); do echo "$v" >"$T/gin/in$v"; done
ga_site=$("$VIGIL" sites "$T/gates" | awk -v l="gates.c:$(grep -n 'REGION-A' "$T/gates.c" | cut -d: -f1):" '$2 == "branch" && index($4, l) {print $1; exit}')
gb_site=$("$VIGIL" sites "$T/gates" | awk -v l="gates.c:$(grep -n 'REGION-B' "$T/gates.c" | cut -d: -f1):" '$2 == "branch" && index($4, l) {print $1; exit}')
"$VIGIL" plan --db "$T/g.db" --state "$T/g.state" "$T/gates" -o "$T/g.vplan" >"$T/g.plan.out" 2>&1
for r in 1 2; do
    for f in "$T"/gin/in*; do
        (VIGIL_PLAN=$T/g.vplan VIGIL_OPTIONS="tools=preds:mode=off:out=$T/g$r" "$T/gates" <"$f" >/dev/null 2>&1)
    done
    "$VIGIL" ingest --quiet --db "$T/g.db" "$T/g$r" >/dev/null 2>&1
    "$VIGIL" plan --db "$T/g.db" --state "$T/g.state" "$T/gates" -o "$T/g.vplan" >>"$T/g.plan.out" 2>&1
    cp "$T/g.state" "$T/g.state$((r + 1))"
done
planned() { grep -c "^planned [0-9a-f]* $1\$" "$2"; }
check "gates: the two regions behind gates are not in the initial set (sites ${ga_site:-none}, ${gb_site:-none})" \
    sh -c "test -n '$ga_site' && test -n '$gb_site' && ! grep -q '^monitored [0-9a-f]* \($ga_site\|$gb_site\)\$' '$T/g.state2'"
check "gates: round 2 plans the region behind one gate only, beside the best predicate ($(sed -n 2p "$T/g.plan.out"))" \
    test "$(( $(planned "$ga_site" "$T/g.state2") + $(planned "$gb_site" "$T/g.state2") ))" = 1
check "gates: round 3 plans the region behind the other gate ($(sed -n 3p "$T/g.plan.out"))" \
    test "$(( $(planned "$ga_site" "$T/g.state3") + $(planned "$gb_site" "$T/g.state3") ))" = 1
check "gates: vigil plan names the gate it explored" grep -q 'gate (true in every run: branch true at .*gates.c' "$T/g.plan.out"

# ---- forward search: an indirect call leads to every address-taken function ----
cat >"$T/indirect.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) static int twice(int v) { return v > 100 ? -1 : 2 * v; }   /* TWICE-LINE */
__attribute__((noinline)) static int half(int v) { return v / 2; }
int (*ops[])(int) = {twice, half};
int main(int argc, char **argv)
{
    int v = argc > 1 ? atoi(argv[1]) : 0;
    v = ops[v & 1](v);
    printf("%d\n", v);
    return 0;
}
C
TW_LINE=$(grep -n 'TWICE-LINE' "$T/indirect.c" | cut -d: -f1)
VIGIL_CC_PRED_COUNTERS=1 "$VIGILCC" -O2 -g "$T/indirect.c" -o "$T/indirect" 2>"$T/cc.err" || fail "vigil-cc builds indirect.c: $(head -2 "$T/cc.err")"
tw_site=$("$VIGIL" sites "$T/indirect" | awk -v l="indirect.c:$TW_LINE:" '$2 == "branch" && $3 == "twice" && index($4, l) {print $1; exit}')
"$VIGIL" plan --db "$T/ind.db" --state "$T/ind.state" "$T/indirect" -o "$T/ind.vplan" >/dev/null 2>&1
check "indirect calls: main's entry region brings in the address-taken twice() (site ${tw_site:-none} planned)" \
    sh -c "test -n '$tw_site' && grep -q '^planned [0-9a-f]* $tw_site\$' '$T/ind.state'"

# ---- conditions with no edge: a select's, a comparison used as a number ----
cat >"$T/edgeless.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
static int sign_skip(const char *s) { return s[0] == '-'; }   /* VALUE-LINE */
int main(int argc, char **argv)
{
    long best = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        long v = atol(s + sign_skip(s));
        best = v > best + 1 ? v : best;   /* SELECT-LINE: a maximum one above the last is missed */
    }
    printf("%ld\n", best);
    return 0;
}
C
SEL_LINE=$(grep -n 'SELECT-LINE' "$T/edgeless.c" | cut -d: -f1)
VAL_LINE=$(grep -n 'VALUE-LINE' "$T/edgeless.c" | cut -d: -f1)
VIGIL_CC_PRED_COUNTERS=1 "$VIGILCC" -O2 -g "$T/edgeless.c" -o "$T/edgeless" 2>"$T/cc.err" || fail "vigil-cc builds edgeless.c: $(head -2 "$T/cc.err")"
"$VIGIL" sites "$T/edgeless" >"$T/esites.txt" 2>&1
check "edgeless: the select at edgeless.c:$SEL_LINE is a branch site (\"select\")" \
    grep -q "branch .*edgeless.c:$SEL_LINE:.*select" "$T/esites.txt"
check "edgeless: the comparison used as a number at edgeless.c:$VAL_LINE is a branch site (\"value\")" \
    grep -q "branch .*edgeless.c:$VAL_LINE:.*value" "$T/esites.txt"
mkdir -p "$T/eall"
n=0
for args in "3 1 2" "1 2 3" "5 5 6" "4 9" "2 3" "7 8 1" "-3 2" "9 1" "1 1 1" "6 2 4" "0 1" "3 4 5" "8 9 10" "2 -1" "5 1 3" "1 3 2"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    got=$(VIGIL_OPTIONS="tools=preds:preds.collect=all:mode=off:out=$T/erun" "$T/edgeless" $args 2>/dev/null)
    want=$(printf '%s\n' 0 $args | tr -d - | sort -n | tail -1)   # the largest magnitude
    mv "$T"/erun/* "$T/eall/r$n" && rmdir "$T/erun"
    printf 'vigil-feedback 1\nlabel %s\nend\n' "$([ "$got" = "$want" ] && echo success || echo failure)" >"$T/eall/r$n/label.txt"
done
"$VIGIL" ingest --quiet --db "$T/eall.db" "$T/eall" >/dev/null 2>&1
"$VIGIL" rank --db "$T/eall.db" --top 3 >"$T/erank.txt" 2>&1
check "edgeless: complete counts rank the select's predicate first (edgeless.c:$SEL_LINE; $(sed -n 3p "$T/erank.txt" | tr -s ' ' | cut -c1-80))" \
    sh -c "sed -n 3p '$T/erank.txt' | grep -q 'edgeless.c:$SEL_LINE:'"

# ---- ranking: ties in a fixed order and shown, the t-test unsaturated, zero scores hidden ----
cat >"$T/ties.c" <<'C'
#include <stdlib.h>
static volatile int sink;
__attribute__((noinline)) static int check_a(int v) { if (v > 5) { sink++; return 1; } return 0; }
__attribute__((noinline)) static int check_b(int v) { if (v > 5) { sink += 2; return 1; } return 0; }
int main(int argc, char **argv) { int v = argc > 1 ? atoi(argv[1]) : 0; return check_a(v) + check_b(v) == 2; }
C
VIGIL_CC_PRED_COUNTERS=1 "$VIGILCC" -O2 -g "$T/ties.c" -o "$T/ties" 2>"$T/cc.err" || fail "vigil-cc builds ties.c: $(head -2 "$T/cc.err")"
for v in $(seq 0 11) $(seq 0 11); do
    (VIGIL_OPTIONS="tools=preds:preds.collect=all:mode=off:out=$T/tall" "$T/ties" "$v" >/dev/null 2>&1)
done
"$VIGIL" ingest --quiet --db "$T/ties.db" "$T/tall" >/dev/null 2>&1
"$VIGIL" rank --db "$T/ties.db" --top 20 >"$T/ties1.txt" 2>&1
"$VIGIL" rank --db "$T/ties.db" --top 20 >"$T/ties2.txt" 2>&1
check "ranking: tied scores are marked (\"1=\") and explained" \
    sh -c "grep -q '^ *1= ' $T/ties1.txt && grep -q '^=: same score' $T/ties1.txt"
check "ranking: the order of ties is the same on every run" cmp -s "$T/ties1.txt" "$T/ties2.txt"
lines=$(awk '$1 ~ /=$/ { n = split($0, f, "ties.c:"); split(f[2], l, ":"); print l[1] }' "$T/ties1.txt" | tr '\n' ' ')
check "ranking: tied rows follow source order (lines $lines)" \
    sh -c "test -n '$lines' && echo '$lines' | tr ' ' '\n' | sed '/^$/d' | sort -n -c"
check "ranking: the source text of the predicate is shown" grep -q 'if (v > 5)' "$T/ties1.txt"
"$VIGIL" rank --db "$T/ties.db" --top 50 --all >"$T/tiesall.txt" 2>&1
shown=$(grep -c 'ties.c:' "$T/ties1.txt"); all=$(grep -c 'ties.c:' "$T/tiesall.txt")
check "ranking: rows scored 0 are hidden by default ($shown shown), --all shows them ($all)" \
    sh -c "test $shown -gt 0 && test $all -gt $shown && grep -q 'not shown (--all shows them)' $T/ties1.txt"
"$VIGIL" rank --db "$T/fall.db" --by ttest --top 3 --json >"$T/tt.json" 2>&1
tt=$(json_field "$T/tt.json" ttest)
check "ranking: the t-test score of a perfect predictor does not saturate at 1 ($tt)" \
    awk -v t="$tt" 'BEGIN { exit !(t + 0 > 5) }'
for v in 1 2 3; do
    "$VIGIL" run --tool preds --out "$T/allfail" --label-by 'false' -- "$T/echo" "$v" >/dev/null 2>&1
done
"$VIGIL" ingest --quiet --db "$T/allfail.db" "$T/allfail" >/dev/null 2>&1
"$VIGIL" rank --db "$T/allfail.db" >"$T/allfail.txt" 2>&1
check "ranking: \"no predictor found\" when no predicate has a positive score ($(tail -1 "$T/allfail.txt"))" \
    grep -q '^no predictor found: no predicate has a positive importance score' "$T/allfail.txt"

finish
