#!/usr/bin/env bash
# The count tool's tests: builds tools/count/tests/events.c with vigil-cc (and with plain clang),
# runs it under VIGIL_OPTIONS=mode=full:tools=count:out=DIR and checks what the tool does:
#   - count.txt: one "<kind> <n>" line per event kind; exact counts of the events the program
#     makes a known number of (lock, unlock, thread_*, fork_child, realloc_*), and exact
#     differences between 1 and 5 rounds of the loop for alloc, free and alloc_bytes (the
#     C library and the dynamic loader allocate a few blocks of their own); loads and stores;
#     call events only in a build with VIGIL_CC_PROBE_CALLS=1, exactly 7 per round;
#   - its options: count.print=1 prints the counts on stderr, count.print=maybe is rejected
#     (one message naming the item, print stays 0), count.depth=3 caps the allocation stacks,
#     count.depth=99 is refused, an unknown count.nope=1 gives one message listing count's
#     options (read from tools/count/options.inc), items separated by spaces work;
#   - mode=off: the events recorded always (malloc family, locks, threads) as in mode=full, no
#     sampled ones; without tools=count no count.txt; stdout and status are the plain build's.
# Prints "PASS count/<check>" or "FAIL count/<check>: reason" per check and a final count;
# exits non-zero when a check failed. A new tool copied from tools/count starts from this file:
# TOOL names the tool and REPORT its file (a renamed copy that still counts passes as it is);
# then its own checks replace count's.
set -u
TOOL=count
REPORT=$TOOL.txt   # the report file the tool writes in the run directory
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
VIGILCC=${VIGILCC:-$ROOT/build/bin/vigil-cc}
WORK=$(mktemp -d /tmp/vigil-counttest.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0
ok()  { echo "PASS $TOOL/$1"; pass=$((pass + 1)); }
bad() { echo "FAIL $TOOL/$1: $2"; fail=$((fail + 1)); }
finish() { echo "$TOOL tests: $pass passed, $fail failed"; [ "$fail" = 0 ]; exit; }

[ -x "$VIGILCC" ] || { bad build "build first (make): no $VIGILCC"; finish; }
CFLAGS=(-O1 -g -fno-omit-frame-pointer)
if ! "$VIGILCC" "${CFLAGS[@]}" "$HERE/events.c" -o "$WORK/events" -lpthread 2>"$WORK/cc.log"; then
    bad build "events.c does not build with vigil-cc: $(head -c 300 "$WORK/cc.log")"; finish
fi
if ! clang "${CFLAGS[@]}" "$HERE/events.c" -o "$WORK/events.plain" -lpthread 2>"$WORK/plain.log"; then
    bad build "events.c does not build with clang: $(head -c 300 "$WORK/plain.log")"; finish
fi
if ! VIGIL_CC_PROBE_CALLS=1 "$VIGILCC" "${CFLAGS[@]}" "$HERE/events.c" -o "$WORK/events.calls" -lpthread 2>"$WORK/cc-calls.log"; then
    bad build "events.c does not build with VIGIL_CC_PROBE_CALLS=1: $(head -c 300 "$WORK/cc-calls.log")"; finish
fi
ok "build: events.c with vigil-cc (with and without call probes) and with clang"
for rounds in 1 5; do
    "$WORK/events.plain" "$rounds" >"$WORK/plain.$rounds.stdout" 2>/dev/null
    echo $? >"$WORK/plain.$rounds.status"
done

# run NAME ROUNDS VIGIL_OPTIONS [BINARY]: runs the vigil build (events, or BINARY) with out=$WORK/out-NAME added (with ':',
# or with a space when the options hold spaces); leaves NAME.stdout, NAME.stderr, NAME.status
# and, when there is one, the report's count.txt as NAME.count. 1 when the run itself went
# wrong (status or stdout other than plain's, no count.txt when one is expected), after a FAIL.
run() {
    local name=$1 rounds=$2 opts=$3 bin=${4:-events} sep=: status rundir
    case "$opts" in *" "*) sep=" " ;; esac
    VIGIL_OPTIONS="$opts${sep}out=$WORK/out-$name" timeout 60 "$WORK/$bin" "$rounds" \
        >"$WORK/$name.stdout" 2>"$WORK/$name.stderr"
    status=$?
    echo "$status" >"$WORK/$name.status"
    rm -f "$WORK/$name.count"
    rundir=$(ls -d "$WORK/out-$name"/*/ 2>/dev/null | head -n1)
    [ -n "$rundir" ] && [ -f "$rundir/$REPORT" ] && cp "$rundir/$REPORT" "$WORK/$name.count"
    if [ "$status" != "$(cat "$WORK/plain.$rounds.status")" ]; then
        bad "$name" "exit status $status, plain build's $(cat "$WORK/plain.$rounds.status") (stderr: $(head -c 200 "$WORK/$name.stderr"))"
        return 1
    fi
    if ! cmp -s "$WORK/$name.stdout" "$WORK/plain.$rounds.stdout"; then
        bad "$name" "stdout differs from the plain build's: $(head -c 200 "$WORK/$name.stdout" | tr '\n' '|')"
        return 1
    fi
    return 0
}
# get NAME KIND: the count of KIND in NAME's count.txt (empty if absent)
get() { awk -v k="$2" '$1 == k { print $2; exit }' "$WORK/$1.count" 2>/dev/null; }
# has_report NAME: a FAIL unless the run wrote count.txt
has_report() {
    [ -f "$WORK/$1.count" ] && return 0
    bad "$1" "no $REPORT in $WORK/out-$1/*/ (stderr: $(head -c 200 "$WORK/$1.stderr"))"
    return 1
}

KINDS="alloc free lock unlock thread_start thread_exit thread_join fork_child load store branch
       return call alloc_bytes realloc_free realloc_alloc max_depth load_bytes store_bytes
       atomic_release atomic_acquire sem_post sem_wait barrier_arrive barrier_depart once_done once_pass
       cond_signal cond_wake"
# The synchronization events events.c makes (tool API 5), whatever the rounds but the atomics'.
SYNC_FIXED="sem_post=1 sem_wait=1 barrier_arrive=1 barrier_depart=1 once_done=1 once_pass=2 cond_signal=1 cond_wake=1"

# ---- count.txt: its lines and exact counts, for 1 and 5 rounds ----
for rounds in 1 5; do
    name=base$rounds
    run "$name" "$rounds" "mode=full:tools=$TOOL" && has_report "$name" || continue
    ok "$name: status and stdout equal the plain build's"
    problems=""
    want=$(echo $KINDS | tr ' ' '\n')
    got=$(awk '{ print $1 }' "$WORK/$name.count")
    [ "$got" = "$want" ] || problems+=" kinds/order: $(echo $got)"
    bad_lines=$(grep -cvE '^[a-z_]+ [0-9]+$' "$WORK/$name.count")
    [ "$bad_lines" = 0 ] || problems+=" $bad_lines lines not '<kind> <count>'"
    [ -z "$problems" ] && ok "$name: $REPORT has one '<kind> <count>' line per event kind, in order" \
        || bad "$name" "$REPORT:$problems"
    problems=""
    for kv in lock=$((rounds + 4)) unlock=$((rounds + 4)) thread_start=1 thread_exit=1 thread_join=1 \
              fork_child=0 realloc_free=1 realloc_alloc=1; do
        [ "$(get "$name" "${kv%%=*}")" = "${kv#*=}" ] || problems+=" ${kv%%=*} $(get "$name" "${kv%%=*}") (want ${kv#*=})"
    done
    [ -z "$problems" ] && ok "$name: exact lock, unlock, thread_start/exit/join, fork_child, realloc_free/alloc" \
        || bad "$name" "counts:$problems"
    problems=""
    for kv in atomic_release=$rounds atomic_acquire=$rounds $SYNC_FIXED; do
        [ "$(get "$name" "${kv%%=*}")" = "${kv#*=}" ] || problems+=" ${kv%%=*} $(get "$name" "${kv%%=*}") (want ${kv#*=})"
    done
    [ -z "$problems" ] && ok "$name: exact synchronization events (atomic release/acquire, sem, barrier, once, cond)" \
        || bad "$name" "sync counts:$problems"
    problems=""
    [ "$(get "$name" alloc)" -ge $((rounds + 2)) ] || problems+=" alloc $(get "$name" alloc) < $((rounds + 2))"
    [ "$(get "$name" free)" -ge $((rounds + 2)) ] || problems+=" free $(get "$name" free) < $((rounds + 2))"
    [ "$(get "$name" alloc_bytes)" -ge $((rounds * 400 + 16 + (1 << 20))) ] || problems+=" alloc_bytes $(get "$name" alloc_bytes)"
    for k in load store branch return; do
        [ "$(get "$name" $k)" -gt 0 ] || problems+=" $k $(get "$name" $k)"
    done
    [ "$(get "$name" load)" -ge $((rounds * 100)) ] || problems+=" load $(get "$name" load) < $((rounds * 100))"
    [ "$(get "$name" store)" -ge $((rounds * 100)) ] || problems+=" store $(get "$name" store) < $((rounds * 100))"
    [ -z "$problems" ] && ok "$name: alloc, free, alloc_bytes at least the program's own; load, store, branch, return > 0" \
        || bad "$name" "counts:$problems"
    [ -s "$WORK/$name.stderr" ] && bad "$name" "stderr not empty without $TOOL.print: $(head -c 200 "$WORK/$name.stderr")"
done
if [ -f "$WORK/base1.count" ] && [ -f "$WORK/base5.count" ]; then
    d() { echo $(( $(get base5 "$1") - $(get base1 "$1") )); }
    problems=""
    [ "$(d alloc)" = 4 ] || problems+=" alloc +$(d alloc) (want +4)"
    [ "$(d free)" = 4 ] || problems+=" free +$(d free) (want +4)"
    [ "$(d alloc_bytes)" = 1600 ] || problems+=" alloc_bytes +$(d alloc_bytes) (want +1600)"
    [ "$(d realloc_alloc)" = 0 ] || problems+=" realloc_alloc +$(d realloc_alloc) (want +0)"
    [ "$(d load)" -ge 400 ] || problems+=" load +$(d load) (want >= +400)"
    [ "$(d store)" -ge 400 ] || problems+=" store +$(d store) (want >= +400)"
    [ "$(d load_bytes)" -ge 1600 ] || problems+=" load_bytes +$(d load_bytes) (want >= +1600)"
    [ "$(d store_bytes)" -ge 1600 ] || problems+=" store_bytes +$(d store_bytes) (want >= +1600)"
    [ -z "$problems" ] && ok "4 more rounds: exactly 4 more allocs of 400 bytes and 4 more frees, >= 400 more loads and stores" \
        || bad "rounds" "1 -> 5 rounds:$problems"
fi

# ---- mode=off: the events recorded always are all there, the sampled ones none ----
if run off5 5 "mode=off:tools=$TOOL" && has_report off5 && [ -f "$WORK/base5.count" ]; then
    problems=""
    for k in alloc free lock unlock thread_start thread_exit thread_join alloc_bytes realloc_free realloc_alloc \
             atomic_release atomic_acquire sem_post sem_wait barrier_arrive barrier_depart once_done once_pass \
             cond_signal cond_wake; do
        [ "$(get off5 $k)" = "$(get base5 $k)" ] || problems+=" $k $(get off5 $k) (mode=full: $(get base5 $k))"
    done
    for k in load store branch return call load_bytes store_bytes; do
        [ "$(get off5 $k)" = 0 ] || problems+=" $k $(get off5 $k) (want 0)"
    done
    [ -z "$problems" ] && ok "mode=off: alloc, free, lock, thread and synchronization counts (atomics too) as in mode=full; no load, store, branch, return or call" \
        || bad "mode=off" "$problems"
fi

# ---- call events: none without VIGIL_CC_PROBE_CALLS=1, 7 per round with it ----
if run calls1 1 "mode=full:tools=$TOOL" events.calls && has_report calls1 &&
   run calls5 5 "mode=full:tools=$TOOL" events.calls && has_report calls5; then
    c1=$(get calls1 call) c5=$(get calls5 call) c0=$(get base1 call)
    if [ "$c0" = 0 ] && [ $((c5 - c1)) = 28 ]; then
        ok "call: 0 without call probes; with VIGIL_CC_PROBE_CALLS=1, exactly 7 more per round ($c1, $c5)"
    else
        bad "call" "default build ${c0:-?} (want 0); VIGIL_CC_PROBE_CALLS=1: 1 round $c1, 5 rounds $c5 (want +28)"
    fi
fi

# ---- count.print ----
if run print 1 "mode=full:tools=$TOOL:$TOOL.print=1" && has_report print; then
    line="vigil: $TOOL: alloc $(get print alloc), free $(get print free), lock $(get print lock), unlock $(get print unlock), threads $(get print thread_start), loads $(get print load), stores $(get print store), branches $(get print branch), returns $(get print return), calls $(get print call)"
    if [ "$(cat "$WORK/print.stderr")" = "$line" ]; then
        ok "$TOOL.print=1: one line on stderr, the counts of $REPORT"
    else
        bad "$TOOL.print=1" "stderr '$(head -c 300 "$WORK/print.stderr")', expected '$line'"
    fi
fi
if run print_maybe 1 "mode=full:tools=$TOOL:$TOOL.print=maybe" && has_report print_maybe; then
    said=$(grep -c "$TOOL.print=maybe.*keeping $TOOL.print=0" "$WORK/print_maybe.stderr")
    lines=$(wc -l <"$WORK/print_maybe.stderr")
    if [ "$said" = 1 ] && [ "$lines" = 1 ]; then
        ok "$TOOL.print=maybe: rejected in one message naming the item, keeping $TOOL.print=0"
    else
        bad "$TOOL.print=maybe" "$said messages naming it, $lines lines on stderr: $(head -c 300 "$WORK/print_maybe.stderr")"
    fi
fi

# ---- count.depth ----
depth_default=$(get base1 max_depth)
if [ -n "$depth_default" ] && [ "$depth_default" -gt 3 ]; then
    ok "no $TOOL.depth: allocation stacks deeper than 3 (max_depth $depth_default)"
else
    bad "depth" "without $TOOL.depth, max_depth ${depth_default:-?}: the deepest allocation is 4 frames of events.c below main"
fi
if run depth3 1 "mode=full:tools=$TOOL:$TOOL.depth=3" && has_report depth3; then
    m=$(get depth3 max_depth)
    if [ "$m" -le 3 ] && [ "$m" -gt 0 ] && [ ! -s "$WORK/depth3.stderr" ]; then
        ok "$TOOL.depth=3: max_depth $m (<= 3, > 0)"
    else
        bad "$TOOL.depth=3" "max_depth $m, stderr: $(head -c 200 "$WORK/depth3.stderr")"
    fi
fi
if run depth99 1 "mode=full:tools=$TOOL:$TOOL.depth=99" && has_report depth99; then
    m=$(get depth99 max_depth)
    if grep -q "^vigil: $TOOL: $TOOL.depth=99: expected 0 to 16" "$WORK/depth99.stderr" && [ "$m" -gt 3 ]; then
        ok "$TOOL.depth=99: refused with a message, stacks as without it (max_depth $m)"
    else
        bad "$TOOL.depth=99" "max_depth $m, stderr: $(head -c 200 "$WORK/depth99.stderr")"
    fi
fi

# ---- options separated by spaces ----
if run spaces 1 "mode=full tools=$TOOL $TOOL.print=1" && has_report spaces; then
    if [ "$(get spaces lock)" = 5 ] && [ "$(get spaces thread_start)" = 1 ] &&
       grep -q "^vigil: $TOOL: alloc $(get spaces alloc), " "$WORK/spaces.stderr"; then
        ok "VIGIL_OPTIONS items separated by spaces: tools, out and $TOOL.print taken"
    else
        bad "spaces" "lock $(get spaces lock), thread_start $(get spaces thread_start), stderr: $(head -c 200 "$WORK/spaces.stderr")"
    fi
fi

# ---- an unknown option: one message listing the tool's options ----
if run nope 1 "mode=full:tools=$TOOL:$TOOL.nope=1" && has_report nope; then
    msgs=$(grep -c "nope" "$WORK/nope.stderr")
    msg=$(grep "nope" "$WORK/nope.stderr")
    missing=""
    for o in $(sed -n 's/^VIGIL_OPTION(\([a-z0-9_]*\),.*/\1/p' "$HERE/../options.inc"); do
        grep -qw "$o" <<<"${msg#*nope}" || missing+=" $o"
    done
    if [ "$msgs" = 1 ] && [ "$(wc -l <"$WORK/nope.stderr")" = 1 ] && [ -z "$missing" ] && [ "$(get nope lock)" = 5 ]; then
        ok "$TOOL.nope=1: one message listing $TOOL's options; the run counts as without it"
    else
        bad "$TOOL.nope=1" "$msgs messages${missing:+, options not listed:$missing}, lock $(get nope lock); stderr: $(head -c 300 "$WORK/nope.stderr")"
    fi
fi

# ---- not enabled: no count.txt ----
if run notool 1 "mode=full"; then
    if [ -f "$WORK/notool.count" ]; then bad "not enabled" "$REPORT written without tools=$TOOL"
    elif ! ls "$WORK"/out-notool/*/run.txt >/dev/null 2>&1; then bad "not enabled" "no run report at all"
    else ok "without tools=$TOOL: a run report without $REPORT"; fi
fi

finish
