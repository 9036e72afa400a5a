#!/bin/bash
# The memory checker's labelled test set: each tools/memcheck/tests/*.c (but the unit tests
# test_*.c) is a small program whose erroneous lines end in "// MC <kind>" (the kind
# memcheck.json must give the finding at that line). Each is built with vigil-cc -O2 -g (no
# frame pointers asked for; the optimizer inlines what it likes) and with plain clang, run
# under VIGIL_OPTIONS=tools=memcheck:mode=full, and its memcheck.json compared with the labels:
# a labelled line that no finding names with its kind is missed; a finding at any other line,
# or of another kind, is a false report. Both fail the program's test. Also checked per
# program: stdout and exit status as the plain build's, nothing on stderr, and that the checks
# ran (memcheck.txt counts them). Special programs, in adaptive mode (the default sampling):
#   rare_path.c   must be found in one run;
#   hot_loop.c    gets up to 10 runs (the number needed is printed).
# Then: the memory checker off (no tools=memcheck: nothing checked, same output), a program
# built with VIGIL_CC_MEMCHECK=0 (no checks compiled in), VIGIL_CC_MEMCHECK_TESTED (a tested
# function's loads are not checked), the compile-time rule counts, the findings through
# `vigil report` and `vigil run`, bad options, a damaged memcheck.json, forks while another
# thread allocates.
# Prints one PASS/FAIL line per check, a found/missed/false table and a final count.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
VIGILCC=${VIGILCC:-$ROOT/build/bin/vigil-cc}
VIGIL=${VIGIL:-$ROOT/build/bin/vigil}
CC_PLAIN=${CC_PLAIN:-clang}
WORK=$(mktemp -d /tmp/vigil-mctest.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0
ok()  { echo "PASS memcheck/$*"; pass=$((pass + 1)); }
bad() { echo "FAIL memcheck/$*"; fail=$((fail + 1)); }

[ -x "$VIGILCC" ] && [ -x "$VIGIL" ] || { echo "FAIL memcheck: build first (make): $VIGILCC, $VIGIL"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL memcheck: python3 is needed to read memcheck.json"; exit 1; }

# verdict SRC MEMCHECK_JSON -> "found missed false" then one line per problem
verdict() {
    python3 - "$1" "$2" <<'PY'
import json, os, re, sys
src, report = sys.argv[1], sys.argv[2]
name = os.path.basename(src)
labels = {}
for i, l in enumerate(open(src).read().split("\n")):
    m = re.search(r"// MC ([a-z-]+)", l)
    if m:
        labels[i + 1] = m.group(1)
d = json.load(open(report))
seen, false = set(), []
for f in d["findings"]:
    loc = f["locations"][0]
    line = loc["line"]
    if os.path.basename(loc["file"]) == name and labels.get(line) == f["kind"]:
        seen.add(line)
    else:
        false.append("%s at %s:%d (%s): %s" % (f["kind"], os.path.basename(loc["file"]) or "?", line,
                                              loc["function"], f["message"]))
missed = sorted(set(labels) - seen)
print(len(seen), len(missed), len(false))
for m in missed:
    print("line %d is labelled %s but no finding names it" % (m, labels[m]))
for f in false:
    print("false report: " + f)
PY
}

counts() {   # counts MEMCHECK_TXT KEY
    awk -v k="$2" '$1 == k {print $2}' "$1"
}

build() {   # build SRC NAME [vigil-cc env...]: vigil-cc and plain binaries in $WORK
    local src=$1 name=$2
    shift 2
    env "$@" "$VIGILCC" -O2 -g "$src" -o "$WORK/$name" -lpthread 2>"$WORK/$name.cc.log" &&
        "$CC_PLAIN" -O2 -g "$src" -o "$WORK/$name.plain" -lpthread 2>>"$WORK/$name.cc.log"
}

# run NAME OUTDIR OPTIONS: sets status, rundir
run() {
    local name=$1 out=$2 opts=$3
    rm -rf "$out"
    VIGIL_OPTIONS="${opts:+$opts:}out=$out" timeout 300 "$WORK/$name" >"$out.stdout" 2>"$out.stderr"
    status=$?
    rundir=$(ls -d "$out"/*/ 2>/dev/null | head -n1)
}

declare -A table
for src in "$HERE"/*.c; do
    name=$(basename "$src" .c)
    case "$name" in test_*) continue ;; esac   # unit tests (tests/run.sh runs them)
    if ! build "$src" "$name"; then
        bad "$name: does not build ($(head -c 300 "$WORK/$name.cc.log"))"
        continue
    fi
    "$WORK/$name.plain" >"$WORK/$name.plain.stdout" 2>/dev/null
    plain_status=$?
    opts="tools=memcheck:mode=full" runs=1
    case "$name" in
        rare_path) opts="tools=memcheck" ;;
        hot_loop) opts="tools=memcheck" runs=10 ;;
        quarantine) opts="tools=memcheck:mode=full:memcheck.quarantine=256" ;;
    esac
    for ((k = 1; k <= runs; k++)); do
        run "$name" "$WORK/out-$name" "$opts"
        [ -n "$rundir" ] && [ -f "$rundir/memcheck.json" ] || break
        v=$(verdict "$src" "$rundir/memcheck.json")
        read -r found missed falses <<<"$(head -n1 <<<"$v")"
        [ "$missed" = 0 ] && break
    done
    if [ "$status" != "$plain_status" ]; then
        bad "$name: exit status $status, plain build $plain_status ($(head -c 200 "$WORK/out-$name.stderr"))"
        continue
    fi
    if [ -z "$rundir" ] || [ ! -f "$rundir/memcheck.json" ]; then
        bad "$name: no memcheck.json ($(head -c 200 "$WORK/out-$name.stderr"))"
        continue
    fi
    cmp -s "$WORK/out-$name.stdout" "$WORK/$name.plain.stdout" && ok "$name: stdout and exit status as the plain build's" \
        || bad "$name: stdout differs from the plain build's: $(head -c 100 "$WORK/out-$name.stdout") vs $(head -c 100 "$WORK/$name.plain.stdout")"
    [ -s "$WORK/out-$name.stderr" ] && bad "$name: the tool wrote on stderr: $(head -c 300 "$WORK/out-$name.stderr")"
    checked=$(counts "$rundir/memcheck.txt" accesses_checked)
    [ "${checked:-0}" -gt 0 ] && ok "$name: $checked accesses checked" || bad "$name: memcheck.txt counts no checked access"
    table[$name]="$found $missed $falses $k"
    [ "$name" = hot_loop ] && [ "$missed" = 0 ] && echo "NOTE memcheck/hot_loop: found in run $k of up to 10 (adaptive)"
    if [ "$missed" = 0 ] && [ "$falses" = 0 ]; then
        ok "$name: $found labelled line(s) found, no false report"
    else
        bad "$name: $(tail -n +2 <<<"$v" | tr '\n' ';')"
    fi
    cp -r "$rundir" "$WORK/report-$name"
done

# Off: the same binary without the tool checks nothing and prints the same.
if [ -x "$WORK/uninit_uses" ]; then
    run uninit_uses "$WORK/out-off" "mode=full"
    if [ "$status" = 0 ] && cmp -s "$WORK/out-off.stdout" "$WORK/uninit_uses.plain.stdout" && [ -n "$rundir" ] &&
        [ ! -e "$rundir/memcheck.json" ]; then
        ok "off: without tools=memcheck no memcheck.json, same output"
    else
        bad "off: status $status, memcheck.json $(ls "$rundir" 2>/dev/null | tr '\n' ' ')"
    fi
fi

# VIGIL_CC_MEMCHECK=0: no checks compiled in, so the tool finds nothing (the labels can fail).
if build "$HERE/heap_bounds.c" heap_bounds_nocheck VIGIL_CC_MEMCHECK=0; then
    run heap_bounds_nocheck "$WORK/out-nocheck" "tools=memcheck:mode=full"
    if [ -n "$rundir" ] && [ -f "$rundir/memcheck.json" ]; then
        v=$(verdict "$HERE/heap_bounds.c" "$rundir/memcheck.json")
        read -r found missed falses <<<"$(head -n1 <<<"$v")"
        [ "$found" = 0 ] && [ "$missed" -gt 0 ] && [ "$(counts "$rundir/memcheck.txt" accesses_checked)" = 0 ] &&
            ok "VIGIL_CC_MEMCHECK=0: nothing checked, the $missed labelled lines missed" ||
            bad "VIGIL_CC_MEMCHECK=0: found $found, missed $missed"
    else
        bad "VIGIL_CC_MEMCHECK=0: no memcheck.json (status $status)"
    fi
else
    bad "VIGIL_CC_MEMCHECK=0: does not build"
fi

# VIGIL_CC_MEMCHECK_TESTED: the tested function's loads are not checked (its uninitialized
# read goes unreported), the others' are.
if build "$HERE/uninit_uses.c" uninit_tested VIGIL_CC_MEMCHECK_TESTED=in_branch,nosuchfile.c; then
    run uninit_tested "$WORK/out-tested" "tools=memcheck:mode=full"
    if [ -n "$rundir" ] && [ -f "$rundir/memcheck.json" ]; then
        v=$(verdict "$HERE/uninit_uses.c" "$rundir/memcheck.json")
        read -r found missed falses <<<"$(head -n1 <<<"$v")"
        [ "$missed" = 1 ] && [ "$falses" = 0 ] && grep -q "line $(grep -n 'r->count > 3' "$HERE/uninit_uses.c" | cut -d: -f1) " <<<"$v" &&
            ok "VIGIL_CC_MEMCHECK_TESTED=in_branch: its read is not checked, the $found others are found" ||
            bad "VIGIL_CC_MEMCHECK_TESTED: found $found, missed $missed, false $falses: $(tail -n +2 <<<"$v" | tr '\n' ';')"
    else
        bad "VIGIL_CC_MEMCHECK_TESTED: no memcheck.json (status $status)"
    fi
fi

# The compile-time rule counts (VIGIL_CC_MEMCHECK_STATS=1): every rule named, the shares add up.
VIGIL_CC_CACHE=0 VIGIL_CC_MEMCHECK_STATS=1 "$VIGILCC" -O2 -g -c "$HERE/static_bounds.c" -o "$WORK/sb.o" 2>"$WORK/stats.log"
line=$(grep 'vigil-cc: memcheck: ' "$WORK/stats.log" | head -n1)
python3 - "$line" <<'PY' >"$WORK/stats.verdict"
import re, sys
line = sys.argv[1]
m = re.search(r": (\d+) accesses:((?: [a-z-]+ \d+)+);", line)
if not m:
    print("no counts in %r" % line); sys.exit()
total, parts = int(m.group(1)), re.findall(r" ([a-z-]+) (\d+)", m.group(2))
names = [p[0] for p in parts]
want = ["read-only", "in-bounds", "stack-slot", "repeated", "tested-load", "object-bound", "full", "skipped"]
checks = re.search(r"array index checks (\d+)", line)
if names != want: print("rules %s" % names)
elif sum(int(p[1]) for p in parts) != total: print("the rules add up to %d, not %d" % (sum(int(p[1]) for p in parts), total))
elif not checks or int(checks.group(1)) < 4: print("array index checks: %s" % (checks.group(1) if checks else "none"))
else: print("ok")
PY
[ "$(cat "$WORK/stats.verdict")" = ok ] && ok "VIGIL_CC_MEMCHECK_STATS=1: every rule counted, the counts add up, the 4 array indices checked" \
    || bad "VIGIL_CC_MEMCHECK_STATS: $(cat "$WORK/stats.verdict")"

# The findings model through vigil report: kinds, severities, the allocation site as a
# related location, the allocation stack symbolized.
if [ -d "$WORK/report-uninit_uses" ]; then
    "$VIGIL" report --json "$WORK/report-uninit_uses" >"$WORK/findings.json" 2>&1
    verdict=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["findings"] if x["tool"] == "memcheck"]
alloc = lambda x: [l for l in x["locations"] if l["role"] == "allocation"]
good = len(f) == 4 and all(x["kind"] == "uninitialized-read" and x["severity"] == "error" and alloc(x)
                           and alloc(x)[0]["function"] in ("make", "main") and alloc(x)[0]["line"] > 0 for x in f)
print("ok" if good else "findings: %s" % json.dumps(f)[:600])' "$WORK/findings.json" 2>&1)
    [ "$verdict" = ok ] && ok "findings: 4 uninitialized-read errors, each with its allocation site (make)" \
        || bad "uninit_uses $verdict"
    "$VIGIL" report "$WORK/report-uninit_uses" >"$WORK/report.txt" 2>&1
    cp "$WORK/report.txt" /tmp/mc-report.txt
    grep -q "uninitialized value used in a branch" "$WORK/report.txt" && grep -q "passed to a call" "$WORK/report.txt" &&
        grep -q "used as an address" "$WORK/report.txt" && grep -q "returned" "$WORK/report.txt" &&
        ok "vigil report says how each value was used (branch, address, call, return)" ||
        bad "vigil report: $(grep -m2 uninitialized "$WORK/report.txt" | tr '\n' ';')"
fi

# vigil run --tool memcheck: the findings in its summary on stderr, the exit code asked for
if [ -x "$WORK/heap_bounds" ]; then
    (cd "$WORK" && VIGIL_OPTIONS=mode=full "$VIGIL" run --out "$WORK/out-vrun" --error-exitcode=7 --tool memcheck -- ./heap_bounds \
        >"$WORK/vrun.stdout" 2>"$WORK/vrun.stderr")
    st=$?
    grep -qE 'findings +memcheck: [0-9]+ finding' "$WORK/vrun.stderr" && [ "$st" = 7 ] &&
        cmp -s "$WORK/vrun.stdout" "$WORK/heap_bounds.plain.stdout" &&
        ok "vigil run --tool memcheck: the errors in its summary, --error-exitcode, the program's stdout" ||
        bad "vigil run --tool memcheck: status $st, $(tail -n 3 "$WORK/vrun.stderr" | tr '\n' ';')"
fi

# Bad options: one message, the program runs as without the tool.
if [ -x "$WORK/copies" ]; then
    for bad_opt in memcheck.pattern=0xzz memcheck.pattern=0x123456 memcheck.depth=40 memcheck.nosuch=1 memcheck.quarantine=70000 \
        memcheck.exclude_ranges=0x60000-0x50000 memcheck.exclude_ranges=0x50000 memcheck.exclude_kinds=stak \
        memcheck.events=20000000; do
        run copies "$WORK/out-badopt" "tools=memcheck:$bad_opt"
        if [ "$status" = 0 ] && cmp -s "$WORK/out-badopt.stdout" "$WORK/copies.plain.stdout" &&
            [ "$(grep -c . "$WORK/out-badopt.stderr")" -ge 1 ] && grep -q "memcheck" "$WORK/out-badopt.stderr"; then
            ok "$bad_opt: one message, the program unharmed"
        else
            bad "$bad_opt: status $status, stderr: $(head -c 200 "$WORK/out-badopt.stderr")"
        fi
    done
    # A fixed pattern: the pattern named in memcheck.txt.
    run copies "$WORK/out-fixed" "tools=memcheck:mode=full:memcheck.pattern=0xde"
    [ -n "$rundir" ] && grep -qx 'pattern 0xdededededededede' "$rundir/memcheck.txt" &&
        ok "memcheck.pattern=0xde: the fill is 0xde bytes" || bad "memcheck.pattern=0xde: $(head -n1 "$rundir/memcheck.txt" 2>/dev/null)"
fi

# A damaged memcheck.json: vigil report names the file and the line, exits non-zero.
if [ -d "$WORK/report-heap_bounds" ]; then
    cp -r "$WORK/report-heap_bounds" "$WORK/damaged"
    head -c 300 "$WORK/report-heap_bounds/memcheck.json" >"$WORK/damaged/memcheck.json"
    "$VIGIL" report "$WORK/damaged" >/dev/null 2>"$WORK/damaged.err"
    st=$?
    [ "$st" != 0 ] && grep -qE 'memcheck\.json:[0-9]+' "$WORK/damaged.err" &&
        ok "a truncated memcheck.json: the file and line named, status $st" ||
        bad "a truncated memcheck.json: status $st, $(head -c 200 "$WORK/damaged.err")"
fi

# The event log: every error occurrence in memcheck.events.zst, listed by vigil memcheck-events
# with its place (from memcheck.txt), counted in memcheck.txt, joined to the findings.
if [ -d "$WORK/report-uninit_uses" ]; then
    r=$WORK/report-uninit_uses
    "$VIGIL" memcheck-events --json "$r" >"$WORK/events.json" 2>"$WORK/events.err"
    verdict=$(python3 - "$WORK/events.json" "$(counts "$r/memcheck.txt" events)" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError as e:
    print("not JSON: %s" % e); sys.exit()
ev = d["events"]
where = sorted(e["where"].split()[0] for e in ev if e["where"])
ok = (len(ev) == 4 and sys.argv[2] == "4" and all(e["kind"] == "uninitialized-read" and e["access"] == "read"
      and e["block_size"] == 32 and e["thread"] == 1 for e in ev)
      and where == ["as_address", "in_branch", "returned", "to_call"]
      and sorted(e["use"] for e in ev) == ["address", "branch", "call", "return"]
      and [e["ms"] for e in ev] == sorted(e["ms"] for e in ev))
print("ok" if ok else "events %s (memcheck.txt: %s)" % (json.dumps(ev)[:400], sys.argv[2]))
PY
)
    [ "$verdict" = ok ] && ok "memcheck.events.zst: the 4 reads, each with its use, block and place, in time order" \
        || bad "vigil memcheck-events: $verdict $(head -c 200 "$WORK/events.err")"
    zstd -tq "$r/memcheck.events.zst" 2>/dev/null && ok "memcheck.events.zst is a valid zstd file (zstd -t)" \
        || bad "memcheck.events.zst: zstd -t fails"
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["findings"] if x["tool"] == "memcheck"]
fl = lambda x, k: [v["value"] for v in x["fields"] if v["key"] == k]
sys.exit(0 if len(f) == 4 and all(fl(x, "logged") == [1] and fl(x, "threads") == [1] and fl(x, "first") for x in f) else 1)' \
        "$WORK/findings.json" && ok "vigil report: each error with its logged events, threads and first time" \
        || bad "vigil report: no event fields: $(head -c 300 "$WORK/findings.json")"
    # Damaged logs: rejected with the file and what was expected; vigil report fails too.
    cp -r "$r" "$WORK/evbad"
    head -c 40 "$r/memcheck.events.zst" >"$WORK/evbad/memcheck.events.zst"
    "$VIGIL" memcheck-events "$WORK/evbad" >/dev/null 2>"$WORK/evbad.err"
    st=$?
    "$VIGIL" report "$WORK/evbad" >/dev/null 2>"$WORK/evbad2.err"
    st2=$?
    [ "$st" != 0 ] && [ "$st2" != 0 ] && grep -q 'memcheck.events.zst: byte [0-9]*: truncated' "$WORK/evbad.err" &&
        grep -q 'memcheck.events.zst' "$WORK/evbad2.err" &&
        ok "a truncated event log: the file and byte named, status $st (vigil report $st2)" ||
        bad "a truncated event log: status $st/$st2: $(cat "$WORK/evbad.err" "$WORK/evbad2.err" | head -c 300)"
    zstd -dcq "$r/memcheck.events.zst" | python3 -c '
import sys
d = bytearray(sys.stdin.buffer.read()); d[32 + 38] = 9; sys.stdout.buffer.write(bytes(d))' | zstd -qc >"$WORK/evbad/memcheck.events.zst"
    "$VIGIL" memcheck-events "$WORK/evbad" >/dev/null 2>"$WORK/evbad.err"
    st=$?
    [ "$st" != 0 ] && grep -q 'memcheck.events.zst: byte 70: record 0 has kind 9, expected 0 to 5' "$WORK/evbad.err" &&
        ok "an event of an unknown kind: the byte and what was expected" || bad "a bad kind: status $st, $(head -c 200 "$WORK/evbad.err")"
fi

if [ -d "$WORK/report-heap_bounds" ]; then
    k=$("$VIGIL" memcheck-events --json --kind heap-buffer-underflow "$WORK/report-heap_bounds" 2>&1 |
        python3 -c 'import json,sys; print(" ".join(sorted(set(e["kind"] for e in json.load(sys.stdin)["events"]))))' 2>&1)
    a=$("$VIGIL" memcheck-events --json "$WORK/report-heap_bounds" 2>&1 | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["events"]))' 2>&1)
    [ "$k" = heap-buffer-underflow ] && [ "$a" -ge 4 ] 2>/dev/null && ok "vigil memcheck-events --kind: only that kind ($a events in all)" \
        || bad "vigil memcheck-events --kind: $k / $a"
fi

# Without libzstd (a libzstd.so.1 that lacks its functions stands in), the log is written as
# stored zstd blocks, which read the same.
if [ -x "$WORK/uninit_uses" ] && echo 'int not_zstd;' | clang -shared -fPIC -x c - -o "$WORK/libzstd.so.1" 2>/dev/null; then
    LD_LIBRARY_PATH=$WORK run uninit_uses "$WORK/out-nozstd" "tools=memcheck:mode=full"
    n=$("$VIGIL" memcheck-events --json "$rundir" 2>&1 | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["events"]))' 2>&1)
    [ "$n" = 4 ] && zstd -tq "$rundir/memcheck.events.zst" && ok "without libzstd: a stored zstd frame, the 4 events read back" \
        || bad "without libzstd: $n"
fi

# The flush hook (vigil_flush_report) writes the memory checker's files of the moment: the
# program then leaves by _exit, so the run's report is the flushed one.
if "$VIGILCC" -O2 -g "$HERE/flush/flushed.c" -o "$WORK/flushed" 2>"$WORK/flushed.cc.log"; then
    run flushed "$WORK/out-flushed" "tools=memcheck:mode=full"
    n=$("$VIGIL" memcheck-events --json "$rundir" 2>&1 | python3 -c '
import json, sys
ev = json.load(sys.stdin)["events"]
print(len(ev), ev[0]["kind"] if ev else "-", (ev[0]["where"] or "?").split()[0] if ev else "-")' 2>&1)
    [ "$status" = 0 ] && [ "$n" = "1 heap-buffer-overflow overflow" ] && [ -f "$rundir/memcheck.json" ] &&
        grep -q heap-buffer-overflow "$rundir/memcheck.json" &&
        ok "vigil_flush_report: memcheck.json and the event log written while the program runs" ||
        bad "vigil_flush_report: status $status, events: $n, $(ls "$rundir" 2>&1 | tr '\n' ' ')"
else
    bad "flushed.c does not build: $(head -c 200 "$WORK/flushed.cc.log")"
fi

# User exclusions (memcheck.exclude_ranges, .exclude_kinds): skipped, and counted per reason
# in memcheck.txt; what is not excluded is still found.
excl() {   # excl NAME OPTIONS -> "ERRORS KEY=VALUE..." of the run
    run "$1" "$WORK/out-excl" "tools=memcheck:mode=full:$2"
    echo "$rundir" >"$WORK/excl.rundir"
    [ -n "$rundir" ] && [ -f "$rundir/memcheck.txt" ] || { echo "no-report"; return; }
    echo "$(grep -c '^error ' "$rundir/memcheck.txt") $(awk '/^excluded_/ {printf "%s=%s ", $1, $2}' "$rundir/memcheck.txt")"
}
if [ -x "$WORK/heap_bounds" ]; then
    r=$(excl heap_bounds memcheck.exclude_kinds=heap)
    [[ "$r" == "0 "* ]] && [[ ! "$r" == *"excluded_heap=0 "* ]] && ok "exclude_kinds=heap: no heap error, the checks counted ($r)" \
        || bad "exclude_kinds=heap: $r"
    r=$(excl heap_bounds memcheck.exclude_ranges=0x1000-0x800000000000)
    [[ "$r" == "0 "* ]] && [[ ! "$r" == *"excluded_range=0 "* ]] && ok "exclude_ranges over the whole heap: nothing reported ($r)" \
        || bad "exclude_ranges=0x1000-0x800000000000: $r"
    r=$(excl heap_bounds memcheck.exclude_ranges=0x1000-0x2000,4096-8192)
    [[ "$r" == "4 "* ]] && [[ "$r" == *"excluded_range=0 "* ]] && ok "exclude_ranges elsewhere: the 4 errors found, none excluded" \
        || bad "exclude_ranges elsewhere: $r"
fi
if [ -x "$WORK/static_bounds" ]; then
    r=$(excl static_bounds memcheck.exclude_kinds=stack,globals)
    rundir=$(cat "$WORK/excl.rundir")
    [ -n "$rundir" ] && v=$(verdict "$HERE/static_bounds.c" "$rundir/memcheck.json" | head -n1)
    # the global, the local and the global 2-D array excluded; the member of a struct given by pointer is found
    [[ "$r" == "1 "* ]] && [[ "$r" == *"excluded_stack=1 "* ]] && [[ "$r" == *"excluded_globals=2 "* ]] && [ "$v" = "1 3 0" ] &&
        ok "exclude_kinds=stack,globals: their 3 arrays skipped and counted, the struct member's index found" \
        || bad "exclude_kinds=stack,globals: $r, verdict $v"
fi
if "$VIGILCC" -O2 -g "$HERE/exclude/shared.c" -o "$WORK/shared" 2>"$WORK/shared.cc.log" &&
    clang -O2 -g "$HERE/exclude/shared.c" -o "$WORK/shared.plain" 2>>"$WORK/shared.cc.log"; then
    "$WORK/shared.plain" >"$WORK/shared.plain.stdout"
    r=$(excl shared memcheck.exclude_kinds=shared)
    r0=$(excl shared "")
    [[ "$r" == "1 "* ]] && [[ ! "$r" == *"excluded_shared=0 "* ]] && [[ "$r0" == "1 "* ]] && [[ "$r0" == *"excluded_shared=0 "* ]] &&
        cmp -s "$WORK/out-excl.stdout" "$WORK/shared.plain.stdout" &&
        ok "exclude_kinds=shared: the shared mapping's accesses skipped and counted, the heap overflow found ($r)" \
        || bad "exclude_kinds=shared: $r / without: $r0"
else
    bad "exclude/shared.c does not build: $(head -c 200 "$WORK/shared.cc.log")"
fi

# The quarantine (memcheck.quarantine=256; off by default): without it the read through a pointer into a freed
# block's middle is missed; a double free of a held block ends as the plain build's does.
if [ -x "$WORK/quarantine" ]; then
    run quarantine "$WORK/out-noq" "tools=memcheck:mode=full:memcheck.quarantine=0"
    v=$(verdict "$HERE/quarantine.c" "$rundir/memcheck.json")
    grep -q "line $(grep -n 'return p\[2\]' "$HERE/quarantine.c" | cut -d: -f1) is labelled" <<<"$v" &&
        [ "$(head -n1 <<<"$v" | cut -d' ' -f3)" = 0 ] &&
        ok "memcheck.quarantine=0: the read into a freed block's middle is missed, nothing false" ||
        bad "memcheck.quarantine=0: $(tr '\n' ';' <<<"$v")"
    run quarantine "$WORK/out-q" "tools=memcheck:mode=full:memcheck.quarantine=256"
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["findings"] if x["kind"] == "use-after-free"]
ok = len(f) == 2 and all(sorted(s["label"] for s in x["stacks"]) == ["access", "allocation", "free"] for x in f)
sys.exit(0 if ok else 1)' "$rundir/memcheck.json" && ok "quarantine: each use after free with its access, allocation and free stacks" \
        || bad "quarantine: stacks: $(head -c 300 "$rundir/memcheck.json")"
fi
# The other programs with the quarantine on (held blocks are tagged in the heap map: the checks
# of live blocks, threads' frees and reallocs must not change): the same labelled lines, nothing false.
for name in heap_bounds lifetimes threads uninit_uses; do
    [ -x "$WORK/$name" ] || continue
    run "$name" "$WORK/out-$name-q" "tools=memcheck:mode=full:memcheck.quarantine=256"
    if [ -z "$rundir" ] || [ ! -f "$rundir/memcheck.json" ]; then
        bad "$name with the quarantine: no memcheck.json ($(head -c 200 "$WORK/out-$name-q.stderr"))"
        continue
    fi
    v=$(verdict "$HERE/$name.c" "$rundir/memcheck.json")
    read -r found missed falses <<<"$(head -n1 <<<"$v")"
    [ "$missed" = 0 ] && [ "$falses" = 0 ] && cmp -s "$WORK/out-$name-q.stdout" "$WORK/$name.plain.stdout" &&
        ok "$name with the quarantine: $found labelled line(s) found, no false report, stdout as plain's" ||
        bad "$name with the quarantine: $(tail -n +2 <<<"$v" | tr '\n' ';')"
done
if "$VIGILCC" -O2 -g "$HERE/quarantine/double_free.c" -o "$WORK/dfree" 2>"$WORK/dfree.log" &&
    clang -O2 -g "$HERE/quarantine/double_free.c" -o "$WORK/dfree.plain" 2>>"$WORK/dfree.log"; then
    "$WORK/dfree.plain" x >"$WORK/dfree.plain.stdout" 2>/dev/null
    pst=$?
    run dfree "$WORK/out-dfree" "tools=memcheck:mode=full:memcheck.quarantine=256"
    st0=$status
    VIGIL_OPTIONS="tools=memcheck:mode=full:memcheck.quarantine=256:out=$WORK/out-dfree2" timeout 60 "$WORK/dfree" x >"$WORK/dfree.stdout" 2>/dev/null
    st=$?
    [ "$st0" = 0 ] && [ "$st" = "$pst" ] && cmp -s "$WORK/dfree.stdout" "$WORK/dfree.plain.stdout" &&
        ok "a double free of a quarantined block: status $st and output as the plain build's" ||
        bad "double free: status $st (plain $pst, without it $st0), $(tr '\n' ' ' <"$WORK/dfree.stdout")"
else
    bad "quarantine/double_free.c does not build"
fi

# Forks while other threads allocate (tests/progs/fork_threads.c): every child finishes (a lock of
# the heap map held by a worker of the parent at the fork, not freed in the child, hung 15-30%
# of them), the output and status are the plain build's, and the children's reports have the
# one labelled error, in the last child's, nothing else. With the quarantine too (its lock).
if "$VIGILCC" -O2 -g "$ROOT/tests/progs/fork_threads.c" -o "$WORK/fork_threads" -lpthread 2>"$WORK/fork.log" &&
    clang -O2 -g "$ROOT/tests/progs/fork_threads.c" -o "$WORK/fork_threads.plain" -lpthread 2>>"$WORK/fork.log"; then
    "$WORK/fork_threads.plain" >"$WORK/fork.plain.stdout" 2>/dev/null
    pst=$?
    for fopts in "" ":memcheck.quarantine=256"; do
        rm -rf "$WORK/out-fork"
        # KILL, to the whole group: a child spinning on a lock takes no report at SIGTERM
        VIGIL_OPTIONS="tools=memcheck:mode=full$fopts:out=$WORK/out-fork" timeout -s KILL 120 "$WORK/fork_threads" \
            >"$WORK/fork.stdout" 2>"$WORK/fork.stderr"
        st=$?
        v=$(python3 - "$ROOT/tests/progs/fork_threads.c" "$WORK/out-fork" <<'PY'
import glob, json, os, re, sys
src, out = sys.argv[1], sys.argv[2]
label = [i + 1 for i, l in enumerate(open(src).read().split("\n")) if "// MC heap-buffer-overflow" in l][0]
runs = {}
for d in glob.glob(os.path.join(out, "*")):
    if not os.path.exists(os.path.join(d, "run.txt")):
        runs[d] = {"pid": "?", "ppid": "?"}; continue
    info = dict(l.split(" ", 1) for l in open(os.path.join(d, "run.txt")).read().split("\n") if " " in l)
    runs[d] = info
pids = {r["pid"] for r in runs.values()}
parents = [d for d, r in runs.items() if r["ppid"] not in pids]
found, other, missing = [], [], []
for d, r in runs.items():
    f = os.path.join(d, "memcheck.json")
    if not os.path.exists(f):
        missing.append(os.path.basename(d)); continue
    for x in json.load(open(f))["findings"]:
        loc = x["locations"][0]
        if x["kind"] == "heap-buffer-overflow" and loc["line"] == label and d not in parents:
            found.append(d)
        else:
            other.append("%s at %s:%s" % (x["kind"], os.path.basename(loc["file"]), loc["line"]))
if len(runs) != 151 or len(parents) != 1 or missing or len(found) != 1 or other:
    print("%d runs, %d parents, no memcheck.json in %s, the overflow in %d child(ren), other findings %s"
          % (len(runs), len(parents), missing[:5], len(found), other[:5]))
else:
    print("ok")
PY
)
        if [ "$st" = "$pst" ] && cmp -s "$WORK/fork.stdout" "$WORK/fork.plain.stdout" && [ "$v" = ok ]; then
            ok "fork${fopts:+ ($fopts)}: 150 children forked while threads allocate all finish, output and status as plain's, the last child's overflow its only error"
        else
            bad "fork${fopts:+ ($fopts)}: status $st (plain $pst), stdout $(tr '\n' ' ' <"$WORK/fork.stdout" | head -c 200), reports: $v"
        fi
    done
else
    bad "tests/progs/fork_threads.c does not build: $(head -c 200 "$WORK/fork.log")"
fi

echo
printf '%-16s %6s %6s %6s %5s\n' program found missed false runs
for name in $(printf '%s\n' "${!table[@]}" | sort); do
    read -r f m x r <<<"${table[$name]}"
    printf '%-16s %6s %6s %6s %5s\n' "$name" "$f" "$m" "$x" "$r"
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
