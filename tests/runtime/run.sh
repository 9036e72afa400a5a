#!/usr/bin/env bash
# Runtime tests without vigil-cc: tests/runtime/rt_abi.c plays the compiler's part (a
# hand-made module and dispatch checks of the shape in common/abi.h), linked with
# build/lib/libvigil.a (whole archive) and with build/lib/libvigil.so; each scenario's exit
# status, stderr and run report (read back with the reader, tests/runtime/rt_report.c) are
# checked. Prints "PASS name" / "FAIL name: reason"; exit 1 if any failed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CC=${HOSTCC:-clang}
W=$(mktemp -d /tmp/vigil-rt.XXXXXX)
trap 'rm -rf "$W"' EXIT
ulimit -c 0
passed=0 failed=0
pass() { echo "PASS runtime/$1"; passed=$((passed + 1)); }
fail() { echo "FAIL runtime/$1: $2"; failed=$((failed + 1)); }

CFLAGS="-std=gnu11 -g -O1 -fno-omit-frame-pointer -D_GNU_SOURCE -I$ROOT/common -I$ROOT/include"
$CC $CFLAGS "$ROOT/tests/runtime/rt_report.c" "$ROOT"/common/*.c -o "$W/rt_report" -lm || { fail build "rt_report"; exit 1; }
$CC $CFLAGS "$ROOT/tests/runtime/rt_abi.c" -o "$W/rt_abi_static" \
    -Wl,--whole-archive "$ROOT/build/lib/libvigil.a" -Wl,--no-whole-archive "$ROOT/build/lib/libvigil_common.a" -ldl -lpthread -lm \
    || { fail build "rt_abi with libvigil.a"; exit 1; }
$CC $CFLAGS "$ROOT/tests/runtime/rt_abi.c" -o "$W/rt_abi_shared" \
    -L"$ROOT/build/lib" -lvigil -Wl,-rpath,"$ROOT/build/lib" -lpthread \
    || { fail build "rt_abi with libvigil.so"; exit 1; }

# Resets of the hot back-edge over 20,000,000 executions: the entry's burst (100), then cycles
# of nCheck0 + 1 + 100 executions: 9 x 101 (100%), 90 x 1001 (10%), 900 x 10001 (1%), and 110
# cycles of 100001 started at 0.1%: 9 + 90 + 900 + 110 = 1109.
# run NAME BINARY ENV_OPTIONS ARGS...: runs in a fresh directory $W/NAME; sets $status, $dir,
# $facts (rt_report output of the single report, or of the one whose pid is $want_pid).
run() {
    local name=$1 bin=$2 opts=$3
    shift 3
    dir=$W/$name
    mkdir -p "$dir"
    (cd "$dir" && VIGIL_OPTIONS=$opts timeout 60 "$W/$bin" "$@" >"$dir/stdout" 2>"$dir/stderr")
    status=$?
    facts=""
    local reports=("$dir"/vigil-out/rt_abi_*.*)
    [ -d "${reports[0]}" ] && facts=$("$W/rt_report" "${reports[0]}")
}
has() { grep -qxF -- "$2" <<<"$1"; }
nreports() { find "$dir/vigil-out" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }

for bin in rt_abi_static rt_abi_shared; do
    tag=${bin#rt_abi_}

    # ninstr=100, as in the seed's example; the floor run below has the default burst length.
    run basic-$tag $bin "tools=count:ninstr=100"
    why=""
    [ "$status" = 3 ] || why+="exit status $status, expected 3; "
    has "$facts" "exit 3" || why+="no 'exit 3' in the report; "
    has "$facts" "site 0 1 backedge 1000000 190 0.01" || why+="hot back-edge not 1000000 execs, 190 bursts, rate 1%; "
    has "$facts" "site 0 0 entry 1 1 1" || why+="hot entry not 1 exec at 100%; "
    has "$facts" "site 0 2 entry 6 1 1" || why+="rare entry not 6 execs at 100% (atexit handler before the report?); "
    has "$facts" "tools count" || why+="tools line; "
    grep -qx "load 19100" "$dir"/vigil-out/*/count.txt 2>/dev/null || why+="count.txt load != 19100; "
    # one realloc: its free and its allocation are flagged as the realloc's, nothing else is
    for k in "realloc_free 1" "realloc_alloc 1"; do
        grep -qx "$k" "$dir"/vigil-out/*/count.txt 2>/dev/null || why+="no '$k' in count.txt; "
    done
    [ "$(nreports)" = 1 ] || why+="$(nreports) entries in vigil-out, expected 1 (leftover tmp?); "
    [ ! -s "$dir/stderr" ] || why+="stderr not empty: $(head -c 200 "$dir/stderr"); "
    [ -z "$why" ] && pass "basic ($tag)" || fail "basic ($tag)" "$why"

    # No tool asks for a burst length: nInstr0 = 10. The back-edge's warm-up is 10 + 90 + 900
    # bursts over 100 + 9,000 + 900,000 executions (the first 9 inside the entry's burst), then
    # one burst per 10,000: 2,908 in all.
    run floor-$tag $bin "" basic 20000000
    has "$facts" "site 0 1 backedge 20000000 2908 0.001" && has "$facts" "option ninstr 10" \
        && pass "hot loop reaches the 0.1% floor ($tag)" \
        || fail "hot loop reaches the 0.1% floor ($tag)" "$(grep 'backedge\|ninstr' <<<"$facts")"

    # A tool's request (preds: 100) sets the burst length; the user's ninstr= overrides it.
    run preds-burst-$tag $bin "tools=preds"
    why=""
    has "$facts" "option ninstr 100" || why+="tools=preds: $(grep ninstr <<<"$facts"); "
    has "$facts" "site 0 1 backedge 1000000 190 0.01" || why+="tools=preds: $(grep backedge <<<"$facts"); "
    run preds-burst-user-$tag $bin "tools=preds:ninstr=7"
    has "$facts" "option ninstr 7" || why+="tools=preds:ninstr=7: $(grep ninstr <<<"$facts"); "
    [ -z "$why" ] && pass "burst length: a tool's request, the user's setting first ($tag)" \
        || fail "burst length: a tool's request, the user's setting first ($tag)" "$why"

    # Asked for nothing (no VIGIL_OPTIONS, no VIGIL_PLAN): the program leaves no files behind.
    # An empty VIGIL_OPTIONS (the floor run above) still asks for the report.
    dir=$W/unasked-$tag
    mkdir -p "$dir"
    (cd "$dir" && env -u VIGIL_OPTIONS -u VIGIL_PLAN timeout 60 "$W/$bin" >"$dir/stdout" 2>"$dir/stderr")
    status=$?
    if [ "$status" = 3 ] && [ -z "$(ls -A "$dir" | grep -v '^std')" ] && [ ! -s "$dir/stderr" ]; then
        pass "no VIGIL_OPTIONS: no report, no files ($tag)"
    else fail "no VIGIL_OPTIONS: no report, no files ($tag)" "status $status, files: $(ls -A "$dir" | tr '\n' ' ')"; fi

    run off-$tag $bin "mode=off:tools=count"
    why=""
    has "$facts" "site 0 1 backedge 1000000 0 0" || why+="back-edge: $(grep backedge <<<"$facts"); "
    grep -qx "load 0" "$dir"/vigil-out/*/count.txt 2>/dev/null || why+="probes ran in mode off; "
    [ -z "$why" ] && pass "mode off ($tag)" || fail "mode off ($tag)" "$why"

    run full-$tag $bin "mode=full:tools=count"
    why=""
    has "$facts" "site 0 1 backedge 1000000 0 1" || why+="back-edge: $(grep backedge <<<"$facts"); "
    grep -qx "load 1000000" "$dir"/vigil-out/*/count.txt 2>/dev/null || why+="not every iteration probed: $(grep load "$dir"/vigil-out/*/count.txt); "
    [ -z "$why" ] && pass "mode full ($tag)" || fail "mode full ($tag)" "$why"

    run bursty-$tag $bin "mode=bursty:bursty_rate=0.01:ninstr=100"
    has "$facts" "site 0 1 backedge 1000000 100 0.01" && pass "mode bursty ($tag)" \
        || fail "mode bursty ($tag)" "$(grep backedge <<<"$facts")"

    run threads-$tag $bin "tools=count" threads
    why=""
    [ "$status" = 0 ] || why+="exit status $status; "
    c=$(cat "$dir"/vigil-out/*/count.txt 2>/dev/null)
    for k in "thread_start 4" "thread_exit 4" "thread_join 4"; do has "$c" "$k" || why+="no '$k'; "; done
    locks=$(sed -n 's/^lock //p' <<<"$c") unlocks=$(sed -n 's/^unlock //p' <<<"$c")
    [ -n "$locks" ] && [ "$locks" = "$unlocks" ] && [ "$locks" -ge 17 ] || why+="lock $locks unlock $unlocks; "
    # Countdowns per thread (common/abi.h, ABI 7): 4 x 100000 iterations ran, each thread's
    # counted exactly; only executions in bursts are counted by a plain increment of the shared
    # site state, which two threads bursting at once may lose (1% margin).
    execs=$(awk '$1=="site" && $4=="backedge" {print $5}' <<<"$facts")
    [ "${execs:-0}" -ge 396000 ] && [ "${execs:-0}" -le 400000 ] || why+="back-edge execs $execs, expected 396000..400000; "
    [ -z "$why" ] && pass "threads and locks ($tag)" || fail "threads and locks ($tag)" "$why"

    # ninstr=100: the child is forked inside its parent's burst and its rare site runs in it.
    run fork-$tag $bin "ninstr=100" fork
    why=""
    [ "$status" = 0 ] || why+="exit status $status; "
    [ "$(nreports)" = 2 ] || why+="$(nreports) reports, expected 2; "
    child=""
    for r in "$dir"/vigil-out/*; do
        f=$("$W/rt_report" "$r") || why+="invalid report $r: $f; "
        has "$f" "exit 5" && child=$f
    done
    if [ -n "$child" ]; then
        has "$child" "site 0 2 entry 2 0 1" || why+="child's rare site: $(grep 'site' <<<"$child" | tr '\n' ' '); "
        grep -q "backedge" <<<"$child" && why+="child reports the parent's loop; "
    else
        why+="no child report with exit 5; "
    fi
    [ -z "$why" ] && pass "fork: child report of its own ($tag)" || fail "fork: child report of its own ($tag)" "$why"

    run segv-$tag $bin "" segv
    [ "$status" = 139 ] && has "$facts" "signal 11" && has "$facts" "site 0 2 entry 1 1 1" \
        && pass "SIGSEGV: report, status unchanged ($tag)" \
        || fail "SIGSEGV: report, status unchanged ($tag)" "status $status; $(head -1 <<<"$facts")"

    run _exit-$tag $bin "" _exit
    [ "$status" = 7 ] && has "$facts" "exit 7" && pass "_exit ($tag)" || fail "_exit ($tag)" "status $status; $(head -1 <<<"$facts")"

    run flush-$tag $bin "" flush
    [ "$status" = 0 ] && [ "$(nreports)" = 1 ] && has "$facts" "site 0 2 entry 2 1 1" && grep -qx "flush 0" "$dir/stdout" \
        && pass "vigil_flush_report then exit ($tag)" \
        || fail "vigil_flush_report then exit ($tag)" "status $status, $(nreports) reports, $(grep site <<<"$facts" | tr '\n' ' ')"

    RT_LAZY=1 run lazy-$tag $bin "" lazy
    has "$facts" "module 0 0000000000abcdef 1 0" && has "$facts" "site 0 0 entry 2 1 1" \
        && pass "lazy registration from a dispatch check ($tag)" \
        || fail "lazy registration from a dispatch check ($tag)" "$(grep -E 'module|site' <<<"$facts" | tr '\n' ' ')"

    # A module met first through its probes: registered then, its accesses and predicates
    # counted, its table in the report.
    run probe-first-$tag $bin "mode=full:tools=count" probe-first
    why=""
    [ "$status" = 0 ] || why+="exit status $status; "
    grep -qx "registered 1" "$dir/stdout" || why+="module not registered: $(cat "$dir/stdout"); "
    has "$facts" "module 1 0000000000005eed 6 8" || why+="no module line for it: $(grep module <<<"$facts" | tr '\n' ' '); "
    c=$(cat "$dir"/vigil-out/*/count.txt 2>/dev/null)
    for k in "load 3" "store 3" "branch 3" "return 3" "call 3"; do has "$c" "$k" || why+="no '$k' in count.txt; "; done
    [ ! -s "$dir/stderr" ] || why+="stderr: $(head -c 200 "$dir/stderr"); "
    [ -z "$why" ] && pass "probes of a module no check registered ($tag)" \
        || fail "probes of a module no check registered ($tag)" "$why"

    # SIGTERM while waiting
    dir=$W/term-$tag
    mkdir -p "$dir"
    (cd "$dir" && VIGIL_OPTIONS= exec "$W/$bin" wait >"$dir/stdout" 2>"$dir/stderr") &
    pid=$!
    for _ in $(seq 100); do grep -q waiting "$dir/stdout" 2>/dev/null && break; sleep 0.05; done
    kill -TERM $pid
    wait $pid
    status=$?
    f=$("$W/rt_report" "$dir"/vigil-out/rt_abi_*.* 2>&1)
    [ "$status" = 143 ] && has "$f" "signal 15" && pass "SIGTERM: report, status unchanged ($tag)" \
        || fail "SIGTERM: report, status unchanged ($tag)" "status $status; $(head -1 <<<"$f")"
done

run services rt_abi_static "" services
want="site 0: 0 entry hot rt_abi.c:10:1
site 1: 0 backedge hot rt_abi.c:11:5
site 2: 0 entry rare rt_abi.c:20:1
site 3: 0 load hot rt_abi.c:12:9
site 4: 0 store hot rt_abi.c:12:3
site 5: 0 branch hot rt_abi.c:13:7
site 6: 0 return hot rt_abi.c:14:7
site 7: 0 call hot rt_abi.c:15:7
site 8: -1 ? ? ?:0:0
stack 1
clock 1"
[ "$(cat "$dir/stdout")" = "$want" ] && pass "tool services: site lookup, stack capture, clock" \
    || fail "tool services: site lookup, stack capture, clock" "$(diff <(echo "$want") "$dir/stdout" | tr '\n' ' ' | cut -c1-300)"

run unwritable rt_abi_static "out=/proc/no/such/dir"
lines=$(grep -c '^vigil: cannot write report to /proc/no/such/dir/rt_abi_static\.[0-9]*: ' "$dir/stderr")
[ "$status" = 3 ] && [ "$lines" = 1 ] && [ "$(wc -l <"$dir/stderr")" = 1 ] && pass "unwritable out: one line, status unchanged" \
    || fail "unwritable out: one line, status unchanged" "status $status; $(head -c 300 "$dir/stderr")"

run badopts rt_abi_static "mode=fast:ninstr=x:nosuch=1:tools=count,nosuchtool:rate_floor=0"
why=""
[ "$status" = 3 ] || why+="status $status; "
[ "$(wc -l <"$dir/stderr")" = 5 ] || why+="$(wc -l <"$dir/stderr") lines on stderr, expected 5; "
for pat in '"mode=fast"' '"ninstr=x"' '"nosuch=1"' '"nosuchtool"' '"rate_floor=0"'; do
    grep -q "^vigil: .*$pat" "$dir/stderr" || why+="no line naming $pat; "
done
has "$facts" "option mode adaptive" && has "$facts" "option rate_floor 0.001" && has "$facts" "tools count" || why+="defaults not kept; "
[ -z "$why" ] && pass "bad options: one line each, defaults kept" || fail "bad options: one line each, defaults kept" "$why"

run help rt_abi_static "help=1"
n=$(grep -c '^  [a-z_]' "$dir/stderr")
rows=$(grep -c '^VIGIL_OPTION(' "$ROOT/common/options.inc")
[ "$status" = 3 ] && [ "$n" = $((rows + 1)) ] && pass "help=1 lists every option, program runs on" \
    || fail "help=1 lists every option, program runs on" "status $status, $n lines for $rows options"

run report0 rt_abi_static "report=0:tools=count"
[ "$status" = 3 ] && [ "$(nreports)" = 0 ] && [ ! -s "$dir/stderr" ] && pass "report=0 writes nothing" \
    || fail "report=0 writes nothing" "status $status, $(nreports) entries, $(head -c 200 "$dir/stderr")"

run depth rt_abi_static "tools=count:count.depth=2"
depth=$(sed -n 's/^max_depth //p' "$dir"/vigil-out/*/count.txt 2>/dev/null)
[ "$depth" = 2 ] && pass "a tool's stack depth bounds the allocation stacks (count.depth=2)" \
    || fail "a tool's stack depth bounds the allocation stacks (count.depth=2)" "max_depth ${depth:-none}"

run toolopt rt_abi_static "tools=count:count.print=1"
grep -q '^vigil: count: alloc [0-9]*, free' "$dir/stderr" && pass "tool options reach the tool (count.print=1)" \
    || fail "tool options reach the tool (count.print=1)" "$(head -c 200 "$dir/stderr")"

run toolkeys rt_abi_static "tools=count:count.depht=2:count.print=0:nosuchtool.x=1:leak.stale_after=5"
why=""
[ "$status" = 3 ] || why+="status $status; "
[ "$(wc -l <"$dir/stderr")" = 2 ] || why+="$(wc -l <"$dir/stderr") lines on stderr, expected 2; "
grep -q '^vigil: tools: "count.depht=2" ignored: count has no option "depht" (its options: print, depth)$' "$dir/stderr" \
    || why+="no line for count.depht listing count's options; "
grep -q '^vigil: tools: "nosuchtool.x=1" ignored: no tool named "nosuchtool"' "$dir/stderr" || why+="no line for nosuchtool.x; "
[ -z "$why" ] && pass "a tool option no tool asked for: one line naming the tool's options (a disabled tool's are left alone)" \
    || fail "a tool option no tool asked for: one line naming the tool's options (a disabled tool's are left alone)" "$why $(head -c 300 "$dir/stderr")"

echo "runtime: $passed passed, $failed failed" >&2
[ "$failed" = 0 ]
