#!/bin/bash
# The hot-spot profiler's tests. Each tools/hotspot/tests/*.c (but the unit tests test_*.c and
# the library sig_early_lib.c) is a small program of known behaviour, built with vigil-cc -O2 -g
# -fno-omit-frame-pointer and with plain clang, run under VIGIL_OPTIONS=tools=hotspot, and
# checked for: the same stdout and exit status as the plain build, nothing on stderr but what
# the program or the test expects, and what its profile must show:
#   callers       main -> work -> hot_a (~70%) / hot_b (~25%): hot_a first by self samples, hot_b
#                 second, shares within wide margins, main;work;hot_a the top folded stack;
#                 `vigil hot` text, --json, --folded and --trace checked for form (python3)
#   leaf          main -> work -> mix, mix a tiny leaf: built with VIGIL_CC_FRAME_POINTERS=nonleaf
#                 (no frame in mix) and with frames everywhere, mix's samples name work as
#                 its caller (the return address at the stack pointer, validated)
#   threads       two threads in two hot functions: both named, 3 threads sampled
#   forks         parent and child each profiled in their own report
#   many_threads  40 short threads: every one sampled, no descriptor left open
#   blocked       a worker that starts with the signal blocked: no clock for it, no harm
#   sig_late      the program installs its own handler for the signal in main: one message,
#                 the tool steps back (what the program's handler saw is printed as a NOTE)
#   sig_early     a library took the signal before start-up: one message, no sampling
#   raise_default the program raises the signal at its default: it dies of it, as without vigil
# Then options (delay_ms, clock=timer, period, a bad value), the tool off, and `vigil hot`'s
# choice of run and its errors (no hotspot.json, a damaged one). The walk (tests/walk/*.c, built
# with vigil-cc -O2 -g, no frame pointers): each program's stdout and exit status equal plain
# clang's, and `vigil hot --json` names the chain its structure implies:
#   chain      leaf <- from_a (75% of leaf's calls; from_b 25%) <- round_ <- main, ended at main
#   recursion  rec (recursive calls counted, not measured) <- outer <- main
#   jump       thrower, left by longjmp from deep every 8th call, <- catcher <- main; entries
#              of the skipped frames dropped, every exit paired
#   threads    leaf <- step <- worker (the threads' start routine), 4 threads
#   signals    leaf <- work <- main, leaf also called from a SIGPROF handler every 2 ms
#   cet        chain.c built with -fcf-protection: entries after endbr64, across two words
#   uselib     lib_leaf <- lib_work in libhot.so (vigil-cc -shared) <- app_loop in the program
# and with hotspot.walk_spots=0 no hook is made. Timing is only checked as
# ordering and rough shares: the machines are shared.
# Prints one PASS/FAIL line per check and a final count.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
VIGILCC=${VIGILCC:-$ROOT/build/bin/vigil-cc}
VIGIL=${VIGIL:-$ROOT/build/bin/vigil}
CC_PLAIN=${CC_PLAIN:-clang}
WORK=$(mktemp -d /tmp/vigil-hstest.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0
ok()  { echo "PASS hotspot/$*"; pass=$((pass + 1)); }
bad() { echo "FAIL hotspot/$*"; fail=$((fail + 1)); }
check() {  # check NAME STATUS WHY: PASS when STATUS is 0
    if [ "$2" = 0 ]; then ok "$1"; else bad "$1: $3"; fi
}

[ -x "$VIGILCC" ] && [ -x "$VIGIL" ] || { echo "FAIL hotspot: build first (make): $VIGILCC, $VIGIL"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL hotspot: python3 is needed to read the JSON outputs"; exit 1; }
FLAGS="-O2 -g -fno-omit-frame-pointer"

# build NAME [extra link args]: $WORK/NAME (vigil-cc) and $WORK/NAME.plain
build() {
    local name=$1
    shift
    # shellcheck disable=SC2086
    "$VIGILCC" $FLAGS "$HERE/$name.c" -o "$WORK/$name" -lpthread "$@" 2>"$WORK/$name.cc.log" &&
        "$CC_PLAIN" $FLAGS "$HERE/$name.c" -o "$WORK/$name.plain" -lpthread "$@" 2>>"$WORK/$name.cc.log"
}

# run NAME OPTIONS: runs $WORK/NAME with VIGIL_OPTIONS="OPTIONS:out=$WORK/out-NAME"; sets status,
# rundir (the first run directory), out (the output directory); stdout/stderr in $out.stdout/.stderr
run() {
    local name=$1 opts=$2
    out=$WORK/out-$name
    rm -rf "$out"
    (cd "$WORK" && VIGIL_OPTIONS="${opts:+$opts:}out=$out" timeout 120 "./$name" >"$out.stdout" 2>"$out.stderr")
    status=$?
    rundir=$(ls -d "$out"/*/ 2>/dev/null | head -n1)
    rundir=${rundir%/}
}

# plain NAME: sets plain_status, output in $WORK/NAME.plain.stdout
plain() {
    (cd "$WORK" && timeout 120 "./$1.plain" >"$WORK/$1.plain.stdout" 2>"$WORK/$1.plain.stderr")
    plain_status=$?
}

same_as_plain() {  # same_as_plain NAME
    if [ "$status" = "$plain_status" ] && cmp -s "$out.stdout" "$WORK/$1.plain.stdout"; then
        ok "$1: stdout and exit status as the plain build's"
    else
        bad "$1: exit status $status (plain $plain_status), stdout $(head -c 120 "$out.stdout") vs $(head -c 120 "$WORK/$1.plain.stdout")"
    fi
}

# pyjson FILE EXPR...: python3 with d = the JSON document in FILE; prints what the code prints,
# exits 1 when it raises (the code asserts)
pyjson() {
    local file=$1
    shift
    python3 -c "
import json, re, sys
d = json.load(open(sys.argv[1]))
$*
" "$file" 2>&1
}

profile() {  # profile RUNDIR -> vigil hot --json into $WORK/hot.json; status
    "$VIGIL" hot --json "$1" >"$WORK/hot.json" 2>"$WORK/hot.err"
}

# ---- callers: the known call structure ----
if build callers; then
    plain callers
    run callers "tools=hotspot"
    same_as_plain callers
    [ -s "$out.stderr" ] && bad "callers: stderr: $(head -c 300 "$out.stderr")" || ok "callers: nothing on stderr"
    if [ -n "$rundir" ] && [ -f "$rundir/hotspot.json" ]; then
        cp -r "$rundir" "$WORK/run-callers"
        r=$(pyjson "$rundir/hotspot.json" "
assert d['format'] == 'vigil-hotspot' and d['version'] == 1, 'format'
assert d['method'] in ('perf', 'timer'), d['method']
assert d['samples'] >= 150, 'only %d samples' % d['samples']
assert d['threads']['sampled'] == 1, d['threads']
assert all(len(s['frames']) <= d['depth'] for s in d['stacks'])
print(d['method'], d['samples'])")
        check "callers: hotspot.json well formed ($r)" $? "$r"
        method=$(cut -d' ' -f1 <<<"$r")
        profile "$rundir"
        check "callers: vigil hot --json" $? "$(head -c 300 "$WORK/hot.err")"
        r=$(pyjson "$WORK/hot.json" "
s = d['self']
names = [f['function'] for f in s]
assert names[:2] == ['hot_a', 'hot_b'], 'self order %s' % names[:4]
a, b = s[0]['percent'], s[1]['percent']
assert 50 <= a <= 90 and 10 <= b <= 45, 'shares hot_a %.1f%% hot_b %.1f%%' % (a, b)
assert s[0]['file'].endswith('callers.c') and s[0]['line'] > 0, s[0]
inc = {f['function']: f['percent'] for f in d['inclusive']}
assert inc['main'] >= 95 and inc['work'] >= 90, 'inclusive main %s work %s' % (inc.get('main'), inc.get('work'))
print('hot_a %.1f%%, hot_b %.1f%%' % (a, b))")
        check "callers: hot_a first and hot_b second by self samples, shares about 70/25 ($r)" $? "$r"
        "$VIGIL" hot --folded "$rundir" >"$WORK/folded.txt" 2>"$WORK/folded.err"
        r=$(python3 - "$WORK/folded.txt" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
assert lines, 'no folded stacks'
stacks = []
for l in lines:
    m = re.fullmatch(r'([^ ;]+(?:;[^ ;]+)*) ([0-9]+)', l)
    assert m, 'not a folded line: %r' % l
    stacks.append((int(m.group(2)), m.group(1)))
top = max(stacks)
assert top[1].endswith('main;work;hot_a'), 'top stack %s' % top[1]
print(top[1], top[0])
PY
)
        check "callers: --folded lines 'a;b;c N', the top one ends main;work;hot_a ($r)" $? "$r"
        "$VIGIL" hot --trace "$WORK/trace.json" "$rundir" >"$WORK/trace.out" 2>&1
        r=$(pyjson "$WORK/trace.json" "
ev = d['traceEvents']
x = [e for e in ev if e['ph'] == 'X']
assert x and all(isinstance(e['ts'], (int, float)) and e['dur'] >= 0 and 'pid' in e and 'tid' in e for e in x)
assert {'main', 'work', 'hot_a', 'hot_b'} <= {e['name'] for e in x}
assert any(e['ph'] == 'M' and e['name'] == 'thread_name' for e in ev)
bytid = {}
for e in x:
    bytid.setdefault(e['tid'], []).append(e)
for t, es in bytid.items():
    es.sort(key=lambda e: (e['ts'], -e['dur']))
    open_ = []
    for e in es:
        while open_ and open_[-1] <= e['ts']:
            open_.pop()
        end = e['ts'] + e['dur']
        assert not open_ or end <= open_[-1], 'events overlap without nesting at %d' % e['ts']
        open_.append(end)
print(len(x), 'complete events')")
        check "callers: --trace is Chrome trace-event JSON, complete events nested ($r)" $? "$r"
        "$VIGIL" hot "$rundir" >"$WORK/text.out" 2>&1
        grep -q "hot_a" "$WORK/text.out" && grep -q "inclusive" "$WORK/text.out" && grep -q "callers.c:" "$WORK/text.out"
        check "callers: vigil hot text names hot_a with its file:line" $? "$(head -c 400 "$WORK/text.out")"
        n=$("$VIGIL" hot -n 1 "$rundir" | grep -c '%  ')
        [ "$n" = 2 ]
        check "callers: -n 1 gives one row per list" $? "$n rows"
    else
        bad "callers: no hotspot.json ($(head -c 300 "$out.stderr"))"
    fi

    # bursts: the tool needs none (tool.h VIGIL_BURSTS_UNUSED), so a run with it alone runs the
    # checks as in mode=off: run.txt says so and no site has a burst, the hot function is still
    # found; with a tool that needs bursts (leak), or mode= set by the user, bursts happen
    # bursts_of RUNDIR: "MODE BURSTS EXECS" from run.txt
    bursts_of() {
        awk '$1 == "option" && $2 == "mode" {m = $3} $1 == "site" {b += $6; e += $5} END {print m, b + 0, e + 0}' "$1/run.txt"
    }
    run callers "tools=hotspot"
    read -r m b e <<<"$(bursts_of "$rundir")"
    [ "$m" = off ] && [ "$b" = 0 ] && [ "$e" -gt 0 ] && profile "$rundir" &&
        pyjson "$WORK/hot.json" "assert d['self'][0]['function'] == 'hot_a', d['self'][:2]" >/dev/null
    check "tools=hotspot alone: run.txt says mode off, 0 bursts ($e executions counted), hot_a still first" $? \
        "mode $m, $b bursts, $e executions; $(head -c 200 "$WORK/hot.err")"
    run callers "tools=hotspot,leak"
    read -r m b e <<<"$(bursts_of "$rundir")"
    [ "$m" = adaptive ] && [ "$b" -gt 0 ] && [ -f "$rundir/hotspot.json" ]
    check "tools=hotspot,leak: mode adaptive, bursts ($b)" $? "mode $m, $b bursts"
    run callers "tools=hotspot:mode=adaptive"
    read -r m b e <<<"$(bursts_of "$rundir")"
    [ "$m" = adaptive ] && [ "$b" -gt 0 ]
    check "tools=hotspot:mode=adaptive (the user's mode kept): bursts ($b)" $? "mode $m, $b bursts"

    # delay_ms: nothing sampled before it (callers runs about 0.4 s: the delay leaves it time)
    run callers "tools=hotspot:hotspot.delay_ms=150"
    if [ -f "$rundir/hotspot.json" ]; then
        r=$(pyjson "$rundir/hotspot.json" "
runs = [r for t in d['thread_list'] for r in t['runs']]
assert runs, 'no samples'
first = min(r[0] for r in runs)
assert first >= 150000, 'a sample at %d us' % first
assert d['delay_ms'] == 150
print('first sample at %.0f ms, %d samples' % (first / 1000, d['samples']))")
        check "delay_ms=150: the first sample after 150 ms ($r)" $? "$r"
    else
        bad "delay_ms: no hotspot.json"
    fi
    same_as_plain callers

    # clock=timer: the fallback
    run callers "tools=hotspot:hotspot.clock=timer"
    if [ -f "$rundir/hotspot.json" ] && profile "$rundir"; then
        r=$(pyjson "$WORK/hot.json" "
assert d['method'] == 'timer', d['method']
names = [f['function'] for f in d['self']]
assert names[:2] == ['hot_a', 'hot_b'], names[:4]
print('%d samples' % d['samples'])")
        check "clock=timer: timer_create fallback, hot_a and hot_b in order ($r)" $? "$r"
    else
        bad "clock=timer: no profile ($(head -c 300 "$out.stderr"))"
    fi
    same_as_plain callers

    # period=5000: about a fifth of the samples
    run callers "tools=hotspot:hotspot.period=5000"
    r=$(pyjson "$rundir/hotspot.json" "
assert d['period_us'] == 5000
assert 20 <= d['samples'] <= 400, '%d samples' % d['samples']
print(d['samples'], 'samples')")
    check "period=5000: fewer samples ($r)" $? "$r"

    # late_period: the first walk_samples samples every period, then every late_period, each
    # counting late_period/period; the profile's shares as at one rate (checked above, default)
    r=$(pyjson "$WORK/run-callers/hotspot.json" "
assert d['late_period_us'] == 10000 and d['late_after'] == 100, (d['late_period_us'], d['late_after'])
late = [r for t in d['thread_list'] for r in t['runs'] if len(r) == 5]
assert late and all(r[4] == 10000 and r[3] % 10 == 0 for r in late), late[:3]
taken = sum(r[3] // (10 if len(r) == 5 else 1) for t in d['thread_list'] for r in t['runs'])
assert taken == d['signals'] and 100 < d['signals'] < d['samples'] / 2, (taken, d['signals'], d['samples'])
assert sum(s['count'] for s in d['stacks']) + d['dropped']['table_full'] + d['dropped']['busy'] == d['samples']
print('%d taken, %d samples of 1 ms' % (d['signals'], d['samples']))")
    check "late_period=10000 (default): late runs weighted 10, samples = the stacks' counts ($r)" $? "$r"
    run callers "tools=hotspot:hotspot.late_period=0"
    r=$(pyjson "$rundir/hotspot.json" "
assert d['late_period_us'] == 1000 and d['signals'] == d['samples'] >= 300, (d['late_period_us'], d['signals'], d['samples'])
assert all(len(r) == 4 for t in d['thread_list'] for r in t['runs'])
print(d['samples'], 'samples')")
    check "late_period=0: one rate, every sample taken ($r)" $? "$r"
    run callers "tools=hotspot:hotspot.late_period=500"
    grep -q "hotspot.late_period=500: expected 1000 to 1000000" "$out.stderr" &&
        [ "$(pyjson "$rundir/hotspot.json" "print(d['late_period_us'])")" = 10000 ]
    check "late_period=500 (under the period): one message, the default kept" $? "$(head -c 300 "$out.stderr")"

    # a bad value: one message, the default kept
    run callers "tools=hotspot:hotspot.depth=100"
    grep -q "hotspot.depth=100: expected 1 to 64" "$out.stderr" && [ -f "$rundir/hotspot.json" ] &&
        [ "$(pyjson "$rundir/hotspot.json" "print(d['depth'])")" = 32 ]
    check "depth=100: one message, depth 32 kept" $? "$(head -c 300 "$out.stderr")"

    # the tool off: no hotspot.json
    run callers "mode=adaptive"
    [ -n "$rundir" ] && [ ! -e "$rundir/hotspot.json" ]
    check "off: without tools=hotspot no hotspot.json" $? "$(ls "$rundir" 2>/dev/null | tr '\n' ' ')"

    # with another tool
    run callers "tools=leak,hotspot"
    same_as_plain callers
    [ -f "$rundir/hotspot.json" ]
    check "tools=leak,hotspot: hotspot.json written" $? "$(head -c 300 "$out.stderr")"
else
    bad "callers: does not build ($(head -c 300 "$WORK/callers.cc.log"))"
fi

# ---- a hot leaf without a frame ----
# With the leaf's frame omitted, or in any function's prologue, the frame register is still the
# caller's: the sample must take the caller from the stack pointer, not skip it.
for fp in nonleaf 1; do
    if VIGIL_CC_FRAME_POINTERS=$fp "$VIGILCC" -O2 -g "$HERE/leaf.c" -o "$WORK/leaf" 2>"$WORK/leaf.cc.log"; then
        first=$(objdump -d --no-show-raw-insn "$WORK/leaf" | awk '/<mix>:/ {getline; print $2; exit}')
        run leaf "tools=hotspot"
        "$VIGIL" hot --folded "$rundir" >"$WORK/leaf.folded" 2>"$WORK/leaf.err"
        r=$(awk '$1 ~ /;mix$/ {all += $2; if ($1 ~ /;main;work;mix$/) good += $2}
                 END {printf "%d of %d samples in mix under work", good, all; exit !(all >= 50 && good >= 0.97 * all)}' \
            "$WORK/leaf.folded")
        st=$?
        if [ "$fp" = nonleaf ] && [ "$first" = push ]; then
            st=1 r="mix begins with push: the build kept its frame ($r)"
        fi
        check "leaf: VIGIL_CC_FRAME_POINTERS=$fp: mix's caller is work ($r)" $st "$r; $(grep ';mix ' "$WORK/leaf.folded" | head -3 | tr '\n' ' ')"
    else
        bad "leaf: VIGIL_CC_FRAME_POINTERS=$fp: does not build: $(head -c 300 "$WORK/leaf.cc.log")"
    fi
done

# ---- threads ----
if build threads; then
    plain threads
    run threads "tools=hotspot"
    same_as_plain threads
    if [ -f "$rundir/hotspot.json" ] && profile "$rundir"; then
        r=$(pyjson "$WORK/hot.json" "
s = {f['function']: f['percent'] for f in d['self']}
assert s.get('spin_left', 0) >= 20 and s.get('spin_right', 0) >= 20, 'shares %s' % s
assert d['threads'] == 3, '%d threads sampled' % d['threads']
print('spin_left %.0f%%, spin_right %.0f%%' % (s['spin_left'], s['spin_right']))")
        check "threads: both threads' hot functions named, 3 threads sampled ($r)" $? "$r"
    else
        bad "threads: no profile ($(head -c 300 "$out.stderr"))"
    fi
else
    bad "threads: does not build"
fi

# ---- forks ----
if build forks; then
    plain forks
    run forks "tools=hotspot"
    same_as_plain forks
    runs=$(ls -d "$out"/*/ 2>/dev/null | wc -l)
    parent_ok=1 child_ok=1
    for d in "$out"/*/; do
        profile "${d%/}" || continue
        top=$(pyjson "$WORK/hot.json" "print(d['self'][0]['function'] if d['self'] else '')")
        others=$(pyjson "$WORK/hot.json" "print(' '.join(f['function'] for f in d['self']))")
        case "$top" in
            parent_work) parent_ok=0 ;;
            child_work) [[ " $others " == *" parent_work "* ]] || child_ok=0 ;;
        esac
    done
    [ "$runs" = 2 ] && [ $parent_ok = 0 ] && [ $child_ok = 0 ]
    check "forks: the parent's and the child's profiles, each of its own work" $? "$runs runs, parent $parent_ok child $child_ok"
else
    bad "forks: does not build"
fi

# ---- many threads ----
if build many_threads; then
    plain many_threads
    run many_threads "tools=hotspot"
    same_as_plain many_threads
    all=$(sed -n 's/^many_threads: \([0-9]*\) descriptors open$/\1/p' "$out.stderr")
    plain_all=$(sed -n 's/^many_threads: \([0-9]*\) descriptors open$/\1/p' "$WORK/many_threads.plain.stderr")
    [ -n "$all" ] && [ -n "$plain_all" ] && [ $((all - plain_all)) -le 1 ]
    check "many_threads: at most one descriptor more than the plain build (the main thread's clock)" $? "$all vs $plain_all"
    r=$(pyjson "$rundir/hotspot.json" "
assert d['threads']['sampled'] == 41, d['threads']
assert len(d['thread_list']) == 41
print(d['threads']['sampled'], 'threads')")
    check "many_threads: every thread sampled, no descriptor left open ($r)" $? "$r"
else
    bad "many_threads: does not build"
fi

# ---- a worker that starts with the signal blocked ----
if build blocked; then
    plain blocked
    run blocked "tools=hotspot"
    same_as_plain blocked
    r=$(pyjson "$rundir/hotspot.json" "
t = d['threads']
assert t['blocked'] == 1 and t['sampled'] == 1, t
assert d['samples'] >= 10, '%d samples' % d['samples']
print('1 thread blocked, main sampled: %d samples' % d['samples'])")
    check "blocked: a thread that starts with the signal blocked gets no clock ($r)" $? "$r"
    [ -s "$out.stderr" ] && bad "blocked: stderr: $(head -c 300 "$out.stderr")"
else
    bad "blocked: does not build"
fi

# ---- the program takes the signal ----
if build sig_late; then
    plain sig_late
    run sig_late "tools=hotspot"
    same_as_plain sig_late
    msgs=$(grep -c "vigil: hotspot: the program set its own disposition for signal" "$out.stderr")
    other=$(grep -v -e "vigil: hotspot: the program set its own disposition" -e "^sig_late: handler calls" "$out.stderr" | head -c 300)
    r=$(pyjson "$rundir/hotspot.json" "assert d['stepped_back'] is True; print('stepped back')")
    [ "$msgs" = 1 ] && [ -z "$other" ]
    check "sig_late: one message, the tool steps back ($r)" $? "$msgs messages; other stderr: $other"
    calls=$(sed -n 's/^sig_late: handler calls //p' "$out.stderr")
    plain_calls=$(sed -n 's/^sig_late: handler calls //p' "$WORK/sig_late.plain.stderr")
    extra=$((${calls:-0} - ${plain_calls:-0}))
    [ "$extra" -le 2 ]
    check "sig_late: the program's handler saw at most one signal per thread of the tool's clocks ($extra)" $? "$extra extra calls"
    echo "NOTE hotspot/sig_late: the program's handler ran $calls times, $plain_calls in the plain build: the clock armed when the program took the signal over delivered $extra (tools/hotspot/README.md, \"Limits\")"
else
    bad "sig_late: does not build"
fi
if "$CC_PLAIN" -O2 -g -shared -fPIC "$HERE/sig_early_lib.c" -o "$WORK/libsigearly.so" 2>"$WORK/lib.log" &&
    build sig_early -L"$WORK" -lsigearly -Wl,-rpath,"$WORK"; then
    plain sig_early
    run sig_early "tools=hotspot"
    same_as_plain sig_early
    msgs=$(grep -c "vigil: hotspot: not sampling: signal .* is not at its default disposition" "$out.stderr")
    lines=$(wc -l <"$out.stderr")
    r=$(pyjson "$rundir/hotspot.json" "assert d['method'] == 'none' and d['samples'] == 0, d['method']; print('method none')")
    [ "$msgs" = 1 ] && [ "$lines" = 1 ]
    check "sig_early: one message, no sampling ($r)" $? "$(head -c 300 "$out.stderr")"
    "$VIGIL" hot "$rundir" 2>&1 | grep -q "not sampled: signal"
    check "sig_early: vigil hot says why nothing was sampled" $? "$("$VIGIL" hot "$rundir" 2>&1 | head -c 300)"
else
    bad "sig_early: does not build ($(head -c 300 "$WORK/lib.log" "$WORK/sig_early.cc.log"))"
fi
if build raise_default; then
    plain raise_default
    run raise_default "tools=hotspot"
    same_as_plain raise_default
else
    bad "raise_default: does not build"
fi

# ---- vigil hot: which run, errors ----
if [ -d "$WORK/run-callers" ]; then
    mkdir -p "$WORK/cwd/vigil-out"
    cp -r "$WORK/run-callers" "$WORK/cwd/vigil-out/callers.1"
    d=$(ls -d "$WORK"/out-sig_early/*/ 2>/dev/null | head -n1)
    if [ -n "$d" ]; then   # a newer run without hotspot.json: not the one
        cp -r "$d" "$WORK/cwd/vigil-out/sig_early.2"
        rm -f "$WORK/cwd/vigil-out/sig_early.2/hotspot.json"
    fi
    (cd "$WORK/cwd" && "$VIGIL" hot) >"$WORK/default.out" 2>&1
    grep -q "vigil-out/callers.1" "$WORK/default.out"
    check "vigil hot: the newest run that holds hotspot.json by default" $? "$(head -c 300 "$WORK/default.out")"
    "$VIGIL" hot "$WORK/cwd/vigil-out/sig_early.2" >"$WORK/err.out" 2>&1
    st=$?
    [ $st = 1 ] && grep -q "no hotspot.json" "$WORK/err.out"
    check "vigil hot: a run without hotspot.json: exit 1 and why" $? "status $st: $(head -c 300 "$WORK/err.out")"
    cp -r "$WORK/run-callers" "$WORK/damaged"
    head -c 200 "$WORK/run-callers/hotspot.json" >"$WORK/damaged/hotspot.json"
    "$VIGIL" hot "$WORK/damaged" >"$WORK/err.out" 2>&1
    st=$?
    [ $st = 1 ] && grep -q "damaged/hotspot.json:1:" "$WORK/err.out"
    check "vigil hot: a damaged hotspot.json: exit 1, the file and line named" $? "status $st: $(head -c 300 "$WORK/err.out")"
    "$VIGIL" hot --json --folded "$WORK/run-callers" >/dev/null 2>&1
    [ $? = 2 ]
    check "vigil hot: --json with --folded is a usage error" $? "not status 2"
fi
"$VIGIL" tools 2>&1 | grep -q "hotspot" && "$VIGIL" options 2>&1 | grep -q "hotspot.period"
check "vigil tools and vigil options list the tool and its options" $? "not listed"

# ---- the walk ----
WALK=$HERE/walk
WALK_OPTS="tools=hotspot:hotspot.walk_calls=200:hotspot.walk_samples=20:hotspot.walk_timeout_ms=300"
# walk_build NAME [args]: $WORK/w-NAME (vigil-cc -O2 -g) and $WORK/w-NAME.plain (clang)
walk_build() {
    local name=$1
    shift
    "$VIGILCC" -O2 -g "$WALK/$name.c" -o "$WORK/w-$name" -lpthread "$@" 2>"$WORK/w-$name.cc.log" &&
        "$CC_PLAIN" -O2 -g "$WALK/$name.c" -o "$WORK/w-$name.plain" -lpthread "$@" 2>>"$WORK/w-$name.cc.log"
}
# walk_run NAME CHECK [program args]: runs both builds, compares stdout and status, then runs the
# python CHECK on `vigil hot --json` (variable d; helpers chain(w) and callers(level))
walk_run() {
    local name=$1 py=$2
    local wout=$WORK/wout-$name
    shift 2
    rm -rf "$wout"
    (cd "$WORK" && VIGIL_OPTIONS="$WALK_OPTS:out=$wout" timeout 300 "./w-$name" "$@" >"$wout.stdout" 2>"$wout.stderr")
    local st=$?
    (cd "$WORK" && timeout 300 "./w-$name.plain" "$@" >"$wout.plain" 2>/dev/null)
    local pst=$?
    [ $st = $pst ] && cmp -s "$wout.stdout" "$wout.plain" && [ ! -s "$wout.stderr" ]
    check "walk/$name: stdout and exit status as the plain build's, nothing on stderr" $? \
        "status $st (plain $pst), stderr: $(head -c 300 "$wout.stderr")"
    "$VIGIL" hot --json "$wout" >"$wout.json" 2>"$wout.err"
    local why
    why=$(python3 - "$wout.json" "$py" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def chain(w):
    return [l['function'] for l in w['levels']]
def callers(level):
    return {c['function']: c['percent'] for c in level['callers']}
exec(sys.argv[2])
PY
)
    check "walk/$name: the walk names the chain ($(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(' | '.join(' <- '.join(l['function'] for l in w['levels']) + ' [' + w['end'][:60] + ']' for w in d['walks']))" "$wout.json" 2>/dev/null))" \
        $? "$why"
}
if walk_build chain && walk_build recursion && walk_build jump && walk_build threads && walk_build signals; then
    walk_run chain "
w = d['walks'][0]
assert chain(w) == ['leaf', 'from_a', 'round_', 'main'], chain(w)
assert w['end'] == 'main', w['end']
c = callers(w['levels'][0])
assert 60 <= c.get('from_a', 0) <= 90 and 10 <= c.get('from_b', 0) <= 40, c
for l in w['levels'][:3]:
    assert l['measured'] > 0 and l['mean_wall_ns'] > 0 and l['mean_cycles'] > 0, l
assert w['levels'][1]['mean_wall_ns'] > w['levels'][0]['mean_wall_ns'], 'a caller costs more than its callee'
assert d['instructions'], 'instructions: a reason, never a figure'
" 6000
    walk_run recursion "
w = d['walks'][0]
assert chain(w) == ['rec', 'outer', 'main'], chain(w)
r = w['levels'][0]
assert r['recursive'] > 0 and 'rec' in callers(r) and 'outer' in callers(r), r
assert r['measured'] <= r['calls'] - r['recursive'], r
" 3000
    walk_run jump "
w = d['walks'][0]
assert chain(w) == ['thrower', 'catcher', 'main'], chain(w)
t = w['levels'][0]
assert 0 < t['measured'] < 200, 'longjmp: some calls never return (%d measured)' % t['measured']
" 40000
    walk_run signals "
w = d['walks'][0]
assert chain(w)[:3] == ['leaf', 'work', 'main'], chain(w)
" 20000
    walk_run threads "
w = d['walks'][0]
assert chain(w)[:3] == ['leaf', 'step', 'worker'], chain(w)
assert 'not called once it was hooked' in w['end'] or w['end'].startswith('called from code without'), w['end']
"
else
    bad "walk: the test programs do not build: $(head -c 300 "$WORK"/w-*.cc.log)"
fi
mkdir -p "$WORK/plain"
if "$VIGILCC" -O2 -g -fPIC -shared "$WALK/libhot.c" -o "$WORK/libhot.so" 2>"$WORK/w-uselib.cc.log" &&
    "$CC_PLAIN" -O2 -g -fPIC -shared "$WALK/libhot.c" -o "$WORK/plain/libhot.so" 2>>"$WORK/w-uselib.cc.log" &&
    "$VIGILCC" -O2 -g "$WALK/uselib.c" -o "$WORK/w-uselib" -L"$WORK" -lhot -Wl,-rpath,"$WORK" 2>>"$WORK/w-uselib.cc.log" &&
    "$CC_PLAIN" -O2 -g "$WALK/uselib.c" -o "$WORK/w-uselib.plain" -L"$WORK/plain" -lhot -Wl,-rpath,"$WORK/plain" 2>>"$WORK/w-uselib.cc.log"; then
    walk_run uselib "
w = d['walks'][0]
assert chain(w)[:3] == ['lib_leaf', 'lib_work', 'app_loop'], chain(w)
assert w['levels'][2]['measured'] > 0, w['levels'][2]
" 3000
else
    bad "walk/uselib: does not build: $(head -c 300 "$WORK/w-uselib.cc.log")"
fi
# The walk signal (SIGRTMIN+4): stops the walk (its hook removed), then starts a new one; the
# program goes on and ends as without vigil.
rm -rf "$WORK/wout-toggle"
(cd "$WORK" && VIGIL_OPTIONS="tools=hotspot:hotspot.walk_calls=100000000:hotspot.walk_samples=20:hotspot.walk_timeout_ms=100000:out=$WORK/wout-toggle" exec \
    ./w-chain 40000 >"$WORK/toggle.stdout" 2>"$WORK/toggle.stderr") &
tpid=$!
sleep 1.5
kill -s SIGRTMIN+4 $tpid 2>/dev/null
sleep 1
kill -s SIGRTMIN+4 $tpid 2>/dev/null
wait $tpid
tst=$?
(cd "$WORK" && ./w-chain.plain 40000 >"$WORK/toggle.plain")
pst=$?
python3 -c "
import json, glob, sys
j = json.load(open(glob.glob(sys.argv[1] + '/*/hotspot.json')[0]))
w = j['walk']['walks']
assert len(w) >= 2, 'walks: %s' % [x['end'] for x in w]
assert w[0]['end'].startswith('stopped by the walk signal'), w[0]['end']
assert j['walk']['unhooked'] == j['walk']['hooked'], j['walk']
" "$WORK/wout-toggle" 2>"$WORK/toggle.err" && [ $tst = $pst ] &&
    cmp -s "$WORK/toggle.stdout" "$WORK/toggle.plain" && [ ! -s "$WORK/toggle.stderr" ]
check "walk: SIGRTMIN+4 stops the walk, sent again starts a new one; output as plain's" $? \
    "status $tst (plain $pst): $(tail -n1 "$WORK/toggle.err") $(head -c 200 "$WORK/toggle.stderr")"

# Results while the program runs: the walk signal stops the walk and hotspot.json is written at
# once (atomically, with run.txt), read here by `vigil hot` while the program waits on its
# standard input; the program's own vigil_flush_report writes one too. It then ends as plain's.
# live_start NAME OPTIONS ARGS...: starts ./w-live with its stdin a fifo held open by fd 3
live_start() {
    local name=$1 opts=$2
    shift 2
    rm -rf "$WORK/wout-$name" "$WORK/$name.fifo"
    mkfifo "$WORK/$name.fifo"
    (cd "$WORK" && VIGIL_OPTIONS="$opts:out=$WORK/wout-$name" exec ./w-live "$@" <"$WORK/$name.fifo" \
        >"$WORK/$name.stdout" 2>"$WORK/$name.stderr") &
    lpid=$!
    exec 3>"$WORK/$name.fifo"
}
# live_read NAME PYCHECK: waits (60 s at most) for a hotspot.json that passes `vigil hot --json`
# and PYCHECK (variable d) while the program still runs; copies it to $WORK/NAME.json
live_read() {
    local name=$1 py=$2 i f
    for i in $(seq 1 120); do
        sleep 0.5
        f=$(ls "$WORK/wout-$name"/*/hotspot.json 2>/dev/null | head -n1)
        [ -n "$f" ] || continue
        kill -0 $lpid 2>/dev/null || { echo "the program ended before its report was read"; return 1; }
        "$VIGIL" hot --json "$(dirname "$f")" >"$WORK/$name.json" 2>"$WORK/$name.err" || continue
        python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])
" "$WORK/$name.json" "$py" 2>"$WORK/$name.pyerr" && kill -0 $lpid 2>/dev/null && return 0
    done
    echo "no report while running: $(tail -n1 "$WORK/$name.pyerr" 2>/dev/null) $(head -c 200 "$WORK/$name.err" 2>/dev/null)"
    return 1
}
# live_end NAME ARGS...: closes the fifo, compares stdout and status with the plain build's
# (not in a subshell: it waits for the program; the reason goes to $why)
live_end() {
    local name=$1
    shift
    exec 3>&-
    wait $lpid
    local st=$?
    (cd "$WORK" && ./w-live.plain "$@" </dev/null >"$WORK/$name.plain")
    local pst=$?
    [ $st = $pst ] && cmp -s "$WORK/$name.stdout" "$WORK/$name.plain" && [ ! -s "$WORK/$name.stderr" ] ||
        { why="status $st (plain $pst), stderr: $(head -c 200 "$WORK/$name.stderr")"; return 1; }
}
if walk_build live; then
    live_start live-sig "tools=hotspot:hotspot.walk_calls=100000000:hotspot.walk_samples=20:hotspot.walk_timeout_ms=100000" 3000
    sleep 1.5
    kill -s SIGRTMIN+4 $lpid 2>/dev/null
    why=$(live_read live-sig "
w = d['walks'][0]
assert w['end'].startswith('stopped by the walk signal'), w['end']
assert w['levels'][0]['function'] == 'leaf' and w['levels'][0]['measured'] > 0, w['levels'][0]
assert d['self'] and d['self'][0]['function'] == 'leaf', d['self'][:1]
")
    r=$?
    live_end live-sig 3000 || r=1
    check "walk: SIGRTMIN+4 writes hotspot.json while the program runs (the stopped walk, read by vigil hot)" $r "$why"
    live_start live-end "$WALK_OPTS" 3000
    why=$(live_read live-end "
w = d['walks'][0]
assert [l['function'] for l in w['levels']] == ['leaf', 'from_a', 'round_', 'main'], w['levels']
assert w['end'] == 'main', w['end']
")
    r=$?
    live_end live-end 3000 || r=1
    check "walk: the last walk's end writes hotspot.json while the program runs (chain to main)" $r "$why"
    live_start live-flush "tools=hotspot:hotspot.walk_spots=0" 3000 flush
    why=$(live_read live-flush "
assert d['self'] and d['self'][0]['function'] == 'leaf', d['self'][:1]
")
    r=$?
    live_end live-flush 3000 flush || r=1
    check "the program's vigil_flush_report writes hotspot.json (samples) while it runs" $r "$why"
else
    bad "walk/live: does not build: $(head -c 300 "$WORK/w-live.cc.log")"
fi

# The compiler part: the entries vigil-cc lists (every function of chain.c has a loop or a call:
# 5), none with VIGIL_CC_HOTSPOT_ENTRIES=0, and none in a small leaf without a loop, nor in one
# whose only call never returns (an assertion's abort: no hot stack passes through it).
entries_of() { size -A "$1" | awk '$1 == "__patchable_function_entries" { s = $2 } END { print s / 8 }'; }
cat >"$WORK/tiny.c" <<'C'
#include <stdlib.h>
__attribute__((noinline)) int tiny(int x) { return x * 3 + 1; }
__attribute__((noinline)) int checked(int x) { if (x > 1000) abort(); return x * 5 + 2; }
int main(int argc, char **argv) { (void)argv; return (tiny(argc) + checked(argc)) & 1; }
C
"$VIGILCC" -O2 -g "$WORK/tiny.c" -o "$WORK/tiny" 2>/dev/null
VIGIL_CC_HOTSPOT_ENTRIES=0 "$VIGILCC" -O2 -g "$WALK/chain.c" -o "$WORK/w-chain-noentries" 2>/dev/null
VIGIL_CC_HOTSPOT_BODY_MIN=100000 "$VIGILCC" -O2 -g "$WALK/chain.c" -o "$WORK/w-chain-floor" 2>/dev/null
n_chain=$(entries_of "$WORK/w-chain") n_off=$(entries_of "$WORK/w-chain-noentries") n_tiny=$(entries_of "$WORK/tiny")
n_floor=$(entries_of "$WORK/w-chain-floor")
first_tiny=$(objdump -d --no-show-raw-insn "$WORK/tiny" | grep -A1 "<tiny>:" | tail -n1)
first_checked=$(objdump -d --no-show-raw-insn "$WORK/tiny" | grep -A1 "<checked>:" | tail -n1)
[ "$n_chain" = 5 ] && [ "$n_off" = 0 ] && [ "$n_tiny" = 1 ] && [ "$n_floor" = 0 ] && [[ "$first_tiny" != *nop* ]] &&
    [ -n "$first_checked" ] && [[ "$first_checked" != *nop* ]]
check "vigil-cc: patchable entries in chain.c's 5 functions, none with VIGIL_CC_HOTSPOT_ENTRIES=0 or a BODY_MIN over them all, none in a tiny leaf or one that only aborts" $? \
    "chain $n_chain, off $n_off, floor $n_floor, tiny.c $n_tiny (main only), tiny starts with: $first_tiny, checked with: $first_checked"
# -fcf-protection: the nop after endbr64 straddles two words (written in three steps).
if "$VIGILCC" -O2 -g -fcf-protection "$WALK/chain.c" -o "$WORK/w-cet" 2>/dev/null &&
    "$CC_PLAIN" -O2 -g -fcf-protection "$WALK/chain.c" -o "$WORK/w-cet.plain" 2>/dev/null; then
    walk_run cet "
w = d['walks'][0]
assert chain(w) == ['leaf', 'from_a', 'round_', 'main'], chain(w)
assert w['end'] == 'main', w['end']
" 6000
else
    bad "walk/cet: does not build with -fcf-protection"
fi
# Hybrid (VIGIL_CC_CONFIG): functions that [skip] leaves plain keep their patchable entries, and
# the walk hooks them at run time.
printf '[skip]\nfun:leaf\nfun:from_a\n' >"$WORK/skip.conf"
if VIGIL_CC_CONFIG="$WORK/skip.conf" "$VIGILCC" -O2 -g "$WALK/chain.c" -o "$WORK/w-chainskip" 2>"$WORK/skip.log"; then
    cp "$WORK/w-chain.plain" "$WORK/w-chainskip.plain"
    n_skip=$(entries_of "$WORK/w-chainskip") copies=$(nm "$WORK/w-chainskip" | grep -c -E ' (leaf|from_a)\.vigil\.instr')
    copies_full=$(nm "$WORK/w-chain" | grep -c -E ' (leaf|from_a)\.vigil\.instr')
    [ "$n_skip" = 5 ] && [ "$copies" = 0 ] && [ "$copies_full" -gt 0 ]
    check "vigil-cc: [skip] functions keep their patchable entries (5 entries; instrumented copies of leaf, from_a: $copies, $copies_full without the config)" $? \
        "entries $n_skip, copies $copies / $copies_full"
    walk_run chainskip "
w = d['walks'][0]
assert chain(w) == ['leaf', 'from_a', 'round_', 'main'], chain(w)
assert w['levels'][0]['measured'] > 0 and w['levels'][1]['measured'] > 0, w['levels'][:2]
" 6000
else
    bad "vigil-cc with [skip]: $(head -c 300 "$WORK/skip.log")"
fi
# vigil observe samples the run (the hotspot tool, mode=off) and writes [hotspot.entries]: the
# functions with time in them or below them, but step (millions of calls per CPU second: listed
# commented out); a build with it gives entries to those only (not to cold, whose loop would
# give it one), and the walk still climbs the hot chain.
cat >"$WORK/obs.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) double leaf(double x, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += x * i / (i + 1.0);
    return s;
}
__attribute__((noinline)) double mid(int k) { return leaf(k, 1500) + leaf(k + 1, 1500); }
__attribute__((noinline)) unsigned step(unsigned x) { return x * 2654435761u + 1; }
__attribute__((noinline)) int cold(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i * i;
    return s;
}
int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 60000;
    double s = cold(argc + 5);
    unsigned t = 0;
    for (int r = 0; r < rounds; r++) {
        s += mid(r);
        for (int k = 0; k < 300; k++)
            t = step(t);
    }
    s += t & 1;
    printf("%.6g\n", s);
    return 0;
}
C
if "$VIGILCC" -O2 -g "$WORK/obs.c" -o "$WORK/obs" 2>"$WORK/obs.log" && "$CC_PLAIN" -O2 -g "$WORK/obs.c" -o "$WORK/w-obsent.plain" 2>>"$WORK/obs.log"; then
    (cd "$WORK" && "$VIGIL" observe --out "$WORK/obs.conf" -- ./obs 60000 >"$WORK/observe.out" 2>"$WORK/observe.err")
    st=$?
    sect=$(sed -n '/^\[hotspot.entries\]/,/^\[/p' "$WORK/obs.conf" 2>/dev/null | grep '^fun:' | sort | tr '\n' ' ')
    [ $st = 0 ] && [[ "$sect" == *"fun:leaf "* ]] && [[ "$sect" == *"fun:mid "* ]] && [[ "$sect" == *"fun:main "* ]] &&
        [[ "$sect" != *"fun:cold "* ]] && [[ "$sect" != *"fun:step "* ]] &&
        grep -B1 -x "# fun:step" "$WORK/obs.conf" | grep -q "left out: [0-9.]* M calls per CPU second"
    check "vigil observe: [hotspot.entries] lists leaf, mid, main, not cold, step left out as too frequent ($sect)" $? \
        "status $st, $(head -c 300 "$WORK/observe.err"); $(head -c 600 "$WORK/obs.conf" 2>/dev/null)"
    if VIGIL_CC_CONFIG="$WORK/obs.conf" "$VIGILCC" -O2 -g "$WORK/obs.c" -o "$WORK/w-obsent" 2>>"$WORK/obs.log"; then
        n_all=$(entries_of "$WORK/obs") n_ent=$(entries_of "$WORK/w-obsent")
        first_cold=$(objdump -d --no-show-raw-insn "$WORK/w-obsent" | grep -A1 "<cold>:" | tail -n1)
        first_cold_all=$(objdump -d --no-show-raw-insn "$WORK/obs" | grep -A1 "<cold>:" | tail -n1)
        [ "$n_ent" = 3 ] && [ "$n_all" = 4 ] && [[ "$first_cold" != *nop* ]] && [[ "$first_cold_all" == *nop* ]]
        check "vigil-cc with [hotspot.entries]: entries in leaf, mid, main only ($n_ent; $n_all without it)" $? \
            "entries $n_ent / $n_all; cold starts with: $first_cold (without: $first_cold_all)"
        walk_run obsent "
w = d['walks'][0]
assert chain(w)[:2] == ['leaf', 'mid'], chain(w)
" 60000
    else
        bad "vigil-cc with the observed config: $(head -c 300 "$WORK/obs.log")"
    fi
else
    bad "observe: obs.c does not build: $(head -c 300 "$WORK/obs.log")"
fi
rm -rf "$WORK/wout-off"
(cd "$WORK" && VIGIL_OPTIONS="tools=hotspot:hotspot.walk_spots=0:out=$WORK/wout-off" ./w-chain 2000 >/dev/null 2>&1)
python3 -c "
import json, glob, sys
j = json.load(open(glob.glob(sys.argv[1] + '/*/hotspot.json')[0]))
assert j['walk']['hooked'] == 0 and j['walk']['walks'] == [] and j['samples'] > 0, j['walk']
" "$WORK/wout-off" 2>"$WORK/off.err"
check "walk: hotspot.walk_spots=0 samples and hooks nothing" $? "$(tail -n1 "$WORK/off.err")"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
